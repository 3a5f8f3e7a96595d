import Foundation
import Testing

/// `keysmith secret-service`: one owner of the name, `--replace`, signals, the hand-over.
@Suite("keysmith secret-service command line")
struct ServiceCommandLineTests {
    @Test("a second service is refused naming the owner; --replace takes over and the first stops")
    func ownershipAndReplace() throws {
        let fixture = try BusFixture()
        let first = try fixture.startServer()
        let firstLog = fixture.serverOutput
        let second = try fixture.run(BusFixture.product("keysmith-secret-service").path, ["secret-service", "--bus-address", fixture.busAddress])
        #expect(second.status == 1, "\(second)")
        #expect(second.error.contains("already served by process \(first.processIdentifier)"), "\(second)")
        #expect(second.error.contains("--replace"), "\(second)")
        _ = firstLog
        let replacement = try fixture.startServer(["--replace"])
        try fixture.wait(first, seconds: 30)
        #expect(first.terminationStatus == 0)
        #expect(try fixture.secretTool(["store", "--label=R", "service", "after-replace", "account", "r"], input: "v").status == 0)
        #expect(try fixture.secretTool(["lookup", "service", "after-replace", "account", "r"]).output == "v")
        #expect(replacement.isRunning)
        #expect(try fixture.stopServer() == 0)
        #expect(fixture.serverOutput.contains("stopped"), "\(fixture.serverOutput)")
    }

    @Test("keysmith secret-service hands over to keysmith-secret-service with its arguments, and is listed in help")
    func handOver() throws {
        let fixture = try BusFixture()
        let process = Process()
        process.executableURL = BusFixture.product("keysmith")
        // Global options before the command word reach the server as typed.
        let elsewhere = fixture.directory.appendingPathComponent("other-keychain")
        process.arguments = ["--keychain", elsewhere.path, "secret-service", "--bus-address", fixture.busAddress]
        process.environment = fixture.environment()
        let log = fixture.directory.appendingPathComponent("handover.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        var text = ""
        while !text.contains("serving org.freedesktop.secrets"), Date() < deadline, process.isRunning {
            usleep(20_000)
            text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        }
        #expect(text.contains("keysmith secret-service: serving org.freedesktop.secrets on the bus at \(fixture.busAddress)"), "\(text)")
        #expect(try fixture.secretTool(["store", "--label=H", "service", "handed", "account", "h"], input: "over").status == 0)
        process.terminate()
        try fixture.wait(process, seconds: 30)
        try? handle.close()
        #expect(process.terminationStatus == 0)
        #expect(try fixture.keysmith(["--keychain", elsewhere.path, "find-generic-password", "-s", "handed", "-a", "h", "-w"]).output == "over\n")
        #expect(try fixture.keysmith(["find-generic-password", "-s", "handed", "-a", "h", "-w"]).status == 44)
        let help = try fixture.keysmith(["help"])
        #expect(help.output.contains("secret-service"), "\(help)")
        let usage = try fixture.run(BusFixture.product("keysmith-secret-service").path, ["--bogus"])
        #expect(usage.status == 2 && usage.error.contains("usage: keysmith secret-service"), "\(usage)")
    }

    @Test("keysmith --access-group GROUP secret-service is refused with why: the service serves the shared access group")
    func accessGroupRefused() throws {
        let fixture = try BusFixture()
        let refused = try fixture.keysmith(["--access-group", "com.example.app", "secret-service", "--bus-address", fixture.busAddress])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.error.contains("--access-group"), "\(refused)")
        #expect(refused.error.contains("keysmith.shared"), "\(refused)")
        #expect(!refused.error.contains("unknown argument"), "\(refused)")
    }

    @Test("a bus that cannot be reached is reported with what to check, and exit status 1")
    func unreachableBus() throws {
        let fixture = try BusFixture()
        let missing = "unix:path=\(fixture.directory.path)/no-bus-here"
        let failed = try fixture.run(BusFixture.product("keysmith-secret-service").path, ["--bus-address", missing])
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.error.contains("cannot connect to the bus at \(missing)"), "\(failed)")
        #expect(failed.error.contains("check"), "\(failed)")
        #expect(failed.error.contains("dbus-run-session"), "\(failed)")
    }
}
