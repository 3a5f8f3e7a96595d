import CSQLite
import Foundation
import KeychainServices
import Testing

// Deletes that cannot widen, output that cannot fail silently, attribute values that cannot
// drive the terminal, and the smaller hardening points: each runs the built binary.

/// The count that guards `delete-*-password` cannot be bypassed.
struct DeleteGuardTests {
    @Test func aDamagedMatchMakesTheDeleteFailInsteadOfDeletingEveryMatch() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "alice", home: home)
        try storeGenericPassword("two", service: "svc", account: "bob", home: home)
        damageItems(in: home, where: "id = (SELECT min(id) FROM items)")
        let refused = try keysmith(["delete-generic-password", "-s", "svc"], home: home)
        #expect(refused.status != 0, "a failed count is an error: \(refused)")
        let bob = try keysmith(["find-generic-password", "-s", "svc", "-a", "bob", "-w"], home: home)
        #expect(bob.stdout == "two\n", "bob must survive a delete that did not say --all: \(bob)")
    }

    @Test func theDamagedItemItselfCanStillBeDeletedWithAll() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "alice", home: home)
        damageItems(in: home, where: "1")
        let deleted = try keysmith(["delete-generic-password", "-s", "svc", "-a", "alice", "--all"], home: home)
        #expect(deleted.status == 0, "\(deleted)")
        #expect(try keysmith(["dump-keychain", "--json"], home: home).json()["count"] as? Int == 0)
    }

    @Test func aKeychainChangedOutsideKeysmithIsRefusedWithTheWayOut() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "alice", home: home)
        try storeGenericPassword("two", service: "svc", account: "bob", home: home)
        damageItems(in: home, where: "id = (SELECT min(id) FROM items)", accepted: false)
        // Not accepted by its owner: nothing is read (not even the healthy item), nothing is
        // deleted, and the message says what happened and how to accept the database.
        let bob = try keysmith(["find-generic-password", "-s", "svc", "-a", "bob", "-w"], home: home)
        #expect(bob.status == 1 && bob.stdout.isEmpty, "\(bob)")
        #expect(bob.stderr.contains("changed outside Keysmith") && bob.stderr.contains("keychain.anchor.reset"), "\(bob)")
        let delete = try keysmith(["delete-generic-password", "-s", "svc", "--all"], home: home)
        #expect(delete.status == 1, "\(delete)")
        // Accepted: the damaged item fails on its own, the healthy one reads again.
        #expect(FileManager.default.createFile(
            atPath: home.keychain.appendingPathComponent("keychain.anchor.reset").path, contents: Data()))
        let again = try keysmith(["find-generic-password", "-s", "svc", "-a", "bob", "-w"], home: home)
        #expect(again.status == 0 && again.stdout == "two\n", "\(again)")
    }
}

/// A failed write of the output is a failure (exit 1, with a message), never a silent success.
struct OutputWriteFailureTests {
    @Test(arguments: [
        ["find-generic-password", "-s", "svc", "-a", "acct", "-w"],
        ["find-generic-password", "-s", "svc", "-a", "acct"],
        ["--json", "dump-keychain"],
        ["dump-keychain", "-d"],
        ["resolve", "api_key", "--reveal", "--quiet"],
        ["resolve", "api_key", "--reveal"],
        ["help"],
    ])
    func writingToAFullDeviceFails(_ arguments: [String]) throws {
        let home = TemporaryHome()
        try storeGenericPassword("s3cr3t", service: "svc", account: "acct", home: home)
        let rotated = try keysmith(["rotate", "api_key", "--stdin", "--version", "1"], home: home, standardInput: "k3y")
        #expect(rotated.status == 0, "\(rotated)")
        let result = try keysmith(arguments, home: home, standardOutputPath: "/dev/full")
        #expect(result.status == 1, "\(arguments): \(result)")
        #expect(result.stderr.contains("cannot write"), "\(result)")
        #expect(!result.stderr.contains("s3cr3t") && !result.stderr.contains("k3y"), "no secret in the message")
    }
}

/// Attribute values never reach the terminal as control characters.
struct TerminalInjectionTests {
    static let forgedAccount = "deploy\npassword: \"forged\""
    static let escapeLabel = "\u{1B}]0;owned\u{07}\u{1B}[2J\u{1B}[31mred"

