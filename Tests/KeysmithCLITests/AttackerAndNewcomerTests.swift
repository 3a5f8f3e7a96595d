import CSQLite
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The tool tried as an attacker and as a newcomer would: a secret that could drive the
// terminal, a damaged item in another program's access group, a report that cannot be
// written after the keychain changed, and the hints that go with them. Each runs the built
// binary.

/// Runs `keysmith` with standard output on a pseudo-terminal (standard input empty,
/// standard error captured): what a person sees when they run it at a prompt.
private func keysmithOnTerminal(_ arguments: [String], home: TemporaryHome) throws -> (terminal: [UInt8], result: RunResult) {
    let terminal = try PseudoTerminal()
    let errorURL = home.url.appendingPathComponent("terminal-stderr-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errorURL) }
    let process = Process()
    process.executableURL = keysmithExecutable()
    process.arguments = ["--keychain", home.keychain.path] + arguments
    process.environment = subprocessEnvironment(home: home)
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    process.standardOutput = FileHandle(fileDescriptor: terminal.secondary, closeOnDealloc: false)
    process.standardError = try FileHandle(forWritingTo: errorURL)
    try process.run()
    terminal.closeSecondary()
    terminal.drain()
    try waitForExit(process, seconds: 30)
    let result = RunResult(
        status: process.terminationStatus, standardOutput: Data(), standardError: try Data(contentsOf: errorURL))
    return (Array(terminal.text.utf8), result)
}

/// A secret is written by whoever stored the item; on a terminal it must not drive it.
struct RevealedSecretOnATerminalTests {
    static let hostileSecret = "ab\u{1B}]0;owned\u{07}\u{1B}[2Jcd"

    @Test func findPasswordShowsAHostileSecretEscapedOnATerminal() throws {
        let home = TemporaryHome()
        try storeGenericPassword(Self.hostileSecret, service: "svc", account: "acct", home: home)
        let (shown, result) = try keysmithOnTerminal(["find-generic-password", "-s", "svc", "-w"], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(!shown.contains(0x1B) && !shown.contains(0x07), "an escape sequence reached the terminal: \(shown)")
        #expect(String(decoding: shown, as: UTF8.self).contains("ab\\e]0;owned\\x07\\e[2Jcd"))
        #expect(result.stderr.contains("redirect or pipe"), "the note says how to get the exact bytes: \(result)")

        // Redirected, the exact bytes (a script gets the secret itself).
        let piped = try keysmith(["find-generic-password", "-s", "svc", "-w"], home: home)
        #expect(piped.standardOutput == Data((Self.hostileSecret + "\n").utf8))
        #expect(piped.stderr.isEmpty, "\(piped)")
    }

    @Test func resolveRevealQuietShowsAHostileKeyEscapedOnATerminal() throws {
        let home = TemporaryHome()
        let rotated = try keysmith(
            ["rotate", "api_key", "--stdin", "--version", "1"], home: home, standardInput: Self.hostileSecret)
        #expect(rotated.status == 0, "\(rotated)")
        let (shown, result) = try keysmithOnTerminal(["resolve", "api_key", "--reveal", "--quiet"], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(!shown.contains(0x1B) && !shown.contains(0x07), "an escape sequence reached the terminal: \(shown)")
    }

    @Test func anOrdinarySecretIsPrintedAsItIsOnATerminal() throws {
        let home = TemporaryHome()
        try storeGenericPassword("plain-secret é", service: "svc", account: "acct", home: home)
        let (shown, result) = try keysmithOnTerminal(["find-generic-password", "-s", "svc", "-w"], home: home)
        #expect(result.status == 0, "\(result)")
        #expect(String(decoding: shown, as: UTF8.self).contains("plain-secret é"))
        #expect(result.stderr.isEmpty, "no note for a printable secret: \(result)")
    }
}

/// In the default view (every access group), a damaged match in another program's group is
/// neither reported as missing nor silently left behind by a delete that said it deleted
/// every match.
struct DamagedMatchInAnotherGroupTests {
    /// alice and carol in the shared group; bob (damaged) and dave in an app's group.
    private func prepare() throws -> TemporaryHome {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "alice", home: home)
        try storeGenericPassword(
            "two", service: "svc", account: "bob", home: home, extra: ["--access-group", "com.example.app"])
        try storeGenericPassword(
            "three", service: "svc", account: "dave", home: home, extra: ["--access-group", "com.example.app"])
        try storeGenericPassword("four", service: "svc", account: "carol", home: home)
        damageItems(in: home, where: "id = 2")
        return home
    }

    @Test func deletingTheDamagedItemWithAllSaysWhereItIsInsteadOfNotFound() throws {
        let home = try prepare()
        let result = try keysmith(["delete-generic-password", "-s", "svc", "-a", "bob", "--all"], home: home)
        #expect(result.status == 1, "the item exists (damaged): not 'not found': \(result)")
        #expect(result.stderr.contains("--access-group GROUP --all"), "\(result)")
        let reached = try keysmith(
            ["--access-group", "com.example.app", "delete-generic-password", "-s", "svc", "-a", "bob", "--all"],
            home: home)
        #expect(reached.status == 0, "the hint works: \(reached)")
        let dave = try keysmith(["find-generic-password", "-s", "svc", "-a", "dave", "-w"], home: home)
        #expect(dave.stdout == "three\n", "only bob was deleted: \(dave)")
    }

    @Test func deleteAllDoesNotClaimEveryMatchWhileOneIsLeft() throws {
        let home = try prepare()
        let result = try keysmith(["delete-generic-password", "-s", "svc", "--all"], home: home)
        #expect(result.status != 0, "a match is left: \(result)")
        #expect(!result.stdout.contains("Deleted every"), "\(result)")
        let all = try keysmith(
            ["--access-group", "com.example.app", "delete-generic-password", "-s", "svc", "--all"], home: home)
        #expect(all.status == 0, "\(all)")
        #expect(try keysmith(["--json", "dump-keychain"], home: home).json()["count"] as? Int == 0)
    }

    @Test func aDamagedItemThatStopsTheListingGetsAHintTheToolCanFollow() throws {
        let home = try prepare()
        let result = try keysmith(["dump-keychain"], home: home)
        #expect(result.status == 1, "\(result)")
        #expect(!result.stderr.contains("SecItemDelete"), "a function name is no hint for a tool user: \(result)")
        #expect(result.stderr.contains("--access-group GROUP dump-keychain"), "\(result)")
        let shared = try keysmith(["--access-group", "keysmith.shared", "dump-keychain"], home: home)
        #expect(shared.status == 0 && shared.stdout.contains("carol"), "the hint works: \(shared)")
    }
}

/// The hints around an add and a lookup name what the user typed and what they can do.
struct AddAndLookupHintTests {
    @Test func aDuplicateAddNamesTheItemNotTheEngineAttributeCodes() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "acct", home: home)
        let again = try keysmith(
            ["add-generic-password", "-s", "svc", "-a", "acct", "-l", "label", "--stdin"], home: home, standardInput: "two")
        #expect(again.status == 45, "\(again)")
        #expect(again.stderr.contains("service \"svc\" and account \"acct\" already exists"), "\(again)")
        for code in ["musr", "vwht", "tkid", "agrp"] {
            #expect(!again.stderr.contains(code), "internal attribute code \(code): \(again)")
        }
    }

    @Test func notFoundInEveryGroupDoesNotAdviseAnotherGroup() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "acct", home: home)
        let missing = try keysmith(["find-generic-password", "-s", "other"], home: home)
        #expect(missing.status == 44, "\(missing)")
        #expect(!missing.stderr.contains("choose others with --access-group"), "every group was searched: \(missing)")
        let configured = try keysmith(
            ["find-generic-password", "-s", "other"], home: home, environment: ["KEYSMITH_ACCESS_GROUPS": "com.example.app"])
        #expect(configured.status == 44)
        #expect(configured.stderr.contains("--access-group"), "with groups configured, another group may hold it: \(configured)")
    }

    @Test(arguments: [
        ["add-generic-password", "-s", "svc", "-a", "acct", "--stdin"],
        ["rotate", "api_key", "--stdin", "--version", "1"],
    ])
    func aReportThatCannotBeWrittenSaysTheChangeWasMade(_ arguments: [String]) throws {
        let home = TemporaryHome()
        let result = try keysmith(arguments, home: home, standardInput: "s3cr3t", standardOutputPath: "/dev/full")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("change itself was made"), "\(result)")
        #expect(!result.stderr.contains("run the command again."), "running it again would fail: \(result)")
        let again = try keysmith(arguments, home: home, standardInput: "s3cr3t")
        #expect(again.status != 0, "the change is there: \(again)")
    }
}

