import Foundation
import KeychainServices
import Keysmith
import Testing

// The CLI and programs that configured nothing share one keychain view; configuration
// mistakes are named; reads never create a keychain.

/// What a program that configured nothing gets for the keychain at `home`.
private func unconfiguredProgram(_ home: TemporaryHome) -> KeychainEnvironment {
    KeychainEnvironment.fromProcessEnvironment(["KEYSMITH_HOME": home.keychain.path, "HOME": home.url.path])
}

/// Items stored by the CLI are found by programs without configuration, and the reverse.
struct SharedDefaultAccessGroupTests {
    @Test func whatTheCLIStoresAProgramThatConfiguredNothingReads() throws {
        let home = TemporaryHome()
        let rotated = try keysmith(["rotate", "api_key", "--stdin", "--version", "1"], home: home, standardInput: "k3y")
        #expect(rotated.status == 0, "\(rotated)")
        try storeGenericPassword("t0ken", service: "api.example.com", account: "deploy", home: home)
        KeychainEnvironment.withEnvironment(unconfiguredProgram(home)) {
            var result: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api.example.com",
                kSecAttrAccount as String: "deploy", kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("t0ken".utf8))
        }
        // The README's provisioning step: `keysmith rotate` and then the app's retriever
        // (whose keychain service on Linux, without a bundle identifier, is keysmith.keys).
        let key = try KeychainEnvironment.withEnvironment(unconfiguredProgram(home)) {
            try KeyRetriever(sources: KeyRetriever.defaultSources(service: "keysmith.keys", environmentPrefix: nil))
                .retrieve("api_key")
        }
        #expect(key?.data == Data("k3y".utf8))
        #expect(key?.version == "1")
    }

    @Test func whatAProgramThatConfiguredNothingStoresTheCLIFindsAndLists() throws {
        let home = TemporaryHome()
        KeychainEnvironment.withEnvironment(unconfiguredProgram(home)) {
            let item: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "app.service",
                kSecAttrAccount as String: "user", kSecValueData as String: Data("app-secret".utf8),
            ]
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
        }
        let found = try keysmith(["find-generic-password", "-s", "app.service", "-a", "user", "-w"], home: home)
        #expect(found.stdout == "app-secret\n", "\(found)")
        let dump = try keysmith(["--json", "dump-keychain"], home: home).json()
        #expect(dump["count"] as? Int == 1)
    }

    @Test func findAndDumpShowEveryGroupByDefaultWithTheGroup() throws {
        let home = TemporaryHome()
        try storeGenericPassword("a", service: "svc", account: "team", home: home, extra: ["--access-group", "team.a"])
        let found = try keysmith(["find-generic-password", "-s", "svc", "-a", "team"], home: home)
        #expect(found.status == 0, "the default view sees every group: \(found)")
        #expect(found.stdout.contains("team.a"), "the group is shown: \(found)")
        let dump = try keysmith(["dump-keychain"], home: home)
        #expect(dump.stdout.contains("1 item"), "\(dump)")
        #expect(dump.stdout.contains("team.a"), "\(dump)")
        // A configured program keeps its own groups.
        let other = try keysmith(["find-generic-password", "-s", "svc", "--access-group", "team.b"], home: home)
        #expect(other.status == 44, "\(other)")
        // What the default view finds, it can delete.
        let deleted = try keysmith(["delete-generic-password", "-s", "svc", "-a", "team"], home: home)
        #expect(deleted.status == 0, "\(deleted)")
        #expect(try keysmith(["dump-keychain", "--json"], home: home).json()["count"] as? Int == 0)
    }
}

/// Configuration mistakes are named, with the fix.
struct EnvironmentHintTests {
    @Test func rotateWithEmptyInputDoesNotAdviseAFlagItRejects() throws {
        let home = TemporaryHome()
        let result = try keysmith(["rotate", "api_key", "--stdin", "--version", "1"], home: home, standardInput: "")
        #expect(result.status == 1, "\(result)")
        #expect(!result.stderr.contains("-w"), "rotate takes no -w: \(result)")
        #expect(result.stderr.contains("--generate") || result.stderr.contains("printf"), "\(result)")
    }

