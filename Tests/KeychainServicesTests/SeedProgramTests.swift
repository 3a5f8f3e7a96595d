// App code in the style of the seed articles (001, 002, 003), written exactly as it is
// written for iOS with `import Security`, here compiled against `import KeychainServices`
// and run on a real temporary keychain.
//
// What this shows is the SecItem API: code written for Apple's keychain runs unchanged.
// The migration and reinstall cleanup below are the app's own code, not the package's;
// the package's (`PlaintextMigration`, `ReinstallCleanup`) are tested in
// Tests/KeysmithTests/SecureStore.
import Foundation
import KeychainServices
import Testing

// MARK: The seed's KeychainHelper (001, 4.1): update first, add as fallback

final class KeychainHelper: @unchecked Sendable {
    static let shared = KeychainHelper()
    private init() {}

    @discardableResult
    func save(_ data: Data, service: String, account: String) -> Bool {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked,
        ]
        let updateStatus = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if updateStatus == errSecSuccess { return true }
        var addQuery = query
        addQuery[kSecValueData as String] = data
        addQuery[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
        return SecItemAdd(addQuery as CFDictionary, nil) == errSecSuccess
    }

    func read(service: String, account: String) -> Data? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: true,
            kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? Data
    }

    @discardableResult
    func delete(service: String, account: String) -> Bool {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        let status = SecItemDelete(query as CFDictionary)
        return status == errSecSuccess || status == errSecItemNotFound
    }
}

// MARK: A Codable token (001, 4.2)

struct AuthToken: Codable, Equatable {
    let accessToken: String
    let refreshToken: String
    let expiresAt: TimeInterval
}

extension KeychainHelper {
    func saveToken(_ token: AuthToken, account: String) -> Bool {
        guard let data = try? JSONEncoder().encode(token) else { return false }
        return save(data, service: "com.myapp.auth", account: account)
    }

    func readToken(account: String) -> AuthToken? {
        guard let data = read(service: "com.myapp.auth", account: account) else { return nil }
        return try? JSONDecoder().decode(AuthToken.self, from: data)
    }

    /// The seed's UserDefaults migration (001, 4.5), idempotent.
    func migrateTokenIfNeeded(defaults: UserDefaults) {
        let account = "current_user"
        if read(service: "com.myapp.auth", account: account) != nil { return }
        if let oldToken = defaults.string(forKey: "auth_token") {
            if let data = oldToken.data(using: .utf8) {
                save(data, service: "com.myapp.auth", account: account)
            }
            defaults.removeObject(forKey: "auth_token")
        }
    }

    /// The seed's reinstall cleanup (001, 5.1 pit 2).
    func clearKeychainIfReinstalled(defaults: UserDefaults) {
        let hasLaunchedKey = "has_launched_before"
        if !defaults.bool(forKey: hasLaunchedKey) {
            delete(service: "com.myapp.auth", account: "current_user")
            defaults.set(true, forKey: hasLaunchedKey)
        }
    }
}

// MARK: Tests

struct SeedProgramTests {
    private func withDefaults(_ body: (UserDefaults) throws -> Void) rethrows {
        let suite = "keysmith.tests.\(UUID().uuidString)"
        let defaults = UserDefaults(suiteName: suite)!
        defer { defaults.removePersistentDomain(forName: suite) }
        try body(defaults)
    }

    @Test func keychainHelperUpdatesFirstAndAddsAsFallback() throws {
        TemporaryKeychain.with { _ in
            let helper = KeychainHelper.shared
            #expect(helper.read(service: "com.myapp.login", account: "u1") == nil)
            #expect(helper.save(Data("first".utf8), service: "com.myapp.login", account: "u1"))
            #expect(helper.read(service: "com.myapp.login", account: "u1") == Data("first".utf8))
            #expect(helper.save(Data("second".utf8), service: "com.myapp.login", account: "u1"))
            #expect(helper.read(service: "com.myapp.login", account: "u1") == Data("second".utf8))

            // Exactly one item exists after two saves.
            var all: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.myapp.login",
                kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &all) == errSecSuccess)
            #expect((all as? [[String: Any]])?.count == 1)

