import CSystemdBus
import Foundation

/// Receives the method calls and signals a ``BusConnection`` dispatches.
protocol BusMessageHandler: AnyObject {
    /// A method call to any object path. Returns `true` when it was answered.
    func handleMethodCall(_ call: BusCall) -> Bool
    /// `org.freedesktop.DBus.NameOwnerChanged`: `name` now has `newOwner` (empty when it left).
    func nameOwnerChanged(name: String, oldOwner: String, newOwner: String)
    /// This connection lost a well-known name it owned (another owner replaced it).
    func nameLost(_ name: String)
}

/// Why the bus could not be used: the errno sd-bus reported, with a sentence.
public struct BusFailure: Error, Sendable, CustomStringConvertible {
    /// What failed and why.
    public let message: String
    public var description: String { message }

    init(_ what: String, code: Int32) {
        message = "\(what): \(String(cString: strerror(-code)))"
    }

    init(message: String) { self.message = message }
}

/// One connection to a bus through sd-bus, as a service: it owns a name, answers method calls
/// to every object path through one handler, and emits signals. sd-bus is not thread-safe:
/// a connection is used by one thread only.
final class BusConnection {
    let bus: OpaquePointer
    private var slots: [OpaquePointer] = []
    private weak var handler: (any BusMessageHandler)?

    /// Connects to the bus at `address`, or to the session bus (`DBUS_SESSION_BUS_ADDRESS`)
    /// when `address` is `nil`.
    init(address: String?) throws(BusFailure) {
        var bus: OpaquePointer?
        var code: Int32
        if let address {
            code = sd_bus_new(&bus)
            if code >= 0 { code = sd_bus_set_address(bus, address) }
            if code >= 0 { code = sd_bus_set_bus_client(bus, 1) }
            if code >= 0 { code = sd_bus_start(bus) }
        } else {
            code = sd_bus_open_user(&bus)
        }
        guard code >= 0, let bus else {
            if let bus { sd_bus_unref(bus) }
            throw BusFailure("cannot connect to the \(address == nil ? "session bus" : "bus at \(address!)")", code: code)
        }
        self.bus = bus
    }

    deinit {
        for slot in slots { sd_bus_slot_unref(slot) }
        sd_bus_flush_close_unref(bus)
    }

    /// The connection's unique name (`:1.42`).
    var uniqueName: String {
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return "" }
        return String(cString: name)
    }

    /// Sends every method call (to any path) to `handler`, and the bus driver's
    /// `NameOwnerChanged` and `NameLost` signals.
    func attach(_ handler: any BusMessageHandler) throws(BusFailure) {
        self.handler = handler
        let context = Unmanaged.passUnretained(self).toOpaque()
        var slot: OpaquePointer?
        var code = sd_bus_add_fallback(bus, &slot, "/", { message, context, _ in
            guard let message, let context else { return 0 }
            let connection = Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue()
            guard sd_bus_message_is_method_call(message, nil, nil) > 0, let handler = connection.handler else { return 0 }
            return handler.handleMethodCall(BusCall(message: message, connection: connection)) ? 1 : 0
        }, context)
        guard code >= 0, let fallback = slot else { throw BusFailure("cannot receive method calls", code: code) }
        slots.append(fallback)
        slot = nil
        code = sd_bus_add_match(
            bus, &slot,
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'",
            { message, context, _ in
                guard let message, let context else { return 0 }
                let connection = Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue()
                guard BusConnection.isFromBusDriver(message), let values = DBusMessageCoding.readAll(message), values.count == 3,
                    let name = values[0].text, let old = values[1].text, let new = values[2].text
                else { return 0 }
                connection.handler?.nameOwnerChanged(name: name, oldOwner: old, newOwner: new)
                return 0
            }, context)
        guard code >= 0, let match = slot else { throw BusFailure("cannot watch clients leave the bus", code: code) }
        slots.append(match)
        slot = nil
        code = sd_bus_add_match(
            bus, &slot,
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameLost'",
            { message, context, _ in
                guard let message, let context else { return 0 }
                let connection = Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue()
                guard BusConnection.isFromBusDriver(message), let values = DBusMessageCoding.readAll(message), let name = values.first?.text
                else { return 0 }
                connection.handler?.nameLost(name)
                return 0
            }, context)
        guard code >= 0, let lost = slot else { throw BusFailure("cannot watch the service name", code: code) }
        slots.append(lost)
    }

    /// Whether a signal comes from the bus itself. sd-bus also hands a match on
    /// `sender='org.freedesktop.DBus'` the signals another client sends with that interface and
    /// member (to this connection or to everyone); the bus stamps every message with its real
    /// sender, and only its own carry `org.freedesktop.DBus`.
    static func isFromBusDriver(_ message: OpaquePointer) -> Bool {
        guard let sender = sd_bus_message_get_sender(message) else { return false }
        return strcmp(sender, "org.freedesktop.DBus") == 0
    }

    /// The outcome of asking for a well-known name.
    enum NameRequest {
        /// This connection owns the name.
        case owned
        /// Another connection owns it and does not allow replacement; this one waits in the queue.
        case queued
        /// Another connection owns it (without `replace`).
        case taken
    }

    /// Asks the bus for `name`, allowing others to replace this connection; with `replace`,
    /// also replacing the current owner, or queueing behind one that does not allow it.
    func requestName(_ name: String, replace: Bool) throws(BusFailure) -> NameRequest {
        var flags = UInt64(SD_BUS_NAME_ALLOW_REPLACEMENT)
        if replace { flags |= UInt64(SD_BUS_NAME_REPLACE_EXISTING) | UInt64(SD_BUS_NAME_QUEUE) }
        let code = sd_bus_request_name(bus, name, flags)
        if code == -EEXIST { return .taken }
        guard code >= 0 else { throw BusFailure("cannot ask the bus for \(name)", code: code) }
        return code > 0 ? .owned : .queued
    }

    /// Whether this connection owns `name` now.
    func owns(_ name: String) -> Bool {
        (try? callDriver("GetNameOwner", [.string(name)]).first?.text).map { owner in
            Array(owner.utf8) == Array(uniqueName.utf8)
        } ?? false
    }

    /// The process id of the connection that owns `name` (or a unique name), if the bus knows it.
    func processID(of name: String) -> UInt32? {
        guard let value = try? callDriver("GetConnectionUnixProcessID", [.string(name)]).first,
            case .uint32(let pid) = value
        else { return nil }
        return pid
    }

    /// Calls a method of the bus driver (`org.freedesktop.DBus`) and returns its reply's values.
    func callDriver(_ member: String, _ arguments: [DBusValue]) throws(BusFailure) -> [DBusValue] {
        var message: OpaquePointer?
        var code = sd_bus_message_new_method_call(
            bus, &message, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", member)
        guard code >= 0, let message else { throw BusFailure("cannot call the bus", code: code) }
        defer { sd_bus_message_unref(message) }
        code = DBusMessageCoding.append(arguments, to: message)
        guard code >= 0 else { throw BusFailure("cannot call the bus", code: code) }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        code = sd_bus_call(bus, message, 5_000_000, &error, &reply)
        guard code >= 0, let reply else {
            throw BusFailure(message: error.message.map { String(cString: $0) } ?? String(cString: strerror(-code)))
        }
        defer { sd_bus_message_unref(reply) }
        return DBusMessageCoding.readAll(reply) ?? []
    }

    /// Emits a signal.
    func emit(path: String, interface: String, member: String, _ values: [DBusValue]) {
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, path, interface, member) >= 0, let message else { return }
        defer { sd_bus_message_unref(message) }
        guard DBusMessageCoding.append(values, to: message) >= 0 else { return }
        _ = sd_bus_send(bus, message, nil)
    }

    /// Processes what has arrived, then waits for more for at most `timeout` seconds.
    /// - Throws: When the connection to the bus is gone.
    func processAndWait(timeout: Double) throws(BusFailure) {
        while true {
            let processed = sd_bus_process(bus, nil)
            guard processed >= 0 else { throw BusFailure("the bus connection ended", code: processed) }
            if processed == 0 { break }
        }
        let waited = sd_bus_wait(bus, UInt64(timeout * 1_000_000))
        if waited < 0 && waited != -EINTR { throw BusFailure("the bus connection ended", code: waited) }
    }

    /// Sends what is queued.
    func flush() { _ = sd_bus_flush(bus) }
}