    @Test func aKeychainFlagNamingAFileTalksAboutTheFlag() throws {
        let home = TemporaryHome()
        let file = home.url.appendingPathComponent("login.keychain")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data("x".utf8)))
        let result = try keysmith(
            ["--keychain", file.path, "add-generic-password", "-s", "s", "-a", "a", "--stdin"], home: home,
            standardInput: "x", useKeychainFlag: false)
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("--keychain"), "\(result)")
        #expect(!result.stderr.contains("KEYSMITH_HOME"), "the keychain came from --keychain: \(result)")
    }

    @Test func aMissingEntitlementsFileIsNamed() throws {
        let home = TemporaryHome()
        let missing = home.url.appendingPathComponent("App.entitlements").path
        let result = try keysmith(
            ["add-generic-password", "-s", "s", "-a", "a", "--stdin"], home: home, standardInput: "x",
            environment: ["KEYSMITH_ENTITLEMENTS": missing])
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains(missing), "\(result)")
        #expect(result.stderr.contains("does not exist"), "\(result)")
    }

    private func writeXcodeEntitlements(_ home: TemporaryHome) throws -> String {
        let path = home.url.appendingPathComponent("App.entitlements").path
        let plist: [String: Any] = [
            "keychain-access-groups": ["$(AppIdentifierPrefix)com.example.shared"],
            "application-identifier": "$(AppIdentifierPrefix)com.example.app",
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        #expect(FileManager.default.createFile(atPath: path, contents: data))
        return path
    }

    @Test func anXcodeVariableWithoutATeamIsRefusedWithTheFix() throws {
        let home = TemporaryHome()
        let path = try writeXcodeEntitlements(home)
        let result = try keysmith(
            ["add-generic-password", "-s", "s", "-a", "a", "--stdin"], home: home, standardInput: "x",
            environment: ["KEYSMITH_ENTITLEMENTS": path])
        #expect(result.status != 0, "a group named \"$(AppIdentifierPrefix)…\" is never used literally: \(result)")
        #expect(result.stderr.contains("KEYSMITH_TEAM_ID"), "\(result)")
    }

    @Test func anXcodeVariableIsExpandedFromTheTeam() throws {
        let home = TemporaryHome()
        let path = try writeXcodeEntitlements(home)
        let environment = ["KEYSMITH_ENTITLEMENTS": path, "KEYSMITH_TEAM_ID": "ABCDE12345"]
        let added = try keysmith(
            ["add-generic-password", "-s", "s", "-a", "a", "--stdin"], home: home, standardInput: "x",
            environment: environment)
        #expect(added.status == 0, "\(added)")
        let found = try keysmith(["--json", "find-generic-password", "-s", "s"], home: home, environment: environment)
        #expect(try found.json()["accessGroup"] as? String == "ABCDE12345.com.example.shared", "\(found)")
    }
}

/// Reading never creates a keychain, and "not found" names the keychain it looked in.
struct ReadsDoNotCreateKeychainsTests {
    @Test(arguments: [
        ["find-generic-password", "-s", "x"],
        ["find-internet-password", "-s", "x"],
        ["delete-generic-password", "-s", "x"],
        ["dump-keychain"],
        ["resolve", "api_key"],
        ["explain", "api_key"],
        ["audit"],
    ])
    func aReadOfAMissingKeychainCreatesNothing(_ arguments: [String]) throws {
        let home = TemporaryHome()
        let typo = home.url.appendingPathComponent("typo/x")
        let result = try keysmith(
            arguments, home: home, environment: ["KEYSMITH_HOME": typo.path], useKeychainFlag: false)
        #expect(!FileManager.default.fileExists(atPath: home.url.appendingPathComponent("typo").path), "\(arguments): \(result)")
        #expect(result.status == 0 || result.status == 44, "\(result)")
        if result.status == 44 {
            #expect(result.stderr.contains(typo.path), "not found names the keychain: \(result)")
        }
    }
}