            #expect(helper.delete(service: "com.myapp.login", account: "u1"))
            #expect(helper.delete(service: "com.myapp.login", account: "u1"), "not found counts as deleted")
            #expect(helper.read(service: "com.myapp.login", account: "u1") == nil)
        }
    }

    @Test func codableTokenRoundTrips() throws {
        TemporaryKeychain.with { _ in
            let token = AuthToken(accessToken: "at-123", refreshToken: "rt-456", expiresAt: 1_800_000_000)
            #expect(KeychainHelper.shared.saveToken(token, account: "user-42"))
            #expect(KeychainHelper.shared.readToken(account: "user-42") == token)
            #expect(KeychainHelper.shared.readToken(account: "user-43") == nil, "accounts are isolated")
        }
    }

    @Test func userDefaultsMigrationIsIdempotent() throws {
        TemporaryKeychain.with { _ in
            withDefaults { defaults in
                defaults.set("legacy-token", forKey: "auth_token")
                KeychainHelper.shared.migrateTokenIfNeeded(defaults: defaults)
                #expect(defaults.string(forKey: "auth_token") == nil, "plaintext copy removed")
                #expect(KeychainHelper.shared.read(service: "com.myapp.auth", account: "current_user") == Data("legacy-token".utf8))

                // Running again changes nothing, even if a stale plaintext value reappears.
                defaults.set("stale", forKey: "auth_token")
                KeychainHelper.shared.migrateTokenIfNeeded(defaults: defaults)
                #expect(KeychainHelper.shared.read(service: "com.myapp.auth", account: "current_user") == Data("legacy-token".utf8))
            }
        }
    }

    @Test func reinstallCleanupRemovesLeftoversOnce() throws {
        TemporaryKeychain.with { _ in
            withDefaults { defaults in
                KeychainHelper.shared.save(Data("left over".utf8), service: "com.myapp.auth", account: "current_user")
                KeychainHelper.shared.clearKeychainIfReinstalled(defaults: defaults)
                #expect(KeychainHelper.shared.read(service: "com.myapp.auth", account: "current_user") == nil)
                KeychainHelper.shared.save(Data("fresh".utf8), service: "com.myapp.auth", account: "current_user")
                KeychainHelper.shared.clearKeychainIfReinstalled(defaults: defaults)
                #expect(KeychainHelper.shared.read(service: "com.myapp.auth", account: "current_user") == Data("fresh".utf8))
            }
        }
    }

    /// Seed 002 1.2/1.3: a Bluetooth long-term key; a second add reports
    /// errSecDuplicateItem and the app falls back to SecItemUpdate.
    @Test func bluetoothKeyDuplicateThenUpdate() throws {
        TemporaryKeychain.with { _ in
            let keyData = Data((0..<16).map { UInt8($0) })
            let addQuery: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.example.bluetooth.keys",
                kSecAttrAccount as String: "paired_device_ltk",
                kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                kSecValueData as String: keyData,
            ]
            #expect(SecItemAdd(addQuery as CFDictionary, nil) == errSecSuccess)

            let newKey = Data((0..<16).map { UInt8(255 - $0) })
            var second = addQuery
            second[kSecValueData as String] = newKey
            let status = SecItemAdd(second as CFDictionary, nil)
            #expect(status == errSecDuplicateItem)
            if status == errSecDuplicateItem {
                let match: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: "com.example.bluetooth.keys",
                    kSecAttrAccount as String: "paired_device_ltk",
                ]
                #expect(SecItemUpdate(match as CFDictionary, [kSecValueData as String: newKey] as CFDictionary) == errSecSuccess)
            }

            let getQuery: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.example.bluetooth.keys",
                kSecAttrAccount as String: "paired_device_ltk",
                kSecReturnData as String: true,
                kSecMatchLimit as String: kSecMatchLimitOne,
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(getQuery as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == newKey)

            var attributes: CFTypeRef?
            var attributeQuery = getQuery
            attributeQuery[kSecReturnData as String] = nil
            attributeQuery[kSecReturnAttributes as String] = kCFBooleanTrue
            #expect(SecItemCopyMatching(attributeQuery as CFDictionary, &attributes) == errSecSuccess)
            let dictionary = attributes as? [String: Any]
            #expect(dictionary?[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String)
            #expect(dictionary?[kSecValueData as String] == nil, "attributes never carry the secret")
        }
    }

    /// Seed 001 5.1 pit 4: without kSecMatchLimitOne several matches come back as an array.
    @Test func limitAllReturnsArrayOfData() throws {
        TemporaryKeychain.with { _ in
            for account in ["a", "b", "c"] {
                #expect(KeychainHelper.shared.save(Data(account.utf8), service: "com.myapp.multi", account: account))
            }
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.myapp.multi",
                kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == nil)
            #expect((result as? [Data]) == [Data("a".utf8), Data("b".utf8), Data("c".utf8)])
        }
    }

    /// Seed 003: sharing through an access group between an app and its extension.
    @Test func appAndExtensionShareThroughAccessGroup() throws {
        TemporaryKeychain.with(accessGroups: ["ABCDE12345.com.myapp", "ABCDE12345.com.mycompany.shared"]) { keychain in
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.myapp.auth",
                kSecAttrAccount as String: "current_user",
                kSecAttrAccessGroup as String: "ABCDE12345.com.mycompany.shared",
                kSecValueData as String: Data("shared-session".utf8),
            ]
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)
            let lookup: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.myapp.auth",
                kSecAttrAccount as String: "current_user",
                kSecReturnData as String: true,
            ]
            let shareExtension = keychain.withGroups(["ABCDE12345.com.myapp.share", "ABCDE12345.com.mycompany.shared"])
            shareExtension.run {
                var result: CFTypeRef?
                #expect(SecItemCopyMatching(lookup as CFDictionary, &result) == errSecSuccess)
                #expect(result as? Data == Data("shared-session".utf8))
            }
            let stranger = keychain.withGroups(["ZZZZZ99999.com.other"])
            stranger.run {
                #expect(SecItemCopyMatching(lookup as CFDictionary, nil) == errSecItemNotFound)
                var explicit = lookup
                explicit[kSecAttrAccessGroup as String] = "ABCDE12345.com.mycompany.shared"
                #expect(SecItemCopyMatching(explicit as CFDictionary, nil) == errSecMissingEntitlement)
            }
        }
    }
}
