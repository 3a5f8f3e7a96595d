import Foundation
import Testing

@testable import KeysmithCredentialHelpers

/// `docker-credential-keysmith`: every verb of Docker's protocol, through the built binary.
struct DockerCredentialHelperTests {
    func docker(_ arguments: [String], _ input: String = "", home: HelperHome, environment: [String: String] = [:]) throws -> Run {
        try run(product("docker-credential-keysmith"), arguments, input: input, home: home, environment: environment)
    }

    func storeJSON(_ server: String, _ user: String, _ secret: String) -> String {
        "{\"ServerURL\":\"\(server)\",\"Username\":\"\(user)\",\"Secret\":\"\(secret)\"}\n"
    }

    @Test func storeGetListEraseRoundTrip() throws {
        let home = HelperHome()
        let secret = testSecret()
        let stored = try docker(["store"], storeJSON("https://registry.example.com", "bob", secret), home: home)
        #expect(stored.status == 0, "\(stored) \(stored.stdout)")
        #expect(stored.stdout.isEmpty)

        let got = try docker(["get"], "https://registry.example.com\n", home: home)
        #expect(got.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: got.standardOutput) as? [String: String])
        #expect(object == ["ServerURL": "https://registry.example.com", "Username": "bob", "Secret": secret])

        let list = try docker(["list"], home: home)
        #expect(list.status == 0)
        let map = try #require(try JSONSerialization.jsonObject(with: list.standardOutput) as? [String: String])
        #expect(map == ["https://registry.example.com": "bob"])
        #expect(!list.stdout.contains(secret))

        let erased = try docker(["erase"], "https://registry.example.com\n", home: home)
        #expect(erased.status == 0, "\(erased.stdout)")
        let gone = try docker(["get"], "https://registry.example.com\n", home: home)
        #expect(gone.status == 1)
        #expect(gone.stdout == "credentials not found in native keychain\n")
        #expect(try docker(["list"], home: home).stdout == "{}\n")
    }

    @Test func missingEntryGivesDockersExactMessageAndStatus1() throws {
        let home = HelperHome()
        let get = try docker(["get"], "registry.example.com\n", home: home)
        #expect(get.status == 1)
        #expect(get.stdout == "credentials not found in native keychain\n")
        let erase = try docker(["erase"], "registry.example.com\n", home: home)
        #expect(erase.status == 1)
        #expect(erase.stdout == "credentials not found in native keychain\n")
    }

    @Test func schemePortAndPathSelectTheItem() throws {
        let home = HelperHome()
        let secure = testSecret("s"), plain = testSecret("p"), ported = testSecret("port")
        #expect(try docker(["store"], storeJSON("registry.example.com", "a", secure), home: home).status == 0)
        #expect(try docker(["store"], storeJSON("http://registry.example.com", "b", plain), home: home).status == 0)
        #expect(try docker(["store"], storeJSON("registry.example.com:5000/v2", "c", ported), home: home).status == 0)
        func secret(_ url: String) throws -> String? {
            let got = try docker(["get"], url, home: home)
            return (try? JSONSerialization.jsonObject(with: got.standardOutput) as? [String: String])?["Secret"]
        }
        // No scheme means https, as docker-credential-osxkeychain reads it.
        #expect(try secret("https://registry.example.com") == secure)
        #expect(try secret("http://registry.example.com") == plain)
        #expect(try secret("registry.example.com:5000/v2") == ported)
        #expect(try secret("registry.example.com:5000") == nil)
        let map = try #require(try JSONSerialization.jsonObject(with: try docker(["list"], home: home).standardOutput) as? [String: String])
        #expect(map == ["https://registry.example.com": "a", "http://registry.example.com": "b", "https://registry.example.com:5000/v2": "c"])
    }

    @Test func storeReplacesTheCredentialOfAnAddressEvenForAnotherUser() throws {
        let home = HelperHome()
        #expect(try docker(["store"], storeJSON("registry.example.com", "old", testSecret()), home: home).status == 0)
        let secret = testSecret("new")
        #expect(try docker(["store"], storeJSON("registry.example.com", "new", secret), home: home).status == 0)
        let object = try JSONSerialization.jsonObject(with: try docker(["get"], "registry.example.com", home: home).standardOutput) as? [String: String]
        #expect(object?["Username"] == "new")
        #expect(object?["Secret"] == secret)
        let map = try JSONSerialization.jsonObject(with: try docker(["list"], home: home).standardOutput) as? [String: String]
        #expect(map == ["https://registry.example.com": "new"])
    }

    @Test func badInputIsRefusedWithDockersMessages() throws {
        let home = HelperHome()
        let noURL = try docker(["store"], "{\"Username\":\"u\",\"Secret\":\"s\"}", home: home)
        #expect(noURL.status == 1 && noURL.stdout == "no credentials server URL\n")
        let noUser = try docker(["store"], "{\"ServerURL\":\"r.example.com\",\"Secret\":\"s\"}", home: home)
        #expect(noUser.status == 1 && noUser.stdout == "no credentials username\n")
        let scheme = try docker(["get"], "ftp://r.example.com", home: home)
        #expect(scheme.status == 1 && scheme.stdout == "unsupported scheme: ftp\n")
        let empty = try docker(["get"], "\n", home: home)
        #expect(empty.status == 1 && empty.stdout == "no credentials server URL\n")
        let notJSON = try docker(["store"], "hunter2", home: home)
        #expect(notJSON.status == 1 && !notJSON.stdout.contains("hunter2"))
        let unknown = try docker(["frobnicate"], home: home)
        #expect(unknown.status == 1 && unknown.stdout.contains("unknown action"))
        let usage = try docker([], home: home)
        #expect(usage.status == 1 && usage.stdout.hasPrefix("Usage:"))
    }

