#if !canImport(Security)
import CSodium
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Setting, changing and removing the passphrase: each one replaces the keys the passphrase
/// protects.
///
/// A passphrase change creates new class A and C keys and a new passcode key pair, wraps
/// them for the new passphrase (or for none), and seals again, under them, everything they
/// protected: every class A and C item (its row encrypted under the new item key), and the
/// passcode route of every access-controlled item (``AccessControlEnvelope/rekeyed(reference:classKey:classKeyReplaced:biometrySecret:oldPasscodeSecret:newPasscodeSecret:)``).
/// The old wraps and ciphertext are overwritten in the same SQLite transaction
/// (`secure_delete`, and the WAL checkpointed and truncated after it), so a copy of the
/// keychain from before the change, with the old passphrase, opens what it held then and
/// nothing written after. All of it is one transaction: a process killed at any point
/// leaves the old passphrase and keys or the new ones, never a mix.
extension KeyHierarchy {
    /// Sets (`old` nil), changes, or removes (`new` nil) the passphrase, in one transaction
    /// that replaces the class A and C keys and the passcode key pair (see above).
    /// Removing it deletes the WhenPasscodeSetThisDeviceOnly items. The lock state stays
    /// as it was: an unlocked keychain is unlocked with the new passphrase, a locked one
    /// stays locked; a keychain that just got its first passphrase is unlocked.
    /// - Parameter transaction: Runs its body in a write transaction on the engine's
    ///   database (``KeychainEngine/writeTransaction(_:)``).
    func setPassphrase(
        _ new: String?, old: String?, timeout: UInt32?, transaction: ((KeychainDatabase) throws -> Void) throws -> Void
    ) throws {
        if let new, new.isEmpty {
            throw KeychainFailure(errSecParam, "The new passphrase is empty.", recovery: "Choose a non-empty passphrase, or remove the passphrase instead.")
        }
        let current: PassphraseKey? = try locking {
            try refresh()
            return records.passphrase
        }
        let stateBefore = lockState
        // The slow Argon2id work happens before the write lock is taken.
        var oldSecrets: (a: SecretKey, c: SecretKey, p: SecretKey)?
        if let current {
            guard let old else {
                throw KeychainFailure(errSecAuthFailed, "The keychain has a passphrase; give the current one to change or remove it.")
            }
            oldSecrets = try current.secrets(for: old)
        } else if old != nil {
            throw KeychainFailure(errSecParam, "The keychain has no passphrase, so there is no old one to give.", recovery: "Pass nil as the old passphrase.")
        }
        let parameters = new.map { _ in PassphraseKey.fresh() }
        let newSecrets = try new.map { try parameters!.secrets(for: $0) }
        // In the engine's transaction, without holding this object's lock (the engine may be
        // waiting for it inside a write of its own): one transaction with the items.
        try transaction { storage in
            let writer = ProtectionStore(storage: storage)
            let now = try writer.load()
            guard now.passphrase == current else {
                throw KeychainFailure(errSecAuthFailed, "The passphrase was changed by another process meanwhile.", recovery: "Try again.")
            }
            // The records as checked against the anchor, read again under the write lock.
            let verified = try locking { () throws -> ProtectionRecords in
                try refresh()
                return records
            }
            guard verified == now else { throw Self.recordsChanged }
            guard let wrappedA = now.wrapped[.a], let wrappedC = now.wrapped[.c], let wrappedD = now.wrapped[.d] else {
                throw KeychainFailure(
                    errSecDecode, "The keychain's class key records are missing.", recovery: "The database is damaged; restore it from a backup.")
            }
            for (keyClass, record) in [(KeyClass.a, wrappedA), (.c, wrappedC)] where Self.isBound(record) != (current != nil) {
                throw Self.unboundRecord("\(keyClass.rawValue.uppercased()) class key", hasPassphrase: current != nil)
            }
            guard let oldA = unwrap(wrappedA, keyClass: .a, secret: oldSecrets?.a),
                let oldC = unwrap(wrappedC, keyClass: .c, secret: oldSecrets?.c)
            else { throw Self.wrongPassphrase }
            guard let keyD = unwrap(wrappedD, keyClass: .d, secret: nil) else {
                throw KeychainFailure(
                    errSecDecode, "The keychain's D class key does not open with this key file.",
                    recovery: "Put back the key file that was created with this keychain, or restore the database from a backup.")
            }
            var oldPasscodeSecret: SecretKey?
            if let record = now.accessControl[.passcode] {
                guard AccessControlKeys.isBound(record) == (current != nil) else {
                    throw Self.unboundRecord("passcode key", hasPassphrase: current != nil)
                }
                guard let secret = AccessControlKeys.secret(
                    record, kek: accessControlKEK(.passcode, secret: oldSecrets?.p), associatedData: accessControlAD(.passcode))
                else { throw Self.wrongPassphrase }
                oldPasscodeSecret = secret
            }
            let biometrySecret = now.accessControl[.biometry].flatMap {
                AccessControlKeys.secret($0, kek: accessControlKEK(.biometry, secret: nil), associatedData: accessControlAD(.biometry))
            }

            // New keys, wrapped for the new passphrase (or for none).
            let newA = SecretKey.random()
            let newC = SecretKey.random()
            let (newPasscodeSecret, newPasscodePublicKey) = AccessControlKeys.ephemeral()
            try writer.set("key.a", wrap(newA, keyClass: .a, secret: newSecrets?.a))
            CrashPoint.reach("passphrase")
            try writer.set("key.c", wrap(newC, keyClass: .c, secret: newSecrets?.c))
            if oldPasscodeSecret != nil || newSecrets != nil {
                try writer.set(
                    AccessControlKeys.Slot.passcode.recordName,
                    AccessControlKeys.record(
                        publicKey: newPasscodePublicKey, secret: newPasscodeSecret,
                        kek: accessControlKEK(.passcode, secret: newSecrets?.p), bound: newSecrets != nil,
                        associatedData: accessControlAD(.passcode)))
            }
            if let parameters {
                try writer.set("passphrase", parameters.record)
            } else {
                try writer.remove("passphrase")
                for id in try writer.itemIDs(labelPrefix: ProtectionClass.whenPasscodeSetThisDeviceOnly.rawValue) {
                    try storage.delete(id: id)
                }
            }
            try resealItems(
                writer: writer, storage: storage, oldKeys: ClassKeySet(a: oldA, c: oldC, d: keyD),
                newKeys: ClassKeySet(a: newA, c: newC, d: keyD), biometrySecret: biometrySecret,
                oldPasscodeSecret: oldPasscodeSecret, newPasscodeSecret: newPasscodeSecret)
            CrashPoint.reach("passphrase-items")
        }
        CrashPoint.reach("passphrase-committed")
        try locking {
            try refresh(force: true)
            dropKeys()
            createdAccessControlRecords = [:]
            // The old secrets open nothing any more: they go, and the new ones take their
            // place as far as the keychain was unlocked before.
            LockStateStore.remove(.a, keychainID: keychainID)
            LockStateStore.remove(.c, keychainID: keychainID)
            // The change is committed: a keyring that refuses the new secrets (a full quota
            // that no other keychain's secrets free) leaves the keychain locked, which
            // ``lockState`` reports, rather than failing a change that happened.
            if let newSecrets {
                if current == nil || stateBefore != .beforeFirstUnlock {
                    try? LockStateStore.store(.c, secret: newSecrets.c, keychainID: keychainID, timeout: nil)
                }
                if current == nil || stateBefore == .unlocked {
                    try? LockStateStore.store(.a, secret: newSecrets.a, keychainID: keychainID, timeout: timeout)
                }
            }
        }
        // The keys changed: whatever was read under the old ones is dropped by those who
        // keep copies (a KeyRetriever's cache), then the new state is announced.
        NotificationCenter.default.post(name: Self.unavailableNotification, object: nil)
        if lockState == .unlocked {
            NotificationCenter.default.post(name: Self.availableNotification, object: nil)
        }
    }

