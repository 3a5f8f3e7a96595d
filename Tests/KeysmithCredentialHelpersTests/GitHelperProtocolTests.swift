import Foundation
import Testing

/// `git-credential-keysmith` spoken to directly: the attributes newer git versions send
/// (the git here may be older), failures, and what never reaches the output.
struct GitHelperProtocolTests {
    func helper(_ action: String, _ input: String, home: HelperHome, environment: [String: String] = [:]) throws -> Run {
        try run(product("git-credential-keysmith"), [action], input: input + "\n\n", home: home, environment: environment)
    }

    @Test func expiryAndRefreshTokenAreKeptAsOsxkeychainKeepsThem() throws {
        let home = HelperHome()
        let shared = ["KEYSMITH_ACCESS_GROUPS": "test.shared"]
        let password = testSecret(), token = testSecret("refresh")
        let stored = try helper(
            "store",
            "capability[]=authtype\nprotocol=https\nhost=e.example.com\nusername=ci\npassword=\(password)\npassword_expiry_utc=4102444800\noauth_refresh_token=\(token)\nwwwauth[]=Basic realm=\"x\"",
            home: home, environment: shared)
        #expect(stored.status == 0, "\(stored)")
        let got = try helper("get", "protocol=https\nhost=e.example.com", home: home, environment: shared)
        #expect(got.status == 0, "\(got)")
        #expect(got.fields["username"] == "ci")
        #expect(got.fields["password"] == password)
        #expect(got.fields["password_expiry_utc"] == "4102444800")
        #expect(got.fields["oauth_refresh_token"] == token)
        // The item's data is the password with the metadata lines appended (osxkeychain's layout).
        let data = try keysmith(["find-internet-password", "-s", "e.example.com", "-a", "ci", "-w"], home: home, environment: shared)
        #expect(data.stdout == "\(password)\npassword_expiry_utc=4102444800\noauth_refresh_token=\(token)\n")
        // Erase with the password compares the password alone, not the appended lines.
        #expect(try helper("erase", "protocol=https\nhost=e.example.com\nusername=ci\npassword=\(password)", home: home, environment: shared).status == 0)
        #expect(try helper("get", "protocol=https\nhost=e.example.com", home: home, environment: shared).fields["password"] == nil)
    }

    @Test func stateCapabilityMarksWhatCameFromTheKeychain() throws {
        let home = HelperHome()
        let password = testSecret()
        #expect(try helper("store", "protocol=https\nhost=s.example.com\nusername=ci\npassword=\(password)", home: home).status == 0)
        // Without the capability, no state lines.
        let plain = try helper("get", "protocol=https\nhost=s.example.com", home: home)
        #expect(!plain.stdout.contains("state"))
        let got = try helper("get", "capability[]=state\nprotocol=https\nhost=s.example.com", home: home)
        #expect(got.stdout.contains("capability[]=state\n"))
        #expect(got.stdout.contains("state[]=keysmith:seen=1\n"))
        // A store git makes of that same credential changes nothing.
        let replay = try helper(
            "store", "protocol=https\nhost=s.example.com\nusername=ci\npassword=other\nstate[]=keysmith:seen=1", home: home)
        #expect(replay.status == 0)
        #expect(try helper("get", "protocol=https\nhost=s.example.com", home: home).fields["password"] == password)
    }

    @Test func incompleteCredentialsAndOtherProtocolsAreNotStored() throws {
        let home = HelperHome()
        let shared = ["KEYSMITH_ACCESS_GROUPS": "test.shared"]
        for input in [
            "protocol=https\nhost=i.example.com\nusername=ci",  // no password
            "protocol=https\nhost=i.example.com\npassword=x",  // no user name
            "protocol=https\nusername=ci\npassword=x",  // no host
            "protocol=cert\nhost=i.example.com\nusername=ci\npassword=x",  // a protocol osxkeychain does not store
        ] {
            #expect(try helper("store", input, home: home, environment: shared).status == 0)
        }
        let dump = try keysmith(["--json", "dump-keychain"], home: home, environment: shared)
        #expect(!dump.stdout.contains("i.example.com"), "\(dump.stdout)")
    }

