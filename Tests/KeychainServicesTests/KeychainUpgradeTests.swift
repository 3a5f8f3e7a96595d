import Foundation
import Testing
import KeychainServices
import CSQLite

/// A keychain written by the previous format (one key file, class keys derived from it)
/// opens with this version, is upgraded in place, and keeps every item.
@Suite struct KeychainUpgradeTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/keychain-v1", isDirectory: true)

    /// A private copy of the fixture (git does not keep the 0600/0700 modes).
    static func copyOfFixture() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("keysmith-upgrade-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in ["keychain.db", "device.key"] {
            let target = directory.appendingPathComponent(name)
            try FileManager.default.copyItem(at: fixture.appendingPathComponent(name), to: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
        }
        return directory
    }

    static func expectFixtureItems(_ environment: KeychainEnvironment) {
        KeychainEnvironment.withEnvironment(environment) {
            for pdmn in ["ak", "ck", "dk", "aku", "cku", "dku"] {
                var result: CFTypeRef?
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.fixture",
                    kSecAttrAccount as String: "account-\(pdmn)", kSecReturnData as String: true,
                    kSecReturnAttributes as String: true,
                ]
                #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, "\(pdmn)")
                let attributes = result as? [String: Any]
                #expect((attributes?[kSecValueData as String] as? Data) == Data("secret-\(pdmn)".utf8), "\(pdmn)")
                #expect(attributes?[kSecAttrAccessible as String] as? String == pdmn)
                #expect(attributes?[kSecAttrLabel as String] as? String == "Fixture item \(pdmn)")
            }
            var result: CFTypeRef?
            let inet: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "fixture.example.com",
                kSecAttrAccount as String: "alice", kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(inet as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("secret-inet".utf8))
            let other: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.fixture.other-group",
                kSecAttrAccessGroup as String: "com.keysmith.fixture.second", kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(other as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("secret-second-group".utf8))
        }
    }

    static func environment(_ directory: URL) -> KeychainEnvironment {
        KeychainEnvironment(directory: directory, accessGroups: ["com.keysmith.fixture", "com.keysmith.fixture.second"])
    }

    @Test func upgradesTheFirstFormatInPlaceAndKeepsEveryItem() throws {
        let directory = try Self.copyOfFixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        Self.expectFixtureItems(Self.environment(directory))
        // Upgraded: the items are under the new class keys (their ciphertext changed and
        // the ThisDeviceOnly rows carry this machine's tag), and a second open is plain.
        let labels = try Self.labels(directory.appendingPathComponent("keychain.db"))
        #expect(labels.contains { $0.hasPrefix("aku@") })
        #expect(!labels.contains("aku"))
        let original = try Self.labels(Self.fixture.appendingPathComponent("keychain.db"))
        #expect(original.contains("aku"))
        Self.expectFixtureItems(Self.environment(directory))
        // A passphrase set after the upgrade protects the upgraded items.
        try KeychainEnvironment.withEnvironment(Self.environment(directory)) {
            try KeychainEnvironment.setPassphrase("after upgrade", old: nil)
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            var result: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.fixture",
                kSecAttrAccount as String: "account-ak", kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecInteractionNotAllowed)
            try KeychainEnvironment.unlock(passphrase: "after upgrade")
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
        }
    }

    /// - Throws: when the database cannot be opened or read (never an empty answer instead).
    static func labels(_ database: URL) throws -> [String] {
        var handle: OpaquePointer?
        defer { sqlite3_close_v2(handle) }
        try #require(sqlite3_open_v2(database.path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, "cannot open \(database.path)")
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        try #require(sqlite3_prepare_v2(handle, "SELECT pdmn FROM items ORDER BY id", -1, &statement, nil) == SQLITE_OK,
                     "cannot read the items of \(database.path)")
        var labels: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { labels.append(String(cString: sqlite3_column_text(statement, 0))) }
        return labels
    }
}
