import Foundation
import KeysmithCLI
import KeysmithFleetCLI
import Testing

/// A sink that collects text and lets a test wait for a line.
final class WaitingSink: TextSink, @unchecked Sendable {
    private let condition = NSCondition()
    private var collected: [UInt8] = []
    var isTerminal: Bool { false }

    func write(_ bytes: [UInt8]) {
        condition.lock()
        collected += bytes
        condition.broadcast()
        condition.unlock()
    }

    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: collected, as: UTF8.self)
    }

    /// Waits up to `timeout` seconds for text containing `needle`.
    func wait(for needle: String, timeout: TimeInterval = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !String(decoding: collected, as: UTF8.self).contains(needle) {
            if !condition.wait(until: deadline) { return String(decoding: collected, as: UTF8.self).contains(needle) }
        }
        return true
    }
}

/// What one in-process run of `keysmith` printed.
struct FleetRun {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs `keysmith ARGUMENTS` in-process against the keychain in `home`, with `input` as
/// standard input.
func keysmith(
    _ arguments: [String], home: URL, input: String? = nil, inputBytes: Data? = nil, stdout: WaitingSink = WaitingSink(),
    stderr: WaitingSink = WaitingSink()
) -> FleetRun {
    let output = Output(standardOutput: stdout, standardError: stderr)
    let secretInput = SecretInput(
        readAllStandardInput: { inputBytes ?? input.map { Data($0.utf8) } }, standardInputIsTerminal: { false })
    let status = KeysmithCommandLine.run(
        ["keysmith", "--keychain", home.path] + arguments, environment: ["KEYSMITH_HOME": home.path], output: output,
        secretInput: secretInput, fleet: .linked(FleetCommandImplementation()))
    return FleetRun(status: status, stdout: stdout.text, stderr: stderr.text)
}

/// The result of a run on another thread.
final class WatchResult: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: FleetRun?

    func finish(_ run: FleetRun) {
        condition.lock()
        result = run
        condition.broadcast()
        condition.unlock()
    }

    func wait(timeout: TimeInterval = 40) -> FleetRun? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while result == nil { if !condition.wait(until: deadline) { break } }
        return result
    }
}

