import Foundation
import Testing

/// macOS `security`'s keychain commands (create-keychain, unlock-keychain, lock-keychain,
/// set-keychain-password, set-keychain-settings, show-keychain-info), typed as a macOS user
/// types them, and a suggestion for every command name the tool does not know.
@Suite struct MacOSKeychainCommandTests {
    static let fast = ["KEYSMITH_KDF_PROFILE": "fast"]

    /// `--json status` of the keychain in `directory`.
    static func status(_ home: TemporaryHome, _ directory: String) throws -> [String: Any] {
        try keysmith(["--keychain", directory, "--json", "status"], home: home, useKeychainFlag: false).json()
    }

    @Test func theKeychainLifecycleByMacOSNames() throws {
        let home = TemporaryHome()
        let directory = home.keychain.path
        // The keychain argument is the keychain directory, as --keychain.
        let created = try keysmith(
            ["create-keychain", "-p", "first pass", directory], home: home, environment: Self.fast, useKeychainFlag: false)
        #expect(created.status == 0, "\(created)")
        #expect(created.stderr.contains("shell history"), "a password on the command line warns: \(created)")
        #expect(!created.stderr.contains("first pass") && !created.stdout.contains("first pass"))
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        #expect(try Self.status(home, directory)["passphrase"] as? Bool == true)
        #expect(try keysmith(["add-generic-password", "-s", "svc", "-a", "a", "--stdin"], home: home, standardInput: "v").status == 0)

        let locked = try keysmith(["lock-keychain", directory], home: home, useKeychainFlag: false)
        #expect(locked.status == 0, "\(locked)")
        #expect(try Self.status(home, directory)["lockState"] as? String == "locked")

        let wrong = try keysmith(["unlock-keychain", "-p", "not it", directory], home: home, useKeychainFlag: false)
        #expect(wrong.status == 1, "\(wrong)")
        #expect(try Self.status(home, directory)["lockState"] as? String == "locked")
        // A password on standard input, as the state commands take it.
        let unlocked = try keysmith(
            ["unlock-keychain", "--stdin", directory], home: home, standardInput: "first pass\n", useKeychainFlag: false)
        #expect(unlocked.status == 0, "\(unlocked)")
        #expect(try Self.status(home, directory)["lockState"] as? String == "unlocked")

        let changed = try keysmith(
            ["set-keychain-password", "-o", "first pass", "-p", "second pass", directory], home: home,
            environment: Self.fast, useKeychainFlag: false)
        #expect(changed.status == 0, "\(changed)")
        #expect(changed.stderr.contains("shell history"), "\(changed)")
        #expect(try keysmith(["lock-keychain", "-a"], home: home).status == 0)
        #expect(try keysmith(["unlock-keychain", "-p", "first pass"], home: home).status == 1)
        #expect(try keysmith(["unlock-keychain", "-p", "second pass"], home: home).status == 0)
        #expect(try keysmith(["find-generic-password", "-s", "svc", "-a", "a", "-w"], home: home).stdout == "v\n")
    }

