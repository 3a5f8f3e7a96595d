import Foundation
@testable import KeychainServices
import Testing

struct KeychainEnvironmentTests {
    @Test func directoryPrefersKeysmithHomeThenXDGThenHome() {
        let explicit = KeychainEnvironment.fromProcessEnvironment(["KEYSMITH_HOME": "/tmp/ks", "XDG_DATA_HOME": "/x", "HOME": "/h"])
        #expect(explicit.directory.path == "/tmp/ks")
        let xdg = KeychainEnvironment.fromProcessEnvironment(["XDG_DATA_HOME": "/x", "HOME": "/h"])
        #expect(xdg.directory.path == "/x/keysmith")
        let home = KeychainEnvironment.fromProcessEnvironment(["HOME": "/h"])
        #expect(home.directory.path == "/h/.local/share/keysmith")
    }

    @Test func accessGroupsFromVariableInOrder() {
        let environment = KeychainEnvironment.fromProcessEnvironment(
            ["KEYSMITH_HOME": "/tmp/ks", "KEYSMITH_ACCESS_GROUPS": " TEAM.app , TEAM.shared,,"])
        #expect(environment.accessGroups == ["TEAM.app", "TEAM.shared"])
    }

    @Test func accessGroupsFromEntitlementsPlist() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("entitlements-\(UUID().uuidString).plist")
        defer { try? FileManager.default.removeItem(at: url) }
        let plist: [String: Any] = [
            "application-identifier": "ABCDE12345.com.example.app",
            "keychain-access-groups": ["com.apple.token", "ABCDE12345.com.example.shared"],
        ]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: url)
        let environment = KeychainEnvironment.fromProcessEnvironment(["KEYSMITH_ENTITLEMENTS": url.path])
        #expect(environment.applicationIdentifier == "ABCDE12345.com.example.app")
        // As on iOS: entitlement groups in order, then the application identifier; the
        // read-only token group last.
        #expect(environment.accessGroups == ["ABCDE12345.com.example.shared", "ABCDE12345.com.example.app", "com.apple.token"])
    }

    @Test func anEmptyAccessGroupsVariableGivesNoGroupsAndNamesItself() {
        for value in ["", " , ,"] {
            let environment = KeychainEnvironment.fromProcessEnvironment(["HOME": "/h", "KEYSMITH_ACCESS_GROUPS": value])
            // Never the shared group: a configured app's items must not land where every
            // unconfigured program reads them.
            #expect(environment.accessGroups.isEmpty)
            #expect(environment.configurationIssue?.problem.contains("KEYSMITH_ACCESS_GROUPS") == true, "'\(value)'")
        }
    }

    @Test func anAccessGroupListOfTheWrongShapeIsNamedNotIgnored() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("entitlements-\(UUID().uuidString).plist")
        defer { try? FileManager.default.removeItem(at: url) }
        // A single string where Xcode writes an array: the application identifier alone
        // would otherwise become the process's only group, without a word.
        let plist: [String: Any] = [
            "application-identifier": "ABCDE12345.com.example.app",
            "keychain-access-groups": "ABCDE12345.com.example.shared",
        ]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: url)
        let environment = KeychainEnvironment.fromProcessEnvironment(["KEYSMITH_ENTITLEMENTS": url.path])
        #expect(environment.accessGroups.isEmpty)
        #expect(environment.configurationIssue?.problem.contains("not an array of strings") == true)
    }

    @Test func unreadableEntitlementsGiveNoGroupsAndACleanError() throws {
        let environment = KeychainEnvironment.fromProcessEnvironment(
            ["KEYSMITH_HOME": "/tmp/unused", "KEYSMITH_ENTITLEMENTS": "/nonexistent/entitlements.plist"])
        #expect(environment.accessGroups.isEmpty)
        let keychain = TemporaryKeychain(accessGroups: [])
        defer { keychain.remove() }
        keychain.run {
            #expect(SecItemAdd(genp().with(kSecValueData, Data()) as CFDictionary, nil) == errSecMissingEntitlement)
            #expect(KeychainDiagnostics.lastFailureRecovery?.contains("KEYSMITH_ACCESS_GROUPS") == true)
        }
    }

    @Test func zeroSetupSharesOneGroupAndKeepsTheExecutablesOldGroup() {
        // Every program that configures nothing stores in the shared group (so the keysmith
        // tool and apps see each other's items), and still reads the group earlier versions
        // derived from its executable name.
        let environment = KeychainEnvironment.fromProcessEnvironment(["HOME": "/h"])
        #expect(environment.accessGroups.count == 2)
        #expect(environment.accessGroups.first == KeychainEnvironment.sharedAccessGroup)
        #expect(environment.accessGroups.last?.hasPrefix("local.") == true)
    }

    /// The old group is named after the executable exactly as earlier versions named it
    /// (the last component of its path, as `URL` gives it), or its items would vanish.
    @Test func theExecutablesOldGroupIsNamedAsBefore() {
        let paths = [
            "/usr/local/bin/keysmith", "keysmith", "./build/app", "/opt/My App/bin/tool", "bin/tool/", "/a//b//",
            "/a/b/..", "/a/b/.", "..", ".", "a/..", "a/.", "../..", "/", "//", "", ".hidden", "...",
            "~", "~/", "~//", "~root", "~root/", "~nosuchuser", "~/bin/tool", "a~b", "/x/~", "100%", "a;b?c#d",
            "e\u{301}/caf\u{E9}", "caf\u{65}\u{301}", "ünïcødé/прог", "/tmp/x.y.z", "relative/path/with space ",
        ]
        for path in paths {
            // Byte for byte (String's == would take a decomposed é for a precomposed one).
            let name = URL(fileURLWithPath: path).lastPathComponent
            #expect(Array(KeychainEnvironment.lastPathComponent(of: path).utf8) == Array(name.utf8), "\(path)")
            let group = KeychainEnvironment.defaultAccessGroups(executable: path).last ?? ""
            #expect(Array(group.utf8) == Array("local.\(name.isEmpty ? "app" : name)".utf8), "\(path)")
        }
    }

    @Test func scopedEnvironmentWinsInsideItsTaskOnly() async {
        let outside = KeychainEnvironment.current
        let scoped = KeychainEnvironment(directory: URL(fileURLWithPath: "/tmp/scoped"), accessGroups: ["g"])
        KeychainEnvironment.withEnvironment(scoped) {
            #expect(KeychainEnvironment.current == scoped)
            #expect(KeychainEnvironment.directory.path == "/tmp/scoped")
            #expect(KeychainEnvironment.accessGroups == ["g"])
        }
        await KeychainEnvironment.withEnvironment(scoped) {
            await Task.yield()
            #expect(KeychainEnvironment.current == scoped)
        }
        #expect(KeychainEnvironment.current == outside)
    }

    @Test func descriptionNamesDirectoryAndGroups() {
        let environment = KeychainEnvironment(directory: URL(fileURLWithPath: "/tmp/d"), accessGroups: ["a", "b"])
        #expect(environment.description == "KeychainEnvironment(directory: /tmp/d, accessGroups: [\"a\", \"b\"])")
    }
}