    private func assertInert(_ result: RunResult, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!result.standardOutput.contains(0x1B), "\(what): an escape byte reached standard output", sourceLocation: sourceLocation)
        #expect(!result.standardError.contains(0x1B), "\(what): an escape byte reached standard error", sourceLocation: sourceLocation)
        #expect(!result.standardOutput.contains(0x07), "\(what): a bell reached standard output", sourceLocation: sourceLocation)
        let lines = (result.stdout + result.stderr).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(
            !lines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("password:") },
            "\(what): a newline in an attribute forged an output line:\n\(result)", sourceLocation: sourceLocation)
    }

    @Test func addFindAndDumpEscapeControlCharacters() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["add-generic-password", "-s", "svc", "-a", Self.forgedAccount, "-l", Self.escapeLabel, "-j", "a\u{9B}31mb", "--stdin"],
            home: home, standardInput: "s3cr3t")
        #expect(added.status == 0, "\(added)")
        assertInert(added, "add")
        assertInert(try keysmith(["find-generic-password", "-s", "svc"], home: home), "find")
        assertInert(try keysmith(["find-generic-password", "-s", "svc", "--table"], home: home), "find --table")
        assertInert(try keysmith(["dump-keychain"], home: home), "dump-keychain")
        assertInert(try keysmith(["find-generic-password", "-s", "svc", "-a", "nobody"], home: home), "not found")
        let dump = try keysmith(["dump-keychain"], home: home)
        #expect(dump.stdout.contains("\\n"), "the newline is shown escaped: \(dump)")
        // JSON keeps the exact value (escaped by construction).
        let json = try keysmith(["--json", "find-generic-password", "-s", "svc"], home: home).json()
        #expect(json["account"] as? String == Self.forgedAccount)
        #expect(json["label"] as? String == Self.escapeLabel)
    }
}

/// `--quiet` keeps what a reveal flag asked for.
struct QuietRevealTests {
    @Test func quietDumpWithSecretsStillPrintsThem() throws {
        let home = TemporaryHome()
        try storeGenericPassword("s3cr3t", service: "svc", account: "acct", home: home)
        let text = try keysmith(["--quiet", "dump-keychain", "-d"], home: home)
        #expect(text.status == 0)
        #expect(text.stdout.contains("s3cr3t"), "-d is a reveal flag: \(text)")
        let json = try keysmith(["--quiet", "--json", "dump-keychain", "-d"], home: home)
        #expect(json.status == 0)
        let items = try #require(try json.json()["items"] as? [[String: Any]])
        #expect(items.first?["password"] as? String == "s3cr3t")
        // Without a reveal flag, --quiet prints nothing.
        #expect(try keysmith(["--quiet", "dump-keychain"], home: home).stdout.isEmpty)
    }
}

/// `migrate-service` keeps an account that is stored as bytes.
struct MigrateDataAccountTests {
    @Test func anAccountStoredAsDataMovesToTheSameAccount() throws {
        let home = TemporaryHome()
        let account = Data([0x6B, 0xFF, 0x00, 0x01])
        let environment = KeychainEnvironment(directory: home.keychain, accessGroups: ["*", "keysmith.cli"])
        KeychainEnvironment.withEnvironment(environment) {
            for (service, secret) in [("old.keys", "moved"), ("new.keys", "other")] {
                var item: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                    kSecAttrAccessGroup as String: "keysmith.cli", kSecValueData as String: Data(secret.utf8),
                ]
                // The old item's account is bytes; new.keys holds an unrelated item with account "".
                item[kSecAttrAccount as String] = service == "old.keys" ? account as Any : ""
                #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            }
        }
        let migrated = try keysmith(["migrate-service", "old.keys", "new.keys"], home: home)
        #expect(migrated.status == 0, "\(migrated)")
        KeychainEnvironment.withEnvironment(environment) {
            var result: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "new.keys",
                kSecAttrAccount as String: account, kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("moved".utf8))
            let untouched: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "new.keys",
                kSecAttrAccount as String: "", kSecReturnData as String: true,
            ]
            result = nil
            #expect(SecItemCopyMatching(untouched as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("other".utf8), "the unrelated item with account \"\" is untouched")
        }
    }
}
