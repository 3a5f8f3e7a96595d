import Foundation
import KeysmithCLI
import Testing

/// A canary secret is stored, then every command runs without its reveal flag (-w, -g,
/// -d): the canary must never appear on standard output or standard error, in success or
/// in failure.
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
        func run(_ arguments: [String], standardInput: String? = nil) throws {
            runs.append((arguments.joined(separator: " "), try keysmith(arguments, home: home, standardInput: standardInput)))
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
        try run(["add-generic-password"] + generic + ["--stdin"], standardInput: "other")
        try run(["add-internet-password"] + internet + ["--stdin", "--json"], standardInput: "other")
        try run(["add-generic-password", "-s", "second", "-a", "x", "--stdin", "--json"], standardInput: "other")
        try run(["add-generic-password", "-s", "second", "-a", "x", "-U", "--stdin"], standardInput: "other")
        // Failures: not found, bad usage, wrong access group, wrong protocol.
        try run(["find-generic-password", "-s", "canary.example", "-a", "nobody"])
        try run(["find-generic-password", "-s", "canary.example", "--access-group", "elsewhere"])
        try run(["find-internet-password", "-s", "canary.example", "-r", "ssh"])
        try run(["find-generic-password", "-s"])
        try run(["dump-keychain", "--bogus"])
        // The retrieval commands: the canary is a key in the keychain (stored by rotate), in a
        // config file and in the environment.
        try run(["rotate", "canary_key", "--stdin", "--version", "2024.06.01"], standardInput: canary)
        let keys = home.url.appendingPathComponent("Keys.json")
        try Data(#"{"canary_key": {"value": "\#(Data(canary.utf8).base64EncodedString())", "version": "2024.05.01"}, "file_only": "\#(canary)"}"#.utf8)
            .write(to: keys)
        let sources = ["--config", keys.path, "--env-prefix", "CANARY"]
        let environment = ["CANARY_ENV_ONLY": canary, "CANARY_CANARY_KEY": canary]
        func runWithEnvironment(_ arguments: [String]) throws {
            runs.append((arguments.joined(separator: " "), try keysmith(arguments, home: home, environment: environment)))
        }
        for mode in [[], ["--json"], ["--quiet"]] {
            try runWithEnvironment(["resolve", "canary_key"] + sources + mode)
            try runWithEnvironment(["resolve", "file_only"] + sources + mode)
            try runWithEnvironment(["resolve", "env_only"] + sources + mode)
            try runWithEnvironment(["resolve", "canaryKey", "--version", "2024.05.01"] + sources + mode)
            try runWithEnvironment(["explain", "canary_key"] + sources + mode)
            try runWithEnvironment(["explain", "file_only", "--min-version", "1"] + sources + mode)
            try runWithEnvironment(["audit"] + sources + mode)
            try runWithEnvironment(["audit", "--sensitive", "file_only"] + sources + mode)
        }
        // Failures: not found, refused by policy, a bad version request.
        try runWithEnvironment(["resolve", "nothing"] + sources)
        try runWithEnvironment(["resolve", "file_only", "--sensitive", "file_only"] + sources)
        try runWithEnvironment(["explain", "env_only", "--sensitive", "env_only"] + sources)
        try runWithEnvironment(["resolve", "canary_key", "--min-version", "2030"] + sources)
        try run(["rotate", "canary_key", "--stdin", "--version", "2024.06.01"], standardInput: canary)
        try run(["rotate", "canary_key", "--generate", "16", "--version", "2024.07.01", "--json"])
        try run(["rotate", "canary_key", "--stdin", "--version", "2024.08.01", "--service", "other.keys", "--json"], standardInput: canary)
        // migrate-service, twice, of a service that holds the canary.
        try storeGenericPassword(canary, service: "canary.old", account: "bird", home: home)
        try run(["migrate-service", "canary.old", "canary.new"])
        try run(["migrate-service", "canary.old", "canary.new", "--json"])
        try storeGenericPassword(canary, service: "canary.old", account: "bird", home: home)
        try storeGenericPassword("different", service: "canary.clash", account: "bird", home: home)
        try run(["migrate-service", "canary.old", "canary.clash"])
        // generate, from a keys file and from the environment.
        let keysFile = home.url.appendingPathComponent("Keys.keysmith.json")
        try Data(#"{"debug": {"canary": "\#(canary)"}}"#.utf8).write(to: keysFile)
        let generated = home.url.appendingPathComponent("Generated.swift").path
        try run(["generate", "--input", keysFile.path, "--output", generated])
        try runWithEnvironment(["generate", "--from-environment", "CANARY", "--tag", "ci", "--output", generated, "--json"])
        try run(["generate", "--input", keys.path, "--output", generated])
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
        let generatedShows = (try String(contentsOfFile: generated, encoding: .utf8)).contains(canary)
        #expect(!generatedShows, "generated code does not hold the key in plaintext")

        // Deleting the canary prints nothing secret either.
        let deleted = try keysmith(["delete-generic-password"] + generic, home: home)
        #expect(deleted.status == 0)
        let deletedShows = deleted.stdout.contains(canary) || deleted.stderr.contains(canary)
        #expect(!deletedShows, "delete prints nothing secret")
    }
}
