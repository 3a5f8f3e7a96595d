import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// A private D-Bus daemon (never the machine's session bus) on a socket in a temporary
// directory, the built keysmith-secret-service serving on it over a temporary keychain, and
// clients (secret-tool, busctl, the keysmith tool, python3-dbus scripts) run against it.

/// What a client run printed and how it ended.
struct ClientRun: CustomStringConvertible {
    let status: Int32
    let output: String
    let error: String

    var description: String { "exit \(status)\nstdout: \(output)\nstderr: \(error)" }
}

struct FixtureFailure: Error, CustomStringConvertible {
    let description: String
}

/// One private bus with the service on it, in its own temporary directory.
final class BusFixture {
    let directory: URL
    let keychain: URL
    let busAddress: String
    private let daemon: Process
    private(set) var server: Process?
    private(set) var serverLog: URL

    /// The tools under test, beside the test binary.
    static func product(_ name: String) -> URL {
        let products = Bundle.main.executableURL?.deletingLastPathComponent()
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidate = products
        for _ in 0..<4 {
            let url = candidate.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            candidate.deleteLastPathComponent()
        }
        return products.appendingPathComponent(name)
    }

    /// Starts the bus (not the service).
    init() throws {
        var template = Array((NSTemporaryDirectory() + "/keysmith-ss-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw FixtureFailure(description: "mkdtemp failed") }
        directory = URL(fileURLWithPath: String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        keychain = directory.appendingPathComponent("keychain")
        serverLog = directory.appendingPathComponent("server-0.log")
        let socket = directory.appendingPathComponent("bus").path
        busAddress = "unix:path=\(socket)"
        // No <servicedir>: nothing is activated behind the test's back.
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        let configURL = directory.appendingPathComponent("bus.conf")
        try Data(config.utf8).write(to: configURL)
        daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(configURL.path)", "--nofork"]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: socket) {
            guard Date() < deadline, daemon.isRunning else { throw FixtureFailure(description: "dbus-daemon did not start") }
            usleep(10_000)
        }
    }

    deinit {
        if let server, server.isRunning {
            server.terminate()
            try? wait(server, seconds: 30)
        }
        if daemon.isRunning {
            // dbus-daemon does not end on SIGTERM.
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The environment of every process run here: the private bus, the temporary keychain,
    /// a temporary HOME.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": directory.path, "KEYSMITH_HOME": keychain.path,
            "DBUS_SESSION_BUS_ADDRESS": busAddress, "XDG_RUNTIME_DIR": directory.path, "LANG": "C.UTF-8",
        ]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Starts keysmith-secret-service and waits for its ready line.
    /// - Parameters:
    ///   - arguments: Its arguments (the bus address is added).
    ///   - extra: More environment.
    ///   - expectReady: Wait for the ready line (else return once it started).
    @discardableResult
    func startServer(_ arguments: [String] = [], extra: [String: String] = [:], expectReady: Bool = true) throws -> Process {
        let process = Process()
        process.executableURL = Self.product("keysmith-secret-service")
        process.arguments = ["secret-service", "--bus-address", busAddress] + arguments
        process.environment = environment(extra)
        serverLog = directory.appendingPathComponent("server-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: serverLog.path, contents: nil)
        let log = try FileHandle(forWritingTo: serverLog)
        process.standardError = log
        process.standardOutput = log
        try process.run()
        try? log.close()
        server = process
        if expectReady {
            let deadline = Date().addingTimeInterval(60)
            while !serverOutput.contains("serving org.freedesktop.secrets") {
                guard process.isRunning else { throw FixtureFailure(description: "the service ended: \(serverOutput)") }
                guard Date() < deadline else { throw FixtureFailure(description: "the service did not get ready: \(serverOutput)") }
                usleep(20_000)
            }
        }
        return process
    }

    /// What the latest server printed.
    var serverOutput: String {
        (try? String(contentsOf: serverLog, encoding: .utf8)) ?? ""
    }

    /// Stops the server with SIGTERM and returns its exit status.
    func stopServer() throws -> Int32 {
        guard let server else { return -1 }
        server.terminate()
        try wait(server, seconds: 30)
        self.server = nil
        return server.terminationStatus
    }

    /// Waits for a process to end, killing it after `seconds`.
    func wait(_ process: Process, seconds: Double) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() > deadline {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw FixtureFailure(description: "a process did not end in time")
            }
            usleep(10_000)
        }
        process.waitUntilExit()
    }

    /// Runs a client to its end.
    func run(_ executable: String, _ arguments: [String], input: String? = nil, extra: [String: String] = [:], seconds: Double = 60) throws -> ClientRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment(extra)
        let output = directory.appendingPathComponent("out-\(UUID().uuidString)")
        let error = directory.appendingPathComponent("err-\(UUID().uuidString)")
        let inputFile = directory.appendingPathComponent("in-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: error.path, contents: nil)
        _ = FileManager.default.createFile(atPath: inputFile.path, contents: Data((input ?? "").utf8))
        defer { for url in [output, error, inputFile] { try? FileManager.default.removeItem(at: url) } }
        let outputHandle = try FileHandle(forWritingTo: output)
        let errorHandle = try FileHandle(forWritingTo: error)
        let inputHandle = try FileHandle(forReadingFrom: inputFile)
        defer {
            try? outputHandle.close()
            try? errorHandle.close()
            try? inputHandle.close()
        }
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        process.standardInput = inputHandle
        try process.run()
        try wait(process, seconds: seconds)
        return ClientRun(
            status: process.terminationStatus, output: (try? String(contentsOf: output, encoding: .utf8)) ?? "",
            error: (try? String(contentsOf: error, encoding: .utf8)) ?? "")
    }

    /// `secret-tool ARGUMENTS`.
    func secretTool(_ arguments: [String], input: String? = nil) throws -> ClientRun {
        try run("/usr/bin/secret-tool", arguments, input: input)
    }

    /// `keysmith ARGUMENTS` over the temporary keychain.
    func keysmith(_ arguments: [String], input: String? = nil) throws -> ClientRun {
        try run(Self.product("keysmith").path, arguments, input: input)
    }

    /// `busctl --address=BUS call org.freedesktop.secrets PATH INTERFACE METHOD ARGUMENTS`.
    func call(_ path: String, _ interface: String, _ method: String, _ arguments: [String] = []) throws -> ClientRun {
        try run("/usr/bin/busctl", ["--address=\(busAddress)", "call", "org.freedesktop.secrets", path, interface, method] + arguments)
    }

    /// Runs a python3-dbus script (the system Python, which has the dbus module) with the bus
    /// address as its first argument.
    func python(_ script: String, _ arguments: [String] = [], extra: [String: String] = [:], seconds: Double = 60) throws -> ClientRun {
        let url = directory.appendingPathComponent("client-\(UUID().uuidString).py")
        try Data((Self.pythonPrelude + script).utf8).write(to: url)
        return try run("/usr/bin/python3", [url.path, busAddress] + arguments, extra: extra, seconds: seconds)
    }

    /// Shared by the python clients: the bus, the service and helpers.
    static let pythonPrelude = """
        import sys, time, dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        BASE = "/org/freedesktop/secrets"
        def obj(path): return bus.get_object("org.freedesktop.secrets", path)
        def iface(path, name): return dbus.Interface(obj(path), name)
        service = iface(BASE, "org.freedesktop.Secret.Service")
        def prop(path, interface, name): return iface(path, "org.freedesktop.DBus.Properties").Get(interface, name)
        def error_name(call):
            try:
                call()
            except dbus.exceptions.DBusException as error:
                return error.get_dbus_name()
            return "no error"

        """

    /// Writes an executable file in the fixture's directory and returns its path.
    func script(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        chmod(url.path, 0o700)
        return url.path
    }
}