/// An access-group variable that is set but empty is a configuration mistake, named, for
/// the tool as for an app (never the shared group, never every group).
struct EmptyAccessGroupVariableTests {
    @Test func anEmptyAccessGroupsVariableIsNamedInsteadOfSeeingEveryGroup() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "acct", home: home)
        for value in ["", " , "] {
            let result = try keysmith(["dump-keychain"], home: home, environment: ["KEYSMITH_ACCESS_GROUPS": value])
            #expect(result.status == 1, "'\(value)': \(result)")
            #expect(result.stderr.contains("KEYSMITH_ACCESS_GROUPS is set but names no access group"), "\(result)")
            #expect(!result.stdout.contains("acct"), "'\(value)': \(result)")
        }
    }
}

/// Two items alike but for their access group differ by no selector flag: the refusal to
/// delete both says how to choose one.
struct SameItemInTwoGroupsTests {
    @Test func aDeleteThatMatchesOneItemPerGroupPointsToTheAccessGroupFlag() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "alice", home: home)
        try storeGenericPassword(
            "two", service: "svc", account: "alice", home: home, extra: ["--access-group", "com.example.app"])
        let refused = try keysmith(["delete-generic-password", "-s", "svc", "-a", "alice"], home: home)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("--access-group GROUP"), "no flag but the group tells them apart: \(refused)")
        #expect(refused.stderr.contains("com.example.app"), "\(refused)")
        let one = try keysmith(
            ["--access-group", "com.example.app", "delete-generic-password", "-s", "svc", "-a", "alice"], home: home)
        #expect(one.status == 0, "the hint works: \(one)")
        let left = try keysmith(["find-generic-password", "-s", "svc", "-a", "alice", "-w"], home: home)
        #expect(left.stdout == "one\n", "\(left)")
    }
}