    @Test func versionNamesTheHelper() throws {
        let home = HelperHome()
        let version = try docker(["version"], home: home)
        #expect(version.status == 0)
        #expect(version.stdout == "docker-credential-keysmith (keysmith) \(DockerCredentialHelper.version)\n")
        #expect(try docker(["--version"], home: home).stdout == version.stdout)
    }

    @Test func keysmithFindsWhatStoreWroteInASharedAccessGroup() throws {
        let home = HelperHome()
        let shared = ["KEYSMITH_ACCESS_GROUPS": "test.shared"]
        let secret = testSecret()
        #expect(try docker(["store"], storeJSON("https://registry.example.com:5000/team", "bob", secret), home: home, environment: shared).status == 0)
        let found = try keysmith(["find-internet-password", "-s", "registry.example.com", "-a", "bob", "-w"], home: home, environment: shared)
        #expect(found.status == 0, "\(found)")
        #expect(found.stdout == secret + "\n")
        // docker-credential-osxkeychain's shape: label, protocol, port, path, authentication type.
        let item = try keysmith(["--json", "find-internet-password", "-s", "registry.example.com", "-a", "bob"], home: home, environment: shared)
        let object = try #require(try JSONSerialization.jsonObject(with: item.standardOutput) as? [String: Any])
        #expect(object["label"] as? String == "Docker Credentials")
        #expect("\(object["port"] ?? "")" == "5000")
        #expect(object["path"] as? String == "/team")
    }

    @Test func keysmithFindsWhatStoreWroteWithDefaultSettings() throws {
        let home = HelperHome()
        let secret = testSecret()
        #expect(try docker(["store"], storeJSON("registry.example.com", "bob", secret), home: home).status == 0)
        let found = try keysmith(["find-internet-password", "-s", "registry.example.com", "-a", "bob", "-w"], home: home)
        #expect(found.status == 0, "\(found)")
        #expect(found.stdout == secret + "\n")
    }

    @Test func aKeychainThatCannotBeUsedFailsWithAMessageAndKeepsWhatWasStored() throws {
        let home = HelperHome()
        let secret = testSecret()
        #expect(try docker(["store"], storeJSON("registry.example.com", "bob", secret), home: home).status == 0)
        let refused = try docker(
            ["store"], storeJSON("registry.example.com", "bob", "replacement"), home: home,
            environment: ["KEYSMITH_ACCESS_GROUPS": "com.apple.token"])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("could not"), "\(refused.stdout)")
        #expect(!refused.stdout.contains("replacement"))
        let object = try JSONSerialization.jsonObject(with: try docker(["get"], "registry.example.com", home: home).standardOutput) as? [String: String]
        #expect(object?["Secret"] == secret)
    }

    @Test func aStoreTheKeychainRefusesKeepsTheCredentialThatWasThere() throws {
        let home = HelperHome()
        let secret = testSecret()
        #expect(try docker(["store"], storeJSON("registry.example.com", "bob", secret), home: home).status == 0)
        // A user name longer than an attribute may be (1 MiB): the keychain refuses the write.
        let huge = String(repeating: "u", count: (1 << 20) + 1)
        let refused = try docker(["store"], storeJSON("registry.example.com", huge, "replacement"), home: home)
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("could not store the credential"), "\(refused.stdout.prefix(300))")
        let got = try docker(["get"], "registry.example.com", home: home)
        #expect(got.status == 0, "the stored credential was lost: \(got.stdout)")
        let object = (try? JSONSerialization.jsonObject(with: got.standardOutput)) as? [String: String]
        #expect(object?["Username"] == "bob")
        #expect(object?["Secret"] == secret)
    }

    @Test func aStoreWhoseFieldsAreNotTextIsRefusedAndKeepsWhatWasStored() throws {
        let home = HelperHome()
        let secret = testSecret()
        #expect(try docker(["store"], storeJSON("https://t.example.com", "bob", secret), home: home).status == 0)
        for bad in [
            "{\"ServerURL\":\"https://t.example.com\",\"Username\":\"bob\",\"Secret\":12345}",
            "{\"ServerURL\":\"https://t.example.com\",\"Username\":\"bob\",\"Secret\":null}",
            "{\"ServerURL\":\"https://t.example.com\",\"Username\":[\"bob\"],\"Secret\":\"s\"}",
            "{\"ServerURL\":7,\"Username\":\"bob\",\"Secret\":\"s\"}",
        ] {
            let refused = try docker(["store"], bad, home: home)
            #expect(refused.status == 1, "\(bad): \(refused.stdout)")
            #expect(refused.stdout.contains("string"), "\(bad): \(refused.stdout)")
        }
        let got = try docker(["get"], "https://t.example.com\n", home: home)
        let object = try #require(try JSONSerialization.jsonObject(with: got.standardOutput) as? [String: String])
        #expect(object["Secret"] == secret)
    }

    @Test func aServerURLWithCredentialsInItIsNeverRepeated() throws {
        let home = HelperHome()
        let secret = testSecret("inurl")
        for url in ["https://bob:\(secret)@r.example.com:70000/v2", "ftp://bob:\(secret)@r.example.com"] {
            let got = try docker(["get"], url, home: home)
            #expect(got.status == 1, "\(url)")
            #expect(!got.stdout.contains(secret) && !got.stderr.contains(secret), "\(got.stdout)")
            let stored = try docker(["store"], storeJSON(url, "bob", "s"), home: home)
            #expect(stored.status == 1 && !stored.stdout.contains(secret), "\(stored.stdout)")
        }
    }
}