/// One method call being answered.
struct BusCall {
    let message: OpaquePointer
    let connection: BusConnection

    var path: String { sd_bus_message_get_path(message).map { String(cString: $0) } ?? "" }
    var interface: String { sd_bus_message_get_interface(message).map { String(cString: $0) } ?? "" }
    var member: String { sd_bus_message_get_member(message).map { String(cString: $0) } ?? "" }
    var sender: String { sd_bus_message_get_sender(message).map { String(cString: $0) } ?? "" }
    var signature: String { sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? "" }

    /// The call's arguments, or `nil` when the body cannot be read.
    func arguments() -> [DBusValue]? {
        _ = sd_bus_message_rewind(message, 1)
        return DBusMessageCoding.readAll(message)
    }

    /// Answers with these values.
    func reply(_ values: [DBusValue]) {
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return }
        defer { sd_bus_message_unref(reply) }
        if DBusMessageCoding.append(values, to: reply) < 0 {
            fail(.failed("the answer could not be encoded."))
            return
        }
        _ = sd_bus_send(connection.bus, reply, nil)
    }

    /// Answers with an error.
    func fail(_ error: SecretServiceError) {
        var busError = sd_bus_error()
        defer { sd_bus_error_free(&busError) }
        _ = sd_bus_error_set(&busError, error.name, error.message)
        _ = sd_bus_reply_method_error(message, &busError)
    }

    /// The caller's process id and executable, as far as the bus and `/proc` tell.
    func callerProcess() -> (pid: Int32?, executable: String?) {
        var creds: OpaquePointer?
        let mask = UInt64(SD_BUS_CREDS_PID) | UInt64(SD_BUS_CREDS_EXE) | UInt64(SD_BUS_CREDS_AUGMENT)
        guard sd_bus_query_sender_creds(message, mask, &creds) >= 0, let creds else { return (nil, nil) }
        defer { sd_bus_creds_unref(creds) }
        var pid: pid_t = 0
        let knownPID = sd_bus_creds_get_pid(creds, &pid) >= 0 ? pid : nil
        var exe: UnsafePointer<CChar>?
        var executable = sd_bus_creds_get_exe(creds, &exe) >= 0 ? exe.map { String(cString: $0) } : nil
        if executable == nil, let knownPID {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink("/proc/\(knownPID)/exe", &buffer, buffer.count - 1)
            if length > 0 { executable = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
        return (knownPID, executable)
    }
}
