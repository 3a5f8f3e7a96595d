import Foundation
import KeysmithCLI
import Testing

/// A canary secret is stored, then every command runs without its reveal flag (-w, -g,
/// -d): the canary must never appear on standard output or standard error, in success or
/// in failure. Every run's exit status is checked against what it should be, so a command
/// that fails early (and so prints nothing to leak) fails the test instead of passing it,
/// and generated code is scanned in every form the generator can write bytes in.
struct SecretCanaryTests {
    static let canary = "CANARY-7f3a9c1e-do-not-print"

    @Test func noCommandPrintsAStoredSecretWithoutItsRevealFlag() throws {
        let home = TemporaryHome()
        let canary = Self.canary
        try storeGenericPassword(canary, service: "canary.example", account: "bird", home: home, extra: ["-l", "Canary"])
        let inet = try keysmith(
            ["add-internet-password", "-s", "canary.example", "-r", "https", "-a", "bird", "--stdin"], home: home,
            standardInput: canary)
        #expect(inet.status == 0, "add-internet-password exited \(inet.status)")

        var runs: [(String, RunResult)] = []
        var unexpectedStatuses: [String] = []
        func record(_ arguments: [String], _ result: RunResult, expect: Int32) {
            runs.append((arguments.joined(separator: " "), result))
            // The status only: the output could hold the secret.
            if result.status != expect { unexpectedStatuses.append("\(arguments.joined(separator: " ")): exit \(result.status), expected \(expect)") }
        }
        func run(_ arguments: [String], standardInput: String? = nil, expect: Int32 = 0) throws {
            record(arguments, try keysmith(arguments, home: home, standardInput: standardInput), expect: expect)
        }
        let generic = ["-s", "canary.example", "-a", "bird"]
        let internet = ["-s", "canary.example", "-a", "bird", "-r", "https"]
        // Reading, in every output mode.
        for mode in [[], ["--json"], ["--quiet"]] {
            try run(["find-generic-password"] + generic + mode)
            try run(["find-internet-password"] + internet + mode)
            try run(["dump-keychain"] + mode)
        }
        try run(["find-generic-password", "-l", "Canary"])
        try run(["find-generic-password", "-s", "canary.example"])
        // Writing: a duplicate (fails), an update of another item, an add with JSON output.
        try run(["add-generic-password"] + generic + ["--stdin"], standardInput: "other", expect: 45)
        try run(["add-internet-password"] + internet + ["--stdin", "--json"], standardInput: "other", expect: 45)
        try run(["add-generic-password", "-s", "second", "-a", "x", "--stdin", "--json"], standardInput: "other")
        try run(["add-generic-password", "-s", "second", "-a", "x", "-U", "--stdin"], standardInput: "other")
        // Failures: not found, bad usage, wrong access group, wrong protocol.
        try run(["find-generic-password", "-s", "canary.example", "-a", "nobody"], expect: 44)
        try run(["find-generic-password", "-s", "canary.example", "--access-group", "elsewhere"], expect: 44)
        try run(["find-internet-password", "-s", "canary.example", "-r", "ssh"], expect: 44)
        try run(["find-generic-password", "-s"], expect: 2)
        try run(["dump-keychain", "--bogus"], expect: 2)
        // The retrieval commands: the canary is a key in the keychain (stored by rotate), in a
        // config file and in the environment.
        try run(["rotate", "canary_key", "--stdin", "--version", "2024.06.01"], standardInput: canary)
        let keys = home.url.appendingPathComponent("Keys.json")
        try Data(#"{"canary_key": {"value": "\#(Data(canary.utf8).base64EncodedString())", "version": "2024.05.01"}, "file_only": "\#(canary)"}"#.utf8)
            .write(to: keys)
        let sources = ["--config", keys.path, "--env-prefix", "CANARY"]
        let environment = ["CANARY_ENV_ONLY": canary, "CANARY_CANARY_KEY": canary]
        func runWithEnvironment(_ arguments: [String], expect: Int32 = 0) throws {
            record(arguments, try keysmith(arguments, home: home, environment: environment), expect: expect)
        }
        for mode in [[], ["--json"], ["--quiet"]] {
            try runWithEnvironment(["resolve", "canary_key"] + sources + mode)
            try runWithEnvironment(["resolve", "file_only"] + sources + mode)
            try runWithEnvironment(["resolve", "env_only"] + sources + mode)
            try runWithEnvironment(["resolve", "canaryKey", "--version", "2024.05.01"] + sources + mode)
            try runWithEnvironment(["explain", "canary_key"] + sources + mode)
            try runWithEnvironment(["explain", "file_only", "--min-version", "1"] + sources + mode, expect: 44)
            try runWithEnvironment(["audit"] + sources + mode)
            try runWithEnvironment(["audit", "--sensitive", "file_only"] + sources + mode)
        }
        // Failures: not found, refused by policy, a bad version request.
        try runWithEnvironment(["resolve", "nothing"] + sources, expect: 44)
        try runWithEnvironment(["resolve", "file_only", "--sensitive", "file_only"] + sources, expect: 3)
        try runWithEnvironment(["explain", "env_only", "--sensitive", "env_only"] + sources, expect: 3)
        try runWithEnvironment(["resolve", "canary_key", "--min-version", "2030"] + sources, expect: 44)
        try run(["rotate", "canary_key", "--stdin", "--version", "2024.06.01"], standardInput: canary, expect: 1)
        try run(["rotate", "canary_key", "--generate", "16", "--version", "2024.07.01", "--json"])
        try run(["rotate", "canary_key", "--stdin", "--version", "2024.08.01", "--service", "other.keys", "--json"], standardInput: canary)
        // migrate-service, twice, of a service that holds the canary.
        try storeGenericPassword(canary, service: "canary.old", account: "bird", home: home)
        try run(["migrate-service", "canary.old", "canary.new"])
        try run(["migrate-service", "canary.old", "canary.new", "--json"])
        try storeGenericPassword(canary, service: "canary.old", account: "bird", home: home)
        try storeGenericPassword("different", service: "canary.clash", account: "bird", home: home)
        try run(["migrate-service", "canary.old", "canary.clash"], expect: 1)
        // generate, from a keys file and from the environment.
        let keysFile = home.url.appendingPathComponent("Keys.keysmith.json")
        try Data(#"{"debug": {"canary": "\#(canary)"}}"#.utf8).write(to: keysFile)
        // Each generation writes its own file, so a failed one cannot pass by leaving an
        // earlier file in place; Keys.json is a config file, not a keys file: refused.
        let generatedFromFile = home.url.appendingPathComponent("FromFile.swift").path
        let generatedFromEnvironment = home.url.appendingPathComponent("FromEnvironment.swift").path
        let notGenerated = home.url.appendingPathComponent("NotGenerated.swift").path
        try run(["generate", "--input", keysFile.path, "--output", generatedFromFile])
        try runWithEnvironment(["generate", "--from-environment", "CANARY", "--tag", "ci", "--output", generatedFromEnvironment, "--json"])
        try run(["generate", "--input", keys.path, "--output", notGenerated], expect: 1)
        // Help and both demos (each on its own temporary keychain).
        try run(["help"])
        for command in CommandRegistry.commands { try run(["help", command.name]) }
        try run(["demo"])
        try run(["demo", "--items"])
        // Deleting prints what was deleted, never the secret.
        try run(["delete-generic-password", "-s", "second"])

        // Each check is computed first, so that a failure message never prints the output
        // (and with it the secret).
        let base64 = Data(canary.utf8).base64EncodedString()
        for (arguments, result) in runs {
            let inStdout = result.stdout.contains(canary)
            let inStderr = result.stderr.contains(canary)
            let inBase64 = result.stdout.contains(base64) || result.stderr.contains(base64)
            #expect(!inStdout, "stdout of \(arguments) shows the secret")
            #expect(!inStderr, "stderr of \(arguments) shows the secret")
            #expect(!inBase64, "\(arguments) shows it in base64")
        }

        // The canary is really there: the reveal flags do show it.
        let revealed = try keysmith(["find-generic-password"] + generic + ["-w"], home: home)
        let revealedExactly = revealed.stdout == canary + "\n"
        #expect(revealedExactly, "-w prints exactly the secret and a newline")
        let shown = try keysmith(["find-internet-password"] + internet + ["-g"], home: home)
        let shownOnStderrOnly = shown.stderr.contains(canary) && !shown.stdout.contains(canary)
        #expect(shownOnStderrOnly, "-g prints the secret on standard error only")
        let dumped = try keysmith(["dump-keychain", "-d"], home: home)
        let dumpedShows = dumped.stdout.contains(canary)
        #expect(dumpedShows, "dump-keychain -d shows the secret")
        let resolved = try keysmith(["resolve", "canary_key", "--version", "2024.06.01", "--reveal", "--quiet"], home: home)
        let resolvedExactly = resolved.stdout == canary + "\n"
        #expect(resolvedExactly, "resolve --reveal --quiet prints exactly the secret")
        #expect(!FileManager.default.fileExists(atPath: notGenerated), "a refused generation wrote a file")
        for file in [generatedFromFile, generatedFromEnvironment] {
            let source = try String(contentsOfFile: file, encoding: .utf8)
            #expect(source.contains("CompiledKeySource.Entry("), "\(file) holds no key entry")
            let forms = GeneratedSourceScan.forms(of: Data(canary.utf8), foundIn: source)
            #expect(forms.isEmpty, "generated code \(file) holds the key as \(forms)")
        }
        #expect(unexpectedStatuses.isEmpty, "\(unexpectedStatuses)")
        #expect(runs.count > 60, "\(runs.count) runs")

        // Deleting the canary prints nothing secret either.
        let deleted = try keysmith(["delete-generic-password"] + generic, home: home)
        #expect(deleted.status == 0)
        let deletedShows = deleted.stdout.contains(canary) || deleted.stderr.contains(canary)
        #expect(!deletedShows, "delete prints nothing secret")
    }
}
