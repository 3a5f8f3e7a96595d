#if !canImport(Security)
import Foundation
import Testing

@testable import KeychainServices

#if canImport(Glibc)
import Glibc
#endif

/// The real fprintd with libfprint's virtual reader, on a private D-Bus bus of its own
/// (never the machine's system bus): a `dbus-daemon` with a private configuration that
/// starts, on first use, fprintd (`FP_DRIVERS_WHITELIST=virtual_device`, its prints in a
/// temporary state directory) and a polkit stand-in from python3-dbusmock that allows the
/// fingerprint actions (there is no logind session here for real polkit to approve).
///
/// The test plays the finger: after `Claim`, fprintd's virtual reader listens on a socket and
/// takes one command per connection (`SCAN <finger id>`, `RETRY <n>`, `UNPLUG`); see
/// ``reader(_:sourceLocation:)`` for when to send them.
/// Its state is fixed once started, so the authenticator's callback may use it from its thread.
final class PrivateFprintd: @unchecked Sendable {
    let directory: URL
    /// The bus's address (`unix:path=…`).
    let address: String
    private let daemon: Process

    static let fprintd = "/usr/libexec/fprintd"
    static let python = "/usr/bin/python3"

    /// Whether fprintd, dbus-daemon and python3-dbusmock are installed (`make deps` installs them).
    static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: fprintd)
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/polkitd.py")
    }

    var readerSocket: String { directory.appendingPathComponent("reader.sock").path }

    init() throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("ks-fp-\(UUID().uuidString.prefix(8))")
        let services = directory.appendingPathComponent("services")
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let root = directory.path
        try Self.write(
            """
            '''polkit stand-in for tests: every action is allowed'''
            from dbusmock.templates.polkitd import *  # noqa: F401,F403
            from dbusmock.templates import polkitd as _polkitd


            def load(mock, parameters):
                _polkitd.load(mock, parameters)
                mock.allow_unknown = True

            """, to: root + "/polkit_allow_all.py")
        try Self.write(
            """
            [D-BUS Service]
            Name=org.freedesktop.PolicyKit1
            Exec=\(Self.python) -m dbusmock --system --template \(root)/polkit_allow_all.py

            """, to: root + "/services/polkit.service")
        try Self.write(
            """
            [D-BUS Service]
            Name=net.reactivated.Fprint
            Exec=/usr/bin/env STATE_DIRECTORY=\(root)/state FP_DRIVERS_WHITELIST=virtual_device FP_VIRTUAL_DEVICE=\(root)/reader.sock \(Self.fprintd) -t

            """, to: root + "/services/fprintd.service")
        try Self.write(
            """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <listen>unix:path=\(root)/bus</listen>
              <auth>EXTERNAL</auth>
              <servicedir>\(root)/services</servicedir>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>

            """, to: root + "/bus.conf")
        address = "unix:path=\(root)/bus"
        daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(root)/bus.conf", "--nofork", "--print-address=1"]
        var environment = ProcessInfo.processInfo.environment
        // What the services it starts (fprintd, the polkit stand-in) connect to as "the system bus".
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        daemon.environment = environment
        let output = Pipe()
        daemon.standardOutput = output
        daemon.standardError = FileHandle(forWritingAtPath: "/dev/null")
        do {
            try daemon.run()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        // The daemon prints its address once it listens.
        var printed = Data()
        while !printed.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                stop()
                throw CocoaError(.fileReadUnknown)
            }
            printed += chunk
        }
    }

    /// Claims the reader from another connection, as another program using it would; the claim
    /// lasts as long as the returned connection.
    func claimReader() throws -> DBusConnection {
        let connection = try DBusConnection(address: address)
        let manager = try connection.call(
            FprintdAuthenticator.service, FprintdAuthenticator.managerPath, FprintdAuthenticator.managerInterface, "GetDefaultDevice")
        guard let device = manager.readString(type: "o") else { throw CocoaError(.fileReadUnknown) }
        _ = try connection.call(FprintdAuthenticator.service, device, FprintdAuthenticator.deviceInterface, "Claim", [""])
        return connection
    }

    /// Waits until fprintd has noticed that a program which claimed the reader and left
    /// without releasing it is gone: until then (it learns it from the bus, a moment after the
    /// connection closes) a `Claim` is refused as AlreadyInUse. Claims and releases the reader
    /// until a claim succeeds, for up to five seconds, and records a test failure if none does.
    func waitUntilReaderIsFree(sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = Date(timeIntervalSinceNow: 5)
        repeat {
            if let connection = try? claimReader() {
                if let device = try? connection.call(
                    FprintdAuthenticator.service, FprintdAuthenticator.managerPath, FprintdAuthenticator.managerInterface,
                    "GetDefaultDevice"
                ).readString(type: "o") {
                    _ = try? connection.call(FprintdAuthenticator.service, device, FprintdAuthenticator.deviceInterface, "Release")
                }
                return
            }
            usleep(20_000)
        } while Date() < deadline
        Issue.record("fprintd still refused to give out the reader 5 s after its last holder left", sourceLocation: sourceLocation)
    }

    private static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Stops the bus (fprintd and the polkit stand-in leave with it) and removes the directory.
    func stop() {
        // SIGKILL: the daemon inherits the test process's signal mask, which blocks SIGTERM.
        kill(daemon.processIdentifier, SIGKILL)
        daemon.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Puts a finger (`SCAN id`) or another command on the virtual reader, and returns once the
    /// reader has taken it.
    ///
    /// The reader takes commands while fprintd has it claimed, and keeps a touch until an
    /// enrollment or verification asks for one; a command that arrives while the reader is
    /// being opened is dropped, so send commands once `Claim` has returned. A command that
    /// cannot be delivered within five seconds is recorded as a test failure, never dropped
    /// silently (a lost touch would leave the verification waiting for its whole timeout).
    /// A retried delivery could repeat a command the reader took just before the connection
    /// failed; a leftover touch then makes a later step fail, never pass.
    func reader(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = Date(timeIntervalSinceNow: 5)
        var lastError: Int32 = 0
        repeat {
            if deliver(command, error: &lastError) { return }
            usleep(20_000)
        } while Date() < deadline
        Issue.record("The virtual reader did not take \"\(command)\" (errno \(lastError))", sourceLocation: sourceLocation)
    }

    /// One attempt: `true` once the reader has closed the connection after reading `command`,
    /// `false` when it could not be reached (errno in `error`).
    private func deliver(_ command: String, error: inout Int32) -> Bool {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else {
            error = errno
            return false
        }
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            let bytes = Array(readerSocket.utf8)
            path.copyBytes(from: bytes.prefix(path.count - 1))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            error = errno
            return false
        }
        let bytes = Array(command.utf8)
        let sent = bytes.withUnsafeBytes { send(socket, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else {
            error = errno
            return false
        }
        shutdown(socket, Int32(SHUT_WR))
        var reply = [UInt8](repeating: 0, count: 64)
        // The reader closes the connection once it has the command (recv returns 0); an error
        // here (ECONNRESET) means the reader dropped the connection unread.
        let received = recv(socket, &reply, reply.count, 0)
        guard received >= 0 else {
            error = errno
            return false
        }
        return true
    }

    /// Enrolls `finger` (for example "right-index-finger") for the user running the tests, with
    /// the virtual finger `id`, as `fprintd-enroll` would.
    func enroll(_ finger: String, id: String) throws {
        let connection = try DBusConnection(address: address)
        let manager = try connection.call(
            FprintdAuthenticator.service, FprintdAuthenticator.managerPath, FprintdAuthenticator.managerInterface, "GetDefaultDevice")
        guard let device = manager.readString(type: "o") else { throw CocoaError(.fileReadUnknown) }
        let interface = FprintdAuthenticator.deviceInterface
        _ = try connection.call(FprintdAuthenticator.service, device, interface, "Claim", [""])
        defer { _ = try? connection.call(FprintdAuthenticator.service, device, interface, "Release") }
        // Five touches, given before the enrollment starts: the reader keeps them until it asks.
        for _ in 0..<5 { reader("SCAN \(id)") }
        let status = try connection.watch(sender: FprintdAuthenticator.service, path: device, interface: interface, member: "EnrollStatus")
        _ = try connection.call(FprintdAuthenticator.service, device, interface, "EnrollStart", [finger])
        defer { _ = try? connection.call(FprintdAuthenticator.service, device, interface, "EnrollStop") }
        let finished = try connection.wait(for: status, until: Date(timeIntervalSinceNow: 30)) { received in
            received.contains { $0.1 }
        }
        guard finished, status.received.last?.0 == "enroll-completed" else {
            throw DBusError(name: "enroll", message: "\(status.received)")
        }
    }
}
#endif
