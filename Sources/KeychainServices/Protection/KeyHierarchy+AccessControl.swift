#if !canImport(Security)
import CSodium
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension KeyHierarchy {
    // MARK: Access-control keys

    /// The key that wraps an access-control private key: `BLAKE2b(W; "kek", "acl.b")`, or
    /// for the passcode `BLAKE2b(W; "kek", "acl.p", sP)` (without sP when the keychain has
    /// no passphrase).
    func accessControlKEK(_ slot: AccessControlKeys.Slot, secret: SecretKey?) -> SecretKey {
        var parts = [Data("kek".utf8), Data(slot.recordName.utf8)]
        if let secret { parts.append(secret.withUnsafeBytes { Data($0) }) }
        defer { if parts.count == 3 { parts[2].withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } } }
        return Self.hash(key: wrapBase, parts: parts)
    }

    func accessControlAD(_ slot: AccessControlKeys.Slot) -> [UInt8] {
        Array("keysmith.aclkey.v1".utf8) + Array(keychainID) + Array(slot.recordName.utf8)
    }

    /// The public keys items with access control are sealed to, creating the key pairs
    /// that are missing, inside the engine's write transaction on `storage`.
    /// - Throws: errSecInteractionNotAllowed when the keychain has a passphrase but no
    ///   passcode key pair yet (made at the next unlock, when the passphrase is known).
    ///   errSecDecode when a key pair is not the one the keychain's anchor vouches for, or
    ///   not bound to the passphrase as the keychain's passphrase says.
    func accessControlPublicKeys(creatingIn storage: KeychainDatabase) throws -> [AccessControlKeys.Slot: Data] {
        // The records as this hierarchy last checked them against the anchor (a change
        // since is checked now): the engine's connection reads the table as it lies, so
        // each record it found must be one of those, or one this process made in the
        // transaction under way.
        let (verified, madeHere): (ProtectionRecords, [AccessControlKeys.Slot: Data]) = try locking {
            try refresh()
            return (records, createdAccessControlRecords)
        }
        let writer = ProtectionStore(storage: storage)
        var now = try writer.load()
        guard now.passphrase == verified.passphrase else { throw Self.recordsChanged }
        for slot in AccessControlKeys.Slot.allCases {
            guard let record = now.accessControl[slot] else { continue }
            let expected = verified.accessControl[slot] ?? madeHere[slot]
            guard let expected, expected.hasSameBytes(as: record) else { throw Self.recordsChanged }
            guard AccessControlKeys.isBound(record) == (slot == .passcode && now.passphrase != nil) else {
                throw Self.unboundRecord("\(slot == .passcode ? "passcode" : "biometry") key", hasPassphrase: now.passphrase != nil)
            }
        }
        for slot in AccessControlKeys.Slot.allCases where now.accessControl[slot] == nil {
            if slot == .passcode && now.passphrase != nil {
                throw KeychainFailure(
                    errSecInteractionNotAllowed,
                    "This keychain has a passphrase but no passcode key for access-controlled items yet; it is made when the keychain is unlocked with its passphrase.",
                    recovery: "Unlock the keychain once (keysmith unlock), then store the item again.")
            }
            let record = AccessControlKeys.create(
                kek: accessControlKEK(slot, secret: nil), bound: false, associatedData: accessControlAD(slot))
            try writer.set(slot.recordName, record)
            now.accessControl[slot] = record
            try locking { createdAccessControlRecords[slot] = record }
        }
        var keys: [AccessControlKeys.Slot: Data] = [:]
        for slot in AccessControlKeys.Slot.allCases {
            guard let record = now.accessControl[slot], let publicKey = AccessControlKeys.publicKey(record) else {
                throw AccessControlEnvelope.damagedKeys
            }
            keys[slot] = publicKey
        }
        return keys
    }

    /// Whether the passcode private key opens only with the passphrase secret.
    var isPasscodeKeyBound: Bool {
        lock.lock()
        defer { lock.unlock() }
        try? refresh()
        // Decided by the passphrase, not by the record's own flag: a record that is not
        // bound in a keychain with a passphrase is refused (``accessControlSecret(_:releasedKey:)``).
        return records.passphrase != nil
    }

    /// The private key of `slot`, unwrapped with `releasedKey` where the record is bound to
    /// the passphrase; `nil` when the record is missing or the key does not open it.
    func accessControlSecret(_ slot: AccessControlKeys.Slot, releasedKey: SecretKey?) throws -> SecretKey? {
        let (record, hasPassphrase): (Data?, Bool) = try locking {
            try refresh()
            return (records.accessControl[slot], records.passphrase != nil)
        }
        guard let record else { return nil }
        let bound = AccessControlKeys.isBound(record)
        guard bound == (slot == .passcode && hasPassphrase) else {
            throw Self.unboundRecord("\(slot == .passcode ? "passcode" : "biometry") key", hasPassphrase: hasPassphrase)
        }
        if bound && releasedKey == nil { return nil }
        return AccessControlKeys.secret(
            record, kek: accessControlKEK(slot, secret: bound ? releasedKey : nil), associatedData: accessControlAD(slot))
    }

    /// The engine's connection found protection records other than those checked against
    /// the anchor.
    static let recordsChanged = KeychainFailure(
        errSecDecode,
        "The keychain's protection records differ from what Keysmith last wrote (a record planted, swapped or put back); nothing is stored with them.",
        recovery: "Restore keychain.db and keychain.anchor together from a backup.")

    /// Checks `passphrase` against the keychain and returns the passcode secret sP derived
    /// from it, or `nil` when it is wrong (or the keychain has no passphrase).
    func passcodeKey(passphrase: String) throws -> SecretKey? {
        let parameters: PassphraseKey? = try locking {
            try refresh()
            return records.passphrase
        }
        guard let parameters else { return nil }
        let secrets = try parameters.secrets(for: passphrase)  // slow: outside the lock
        return try locking {
            try refresh()
            guard records.passphrase == parameters, let a = records.wrapped[.a], unwrap(a, keyClass: .a, secret: secrets.a) != nil
            else { return nil }
            return secrets.p
        }
    }
}
#endif
