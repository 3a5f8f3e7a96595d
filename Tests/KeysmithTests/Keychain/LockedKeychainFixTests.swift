import Foundation
@testable import KeychainServices
import Keysmith
import Testing

/// A store's error for a locked keychain gives the keychain's own fix (unlock it), not the
/// advice written for a locked phone.
struct LockedKeychainFixTests {
    init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

    @Test func aLockedKeychainSaysToUnlockIt() throws {
        try withTemporaryKeychain {
            try KeychainEnvironment.setPassphrase("pw", old: nil)
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            let store = try KeychainStore(service: "com.example.locked", accessibility: .whenUnlockedThisDeviceOnly)
            try store.set("token", for: "access_token")
            try KeychainEnvironment.lock()
            let error = #expect(throws: KeychainError.self) { try store.string(for: "access_token") }
            #expect(error?.code == .interactionNotAllowed)
            #expect(error?.recoverySuggestion?.contains("keysmith unlock") == true, "\(String(describing: error))")
            #expect(error?.description.contains("ProtectedDataAvailability") == false)
        }
    }
}
