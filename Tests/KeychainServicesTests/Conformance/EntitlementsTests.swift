import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §2.3 (agrp default) and §3.7: the caller's access-group list as derived from an
/// entitlements plist (here `KEYSMITH_ENTITLEMENTS`, the Linux stand-in for the signature).
struct EntitlementsTests {
    private func environment(entitlements: [String: Any]) throws -> (KeychainEnvironment, URL) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("keysmith-entitlements-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let plist = directory.appendingPathComponent("app.entitlements")
        let data = try PropertyListSerialization.data(fromPropertyList: entitlements, format: .xml, options: 0)
        try data.write(to: plist)
        let environment = KeychainEnvironment.fromProcessEnvironment([
            "KEYSMITH_ENTITLEMENTS": plist.path, "KEYSMITH_HOME": directory.appendingPathComponent("home").path,
        ])
        return (environment, directory)
    }

    // §2.3: keychain-access-groups (in order), then application-identifier, then
    // com.apple.security.application-groups; com.apple.token moved to the end.
    @Test func groupListOrder() throws {
        let (environment, directory) = try environment(entitlements: [
            "keychain-access-groups": ["com.apple.token", "TEAM.com.example.shared", "TEAM.com.example.first"],
            "application-identifier": "TEAM.com.example.app",
            "com.apple.security.application-groups": ["group.com.example"],
        ])
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(environment.accessGroups == [
            "TEAM.com.example.shared", "TEAM.com.example.first", "TEAM.com.example.app", "group.com.example", "com.apple.token",
        ])
    }

    // §2.3: without keychain-access-groups, the application identifier is the (default) group.
    @Test func applicationIdentifierAlone() throws {
        let (environment, directory) = try environment(entitlements: ["application-identifier": "TEAM.com.example.app"])
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(environment.accessGroups.first == "TEAM.com.example.app")
        try KeychainEnvironment.withEnvironment(environment) {
            #expect(secAdd(genp()) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            #expect(asString(attributes["agrp"]) == "TEAM.com.example.app")
        }
    }

    // §2.3 / §3.7: with com.apple.token listed first in the entitlements, new items still go to
    // the first writable group, and the token group stays readable but not writable.
    @Test func tokenGroupFirstInEntitlements() throws {
        let (environment, directory) = try environment(entitlements: [
            "keychain-access-groups": ["com.apple.token", "TEAM.com.example.app"],
        ])
        defer { try? FileManager.default.removeItem(at: directory) }
        try KeychainEnvironment.withEnvironment(environment) {
            #expect(secAdd(genp()) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            #expect(asString(attributes["agrp"]) == "TEAM.com.example.app")
            #expect(secCopy(genp().with(kSecAttrAccessGroup, "com.apple.token")).status == errSecItemNotFound)
            #expect(secAdd(genp("x").with(kSecAttrAccessGroup, "com.apple.token")) == errSecMissingEntitlement)
        }
    }

    // §3.1 step 2: no entitlements at all → -34018 for every operation.
    @Test func noEntitlements() throws {
        let (environment, directory) = try environment(entitlements: [:])
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(environment.accessGroups.isEmpty)
        KeychainEnvironment.withEnvironment(environment) {
            #expect(secAdd(genp()) == errSecMissingEntitlement)
            #expect(secCopy(genp()).status == errSecMissingEntitlement)
            #expect(secUpdate(genp(), [kSecAttrLabel as String: "x"]) == errSecMissingEntitlement)
            #expect(secDelete(genp()) == errSecMissingEntitlement)
        }
    }
}
}