    @Test func aKeychainThatCannotBeUsedFailsWithAMessageAndKeepsWhatWasStored() throws {
        let home = HelperHome()
        let password = testSecret()
        let shared = ["KEYSMITH_ACCESS_GROUPS": "test.shared"]
        #expect(try helper("store", "protocol=https\nhost=f.example.com\nusername=ci\npassword=\(password)", home: home, environment: shared).status == 0)
        // A process with no access group it may write, as on a locked or misconfigured keychain.
        let refused = ["KEYSMITH_ACCESS_GROUPS": "com.apple.token"]
        let replacement = testSecret("new")
        let store = try helper(
            "store", "protocol=https\nhost=f.example.com\nusername=ci\npassword=\(replacement)", home: home, environment: refused)
        #expect(store.status == 1)
        #expect(store.stderr.contains("could not store the credential"), "\(store)")
        #expect(!store.stderr.contains(replacement) && !store.stdout.contains(replacement))
        let none = try helper("get", "protocol=https\nhost=f.example.com", home: home, environment: ["KEYSMITH_ACCESS_GROUPS": ""])
        #expect(none.status == 1)
        #expect(none.stderr.contains("could not read the credential"), "\(none)")
        #expect(none.stdout.isEmpty)
        // What was stored before is intact.
        #expect(try helper("get", "protocol=https\nhost=f.example.com", home: home, environment: shared).fields["password"] == password)
    }

    @Test func aBadPortIsRefusedWithTheReason() throws {
        let home = HelperHome()
        let result = try helper("store", "protocol=https\nhost=b.example.com:99999\nusername=ci\npassword=x", home: home)
        #expect(result.status == 1)
        #expect(result.stderr.contains("0 to 65535"))
    }

    @Test func aHostWithCredentialsInItIsRefusedWithoutRepeatingThem() throws {
        let home = HelperHome()
        let secret = testSecret("inhost")
        for action in ["store", "get", "erase"] {
            let result = try helper(action, "protocol=https\nhost=ci:\(secret)@b.example.com\nusername=ci\npassword=x", home: home)
            #expect(result.status == 1, "\(action): \(result)")
            #expect(!result.stderr.contains(secret) && !result.stdout.contains(secret), "\(action): \(result)")
            #expect(result.stderr.contains("username="), "\(action): \(result)")
        }
        // A bad port is refused without repeating the host either.
        let port = try helper("store", "protocol=https\nhost=ci:\(secret)@b.example.com:99999\nusername=ci\npassword=x", home: home)
        #expect(port.status == 1 && !port.stderr.contains(secret), "\(port)")
    }

    @Test func aStoredValueWithALineBreakNeverReachesGit() throws {
        let home = HelperHome()
        // Docker's helper keeps any user name; the same item answers git (same shape).
        let injected = "{\"ServerURL\":\"https://git.example.com\",\"Username\":\"evil\\nhost=attacker.example\",\"Secret\":\"s\"}"
        let stored = try run(product("docker-credential-keysmith"), ["store"], input: injected, home: home)
        #expect(stored.status == 0, "\(stored) \(stored.stdout)")
        let got = try helper("get", "protocol=https\nhost=git.example.com", home: home)
        #expect(!got.stdout.contains("host="), "\(got.stdout)")
        #expect(got.stdout.isEmpty)
        #expect(got.status == 1 && got.stderr.contains("line break"), "\(got)")
        #expect(!got.stderr.contains("attacker"), "\(got)")
        // Through git: the host git asked for stays the host.
        let filled = try run(
            "git", ["-c", "credential.helper=", "-c", "credential.helper=keysmith", "credential", "fill"],
            input: "protocol=https\nhost=git.example.com\n\n", home: home)
        #expect(filled.fields["host"] != "attacker.example", "\(filled.stdout)")
    }
}