/// The retrieval commands read every group by default; a key version stored in two groups
/// is served from one of them, while a program gets the one of its own group: say so.
struct KeyInSeveralGroupsTests {
    @Test func resolveAndAuditWarnWhenAKeyVersionIsInTwoGroups() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["rotate", "api_key", "--stdin", "--version", "1"], home: home, standardInput: "shared").status == 0)
        let other = try keysmith(
            ["--access-group", "com.example.app", "rotate", "api_key", "--stdin", "--version", "1"], home: home,
            standardInput: "app")
        #expect(other.status == 0, "\(other)")
        for arguments in [["resolve", "api_key", "--version", "1"], ["audit"]] {
            let result = try keysmith(arguments, home: home)
            #expect(result.status == 0, "\(result)")
            #expect(result.stderr.contains("keysmith.shared, com.example.app"), "\(arguments): \(result)")
            #expect(result.stderr.contains("--access-group GROUP"), "\(arguments): \(result)")
        }
        let app = try keysmith(["--access-group", "com.example.app", "resolve", "api_key", "--reveal", "--quiet"], home: home)
        #expect(app.stdout == "app\n" && app.stderr.isEmpty, "the hint works, and a program's own view has no warning: \(app)")
    }

    @Test func oneCopyPerGroupGivesNoWarning() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["rotate", "api_key", "--stdin", "--version", "1"], home: home, standardInput: "k").status == 0)
        let result = try keysmith(["resolve", "api_key"], home: home)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
    }
}
