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
        #expect(inet.status == 0, "\(inet)")

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
        // Help and the demo (on its own temporary keychain).
        try run(["help"])
        for command in CommandRegistry.commands { try run(["help", command.name]) }
        try run(["demo"])
        // Deleting prints what was deleted, never the secret.
        try run(["delete-generic-password", "-s", "second"])

        for (arguments, result) in runs {
            #expect(!result.stdout.contains(canary), "stdout of \(arguments) shows the secret")
            #expect(!result.stderr.contains(canary), "stderr of \(arguments) shows the secret")
            #expect(!result.standardOutput.base64EncodedString().isEmpty || true)
            #expect(!result.stdout.contains(Data(canary.utf8).base64EncodedString()), "\(arguments) shows it in base64")
        }

        // The canary is really there: the reveal flags do show it.
        let revealed = try keysmith(["find-generic-password"] + generic + ["-w"], home: home)
        #expect(revealed.stdout == canary + "\n")
        let shown = try keysmith(["find-internet-password"] + internet + ["-g"], home: home)
        #expect(shown.stderr.contains(canary) && !shown.stdout.contains(canary))
        let dumped = try keysmith(["dump-keychain", "-d"], home: home)
        #expect(dumped.stdout.contains(canary))

        // Deleting the canary prints nothing secret either.
        let deleted = try keysmith(["delete-generic-password"] + generic, home: home)
        #expect(deleted.status == 0)
        #expect(!deleted.stdout.contains(canary) && !deleted.stderr.contains(canary))
    }
}
