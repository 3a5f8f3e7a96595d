import Foundation
import Keysmith
import KeychainServices
import Testing

struct PlaintextMigrationTests {
    @Test func test_userDefaults_movedIntoKeychain_andRemoved() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                defaults.set("plain-token", forKey: "auth_token")
                defaults.set(7, forKey: "login_count")
                defaults.set(Data([1, 2, 3]), forKey: "device_key")
                defaults.set("not a secret", forKey: "theme")
                let store = try makeStore()

                let report = try store.migratePlaintext(
                    from: defaults, keys: ["auth_token", "login_count", "device_key", "absent"], in: "auth")
                #expect(report.migrated.sorted() == ["auth_token", "device_key", "login_count"])
                #expect(try store.get("auth_token", as: String.self, in: "auth") == "plain-token")
                #expect(try store.get("login_count", as: Int.self, in: "auth") == 7)
                #expect(try store.get("device_key", as: Data.self, in: "auth") == Data([1, 2, 3]))
                #expect(defaults.object(forKey: "auth_token") == nil)
                #expect(defaults.object(forKey: "login_count") == nil)
                #expect(defaults.object(forKey: "device_key") == nil)
                #expect(defaults.string(forKey: "theme") == "not a secret")
            }
        }
    }

    @Test func test_userDefaults_runTwice_isIdempotent() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                defaults.set("plain-token", forKey: "auth_token")
                let store = try makeStore()
                try store.migratePlaintext(from: defaults, keys: ["auth_token"], in: "auth")
                let second = try store.migratePlaintext(from: defaults, keys: ["auth_token"], in: "auth")
                #expect(second.migrated.isEmpty && second.alreadyPresent.isEmpty)
                #expect(try store.get("auth_token", as: String.self, in: "auth") == "plain-token")
            }
        }
    }

    @Test func test_userDefaults_interruptedBeforeRemoval_keychainCopyWins() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                // A crash after the keychain write left the plaintext copy behind.
                let store = try makeStore()
                try store.set("auth_token", "migrated", in: "auth")
                defaults.set("migrated", forKey: "auth_token")
                let report = try store.migratePlaintext(from: defaults, keys: ["auth_token"], in: "auth")
                #expect(report.alreadyPresent == ["auth_token"])
                #expect(defaults.object(forKey: "auth_token") == nil)
                #expect(try store.get("auth_token", as: String.self, in: "auth") == "migrated")
            }
        }
    }

    @Test func test_userDefaults_failedKeychainWrite_keepsThePlaintext() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let faults = ErrorInjection()
                defaults.set("plain-token", forKey: "auth_token")
                let store = try makeStore(errorInjection: faults)
                faults.failNext(.add, with: errSecInteractionNotAllowed)
                #expect(throws: SecureStoreError.self) {
                    try store.migratePlaintext(from: defaults, keys: ["auth_token"], in: "auth")
                }
                #expect(defaults.string(forKey: "auth_token") == "plain-token")
                try store.migratePlaintext(from: defaults, keys: ["auth_token"], in: "auth")
                #expect(defaults.object(forKey: "auth_token") == nil)
            }
        }
    }

    @Test func test_userDefaults_renameAndOversizedValues() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                defaults.set("t", forKey: "legacy_token")
                defaults.set(String(repeating: "x", count: 50), forKey: "legacy_blob")
                let store = try makeStore(sizeLimit: 20)
                let report = try store.migratePlaintext(
                    from: defaults, keys: ["legacy_token", "legacy_blob"], in: "auth"
                ) { $0.replacingOccurrences(of: "legacy_", with: "") }
                #expect(report.migrated == ["token"])
                #expect(report.skipped["blob"]?.contains("50") == true)
                #expect(defaults.string(forKey: "legacy_blob") != nil)
                #expect(try store.get("token", as: String.self, in: "auth") == "t")
            }
        }
    }

    @Test func test_jsonFile_movedIntoKeychain_andDeleted() throws {
        try withTemporaryKeychain {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString).json")
            let json = #"{"api_key": "sk-123", "retries": 3, "profile": {"nickname": "Ada"}}"#
            try Data(json.utf8).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let store = try makeStore()

            let report = try store.migratePlaintext(fromFile: url, in: "config")
            #expect(report.migrated.sorted() == ["api_key", "profile", "retries"])
            #expect(try store.get("api_key", as: String.self, in: "config") == "sk-123")
            #expect(try store.get("retries", as: Int.self, in: "config") == 3)
            #expect(try store.get("profile", as: [String: String].self, in: "config") == ["nickname": "Ada"])
            #expect(!FileManager.default.fileExists(atPath: url.path))
            // Running again with the file gone is nothing to do.
            #expect(try store.migratePlaintext(fromFile: url, in: "config").migrated.isEmpty)
        }
    }

    @Test func test_plistFile_selectedKeys_restIsKept() throws {
        try withTemporaryKeychain {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString).plist")
            let plist: [String: Any] = ["api_key": "sk-456", "endpoint": "https://example.com"]
            try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let store = try makeStore()

            let report = try store.migratePlaintext(fromFile: url, keys: ["api_key"], in: "config")
            #expect(report.migrated == ["api_key"])
            #expect(try store.get("api_key", as: String.self, in: "config") == "sk-456")
            let rest = try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any]
            #expect(rest?["api_key"] == nil)
            #expect(rest?["endpoint"] as? String == "https://example.com")
        }
    }

    @Test func test_notADictionaryFile_isDecodingFailed_andUntouched() throws {
        try withTemporaryKeychain {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString).json")
            try Data("[1, 2, 3]".utf8).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let store = try makeStore()
            let error = #expect(throws: SecureStoreError.self) { try store.migratePlaintext(fromFile: url) }
            #expect(error?.code == .decodingFailed)
            #expect(FileManager.default.fileExists(atPath: url.path))
        }
    }
}
