#if !canImport(Security)
import CSystemdBus
import Foundation

/// A D-Bus error reply (or a failure to reach the bus), by its D-Bus error name.
struct DBusError: Error, Sendable, Equatable {
    /// The D-Bus error name (`net.reactivated.Fprint.Error.NoEnrolledPrints`), or
    /// `errno:<n>` when the call failed locally.
    let name: String
    /// The peer's message; never holds a secret (fprintd's messages are fixed texts).
    let message: String
}

/// A small client connection to a D-Bus bus, through sd-bus (libsystemd): method calls with
/// string arguments, replies of strings and object paths, and `(sb)` and `(s)` signals (what
/// fprintd emits). One connection serves one thread; it is closed when the object goes away.
final class DBusConnection {
    private let bus: OpaquePointer
    /// The signal matches, kept (with their watches, which the callbacks point to) until the
    /// connection closes.
    private var watches: [(slot: OpaquePointer, watch: DBusSignalWatch)] = []

    /// Connects to the bus at `address` (`unix:path=…`), or to the system bus
    /// (`$DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`) when `address` is `nil`.
    init(address: String?) throws(DBusError) {
        var bus: OpaquePointer?
        var code: Int32
        if let address {
            code = sd_bus_new(&bus)
            if code >= 0 { code = sd_bus_set_address(bus, address) }
            if code >= 0 { code = sd_bus_set_bus_client(bus, 1) }
            if code >= 0 { code = sd_bus_start(bus) }
        } else {
            code = sd_bus_open_system(&bus)
        }
        guard code >= 0, let bus else {
            if let bus { sd_bus_unref(bus) }
            throw DBusError(name: "errno:\(-code)", message: String(cString: strerror(-code)))
        }
        self.bus = bus
    }

    deinit {
        for (slot, _) in watches { sd_bus_slot_unref(slot) }
        sd_bus_flush_close_unref(bus)
    }

    /// Calls a method whose arguments are strings and returns its reply.
    func call(
        _ destination: String, _ path: String, _ interface: String, _ member: String,
        _ arguments: [String] = [], timeout: TimeInterval = 25
    ) throws(DBusError) -> DBusReply {
        var message: OpaquePointer?
        var code = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard code >= 0, let message else { throw Self.local(code) }
        defer { sd_bus_message_unref(message) }
        for argument in arguments where code >= 0 {
            code = argument.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
        }
        guard code >= 0 else { throw Self.local(code) }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        code = sd_bus_call(bus, message, UInt64(timeout * 1_000_000), &error, &reply)
        guard code >= 0, let reply else { throw Self.remote(error, code: code) }
        return DBusReply(message: reply)
    }

    /// Reads a string property.
    func stringProperty(_ destination: String, _ path: String, _ interface: String, _ member: String) throws(DBusError) -> String {
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var value: UnsafeMutablePointer<CChar>?
        let code = sd_bus_get_property_string(bus, destination, path, interface, member, &error, &value)
        guard code >= 0, let value else { throw Self.remote(error, code: code) }
        defer { free(value) }
        return String(cString: value)
    }

    /// Starts collecting the `(sb)` or `(s)` signals `member` of `interface` that `sender` emits on `path`.
    func watch(sender: String, path: String, interface: String, member: String) throws(DBusError) -> DBusSignalWatch {
        let watch = DBusSignalWatch()
        var slot: OpaquePointer?
        let code = sd_bus_match_signal(
            bus, &slot, sender, path, interface, member,
            { message, context, _ in
                guard let message, let context else { return 0 }
                let watch = Unmanaged<DBusSignalWatch>.fromOpaque(context).takeUnretainedValue()
                var text: UnsafePointer<CChar>?
                var flag: Int32 = 0
                guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &text) > 0, let text else { return 0 }
                // `(s)` signals (fprintd's VerifyFingerSelected) have no flag: it reads as false.
                _ = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &flag)
                watch.received.append((String(cString: text), flag != 0))
                return 0
            },
            Unmanaged.passUnretained(watch).toOpaque())
        guard code >= 0, let slot else { throw Self.local(code) }
        watches.append((slot, watch))
        return watch
    }

    /// Processes incoming messages until `done` is true for what `watch` collected, or the
    /// deadline passes.
    /// - Returns: `false` when the deadline passed first.
    /// - Throws: ``DBusError`` when the connection breaks.
    func wait(for watch: DBusSignalWatch, until deadline: Date, done: ([(String, Bool)]) -> Bool) throws(DBusError) -> Bool {
        while !done(watch.received) {
            let processed = sd_bus_process(bus, nil)
            guard processed >= 0 else { throw Self.local(processed) }
            if processed > 0 { continue }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            let waited = sd_bus_wait(bus, UInt64(remaining * 1_000_000))
            if waited < 0 && waited != -EINTR { throw Self.local(waited) }
        }
        return true
    }

    private static func local(_ code: Int32) -> DBusError {
        DBusError(name: "errno:\(-code)", message: String(cString: strerror(-code)))
    }

    private static func remote(_ error: sd_bus_error, code: Int32) -> DBusError {
        guard let name = error.name else { return local(code) }
        return DBusError(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? "")
    }
}

/// A method reply: read its values in order.
final class DBusReply {
    private let message: OpaquePointer

    init(message: OpaquePointer) { self.message = message }

    deinit { sd_bus_message_unref(message) }

    /// The next value, a string (`s`) or an object path (`o`).
    func readString(type: Character = "s") -> String? {
        var value: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(message, CChar(type.asciiValue!), &value) > 0, let value else { return nil }
        return String(cString: value)
    }

    /// The next value, an array of strings (`as`).
    func readStrings() -> [String]? {
        guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "s") > 0 else { return nil }
        var strings: [String] = []
        while let string = readString() { strings.append(string) }
        _ = sd_bus_message_exit_container(message)
        return strings
    }
}

/// The `(sb)` or `(s)` signals one match has collected, in order (for fprintd: the status and
/// whether the operation ended, or the finger asked for).
final class DBusSignalWatch {
    fileprivate(set) var received: [(String, Bool)] = []
}
#endif