struct CheckOrderTests {
    /// Apple's order (reference §3.1): `clip` first, then "no entitlements at all", then
    /// the dictionary's own problems.
    @Test func internalAttributeThenEntitlementsThenMalformedKeys() {
        let malformed = NSMutableDictionary(dictionary: genp())
        malformed[NSNumber(value: 7)] = "number key"
        let keychain = TemporaryKeychain(accessGroups: [])
        defer { keychain.remove() }
        keychain.run {
            #expect(SecItemCopyMatching(malformed, nil) == errSecMissingEntitlement)
            let withClip = malformed.mutableCopy() as! NSMutableDictionary
            withClip["clip"] = 1
            #expect(SecItemCopyMatching(withClip, nil) == errSecParam)
        }
        TemporaryKeychain.with { _ in
            #expect(SecItemCopyMatching(malformed, nil) == errSecNoSuchAttr)
        }
    }
}

struct CFTypeIdentifierTests {
    /// Code ported from C checks results with CFGetTypeID; each result kind has its own.
    @Test func resultsHaveTheirCoreFoundationTypeIdentifiers() {
        TemporaryKeychain.with { _ in
            #expect(SecItemAdd(genp().with(kSecValueData, Data("x".utf8)) as CFDictionary, nil) == errSecSuccess)
            var data: CFTypeRef?
            #expect(SecItemCopyMatching(genp().with(kSecReturnData, true) as CFDictionary, &data) == errSecSuccess)
            #expect(CFGetTypeID(data) == CFDataGetTypeID())
            var attributes: CFTypeRef?
            #expect(SecItemCopyMatching(genp().with(kSecReturnAttributes, true) as CFDictionary, &attributes) == errSecSuccess)
            #expect(CFGetTypeID(attributes) == CFDictionaryGetTypeID())
            var all: CFTypeRef?
            let query = genp().with([kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll])
            #expect(SecItemCopyMatching(query as CFDictionary, &all) == errSecSuccess)
            #expect(CFGetTypeID(all) == CFArrayGetTypeID())
        }
        #expect(CFGetTypeID(kCFBooleanTrue) == CFBooleanGetTypeID())
        #expect(CFGetTypeID(NSNumber(value: 7)) == CFNumberGetTypeID())
        #expect(CFGetTypeID(kSecClassGenericPassword) == CFStringGetTypeID())
        #expect(CFGetTypeID(NSDate()) == CFDateGetTypeID())
        let control = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil)
        #expect(CFGetTypeID(control) == SecAccessControlGetTypeID())
        #expect(CFGetTypeID(nil) == 0)
        let distinct: Set<CFTypeID> = [CFDataGetTypeID(), CFStringGetTypeID(), CFDictionaryGetTypeID(), CFArrayGetTypeID(),
                                       CFNumberGetTypeID(), CFBooleanGetTypeID(), CFDateGetTypeID(), SecAccessControlGetTypeID()]
        #expect(distinct.count == 8)
    }
}
