import Foundation
import Testing

/// `keysmith` does not link the etcd client: the command lines that need it run in
/// `keysmith-fleet`, beside the executable, with the same arguments, output and exit status.
struct FleetHandOverTests {
    /// The fleet command and `--fleet` reach the fleet implementation through the built
    /// `keysmith` (here: a keychain without a fleet, which only the implementation can tell).
    @Test func fleetCommandLinesRunInKeysmithFleet() throws {
        let home = TemporaryHome()
        let list = try keysmith(["fleet", "list"], home: home)
        #expect(list.status == 1, "\(list)")
        #expect(list.stdout.isEmpty)
        #expect(list.stderr.hasPrefix("keysmith: fleet: this keychain has no fleet settings"), "\(list)")
        #expect(list.stderr.contains("to fix: create a fleet with keysmith fleet init"), "\(list)")

        let resolve = try keysmith(["resolve", "api_key", "--fleet"], home: home)
        #expect(resolve.status == 1, "\(resolve)")
        #expect(resolve.stderr.hasPrefix("keysmith: resolve: this keychain has no fleet settings"), "\(resolve)")

        let json = try keysmith(["--json", "fleet", "list"], home: home)
        #expect(json.status == 1, "\(json)")
        #expect(json.stderr.hasPrefix("keysmith: fleet: this keychain has no fleet settings"), "\(json)")

        let unknown = try keysmith(["fleet", "bogus"], home: home)
        #expect(unknown.status == 2, "\(unknown)")
        #expect(unknown.stderr.contains("unknown fleet subcommand 'bogus'"), "\(unknown)")
        #expect(unknown.stderr.contains("usage: keysmith fleet "), "\(unknown)")
        #expect(!FileManager.default.fileExists(atPath: home.keychain.path), "nothing here creates a keychain")
    }

    /// Help and usage errors of the fleet command come from `keysmith` itself, the same as
    /// before; a lookup without `--fleet` never needs `keysmith-fleet`.
    @Test func fleetHelpAndOtherCommandsNeedNoFleetExecutable() throws {
        let home = TemporaryHome()
        let alone = try LoneKeysmith()
        let help = try alone.run(["help", "fleet"], home: home)
        #expect(help.status == 0, "\(help)")
        #expect(help.stdout.hasPrefix("usage: keysmith fleet "), "\(help)")
        let dashHelp = try alone.run(["fleet", "--help"], home: home)
        #expect(dashHelp.stdout == help.stdout)
        let extra = try alone.run(["fleet", "list", "one", "two"], home: home)
        #expect(extra.status == 2, "\(extra)")
        #expect(extra.stderr.contains("unexpected argument (3 characters, not shown"), "\(extra)")
        let missing = try alone.run(["resolve", "api_key"], home: home)
        #expect(missing.status == 44, "\(missing)")
    }

    /// Without `keysmith-fleet` beside it, `keysmith` says so (exit status 1) and names what
    /// to install.
    @Test func withoutKeysmithFleetTheFleetCommandsSaySo() throws {
        let home = TemporaryHome()
        let alone = try LoneKeysmith()
        for arguments in [["fleet", "list"], ["resolve", "api_key", "--fleet"]] {
            let run = try alone.run(arguments, home: home)
            #expect(run.status == 1, "\(run)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains("the fleet commands are in keysmith-fleet, which could not be started"), "\(run)")
            #expect(run.stderr.contains("to fix: install keysmith-fleet beside keysmith"), "\(run)")
        }
    }
}

/// A copy of the built `keysmith` in a directory of its own, without `keysmith-fleet`.
private struct LoneKeysmith {
    let directory: TemporaryHome
    let executable: URL

    init() throws {
        directory = TemporaryHome()
        executable = directory.url.appendingPathComponent("keysmith")
        try FileManager.default.copyItem(at: keysmithExecutable(), to: executable)
    }

    func run(_ arguments: [String], home: TemporaryHome) throws -> RunResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--keychain", home.keychain.path] + arguments
        process.environment = subprocessEnvironment(home: home)
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let standardOutput = output.fileHandleForReading.readDataToEndOfFile()
        let standardError = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return RunResult(status: process.terminationStatus, standardOutput: standardOutput, standardError: standardError)
    }
}
