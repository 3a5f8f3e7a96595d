import CSystemdBus
import Foundation

/// Reads and writes ``DBusValue``s from and to sd-bus messages, with sd-bus's fixed-argument
/// calls (its variadic ones cannot be called from Swift).
enum DBusMessageCoding {
    /// Reads every remaining value of a message's body (or of the container it is in).
    /// - Returns: `nil` when the body cannot be read (sd-bus refused it).
    static func readAll(_ message: OpaquePointer) -> [DBusValue]? {
        var values: [DBusValue] = []
        while true {
            let end = sd_bus_message_at_end(message, 0)
            if end < 0 { return nil }
            if end > 0 { return values }
            guard let value = read(message) else { return nil }
            values.append(value)
        }
    }

    /// Reads the next value.
    static func read(_ message: OpaquePointer) -> DBusValue? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contents) > 0 else { return nil }
        let code = UInt8(bitPattern: type)
        switch code {
        case UInt8(ascii: "a"):
            guard let contents else { return nil }
            let element = String(cString: contents)
            if element == "y" {
                var pointer: UnsafeRawPointer?
                var size = 0
                guard sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &pointer, &size) >= 0 else { return nil }
                guard size > 0, let pointer else { return .bytes([]) }
                return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: size)))
            }
            guard sd_bus_message_enter_container(message, type, contents) > 0 else { return nil }
            if element.hasPrefix("{") {
                var entries: [(DBusValue, DBusValue)] = []
                let inner = String(element.dropFirst().dropLast())
                let keySignature = String(inner.prefix(1))
                let valueSignature = String(inner.dropFirst())
                while sd_bus_message_at_end(message, 0) == 0 {
                    guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), inner) > 0,
                        let key = read(message), let value = read(message),
                        sd_bus_message_exit_container(message) >= 0
                    else { return nil }
                    entries.append((key, value))
                }
                guard sd_bus_message_exit_container(message) >= 0 else { return nil }
                return .dictionary(keySignature: keySignature, valueSignature: valueSignature, entries)
            }
            var elements: [DBusValue] = []
            while sd_bus_message_at_end(message, 0) == 0 {
                guard let value = read(message) else { return nil }
                elements.append(value)
            }
            guard sd_bus_message_exit_container(message) >= 0 else { return nil }
            return .array(elementSignature: element, elements)
        case UInt8(ascii: "r"), UInt8(ascii: "v"):
            guard let contents, sd_bus_message_enter_container(message, type, contents) > 0 else { return nil }
            var fields: [DBusValue] = []
            while sd_bus_message_at_end(message, 0) == 0 {
                guard let value = read(message) else { return nil }
                fields.append(value)
            }
            guard sd_bus_message_exit_container(message) >= 0 else { return nil }
            if code == UInt8(ascii: "v") {
                guard fields.count == 1 else { return nil }
                return .variant(fields[0])
            }
            return .structure(fields)
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var text: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, type, &text) > 0, let text else { return nil }
            let string = String(cString: text)
            if code == UInt8(ascii: "s") { return .string(string) }
            return code == UInt8(ascii: "o") ? .objectPath(string) : .signature(string)
        case UInt8(ascii: "y"):
            var value: UInt8 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
            return .byte(value)
        case UInt8(ascii: "b"):
            var value: Int32 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
            return .boolean(value != 0)
        case UInt8(ascii: "i"), UInt8(ascii: "h"):
            var value: Int32 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
            return .int32(value)
        case UInt8(ascii: "u"):
            var value: UInt32 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
            return .uint32(value)
        case UInt8(ascii: "n"):
            var value: Int16 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
            return .int32(Int32(value))
        case UInt8(ascii: "q"):
            var value: UInt16 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
            return .uint32(UInt32(value))
        case UInt8(ascii: "x"):
            var value: Int64 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
            return .int64(value)
        case UInt8(ascii: "t"):
            var value: UInt64 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
            return .uint64(value)
        case UInt8(ascii: "d"):
            var value: Double = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return nil }
            return .double(value)
        default:
            return nil
        }
    }

    /// Appends values to a message.
    /// - Returns: sd-bus's result (negative errno on failure).
    @discardableResult
    static func append(_ values: [DBusValue], to message: OpaquePointer) -> Int32 {
        for value in values {
            let code = append(value, to: message)
            if code < 0 { return code }
        }
        return 0
    }

    /// Appends one value.
    static func append(_ value: DBusValue, to message: OpaquePointer) -> Int32 {
        func basic<T>(_ type: String, _ value: T) -> Int32 {
            var copy = value
            return withUnsafePointer(to: &copy) { sd_bus_message_append_basic(message, CChar(bitPattern: type.utf8.first!), $0) }
        }
        func container(_ type: UInt8, _ contents: String, _ body: () -> Int32) -> Int32 {
            var code = sd_bus_message_open_container(message, CChar(type), contents)
            guard code >= 0 else { return code }
            code = body()
            guard code >= 0 else { return code }
            return sd_bus_message_close_container(message)
        }
        switch value {
        case .byte(let byte): return basic("y", byte)
        case .boolean(let flag): return basic("b", Int32(flag ? 1 : 0))
        case .int32(let number): return basic("i", number)
        case .uint32(let number): return basic("u", number)
        case .int64(let number): return basic("x", number)
        case .uint64(let number): return basic("t", number)
        case .double(let number): return basic("d", number)
        case .string(let text): return text.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
        case .objectPath(let text): return text.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), $0) }
        case .signature(let text): return text.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "g")), $0) }
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { buffer in
                sd_bus_message_append_array(message, CChar(UInt8(ascii: "y")), buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, buffer.count)
            }
        case .array(let element, let elements):
            return container(UInt8(ascii: "a"), element) { append(elements, to: message) }
        case .dictionary(let key, let valueSignature, let entries):
            return container(UInt8(ascii: "a"), "{" + key + valueSignature + "}") {
                for (entryKey, entryValue) in entries {
                    let code = container(UInt8(ascii: "e"), key + valueSignature) { append([entryKey, entryValue], to: message) }
                    if code < 0 { return code }
                }
                return 0
            }
        case .structure(let fields):
            return container(UInt8(ascii: "r"), fields.map(\.signature).joined()) { append(fields, to: message) }
        case .variant(let inner):
            return container(UInt8(ascii: "v"), inner.signature) { append(inner, to: message) }
        }
    }
}
