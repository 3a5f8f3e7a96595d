import Foundation
import Testing

/// create, unlock, lock, passwd and status, each run as its own process: the lock state is
/// shared by the user's processes, ThisDeviceOnly items stay on their machine, and killed
/// upgrades and passphrase changes lose nothing.
@Suite struct KeychainStateCommandTests {
    /// Cheap Argon2id for the tests' passphrases (the stored parameters say which was used).
    static let fast = ["KEYSMITH_KDF_PROFILE": "fast"]

    static func add(_ home: TemporaryHome, _ account: String, _ accessible: String, _ secret: String,
                    environment: [String: String] = fast) throws -> RunResult {
        try keysmith(
            ["add-generic-password", "-s", "svc", "-a", account, "--accessible", accessible, "--stdin"], home: home,
            standardInput: secret, environment: environment)
    }

    static func find(_ home: TemporaryHome, _ account: String, environment: [String: String] = fast) throws -> RunResult {
        try keysmith(["find-generic-password", "-s", "svc", "-a", account, "-w"], home: home, environment: environment)
    }

    static func lockState(_ home: TemporaryHome) throws -> String? {
        try keysmith(["--json", "status"], home: home, environment: fast).json()["lockState"] as? String
    }

    @Test func unlockInOneProcessServesTheOthers() throws {
        let home = TemporaryHome()
        var created = try keysmith(["create", "--stdin"], home: home, standardInput: "open sesame\n", environment: Self.fast)
        #expect(created.status == 0, "\(created)")
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        created = try keysmith(["create", "--no-passphrase"], home: home)
        #expect(created.status == 1, "a second create leaves the keychain alone")
        #expect(try Self.add(home, "a", "whenUnlocked", "class-a").status == 0)
        #expect(try Self.add(home, "c", "afterFirstUnlock", "class-c").status == 0)
        #expect(try Self.add(home, "d", "always", "class-d").status == 0)
        #expect(try Self.lockState(home) == "unlocked")

        #expect(try keysmith(["lock"], home: home).status == 0)
        #expect(try Self.lockState(home) == "locked")
        let refused = try Self.find(home, "a")
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("errSecInteractionNotAllowed"))
        #expect(try Self.find(home, "c").stdout == "class-c\n")