    /// The three class keys, by class.
    struct ClassKeySet {
        let a: SecretKey
        let c: SecretKey
        let d: SecretKey

        subscript(keyClass: KeyClass) -> SecretKey {
            switch keyClass {
            case .a: return a
            case .c: return c
            case .d: return d
            }
        }
    }

    /// Whether a class key record says it is wrapped with a passphrase secret.
    static func isBound(_ record: Data) -> Bool { (record.first ?? 0) & 1 != 0 }

    /// Seals every item again that the replaced keys protected, inside the passphrase
    /// change's transaction: class A and C rows under the item keys of the new class keys,
    /// and access-controlled items (of every class) with their passcode routes sealed to
    /// the new passcode key pair. A row that does not authenticate was damaged before: it
    /// stays as it is. ThisDeviceOnly rows of another machine of class A or C are removed:
    /// they cannot be opened here, and once their class key is replaced nowhere else either.
    private func resealItems(
        writer: ProtectionStore, storage: KeychainDatabase, oldKeys: ClassKeySet, newKeys: ClassKeySet,
        biometrySecret: SecretKey?, oldPasscodeSecret: SecretKey?, newPasscodeSecret: SecretKey
    ) throws {
        let prefix = Self.associatedDataPrefix(keychainID: keychainID)
        var resealed = 0
        for item in try writer.itemRows() {
            var row = item.row
            let protection: ProtectionClass
            let binding: DeviceBinding?
            do {
                guard let known = try self.protectionAndBinding(forLabel: row.protection) else { continue }
                (protection, binding) = known
            } catch is ForeignItem {
                let name = row.protection.split(separator: "@", maxSplits: 1).first.map(String.init) ?? ""
                if let foreign = ProtectionClass(rawValue: name), foreign.keyClass != .d { try storage.delete(id: row.id) }
                continue
            }
            let keyClass = protection.keyClass
            let replaced = keyClass != .d
            // Class D keeps its key: only its access-controlled items change, and only when
            // a passcode key pair existed that their passcode routes are sealed to.
            if !replaced && oldPasscodeSecret == nil { continue }
            let oldItemKey = try derivedItemKey(protection, classKey: oldKeys[keyClass], binding: binding)
            let associated = Self.associatedData(for: row, prefix: prefix)
            let opened = Self.open(row, associatedData: associated, key: oldItemKey)
            guard let opened else { continue }
            var plaintext = opened
            var envelopeChanged = false
            if let decoded = try? ItemCodec.decode(opened), decoded.sealedForAccessControl, let secret = decoded.secret,
                let envelope = try? AccessControlEnvelope(decoding: secret),
                let rekeyed = try envelope.rekeyed(
                    reference: row.reference, classKey: oldItemKey, classKeyReplaced: replaced, biometrySecret: biometrySecret,
                    oldPasscodeSecret: oldPasscodeSecret, newPasscodeSecret: newPasscodeSecret)
            {
                plaintext = ItemCodec.encode(attributes: decoded.attributes, secret: rekeyed.encoded(), sealedForAccessControl: true)
                envelopeChanged = true
            }
            if !replaced && !envelopeChanged { continue }
            let newItemKey = try derivedItemKey(protection, classKey: newKeys[keyClass], binding: binding)
            let sealed = plaintext.withUnsafeBytes { text in
                associated.withUnsafeBytes { Sodium.seal(text, associatedData: $0, key: newItemKey) }
            }
            row.nonce = sealed.nonce
            row.ciphertext = sealed.ciphertext
            try storage.update(row, firstName: item.firstName, secondName: item.secondName, label: item.label)
            resealed += 1
            if resealed == 1 { CrashPoint.reach("passphrase-first-item") }
        }
    }
}
#endif
