#if !canImport(Security)
import Foundation

/// The keys of one keychain, derived from its device key (the one seam between items and
/// where keys come from).
///
/// ```
/// device key (key file, 32 random bytes)
///   ├─ index key   crypto_kdf(id 100, "ksindex1")  keyed BLAKE2b of names for lookups
///   ├─ check value crypto_kdf(id 101, "ksindex1")  proves the key file fits the database
///   └─ class keys  crypto_kdf(id n,   "ksclass1")  one per protection class (ak, ck, dk, …)
///        └─ item ciphertext: XChaCha20-Poly1305, random nonce, bound by associated data
/// ```
///
/// The data-protection work (lock state, passphrase, device binding) replaces how class
/// keys become available; items, indexes and the engine do not change.
final class KeyHierarchy: @unchecked Sendable {
    /// Keys the lookup hashes of names, access groups and primary keys.
    let indexKey: SecretKey
    /// A value derived from the device key and stored in the database, to detect a key
    /// file that belongs to another keychain.
    let checkValue: Data
    private let classKeys: [ProtectionClass: SecretKey]

    init(deviceKey: SecretKey) {
        indexKey = Sodium.deriveKey(from: deviceKey, id: 100, context: "ksindex1")
        let check = Sodium.deriveKey(from: deviceKey, id: 101, context: "ksindex1")
        checkValue = check.withUnsafeBytes { Data($0) }
        var keys: [ProtectionClass: SecretKey] = [:]
        for protection in ProtectionClass.allCases {
            keys[protection] = Sodium.deriveKey(from: deviceKey, id: protection.keyNumber, context: "ksclass1")
        }
        classKeys = keys
    }

    /// The key that encrypts items of `protection`.
    /// - Throws: errSecInteractionNotAllowed when that class is not available now.
    func itemKey(for protection: ProtectionClass) throws -> SecretKey {
        guard let key = classKeys[protection] else {
            throw KeychainFailure(errSecInteractionNotAllowed, "The key of \(ConstantNames.protection(protection.rawValue)) items is not available.")
        }
        return key
    }

    /// Whether the keychain has a passcode (a passphrase), which
    /// `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly` requires.
    var hasPasscode: Bool { false }
}
#endif