        let wrong = try keysmith(["unlock", "--stdin"], home: home, standardInput: "not it\n")
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("errSecAuthFailed"))
        #expect(!wrong.stderr.contains("not it") && !wrong.stdout.contains("not it"))
        #expect(try Self.lockState(home) == "locked")

        let unlocked = try keysmith(["unlock", "--timeout", "600", "--stdin"], home: home, standardInput: "open sesame\n")
        #expect(unlocked.status == 0, "\(unlocked)")
        #expect(try Self.find(home, "a").stdout == "class-a\n")

        #expect(try keysmith(["lock", "--all"], home: home).status == 0)
        #expect(try Self.lockState(home) == "beforeFirstUnlock")
        #expect(try Self.find(home, "c").status == 1)
        #expect(try Self.find(home, "d").stdout == "class-d\n")

        let status = try keysmith(["status"], home: home)
        #expect(status.stdout.contains("lock state        beforeFirstUnlock"), "\(status)")
        #expect(!status.stdout.contains("class-"))
    }

    @Test func passwdChangesAndRemovesThePassphrase() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "one\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        #expect(try Self.add(home, "p", "whenPasscodeSetThisDeviceOnly", "passcode-only").status == 0)
        #expect(try Self.add(home, "a", "whenUnlocked", "class-a").status == 0)
        #expect(try keysmith(["passwd", "--stdin"], home: home, standardInput: "wrong\ntwo\n", environment: Self.fast).status == 1)
        #expect(try keysmith(["passwd", "--stdin"], home: home, standardInput: "one\ntwo\n", environment: Self.fast).status == 0)
        #expect(try keysmith(["lock", "--all"], home: home).status == 0)
        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "one\n").status == 1)
        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "two\n").status == 0)
        #expect(try Self.find(home, "p").stdout == "passcode-only\n")
        #expect(try keysmith(["passwd", "--remove", "--stdin"], home: home, standardInput: "two\n").status == 0)
        #expect(try Self.find(home, "p").status == 44)
        #expect(try Self.find(home, "a").stdout == "class-a\n")
        #expect(try Self.lockState(home) == "unlocked")
    }

    /// A copy of the keychain opened on a machine with another identity: ThisDeviceOnly
    /// items are absent there (and can be added anew), every other item reads normally.
    @Test func copiedKeychainOnAnotherMachine() throws {
        let home = TemporaryHome()
        let first = ["KEYSMITH_MACHINE_ID": "machine-one"]
        #expect(try keysmith(["create", "--no-passphrase"], home: home, environment: first).status == 0)
        for (account, accessible) in [("aku", "whenUnlockedThisDeviceOnly"), ("cku", "afterFirstUnlockThisDeviceOnly"),
                                      ("dku", "alwaysThisDeviceOnly"), ("ak", "whenUnlocked"), ("dk", "always")] {
            #expect(try Self.add(home, account, accessible, "original-\(account)", environment: first).status == 0)
        }
        let copy = TemporaryHome()
        try FileManager.default.copyItem(at: home.keychain, to: copy.keychain)
        let second = ["KEYSMITH_MACHINE_ID": "machine-two"]
        for account in ["aku", "cku", "dku"] {
            #expect(try Self.find(copy, account, environment: second).status == 44, "\(account) is absent on the other machine")
        }
        for account in ["ak", "dk"] {
            #expect(try Self.find(copy, account, environment: second).stdout == "original-\(account)\n")
        }
        let counts = try keysmith(["--json", "status"], home: copy, environment: second).json()["items"] as? [String: Any]
        #expect(counts?["other machine"] as? Int == 3)
        // The same primary key can be added there; the original machine keeps its own.
        #expect(try Self.add(copy, "aku", "whenUnlockedThisDeviceOnly", "second-aku", environment: second).status == 0)
        #expect(try Self.find(copy, "aku", environment: second).stdout == "second-aku\n")
        #expect(try Self.find(home, "aku", environment: first).stdout == "original-aku\n")
        // And the copy brought back to the first machine does not show the second's item as the first's.
        #expect(try Self.find(copy, "aku", environment: first).status == 44)
    }

    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../KeychainServicesTests/Fixtures/keychain-v1").standardizedFileURL

    static func installFixture(_ home: TemporaryHome) throws {
        try FileManager.default.createDirectory(at: home.keychain, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in ["keychain.db", "device.key"] {
            let target = home.keychain.appendingPathComponent(name)
            try FileManager.default.copyItem(at: fixture.appendingPathComponent(name), to: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
        }
    }

    static let fixtureGroups = ["--access-group", "com.keysmith.fixture,com.keysmith.fixture.second"]

    static func fixtureSecret(_ home: TemporaryHome, _ account: String) throws -> String {
        try keysmith(fixtureGroups + ["find-generic-password", "-s", "com.keysmith.fixture", "-a", account, "-w"], home: home).stdout
    }

    /// Killed in the middle of the upgrade (after the first item was re-encrypted, before
    /// the commit), the keychain still opens, and the next open upgrades it with every item.
    @Test func upgradeKilledMidwayLosesNothing() throws {
        let home = TemporaryHome()
        try Self.installFixture(home)
        let killed = try keysmith(Self.fixtureGroups + ["status"], home: home, environment: ["KEYSMITH_CRASH_AT": "upgrade"])
        #expect(killed.status == SIGKILL, "the upgrade was interrupted: \(killed)")
        for pdmn in ["ak", "ck", "dk", "aku", "cku", "dku"] {
            #expect(try Self.fixtureSecret(home, "account-\(pdmn)") == "secret-\(pdmn)\n", "\(pdmn)")
        }
        let other = try keysmith(
            Self.fixtureGroups + ["find-generic-password", "-s", "com.keysmith.fixture.other-group", "-w"], home: home)
        #expect(other.stdout == "secret-second-group\n")
        let status = try keysmith(Self.fixtureGroups + ["--json", "status"], home: home).json()
        #expect((status["items"] as? [String: Any])?.values.compactMap { $0 as? Int }.reduce(0, +) == 8)
    }

    /// Killed in the middle of a passphrase change (one class key re-wrapped, not the
    /// other), the keychain opens with the old passphrase and keeps every item.
    @Test func passphraseChangeKilledMidwayLosesNothing() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "old\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        for (account, accessible) in [("a", "whenUnlocked"), ("c", "afterFirstUnlock"), ("d", "always"), ("p", "whenPasscodeSetThisDeviceOnly")] {
            #expect(try Self.add(home, account, accessible, "value-\(account)").status == 0)
        }
        // Killed at each step of the change (keys written, first item sealed again, every
        // item sealed again, before the commit): the old passphrase and keys are in force.
        for point in ["passphrase", "passphrase-first-item", "passphrase-items"] {
            for input in ["old\nnew\n", "old\n"] {
                let arguments = input == "old\n" ? ["passwd", "--remove", "--stdin"] : ["passwd", "--stdin"]
                let killed = try keysmith(arguments, home: home, standardInput: input, environment: Self.fast.merging(["KEYSMITH_CRASH_AT": point]) { $1 })
                #expect(killed.status == SIGKILL, "the change was interrupted at \(point): \(killed)")
                #expect(try keysmith(["lock", "--all"], home: home).status == 0)
                #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "new\n").status == 1)
                #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "old\n").status == 0)
                for account in ["a", "c", "d", "p"] { #expect(try Self.find(home, account).stdout == "value-\(account)\n", "\(point) \(account)") }
            }
        }
        // Killed after the commit, before the lock state follows: the new passphrase is in
        // force, every item is there, and the keychain unlocks with it.
        let committed = try keysmith(
            ["passwd", "--stdin"], home: home, standardInput: "old\nnewer\n",
            environment: Self.fast.merging(["KEYSMITH_CRASH_AT": "passphrase-committed"]) { $1 })
        #expect(committed.status == SIGKILL, "\(committed)")
        #expect(try keysmith(["lock", "--all"], home: home).status == 0)
        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "old\n").status == 1)
        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "newer\n").status == 0)
        for account in ["a", "c", "d", "p"] { #expect(try Self.find(home, account).stdout == "value-\(account)\n", "committed \(account)") }
        #expect(try keysmith(["passwd", "--stdin"], home: home, standardInput: "newer\nold\n", environment: Self.fast).status == 0)
        #expect(try keysmith(["passwd", "--stdin"], home: home, standardInput: "old\nnew\n", environment: Self.fast).status == 0)
        #expect(try keysmith(["lock", "--all"], home: home).status == 0)
        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "new\n").status == 0)
        for account in ["a", "c", "d", "p"] { #expect(try Self.find(home, account).stdout == "value-\(account)\n") }
    }

    /// `passwd` leaves the lock state as it found it: a locked keychain stays locked (and
    /// says so), an unlocked one is unlocked with the new passphrase.
    @Test func passwdLeavesTheLockStateAsItFoundIt() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "one\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        #expect(try Self.add(home, "a", "whenUnlocked", "value-a").status == 0)
        #expect(try keysmith(["lock"], home: home).status == 0)
        let changed = try keysmith(["passwd", "--stdin"], home: home, standardInput: "one\ntwo\n", environment: Self.fast)
        #expect(changed.status == 0, "\(changed)")
        #expect(changed.stdout.contains("stays locked"), "\(changed)")
        #expect(try Self.lockState(home) == "locked")
        #expect(try Self.find(home, "a").status == 1)
        #expect(try keysmith(["lock", "--all"], home: home).status == 0)
        #expect(try keysmith(["passwd", "--stdin"], home: home, standardInput: "two\nthree\n", environment: Self.fast).status == 0)
        #expect(try Self.lockState(home) == "beforeFirstUnlock")
        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "three\n").status == 0)
        let unlocked = try keysmith(["passwd", "--stdin"], home: home, standardInput: "three\nfour\n", environment: Self.fast)
        #expect(unlocked.stdout.contains("the keychain is unlocked"), "\(unlocked)")
        #expect(try Self.lockState(home) == "unlocked")
        #expect(try Self.find(home, "a").stdout == "value-a\n")
    }

    /// `lock --all` in another user namespace locks the keychain for that namespace's
    /// processes only (the kernel keeps a user keyring per user namespace), and says so;
    /// outside, the keychain stays unlocked.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func lockInAnotherUserNamespaceSaysWhatWasLocked() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "pw\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        let inside = try keysmith(["lock", "--all"], home: home, launcher: ["/usr/bin/unshare", "--user", "--map-root-user"])
        guard inside.status == 0 else {
            // User namespaces not allowed here (a sandbox): nothing to check.
            #expect(inside.stderr.contains("unshare"), "\(inside)")
            return
        }
        #expect(inside.stdout.contains("only for the processes of this user namespace"), "\(inside)")
        #expect(try Self.lockState(home) == "unlocked")
        let outside = try keysmith(["lock", "--all"], home: home)
        #expect(!outside.stdout.contains("user namespace"), "\(outside)")
        #expect(try Self.lockState(home) == "beforeFirstUnlock")
    }

    @Test func exportAndImportThroughTheTool() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--no-passphrase"], home: home).status == 0)
        #expect(try Self.add(home, "portable", "afterFirstUnlock", "travels").status == 0)
        #expect(try Self.add(home, "local", "whenUnlockedThisDeviceOnly", "stays").status == 0)
        let archive = home.url.appendingPathComponent("backup.ksarchive").path
        let exported = try keysmith(["export", archive, "--stdin"], home: home, standardInput: "archive pw\n", environment: Self.fast)
        #expect(exported.status == 0, "\(exported)")
        #expect(try keysmith(["export", archive, "--stdin"], home: home, standardInput: "archive pw\n").status == 1, "no overwrite")
        let other = TemporaryHome()
        #expect(try keysmith(["import", archive, "--stdin"], home: other, standardInput: "wrong\n").status == 1)
        let imported = try keysmith(["import", archive, "--stdin"], home: other, standardInput: "archive pw\n")
        #expect(imported.status == 0, "\(imported)")
        #expect(try Self.find(other, "portable").stdout == "travels\n")
        #expect(try Self.find(other, "local").status == 44)
    }

    /// Looking at a keychain that does not exist yet (status, lock, unlock) creates none: a
    /// keychain made that way would have no passphrase, and 'create' would then refuse.
    @Test func stateCommandsDoNotCreateAKeychain() throws {
        let home = TemporaryHome()
        for command in [["status"], ["--json", "status"], ["lock"], ["lock", "--all"], ["unlock", "--stdin"]] {
            let result = try keysmith(command, home: home, standardInput: "pw\n", environment: Self.fast)
            // status says there is no keychain (exit status 1); lock and unlock have nothing to do.
            #expect(result.status == (command.last == "status" ? 1 : 0), "\(command): \(result)")
            #expect(!FileManager.default.fileExists(atPath: home.keychain.path), "\(command) created the keychain")
        }
        let created = try keysmith(["create", "--stdin"], home: home, standardInput: "open sesame\n", environment: Self.fast)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        #expect(created.status == 0, "\(created)")
        #expect(try Self.lockState(home) == "unlocked")
    }

    /// resolve of a key in a locked keychain says the keychain is locked and how to unlock
    /// it, not only that the key is missing.
    @Test func resolveInALockedKeychainSaysToUnlock() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "open sesame\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        let added = try keysmith(
            ["add-generic-password", "-s", "keysmith.keys", "-a", "api_key", "--accessible", "whenUnlocked", "--stdin"],
            home: home, standardInput: "k", environment: Self.fast)
        #expect(added.status == 0, "\(added)")
        #expect(try keysmith(["resolve", "api_key"], home: home).status == 0)
        #expect(try keysmith(["lock"], home: home).status == 0)
        let locked = try keysmith(["resolve", "api_key"], home: home)
        #expect(locked.status == 44, "\(locked)")
        #expect(locked.stderr.contains("locked") && locked.stderr.contains("keysmith unlock"), "\(locked)")
    }

    /// KEYSMITH_KEY_STORE=systemd-credential: the device key comes from
    /// $CREDENTIALS_DIRECTORY, and no key file is written beside the database.
    @Test func deviceKeyFromASystemdCredential() throws {
        let home = TemporaryHome()
        let credentials = home.url.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: credentials.appendingPathComponent("keysmith-device-key"))
        let environment = ["KEYSMITH_KEY_STORE": "systemd-credential", "CREDENTIALS_DIRECTORY": credentials.path]
        #expect(try keysmith(["create", "--no-passphrase"], home: home, environment: environment).status == 0)
        #expect(try Self.add(home, "cred", "always", "from-credential", environment: environment).status == 0)
        #expect(!FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.key").path))
        let status = try keysmith(["--json", "status"], home: home, environment: environment).json()
        #expect((status["keyStore"] as? String)?.hasPrefix("systemd credential ") == true)
        #expect(try Self.find(home, "cred", environment: environment).stdout == "from-credential\n")
        // Without the credential the keychain cannot be opened (and no key file is made up).
        let without = try Self.find(home, "cred", environment: [:])
        #expect(without.status == 1, "\(without)")
        #expect(!FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.key").path))
        let unsupported = try Self.find(home, "cred", environment: ["KEYSMITH_KEY_STORE": "secret-service"])
        #expect(unsupported.status == 1)
        #expect(unsupported.stderr.contains("Secret Service"))
    }

    /// A keychain whose database is refused (an older copy put back without its anchor) is
    /// not taken for one without a passphrase: `unlock` and `passwd` fail with the reason
    /// and its fix, instead of saying "no passphrase, always unlocked" and succeeding with
    /// any passphrase, or offering to set a first one.
    @Test func aRefusedDatabaseIsNotAKeychainWithoutPassphrase() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "pw\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        #expect(try Self.add(home, "first", "whenUnlocked", "one").status == 0)
        let database = home.keychain.appendingPathComponent("keychain.db")
        let older = home.keychain.appendingPathComponent("older.db")
        try FileManager.default.copyItem(at: database, to: older)
        #expect(try Self.add(home, "second", "whenUnlocked", "two").status == 0)
        #expect(try keysmith(["lock", "--all"], home: home).status == 0)
        for name in ["keychain.db", "keychain.db-wal", "keychain.db-shm"] {
            try? FileManager.default.removeItem(at: home.keychain.appendingPathComponent(name))
        }
        try FileManager.default.moveItem(at: older, to: database)
        let unlocked = try keysmith(["unlock", "--stdin"], home: home, standardInput: "not the passphrase\n", environment: Self.fast)
        #expect(unlocked.status != 0, "\(unlocked)")
        #expect(!unlocked.stdout.contains("no passphrase"), "\(unlocked)")
        #expect(unlocked.stderr.contains("rolled back"), "\(unlocked)")
        let changed = try keysmith(["passwd", "--stdin"], home: home, standardInput: "new\n", environment: Self.fast)
        #expect(changed.status != 0, "\(changed)")
        #expect(changed.stderr.contains("rolled back"), "\(changed)")
    }
}