    @Test func setKeychainSettingsSetsWhenTheKeychainLocksItself() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--stdin"], home: home, standardInput: "pass\n", environment: Self.fast).status == 0)
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        let settings = try keysmith(["set-keychain-settings", "-t", "600"], home: home)
        #expect(settings.status == 0, "\(settings)")
        let seconds = try #require(try Self.status(home, home.keychain.path)["autoLockSeconds"] as? Int)
        #expect(seconds > 0 && seconds <= 600, "\(seconds)")
        // Without -t there is no timeout, as on macOS.
        #expect(try keysmith(["set-keychain-settings"], home: home).status == 0)
        #expect(try Self.status(home, home.keychain.path)["autoLockSeconds"] == nil)
        #expect(try keysmith(["set-keychain-settings", "-t", "soon"], home: home).status == 2)
    }

    /// A keychain without a passphrase never locks: the setting is kept for when it gets one,
    /// and the answer says so instead of promising a lock.
    @Test func setKeychainSettingsWithoutAPassphraseSaysTheKeychainNeverLocksYet() throws {
        let home = TemporaryHome()
        #expect(try keysmith(["create", "--no-passphrase"], home: home).status == 0)
        let settings = try keysmith(["set-keychain-settings", "-t", "60"], home: home)
        #expect(settings.status == 0, "\(settings)")
        let said = (settings.stdout + settings.stderr).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(said.contains("no passphrase"), "\(settings)")
        #expect(said.contains("keysmith passwd"), "how to give it one: \(settings)")
    }

    @Test func showKeychainInfoNamesTheKeychainAndItsState() throws {
        let home = TemporaryHome()
        let missing = try keysmith(["show-keychain-info"], home: home)
        #expect(missing.status != 0, "\(missing)")
        #expect(missing.stderr.contains("no keychain"), "\(missing)")
        #expect(try keysmith(["create", "--no-passphrase"], home: home).status == 0)
        let shown = try keysmith(["show-keychain-info", home.keychain.path], home: home, useKeychainFlag: false)
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.stdout.contains("Keychain \"\(home.keychain.path)\""), "\(shown)")
    }

    @Test func theKeychainArgumentAndTheFlagMustNotDisagree() throws {
        let home = TemporaryHome()
        let other = home.url.appendingPathComponent("other").path
        let result = try keysmith(["lock-keychain", other], home: home)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("--keychain"), "\(result)")
    }

    @Test func helpSaysWhatTheKeychainArgumentIs() throws {
        let home = TemporaryHome()
        for command in ["create-keychain", "unlock-keychain", "lock-keychain", "set-keychain-password", "set-keychain-settings",
                        "show-keychain-info"] {
            let help = try keysmith(["help", command], home: home)
            #expect(help.status == 0, "\(command): \(help)")
            let flat = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(flat.contains("KEYCHAIN is the keychain directory"), "\(command): \(help)")
        }
        let overview = try keysmith(["help"], home: home)
        #expect(overview.stdout.contains("unlock-keychain"), "\(overview)")
    }

    @Test func everyUnknownCommandGetsASuggestion() throws {
        let home = TemporaryHome()
        let expected = [
            "unlok": "unlock", "find-password": "find-generic-password", "dump": "dump-keychain",
            "add-password": "add-generic-password", "statu": "status", "set-password": "set-keychain-password",
            "list-keychains": "status", "default-keychain": "status", "delete-password": "delete-generic-password",
            "keychain-info": "show-keychain-info", "rotate-key": "rotate", "exprot": "export",
        ]
        for (typed, suggestion) in expected {
            let result = try keysmith([typed], home: home)
            #expect(result.status == 2, "\(typed): \(result)")
            #expect(result.stderr.contains("did you mean '\(suggestion)'?"), "\(typed): \(result)")
        }
        // delete-keychain is a command here (it removes the files and the unlock state), never
        // answered with a suggestion of another (delete-keychain is not create-keychain).
        let delete = try keysmith(["delete-keychain"], home: home)
        #expect(!delete.stderr.contains("did you mean"), "\(delete)")
        // A macOS command with no counterpart here is explained, not answered with a command
        // that does something else.
        for typed in ["set-key-partition-list", "set-generic-password-partition-list"] {
            let partitions = try keysmith([typed, "-S", "apple-tool:,apple:", "-s", "-k", "pw"], home: home)
            #expect(partitions.status == 2, "\(partitions)")
            #expect(!partitions.stderr.contains("did you mean"), "\(partitions)")
            #expect(partitions.stderr.contains("access group"), "why it is not needed: \(partitions)")
        }
        // A suggestion from shared words keeps the verb typed: never a command that does
        // another thing to the same noun.
        for typed in ["remove-keychain", "destroy-keychain"] {
            let result = try keysmith([typed], home: home)
            #expect(result.status == 2, "\(typed): \(result)")
            #expect(!result.stderr.contains("did you mean"), "\(typed): \(result)")
        }
        // Far from every command: no guess, the way to the list.
        let far = try keysmith(["xyzzyqw"], home: home)
        #expect(far.status == 2)
        #expect(far.stderr.contains("keysmith help"), "\(far)")
    }
}
