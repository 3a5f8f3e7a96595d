import Foundation
import Testing

/// What `status`, `export` and `import` tell a person: classes by name, the time left before
/// the keychain locks itself, a folder without a keychain, and every item an export left
/// behind, with the reason.
@Suite struct KeychainStatusAndArchiveTests {
    static let fast = ["KEYSMITH_KDF_PROFILE": "fast"]

    static func add(_ home: TemporaryHome, _ account: String, _ accessible: String, extra: [String] = []) throws {
        let result = try keysmith(
            ["add-generic-password", "-s", "svc", "-a", account, "--accessible", accessible, "--stdin"] + extra, home: home,
            standardInput: "value-\(account)", environment: fast)
        #expect(result.status == 0, "\(result)")
    }

    @Test func statusNamesTheAccessibilityClasses() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--no-passphrase"], home: home).status == 0)
        for account in ["a1", "a2", "a3"] { try Self.add(home, account, "whenUnlocked") }
        try Self.add(home, "c1", "afterFirstUnlockThisDeviceOnly")
        let status = try keysmith(["status"], home: home)
        #expect(status.status == 0, "\(status)")
        let lines = status.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.contains("whenUnlocked 3"), "\(status)")
        #expect(lines.contains("afterFirstUnlockThisDeviceOnly 1"), "\(status)")
        #expect(!lines.contains { $0.hasPrefix("ak ") || $0.hasPrefix("cku ") }, "no raw class codes: \(status)")
        let json = try keysmith(["--json", "status"], home: home).json()
        let items = try #require(json["items"] as? [String: Any])
        #expect(items["whenUnlocked"] as? Int == 3, "\(json)")
        #expect(items["afterFirstUnlockThisDeviceOnly"] as? Int == 1, "\(json)")
    }

    @Test func createWithoutAPassphraseMakesTheKeychain() throws {
        let home = TemporaryHome()
        let created = try keysmith(["create", "--no-passphrase"], home: home)
        #expect(created.status == 0, "\(created)")
        #expect(FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("keychain.db").path), "\(created)")
        let status = try keysmith(["--json", "status"], home: home)
        #expect(status.status == 0, "\(status)")
        #expect(try status.json()["passphrase"] as? Bool == false)
    }

    @Test func statusShowsTheTimeLeftBeforeTheKeychainLocksItself() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "pass\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        #expect(try keysmith(["unlock", "--timeout", "600", "--stdin"], home: home, standardInput: "pass\n").status == 0)
        let timed = try keysmith(["status"], home: home)
        let autoLock = try #require(timed.stdout.split(separator: "\n").first { $0.hasPrefix("auto-lock") }, "\(timed)")
        #expect(autoLock.contains("in "), "\(timed)")
        // How to change it for every unlock, not only the next one.
        #expect(autoLock.contains("set-keychain-settings -t"), "\(timed)")
        let seconds = try #require(try keysmith(["--json", "status"], home: home).json()["autoLockSeconds"] as? Int)
        #expect(seconds > 0 && seconds <= 600, "\(seconds)")

        #expect(try keysmith(["unlock", "--timeout", "0", "--stdin"], home: home, standardInput: "pass\n").status == 0)
        let untimed = try keysmith(["status"], home: home)
        #expect(untimed.stdout.contains("until 'keysmith lock'"), "\(untimed)")
        #expect(try keysmith(["--json", "status"], home: home).json()["autoLockSeconds"] == nil)

        #expect(try keysmith(["lock"], home: home).status == 0)
        let locked = try keysmith(["status"], home: home)
        let line = try #require(locked.stdout.split(separator: "\n").first { $0.hasPrefix("auto-lock") }, "\(locked)")
        #expect(line.contains("locked now"), "\(locked)")
    }

    @Test func statusOfAFolderWithoutAKeychainSaysSoAndFails() throws {
        let home = TemporaryHome()
        for arguments in [["status"], ["--json", "status"]] {
            let result = try keysmith(arguments, home: home)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("no keychain in \(home.keychain.path)"), "\(result)")
            #expect(result.stderr.contains("keysmith create"), "\(result)")
            #expect(!result.stdout.contains("passphrase"), "\(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.keychain.path), "status created a keychain")
    }

    /// A backup without the locked items would pass for complete: while they cannot be
    /// read, export writes nothing and counts them; its help says the same.
    @Test func exportWhileLockedRefusesAndCountsTheLockedItems() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "pass\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        try Self.add(home, "a", "whenUnlocked")
        try Self.add(home, "c", "afterFirstUnlock")
        try Self.add(home, "d", "always")
        #expect(try keysmith(["lock"], home: home).status == 0)
        let archive = home.url.appendingPathComponent("locked.ksarchive").path
        let refused = try keysmith(["export", archive, "--stdin"], home: home, standardInput: "archive\n", environment: Self.fast)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("1 whenUnlocked item cannot be read now"), "\(refused)")
        #expect(refused.stderr.contains("keysmith unlock"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: archive), "nothing is written")
        let help = try keysmith(["help", "export"], home: home)
        let flat = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.contains("While the keychain is locked"), "\(help)")
        #expect(!flat.contains("exported only while it is unlocked"), "the old promise is gone: \(help)")

        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "pass\n").status == 0)
        let exported = try keysmith(["export", archive, "--stdin"], home: home, standardInput: "archive\n", environment: Self.fast)
        #expect(exported.status == 0, "\(exported)")
        #expect((exported.stdout + exported.stderr).contains("exported 3 item(s)"), "\(exported)")
    }

    /// A locked keychain is refused before the archive passphrase is asked for: nobody types a
    /// new passphrase twice to learn that nothing can be exported yet.
    @Test func exportWhileLockedRefusesBeforeAskingForThePassphrase() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "pass\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        try Self.add(home, "a", "whenUnlocked")
        #expect(try keysmith(["lock"], home: home).status == 0)
        let archive = home.url.appendingPathComponent("locked.ksarchive").path
        // No passphrase on standard input: the refusal must come before it is read.
        let refused = try keysmith(["export", archive, "--stdin"], home: home, standardInput: "", environment: Self.fast)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("1 whenUnlocked item cannot be read now"), "\(refused)")
        #expect(!refused.stderr.contains("standard input"), "the passphrase was not asked for: \(refused)")
        #expect(!FileManager.default.fileExists(atPath: archive), "nothing is written")
    }

    @Test func exportSaysWhatItLeftBehindAndWhy() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--no-passphrase"], home: home).status == 0)
        try Self.add(home, "portable", "afterFirstUnlock")
        // SecureStore's default accessibility.
        try Self.add(home, "store1", "afterFirstUnlockThisDeviceOnly")
        try Self.add(home, "store2", "afterFirstUnlockThisDeviceOnly")
        try Self.add(home, "local", "whenUnlockedThisDeviceOnly")
        try Self.add(home, "guarded", "afterFirstUnlock", extra: ["--access-control", "user-presence"])
        let archive = home.url.appendingPathComponent("backup.ksarchive").path
        let exported = try keysmith(["export", archive, "--stdin"], home: home, standardInput: "archive\n", environment: Self.fast)
        #expect(exported.status == 0, "\(exported)")
        let report = (exported.stdout + exported.stderr).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(report.contains("exported 1 item(s)"), "\(exported)")
        #expect(report.contains("2 afterFirstUnlockThisDeviceOnly items"), "\(exported)")
        #expect(report.contains("SecureStore"), "the SecureStore default is named: \(exported)")
        #expect(report.contains("1 whenUnlockedThisDeviceOnly item"), "\(exported)")
        #expect(report.contains("1 item with access control"), "\(exported)")
        #expect(report.contains("left behind 4 item(s)"), "\(exported)")
    }

    @Test func importIntoAFolderWithoutAKeychainSaysItCreatedOneWithoutAPassphrase() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--no-passphrase"], home: home).status == 0)
        try Self.add(home, "portable", "afterFirstUnlock")
        let archive = home.url.appendingPathComponent("backup.ksarchive").path
        #expect(try keysmith(["export", archive, "--stdin"], home: home, standardInput: "archive\n", environment: Self.fast).status == 0)

        let fresh = TemporaryHome()
        let imported = try keysmith(["import", archive, "--stdin"], home: fresh, standardInput: "archive\n")
        #expect(imported.status == 0, "\(imported)")
        let said = (imported.stdout + imported.stderr).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(said.contains("created the keychain in \(fresh.keychain.path), without a passphrase"), "\(imported)")
        #expect(said.contains("keysmith passwd"), "\(imported)")
        // Into an existing keychain, nothing of the kind is said.
        let again = try keysmith(["import", archive, "--stdin"], home: fresh, standardInput: "archive\n")
        #expect(again.status == 0)
        #expect(!(again.stdout + again.stderr).contains("created the keychain"), "\(again)")
    }
}
