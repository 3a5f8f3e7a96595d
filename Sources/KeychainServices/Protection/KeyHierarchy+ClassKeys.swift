#if !canImport(Security)
import CSodium
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension KeyHierarchy {
    /// The class key, unwrapped with what the lock state holds now.
    func unwrappedClassKey(_ keyClass: KeyClass) throws -> SecretKey {
        guard let record = records.wrapped[keyClass] else {
            throw KeychainFailure(
                errSecDecode, "The keychain's \(keyClass.rawValue.uppercased()) class key record is missing.",
                recovery: "The database is damaged; restore it from a backup.")
        }
        let bound = record.first.map { $0 & 1 != 0 } ?? false
        // In a keychain with a passphrase, the A and C keys are wrapped with its secrets;
        // a record that says otherwise (taken from a copy without the passphrase, say)
        // opens nothing. Without a passphrase no record is bound.
        guard bound == (keyClass != .d && records.passphrase != nil) else {
            forget(keyClass)
            throw Self.unboundRecord("\(keyClass.rawValue.uppercased()) class key", hasPassphrase: records.passphrase != nil)
        }
        var secret: SecretKey?
        if bound {
            // Read into locked scratch memory; a copy is made only when the secret changed.
            guard let slot = keyClass.slot, let names = lockStateNames, LockStateStore.read(names[slot], into: scratch) else {
                forget(keyClass)
                throw Self.locked(keyClass)
            }
            defer { scratch.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
            if let cached = classKeys[keyClass.index], cached.record.hasSameBytes(as: record), Self.sameSecret(cached.secret, scratch) {
                return cached.key
            }
            secret = scratch.withUnsafeBytes { SecretKey(copying: $0) }
        } else if let cached = classKeys[keyClass.index], cached.record.hasSameBytes(as: record), cached.secret == nil {
            return cached.key
        }
        guard let key = unwrap(record, keyClass: keyClass, secret: secret) else {
            forget(keyClass)
            if bound { throw Self.locked(keyClass) }  // a secret from before a passphrase change
            throw KeychainFailure(
                errSecDecode, "The keychain's \(keyClass.rawValue.uppercased()) class key does not open with this key file.",
                recovery: "Put back the key file that was created with this keychain, or restore the database from a backup.")
        }
        classKeys[keyClass.index] = CachedClassKey(record: record, secret: secret, key: key)
        return key
    }

    func forget(_ keyClass: KeyClass) {
        classKeys[keyClass.index] = nil
        for protection in ProtectionClass.allCases where protection.keyClass == keyClass { itemKeys[protection.tableIndex] = nil }
    }

    static func sameSecret(_ a: SecretKey?, _ b: SecretKey?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?):
            return a.withUnsafeBytes { x in b.withUnsafeBytes { y in
                x.count == y.count && sodium_memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0
            } }
        default: return false
        }
    }

    static func locked(_ keyClass: KeyClass) -> KeychainFailure {
        keyClass == .a
            ? KeychainFailure(
                errSecInteractionNotAllowed, "The keychain is locked: items that are accessible only when unlocked cannot be used now.",
                recovery: "Unlock the keychain (keysmith unlock), then try again.")
            : KeychainFailure(
                errSecInteractionNotAllowed, "The keychain has not been unlocked since the machine started: only items accessible always can be used now.",
                recovery: "Unlock the keychain (keysmith unlock), then try again.")
    }

    static let noPasscode = KeychainFailure(
        errSecNotAvailable, "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly needs a keychain passphrase, and none is set.",
        recovery: "Set a passphrase for the keychain (keysmith passwd), or choose another accessibility.")

    /// Whether the keychain has a passphrase, which
    /// `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly` requires.
    var hasPasscode: Bool {
        lock.lock()
        defer { lock.unlock() }
        try? refresh()
        return records.passphrase != nil
    }

    /// Whether the keychain has a passphrase, with the records read afresh.
    /// - Throws: the error that keeps the records from being read or accepted (a database
    ///   the anchor refuses, say).
    func passphraseIsSet() throws -> Bool {
        lock.lock()
        defer { lock.unlock() }
        try refresh()
        return records.passphrase != nil
    }

    // MARK: Wrapping

    func keyEncryptionKey(_ keyClass: KeyClass, secret: SecretKey?) -> SecretKey {
        var parts = [Data("kek".utf8), Data(keyClass.rawValue.utf8)]
        if let secret { parts.append(secret.withUnsafeBytes { Data($0) }) }
        defer { if parts.count == 3 { parts[2].withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } } }
        return Self.hash(key: wrapBase, parts: parts)
    }

    func wrapAD(_ keyClass: KeyClass) -> [UInt8] {
        Array("keysmith.classkey.v2".utf8) + Array(keychainID) + Array("key.\(keyClass.rawValue)".utf8)
    }

    /// `flags ‖ nonce ‖ ciphertext`; flag bit 0: wrapped with a passphrase secret.
    func wrap(_ key: SecretKey, keyClass: KeyClass, secret: SecretKey?) -> Data {
        let kek = keyEncryptionKey(keyClass, secret: secret)
        let ad = wrapAD(keyClass)
        let sealed = key.withUnsafeBytes { plain in ad.withUnsafeBytes { Sodium.seal(plain, associatedData: $0, key: kek) } }
        return Data([secret == nil ? 0 : 1]) + sealed.nonce + sealed.ciphertext
    }

    func unwrap(_ record: Data, keyClass: KeyClass, secret: SecretKey?) -> SecretKey? {
        guard record.count == 1 + Sodium.nonceLength + Sodium.keyLength + Sodium.tagLength else { return nil }
        let kek = keyEncryptionKey(keyClass, secret: secret)
        let ad = wrapAD(keyClass)
        let nonce = record.subdata(in: 1..<(1 + Sodium.nonceLength))
        let ciphertext = record.subdata(in: (1 + Sodium.nonceLength)..<record.count)
        guard let opened = ciphertext.withUnsafeBytes({ c in
            nonce.withUnsafeBytes { n in ad.withUnsafeBytes { Sodium.open(c, nonce: n, associatedData: $0, key: kek) } }
        }) else { return nil }
        return opened.withUnsafeBytes { SecretKey(copying: $0) }
    }

    /// A protection record whose binding to the passphrase is not the keychain's: damage.
    static func unboundRecord(_ what: String, hasPassphrase: Bool) -> KeychainFailure {
        KeychainFailure(
            errSecDecode,
            hasPassphrase
                ? "The keychain has a passphrase, but its \(what) record is not bound to it (taken from a copy without the passphrase, or damaged); nothing is opened with it."
                : "The keychain has no passphrase, but its \(what) record is bound to one (taken from another copy of the keychain, or damaged); nothing is opened with it.",
            recovery: "Restore keychain.db and keychain.anchor together from a backup.")
    }

    // MARK: Lock state and passphrase

    /// The lock state, as every process of the user sees it.
    var lockState: KeychainLockState {
        lock.lock()
        defer { lock.unlock() }
        try? refresh()
        guard records.passphrase != nil else { return .unlocked }
        if (try? unwrappedClassKey(.a)) != nil { return .unlocked }
        if (try? unwrappedClassKey(.c)) != nil { return .locked }
        return .beforeFirstUnlock
    }

    /// Whether a passphrase is set.
    var hasPassphrase: Bool { hasPasscode }

    /// Checks `passphrase` and makes the A and C class keys available to the user's
    /// processes; class A for `timeout` seconds (`nil` or 0: until locked).
    /// - Throws: errSecAuthFailed for a wrong passphrase (nothing changes).
    func unlock(
        passphrase: String, timeout: UInt32?, transaction: (((KeychainDatabase) throws -> Void) throws -> Void)? = nil
    ) throws {
        let parameters: PassphraseKey? = try locking {
            try refresh()
            return records.passphrase
        }
        guard let parameters else { return }  // no passphrase: always unlocked
        let secrets = try parameters.secrets(for: passphrase)  // slow: outside the lock
        try locking {
            try refresh()
            guard records.passphrase == parameters, let a = records.wrapped[.a], let c = records.wrapped[.c],
                unwrap(a, keyClass: .a, secret: secrets.a) != nil, unwrap(c, keyClass: .c, secret: secrets.c) != nil
            else { throw Self.wrongPassphrase }
            try LockStateStore.store(.c, secret: secrets.c, keychainID: keychainID, timeout: nil)
            try LockStateStore.store(.a, secret: secrets.a, keychainID: keychainID, timeout: timeout)
        }
        // A keychain that got its passphrase before access control existed gets its
        // passcode key pair now, while the passphrase is known.
        if let transaction, try locking({ try refresh(); return records.accessControl[.passcode] == nil }) {
            try transaction { storage in
                let writer = ProtectionStore(storage: storage)
                let now = try writer.load()
                guard now.passphrase == parameters, now.accessControl[.passcode] == nil else { return }
                try writer.set(
                    AccessControlKeys.Slot.passcode.recordName,
                    AccessControlKeys.create(
                        kek: accessControlKEK(.passcode, secret: secrets.p), bound: true,
                        associatedData: accessControlAD(.passcode)))
            }
        }
        NotificationCenter.default.post(name: Self.availableNotification, object: nil)
    }

    /// Forgets the class A secret (and with `evictingFirstUnlock`, class C's) in every
    /// process of the user, and this process's unwrapped copies.
    func lock(evictingFirstUnlock: Bool) {
        do {
            lock.lock()
            defer { lock.unlock() }
            LockStateStore.remove(.a, keychainID: keychainID)
            forget(.a)
            if evictingFirstUnlock {
                LockStateStore.remove(.c, keychainID: keychainID)
                forget(.c)
            }
        }
        // Outside the lock: observers (a KeyRetriever dropping its cache) run right here.
        NotificationCenter.default.post(name: Self.unavailableNotification, object: nil)
    }

    static let wrongPassphrase = KeychainFailure(
        errSecAuthFailed, "The passphrase is not correct; nothing was changed.", recovery: "Try again with the keychain's passphrase.")
}
#endif