@Suite("keysmith fleet", .serialized)
struct FleetCommandTests {
    @Test("put --stdin-exact publishes every byte; --stdin drops one trailing CR LF")
    func putWithExactStandardInput() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let machine = FleetMachine()
        var run = keysmith(
            ["fleet", "init", "--endpoints", cluster.endpoints.joined(separator: ","), "--prefix", "/keysmith/exact"],
            home: machine.home)
        #expect(run.status == 0, "\(run.stderr)")
        // 30 random bytes and a CR LF are published as 32 bytes; --stdin would drop the CR LF.
        var random = SystemRandomNumberGenerator()
        let exactKey = Data((0..<30).map { _ in UInt8.random(in: 0...255, using: &random) }) + Data([0x0D, 0x0A])
        run = keysmith(["--json", "fleet", "put", "exact_key", "--version", "1", "--stdin-exact"], home: machine.home, inputBytes: exactKey)
        #expect(run.status == 0, "\(run.stderr)")
        var report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(report?["bytes"] as? Int == 32, "\(run.stdout)")
        run = keysmith(["--json", "fleet", "put", "exact_key", "--version", "2", "--stdin"], home: machine.home, inputBytes: exactKey)
        report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(report?["bytes"] as? Int == 30, "\(run.stdout)")
    }

    @Test("init, put, list, resolve --fleet, export-key, join, watch and retire against etcd")
    func fleetCommands() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let first = FleetMachine()
        let second = FleetMachine()
        let endpoints = cluster.endpoints.joined(separator: ",")

        var run = keysmith(["fleet", "init", "--endpoints", endpoints, "--prefix", "/keysmith/cli"], home: first.home)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("fingerprint"))
        run = keysmith(["fleet", "init", "--endpoints", endpoints, "--prefix", "/keysmith/cli"], home: first.home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("already has a fleet key"))

        run = keysmith(["fleet", "put", "api_key", "--version", "1", "--stdin"], home: first.home, input: "first-key\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stdout.contains("first-key"))
        run = keysmith(["fleet", "put", "api_key", "--version", "1", "--generate", "32"], home: first.home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("already exists in etcd"))

        run = keysmith(["--json", "fleet", "list"], home: first.home)
        #expect(run.status == 0)
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let keys = try #require(listed["keys"] as? [[String: Any]])
        #expect(keys.first?["identifier"] as? String == "api_key")
        #expect(keys.first?["versions"] as? [String] == ["1"])
        #expect(!run.stdout.contains("first-key"))

        run = keysmith(["resolve", "api_key", "--fleet", "--reveal", "--quiet"], home: first.home)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "first-key\n")
        run = keysmith(["resolve", "missing_key", "--fleet"], home: first.home)
        #expect(run.status == 44)
        run = keysmith(["explain", "api_key", "--fleet"], home: first.home)
        #expect(run.status == 0)
        #expect(run.stdout.contains("Fleet(etcd)"))

        // A second machine joins with the exported key file.
        let file = first.home.appendingPathComponent("fleet.key").path
        run = keysmith(["fleet", "export-key", file, "--stdin"], home: first.home, input: "a long passphrase\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = keysmith(
            ["fleet", "join", "--endpoints", endpoints, "--prefix", "/keysmith/cli/", "--key", file, "--stdin"],
            home: second.home, input: "not the passphrase\n")
        #expect(run.status == 1)
        #expect(run.stderr.contains("passphrase does not open"))
        run = keysmith(
            ["fleet", "join", "--endpoints", endpoints, "--prefix", "/keysmith/cli/", "--key", file, "--stdin"],
            home: second.home, input: "a long passphrase\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("etcd holds 1 key"))
        run = keysmith(["resolve", "api_key", "--fleet", "--reveal", "--quiet"], home: second.home)
        #expect(run.stdout == "first-key\n")

        // fleet watch on the second machine sees a version put by the first.
        let watchOut = WaitingSink()
        let watchErr = WaitingSink()
        let secondHome = second.home
        // On a thread of its own: the command blocks until its change comes.
        let watched = WatchResult()
        let thread = Thread {
            watched.finish(
                keysmith(
                    ["fleet", "watch", "--count", "1", "--timeout", "30"], home: secondHome, stdout: watchOut,
                    stderr: watchErr))
        }
        thread.start()
        #expect(await blocking { watchErr.wait(for: "in step with etcd") })
        let start = ContinuousClock.now
        run = keysmith(["fleet", "put", "api_key", "--version", "2", "--generate", "32"], home: first.home)
        #expect(run.status == 0)
        #expect(await blocking { watchOut.wait(for: "api_key 2\n") })
        print("fleet: keysmith fleet watch printed the new version \(milliseconds(ContinuousClock.now - start)) ms after put")
        let result = try #require(await blocking { watched.wait() })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "api_key 2\n")

        // A value swapped in etcd is a failure with its own message, not "not found".
        let one = try await cluster.ctl(["get", "/keysmith/cli/api_key/1", "--print-value-only"])
            .trimmingCharacters(in: .newlines)
        try await cluster.ctl(["put", "/keysmith/cli/api_key/2", one])
        run = keysmith(["resolve", "api_key", "--fleet"], home: second.home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("refused fleet key \"api_key\" version 2"))
        #expect(!run.stdout.contains("first-key"))

        // The swapped value does not open here: retiring it takes --force.
        run = keysmith(["fleet", "retire", "api_key", "--version", "2"], home: first.home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("this machine cannot open it"), "\(run.stderr)")
        run = keysmith(["fleet", "retire", "api_key", "--version", "2", "--force"], home: first.home)
        #expect(run.status == 0, "\(run.stderr)")
        run = keysmith(["fleet", "retire", "api_key", "--version", "2", "--force"], home: first.home)
        #expect(run.status == 44)
        run = keysmith(["fleet", "list"], home: first.home, input: nil)
        #expect(!run.stdout.contains("api_key     2"))
    }

    @Test("fleet commands without a fleet, or with bad arguments, say what to do")
    func usageErrors() {
        let machine = FleetMachine()
        let home = machine.home
        var run = keysmith(["fleet", "list"], home: home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("keysmith fleet init"))
        run = keysmith(["fleet", "frobnicate"], home: home)
        #expect(run.status == 2)
        run = keysmith(["fleet", "init", "--prefix", "/p/"], home: home)
        #expect(run.status == 2)
        #expect(run.stderr.contains("--endpoints"))
        run = keysmith(["fleet", "init", "--endpoints", "ftp://x", "--prefix", "/p/"], home: home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("not an http:// or https:// URL"))
    }
}
