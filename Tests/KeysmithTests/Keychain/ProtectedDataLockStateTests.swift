import Foundation
@testable import KeychainServices
import Keysmith
import Testing

/// ProtectedDataAvailability against the keychain's real lock state (no injected errors).
struct ProtectedDataLockStateTests {
    init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

    static var item: [String: Any] {
        [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.example.lockstate",
        kSecAttrAccount as String: "token",
        ]
    }

    static func readToken() throws -> String {
        var result: CFTypeRef?
        var query = item
        query[kSecReturnData as String] = true
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess, let data = result as? Data else { throw KeychainError(status: status) }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func retryingSucceedsWhenTheKeychainIsUnlocked() async throws {
        try await withTemporaryKeychain {
            try KeychainEnvironment.setPassphrase("pw", old: nil)
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            var add = Self.item
            add[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
            add[kSecValueData as String] = Data("secret".utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            try KeychainEnvironment.lock()
            #expect(!ProtectedDataAvailability.isProtectedDataAvailable)
            #expect(throws: KeychainError.self) { try Self.readToken() }

            var states = ProtectedDataAvailability.lockStates(checkingEvery: .milliseconds(10)).makeAsyncIterator()
            #expect(await states.next() == .locked)
            try KeychainEnvironment.unlock(passphrase: "pw")
            #expect(await states.next() == .unlocked)
            #expect(ProtectedDataAvailability.isProtectedDataAvailable)
            let policy = ProtectedDataAvailability.RetryPolicy(timeout: .seconds(60), initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))
            #expect(try await ProtectedDataAvailability.retrying(policy: policy) { try Self.readToken() } == "secret")
        }
    }
}
