#if !canImport(Security)
import CSodium
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The keys of one keychain and when they are available: the data-protection key
/// hierarchy, modelled on iOS Data Protection.
///
/// ```
/// device key D (key file, 32 random bytes)
///   ├─ index key   crypto_kdf(D, 100, "ksindex1")   keyed BLAKE2b of names for lookups
///   ├─ check value crypto_kdf(D, 101, "ksindex1")   proves the key file fits the database
///   └─ wrap base W crypto_kdf(D, 200, "kswrap02")
///        class keys: three random 32-byte keys, stored wrapped (XChaCha20-Poly1305) in the
///        database's `protection` table
///        ├─ A (ak, aku, akpu)  wrapped by BLAKE2b(W; "kek", "a", sA)   sA = kdf(P, 1, "kspass02")
///        ├─ C (ck, cku)        wrapped by BLAKE2b(W; "kek", "c", sC)   sC = kdf(P, 2, "kspass02")
///        └─ D (dk, dku, f)     wrapped by BLAKE2b(W; "kek", "d")
///           P = Argon2id(passphrase, salt) when the keychain has a passphrase; without
///           one, A and C are wrapped like D (always available, as on a device without a
///           passcode).
///        item keys: crypto_kdf(class key, n, "ksitem02") for ak ck dk;
///                   BLAKE2b(class key; "machine", machine id, pdmn) for the ThisDeviceOnly
///                   classes, so they open only on the machine that wrote them
/// ```
///
/// Lock state: the unlock secrets sA and sC are kept in ``LockStateStore`` (the user's
/// kernel keyring), shared by the user's processes. Unlocked = sA present; locked = only
/// sC present (after the first unlock); before first unlock = neither. Changing the
/// passphrase re-wraps the A and C keys; items are never re-encrypted for it.
///
/// The `pdmn` column of a ThisDeviceOnly row carries the machine's tag (`aku@1a2b…`), so a
/// copy of the keychain opened on another machine skips those rows as absent instead of
/// reporting them damaged.
///
/// A keychain of the first format (class keys derived from D) is upgraded in place when
/// it is opened: one SQLite transaction creates the class keys and re-encrypts every item,
/// so a crash leaves either the old or the new keychain.
final class KeyHierarchy: @unchecked Sendable {
    /// Keys the lookup hashes of names, access groups and primary keys.
    let indexKey: SecretKey
    /// A value derived from the device key and stored in the database, to detect a key
    /// file that belongs to another keychain.
    let checkValue: Data
    /// This machine's tag in `pdmn` labels of ThisDeviceOnly rows (16 hex digits).
    let machineTag: String
    /// ``machineTag``'s UTF-8 bytes, compared with every ThisDeviceOnly row's label.
    private let machineTagBytes: [UInt8]

    private let deviceKey: SecretKey
    private let wrapBase: SecretKey
    private let machineID: Data
    private let lock = NSLock()
    private var store: ProtectionStore?
    private(set) var keychainID = Data() {
        didSet { lockStateNames = LockStateNames(a: LockStateStore.Name(.a, keychainID: keychainID), c: LockStateStore.Name(.c, keychainID: keychainID)) }
    }
    /// The kernel-keyring names of this keychain's unlock secrets (made once, not per read).
    /// Two fields, not a dictionary: the first dictionary of a new key type costs the Swift
    /// runtime a scan of every protocol conformance in the program (about 0.2 ms at start).
    private var lockStateNames: LockStateNames?

    /// The keyring names of the two slots.
    private struct LockStateNames {
        let a: LockStateStore.Name
        let c: LockStateStore.Name

        subscript(slot: LockStateStore.Slot) -> LockStateStore.Name {
            switch slot {
            case .a: return a
            case .c: return c
            }
        }
    }
    /// The protection records as last read (their wrapped class keys are a table by
    /// ``KeyClass/index``: the read path looks a record up without hashing).
    private var records = ProtectionRecords()
    private var dataVersion: Int64 = -1
    /// Unwrapped class keys with what they were unwrapped from (record and secret), by
    /// ``KeyClass/index``.
    private var classKeys: [CachedClassKey?] = Array(repeating: nil, count: KeyClass.allCases.count)
    /// Derived item keys by ``ProtectionClass`` position in `allCases`, with the class key
    /// they were derived from.
    private var itemKeys: [(classKey: ObjectIdentifier, key: SecretKey)?] = Array(repeating: nil, count: ProtectionClass.allCases.count)
    /// Where unlock secrets are read to (used with the lock held; zeroed after each use).
    private let scratch = SecretKey(uninitializedCount: Sodium.keyLength)

    /// The current format of the `protection` records.
    static let format: UInt8 = 2

    /// A protection group: which class key an accessibility uses, and when it is available.
    enum KeyClass: String, CaseIterable {
        case a, c, d

        /// The position in `allCases`, for the small tables of the read path.
        var index: Int {
            switch self {
            case .a: return 0
            case .c: return 1
            case .d: return 2
            }
        }
    }

    private struct CachedClassKey {
        let record: Data
        let secret: SecretKey?
        let key: SecretKey
    }

    /// Thrown when opening a row that belongs to another machine (a ThisDeviceOnly item in
    /// a copied keychain): callers treat it as absent.
    struct ForeignItem: Error {}

    init(deviceKey: SecretKey) throws {
        self.deviceKey = deviceKey
        indexKey = Sodium.deriveKey(from: deviceKey, id: 100, context: "ksindex1")
        let check = Sodium.deriveKey(from: deviceKey, id: 101, context: "ksindex1")
        checkValue = check.withUnsafeBytes { Data($0) }
        wrapBase = Sodium.deriveKey(from: deviceKey, id: 200, context: "kswrap02")
        machineID = try MachineIdentity.current()
        let tag = Self.hash(key: indexKey, parts: [Data("machine-tag".utf8), machineID], length: 16)
        machineTag = tag.withUnsafeBytes { Self.hexadecimal($0.prefix(8)) }
        machineTagBytes = Array(machineTag.utf8)
    }

    /// Lowercase hexadecimal, two digits a byte (as `String(format: "%02x")` gives, without
    /// its variadic-argument and locale machinery).
    static func hexadecimal<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: Opening and upgrading

    /// Opens the protection records of the keychain at `databasePath` (after the engine
    /// prepared its database), creating them for a new keychain and upgrading one of the
    /// first format in place.
    func attach(storage: KeychainDatabase) throws {
        lock.lock()
        defer { lock.unlock() }
        keychainID = storage.keychainID
        let databasePath = storage.database.path
        let store = try ProtectionStore(path: databasePath)
        self.store = store
        try refresh(force: true)
        if records.format == nil {
            // On the engine's connection (the engine is not shared yet), through its
            // KeychainDatabase, so item rows are written in one place only.
            let engineStore = ProtectionStore(database: storage.database)
            try storage.writeTransaction(erasing: true) {
                try engineStore.createTable()
                // Another process may have upgraded while this one waited for the lock.
                guard try engineStore.load().format == nil else { return }
                try upgradeFirstFormat(engineStore, storage: storage)
            }
            try refresh(force: true)
        }
        guard let format = records.format, format == Self.format else {
            throw KeychainFailure(
                errSecNotAvailable,
                "The keychain at \(databasePath) uses key format \(records.format ?? 0), which this version of Keysmith does not know.",
                recovery: "Upgrade Keysmith; this version will not modify the keychain.")
        }
    }

    /// Creates the class keys and re-encrypts every item of a first-format keychain
    /// (item keys derived straight from the device key). Runs inside a write transaction.
    private func upgradeFirstFormat(_ store: ProtectionStore, storage: KeychainDatabase) throws {
        var fresh: [KeyClass: SecretKey] = [:]
        for keyClass in KeyClass.allCases {
            let key = SecretKey.random()
            fresh[keyClass] = key
            try store.set("key.\(keyClass.rawValue)", wrap(key, keyClass: keyClass, secret: nil))
        }
        let prefix = Self.associatedDataPrefix(keychainID: keychainID)
        var rewritten = 0
        for (row, firstName, secondName) in try store.itemRows() {
            guard let protection = ProtectionClass(rawValue: row.protection) else { continue }
            let legacyKey = Sodium.deriveKey(from: deviceKey, id: protection.keyNumber, context: "ksclass1")
            let oldAD = Self.associatedData(
                prefix: prefix, itemClass: row.itemClass, reference: row.reference, primaryKey: row.primaryKeyHash,
                protection: row.protection)
            let opened = row.ciphertext.withUnsafeBytes { ciphertext in
                row.nonce.withUnsafeBytes { nonce in
                    oldAD.withUnsafeBytes { Sodium.open(ciphertext, nonce: nonce, associatedData: $0, key: legacyKey) }
                }
            }
            // A row that does not authenticate was damaged before the upgrade: it stays as
            // it is, and keeps being reported as damaged.
            guard let opened else { continue }
            let newLabel = label(for: protection)
            let newKey = derivedItemKey(protection, classKey: fresh[protection.keyClass]!)
            let newAD = Self.associatedData(
                prefix: prefix, itemClass: row.itemClass, reference: row.reference, primaryKey: row.primaryKeyHash,
                protection: newLabel)
            let sealed = opened.withUnsafeBytes { text in
                newAD.withUnsafeBytes { Sodium.seal(text, associatedData: $0, key: newKey) }
            }
            var rewrittenRow = row
            rewrittenRow.protection = newLabel
            rewrittenRow.nonce = sealed.nonce
            rewrittenRow.ciphertext = sealed.ciphertext
            try storage.update(rewrittenRow, firstName: firstName, secondName: secondName)
            rewritten += 1
            if rewritten == 1 { CrashPoint.reach("upgrade") }
        }
        try store.set("format", Data([Self.format]))
    }

    /// Re-reads the records when another connection changed the database.
    private func refresh(force: Bool = false) throws {
        guard let store else { return }
        let version = try store.dataVersion()
        if force || version != dataVersion {
            let loaded = try store.load()
            if loaded != records {
                records = loaded
                dropKeys()
            }
            dataVersion = version
        }
    }

    private func dropKeys() {
        // SecretKey frees with sodium_free, which zeroes the memory first.
        for index in classKeys.indices { classKeys[index] = nil }
        for index in itemKeys.indices { itemKeys[index] = nil }
    }

    // MARK: Item keys

    /// The key that encrypts items of `protection`.
    /// - Throws: errSecInteractionNotAllowed when that class is not available now (locked,
    ///   or before the first unlock); errSecNotAvailable for WhenPasscodeSetThisDeviceOnly
    ///   on a keychain without a passphrase.
    /// - Parameter recordsCurrent: the caller knows that no commit reached the database
    ///   since it last called ``refreshRecords()`` (see there); the records are then not
    ///   read again.
    func itemKey(for protection: ProtectionClass, recordsCurrent: Bool = false) throws -> SecretKey {
        try KeychainWithoutWaiting.acquire(lock, "the key hierarchy (an unlock or passphrase change)")
        defer { lock.unlock() }
        if !recordsCurrent { try refresh() }
        if protection == .whenPasscodeSetThisDeviceOnly && records.passphrase == nil {
            throw Self.noPasscode
        }
        let classKey = try unwrappedClassKey(protection.keyClass)
        let slot = protection.tableIndex
        if let cached = itemKeys[slot], cached.classKey == ObjectIdentifier(classKey) { return cached.key }
        let key = derivedItemKey(protection, classKey: classKey)
        itemKeys[slot] = (ObjectIdentifier(classKey), key)
        return key
    }

    /// Re-reads the protection records when another connection changed the database (one
    /// `PRAGMA data_version` on this hierarchy's connection). A read connection calls it
    /// once, then asks ``itemKey(for:recordsCurrent:)`` with `recordsCurrent` for as long
    /// as its own data version says no commit came since: the records read here are then
    /// at least as new as any state that connection reads.
    func refreshRecords() throws {
        try KeychainWithoutWaiting.acquire(lock, "the key hierarchy (an unlock or passphrase change)")
        defer { lock.unlock() }
        try refresh()
    }

    private func derivedItemKey(_ protection: ProtectionClass, classKey: SecretKey) -> SecretKey {
        if protection.isThisDeviceOnly {
            return Self.hash(key: classKey, parts: [Data("machine".utf8), machineID, Data(protection.rawValue.utf8)])
        }
        return Sodium.deriveKey(from: classKey, id: protection.keyNumber, context: "ksitem02")
    }

    /// The class key, unwrapped with what the lock state holds now.
    private func unwrappedClassKey(_ keyClass: KeyClass) throws -> SecretKey {
        guard let record = records.wrapped[keyClass] else {
            throw KeychainFailure(
                errSecDecode, "The keychain's \(keyClass.rawValue.uppercased()) class key record is missing.",
                recovery: "The database is damaged; restore it from a backup.")
        }
        let bound = record.first.map { $0 & 1 != 0 } ?? false
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

    private func forget(_ keyClass: KeyClass) {
        classKeys[keyClass.index] = nil
        for protection in ProtectionClass.allCases where protection.keyClass == keyClass { itemKeys[protection.tableIndex] = nil }
    }

    private static func sameSecret(_ a: SecretKey?, _ b: SecretKey?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?):
            return a.withUnsafeBytes { x in b.withUnsafeBytes { y in
                x.count == y.count && sodium_memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0
            } }
        default: return false
        }
    }

    private static func locked(_ keyClass: KeyClass) -> KeychainFailure {
        keyClass == .a
            ? KeychainFailure(
                errSecInteractionNotAllowed, "The keychain is locked: items that are accessible only when unlocked cannot be used now.",
                recovery: "Unlock the keychain (keysmith unlock), then try again.")
            : KeychainFailure(
                errSecInteractionNotAllowed, "The keychain has not been unlocked since the machine started: only items accessible always can be used now.",
                recovery: "Unlock the keychain (keysmith unlock), then try again.")
    }

    private static let noPasscode = KeychainFailure(
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

    // MARK: Row labels

    /// What the `pdmn` column holds for an item of `protection`.
    func label(for protection: ProtectionClass) -> String {
        protection.isThisDeviceOnly ? protection.rawValue + "@" + machineTag : protection.rawValue
    }

    /// The protection class a `pdmn` column names.
    /// - Throws: ``ForeignItem`` for a ThisDeviceOnly row of another machine.
    /// - Returns: `nil` when the label is not valid (a damaged row).
    func protection(forLabel label: String) throws -> ProtectionClass? {
        // Read from the label's contiguous UTF-8 bytes in place (it is read for every row a
        // search opens): the accessibility's name up to the first "@", then the machine tag,
        // compared byte for byte.
        var label = label
        return try label.withUTF8 { bytes throws -> ProtectionClass? in
            guard let at = bytes.firstIndex(of: UInt8(ascii: "@")) else {
                guard let protection = ProtectionClass(nameBytes: bytes) else { return nil }
                return protection.isThisDeviceOnly ? nil : protection
            }
            guard let protection = ProtectionClass(nameBytes: bytes[..<at]), protection.isThisDeviceOnly else { return nil }
            let tag = UnsafeBufferPointer(rebasing: bytes[(at + 1)...])
            let isOurs = machineTagBytes.withUnsafeBufferPointer { ours in
                tag.count == ours.count && memcmp(tag.baseAddress!, ours.baseAddress!, ours.count) == 0
            }
            if !isOurs { throw ForeignItem() }
            return protection
        }
    }

    /// Whether a label names a ThisDeviceOnly row of another machine.
    func isForeign(label: String) -> Bool {
        (try? protection(forLabel: label)) == nil && label.contains("@")
    }

    // MARK: Wrapping

    private func keyEncryptionKey(_ keyClass: KeyClass, secret: SecretKey?) -> SecretKey {
        var parts = [Data("kek".utf8), Data(keyClass.rawValue.utf8)]
        if let secret { parts.append(secret.withUnsafeBytes { Data($0) }) }
        defer { if parts.count == 3 { parts[2].withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } } }
        return Self.hash(key: wrapBase, parts: parts)
    }

    private func wrapAD(_ keyClass: KeyClass) -> [UInt8] {
        Array("keysmith.classkey.v2".utf8) + Array(keychainID) + Array("key.\(keyClass.rawValue)".utf8)
    }

    /// `flags ‖ nonce ‖ ciphertext`; flag bit 0: wrapped with a passphrase secret.
    private func wrap(_ key: SecretKey, keyClass: KeyClass, secret: SecretKey?) -> Data {
        let kek = keyEncryptionKey(keyClass, secret: secret)
        let ad = wrapAD(keyClass)
        let sealed = key.withUnsafeBytes { plain in ad.withUnsafeBytes { Sodium.seal(plain, associatedData: $0, key: kek) } }
        return Data([secret == nil ? 0 : 1]) + sealed.nonce + sealed.ciphertext
    }

    private func unwrap(_ record: Data, keyClass: KeyClass, secret: SecretKey?) -> SecretKey? {
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
                let writer = ProtectionStore(database: storage.database)
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
        lock.lock()
        defer { lock.unlock() }
        LockStateStore.remove(.a, keychainID: keychainID)
        forget(.a)
        if evictingFirstUnlock {
            LockStateStore.remove(.c, keychainID: keychainID)
            forget(.c)
        }
    }

    /// Sets (`old` nil), changes, or removes (`new` nil) the passphrase, in one transaction.
    /// Removing it deletes the WhenPasscodeSetThisDeviceOnly items. A keychain that just
    /// got a passphrase is unlocked.
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
        // waiting for it inside a write of its own): one transaction with the items deleted.
        try transaction { storage in
            let writer = ProtectionStore(database: storage.database)
            let now = try writer.load()
            guard now.passphrase == current, let wrappedA = now.wrapped[.a], let wrappedC = now.wrapped[.c] else {
                throw KeychainFailure(errSecAuthFailed, "The passphrase was changed by another process meanwhile.", recovery: "Try again.")
            }
            guard let keyA = unwrap(wrappedA, keyClass: .a, secret: oldSecrets?.a),
                let keyC = unwrap(wrappedC, keyClass: .c, secret: oldSecrets?.c)
            else { throw Self.wrongPassphrase }
            try writer.set("key.a", wrap(keyA, keyClass: .a, secret: newSecrets?.a))
            CrashPoint.reach("passphrase")
            try writer.set("key.c", wrap(keyC, keyClass: .c, secret: newSecrets?.c))
            // The passcode key pair of access-controlled items follows the passphrase.
            if let record = now.accessControl[.passcode] {
                guard let publicKey = AccessControlKeys.publicKey(record),
                    let secret = AccessControlKeys.secret(
                        record, kek: accessControlKEK(.passcode, secret: AccessControlKeys.isBound(record) ? oldSecrets?.p : nil),
                        associatedData: accessControlAD(.passcode))
                else { throw Self.wrongPassphrase }
                try writer.set(
                    AccessControlKeys.Slot.passcode.recordName,
                    AccessControlKeys.record(
                        publicKey: publicKey, secret: secret, kek: accessControlKEK(.passcode, secret: newSecrets?.p),
                        bound: newSecrets != nil, associatedData: accessControlAD(.passcode)))
            } else if let newSecrets {
                try writer.set(
                    AccessControlKeys.Slot.passcode.recordName,
                    AccessControlKeys.create(
                        kek: accessControlKEK(.passcode, secret: newSecrets.p), bound: true,
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
        }
        try locking {
            try refresh(force: true)
            dropKeys()
            if let newSecrets {
                try LockStateStore.store(.c, secret: newSecrets.c, keychainID: keychainID, timeout: nil)
                try LockStateStore.store(.a, secret: newSecrets.a, keychainID: keychainID, timeout: timeout)
            } else {
                LockStateStore.remove(.a, keychainID: keychainID)
                LockStateStore.remove(.c, keychainID: keychainID)
            }
        }
        NotificationCenter.default.post(name: Self.availableNotification, object: nil)
    }

    private static let wrongPassphrase = KeychainFailure(
        errSecAuthFailed, "The passphrase is not correct; nothing was changed.", recovery: "Try again with the keychain's passphrase.")

    /// Posted (by name, in this process) when protected data became available here: the
    /// same name as iOS's `UIApplication.protectedDataDidBecomeAvailableNotification`.
    static let availableNotification = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")

    /// Item counts per accessibility label (`pdmn` column, machine tags removed), plus the
    /// ThisDeviceOnly rows of other machines under "other machine".
    func itemCounts() throws -> [String: Int] {
        try locking {
            guard let store else { return [:] }
            var counts: [String: Int] = [:]
            for (label, count) in try store.countsByLabel() {
                let name: String
                if let protection = try? protection(forLabel: label) {
                    name = protection.rawValue
                } else if isForeign(label: label) {
                    name = "other machine"
                } else {
                    name = "damaged"
                }
                counts[name, default: 0] += count
            }
            return counts
        }
    }

    /// Deletes the ThisDeviceOnly row of another machine that holds `primaryKey`, if
    /// there is one, through the engine's `storage` (inside its transaction).
    /// - Returns: whether a row was deleted (so an add can be retried).
    func removeForeignRow(primaryKey: Data, in storage: KeychainDatabase) throws -> Bool {
        let select = try storage.database.cachedStatement("SELECT id, pdmn FROM items WHERE pk = ?")
        select.bind(primaryKey, at: 1)
        var foreign: Int64?
        if try select.step(), let label = select.string(at: 1), isForeign(label: label) { foreign = select.int64(at: 0) }
        select.reset()
        guard let foreign else { return false }
        try storage.delete(id: foreign)
        return true
    }

    private func locking<Result>(_ body: () throws -> Result) throws -> Result {
        lock.lock()
        defer { lock.unlock() }
        do {
            return try body()
        } catch let error as DatabaseError {
            throw KeychainFailure(error.osStatus, "The keychain database failed: \(error.message ?? "SQLite error \(error.resultCode)").")
        }
    }

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
    func accessControlPublicKeys(creatingIn storage: KeychainDatabase) throws -> [AccessControlKeys.Slot: Data] {
        let writer = ProtectionStore(database: storage.database)
        var now = try writer.load()
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
        return records.accessControl[.passcode].map(AccessControlKeys.isBound) ?? (records.passphrase != nil)
    }

    /// The private key of `slot`, unwrapped with `releasedKey` where the record is bound to
    /// the passphrase; `nil` when the record is missing or the key does not open it.
    func accessControlSecret(_ slot: AccessControlKeys.Slot, releasedKey: SecretKey?) throws -> SecretKey? {
        let record: Data? = try locking {
            try refresh()
            return records.accessControl[slot]
        }
        guard let record else { return nil }
        let bound = AccessControlKeys.isBound(record)
        if bound && releasedKey == nil { return nil }
        return AccessControlKeys.secret(
            record, kek: accessControlKEK(slot, secret: bound ? releasedKey : nil), associatedData: accessControlAD(slot))
    }

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

    // MARK: Shared helpers

    /// `"keysmith.item.v1" ‖ keychain-id`, the start of every item's associated data.
    static func associatedDataPrefix(keychainID: Data) -> Data {
        Data("keysmith.item.v1".utf8) + keychainID
    }

    /// An item's associated data: the prefix, then class, reference, primary-key hash and
    /// `pdmn` label, each with a 32-bit length in front (so no byte can move from one
    /// field to the next without failing authentication).
    static func associatedData(prefix: Data, itemClass: String, reference: Data, primaryKey: Data, protection: String) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(prefix.count + 64)
        data.append(contentsOf: prefix)
        func field<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
            withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { data.append(contentsOf: $0) }
            data.append(contentsOf: bytes)
        }
        field(itemClass.utf8)
        field(reference)
        field(primaryKey)
        field(protection.utf8)
        return data
    }

    /// Keyed BLAKE2b over length-prefixed `parts`, into locked memory.
    static func hash(key: SecretKey, parts: [Data], length: Int = Sodium.keyLength) -> SecretKey {
        var input: [UInt8] = []
        for part in parts {
            withUnsafeBytes(of: UInt32(part.count).littleEndian) { input.append(contentsOf: $0) }
            input.append(contentsOf: part)
        }
        defer { input.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
        let out = SecretKey(uninitializedCount: length)
        out.withUnsafeMutableBytes { o in
            key.withUnsafeBytes { k in
                input.withUnsafeBytes { i in
                    _ = crypto_generichash(
                        o.baseAddress!.assumingMemoryBound(to: UInt8.self), length,
                        i.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(i.count),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
                }
            }
        }
        return out
    }
}

extension KeyHierarchy.KeyClass {
    /// Where its unlock secret lives (class D has none).
    var slot: LockStateStore.Slot? {
        switch self {
        case .a: return .a
        case .c: return .c
        case .d: return nil
        }
    }
}

extension ProtectionClass {
    /// The class key this accessibility's items are encrypted under.
    var keyClass: KeyHierarchy.KeyClass {
        switch self {
        case .whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: return .a
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: return .c
        case .always, .alwaysThisDeviceOnly, .untilReboot: return .d
        }
    }
}

/// Named places where a test can have the process killed (`KEYSMITH_CRASH_AT=name`), to
/// check that an interrupted upgrade or passphrase change leaves a keychain that opens.
enum CrashPoint {
    private static let chosen = ProcessInfo.processInfo.environment["KEYSMITH_CRASH_AT"]

    static func reach(_ name: String) {
        if chosen == name { kill(getpid(), SIGKILL) }
    }
}
extension ProtectionClass {
    /// The position in `allCases`, for the key hierarchy's item-key table.
    fileprivate var tableIndex: Int {
        switch self {
        case .whenUnlocked: return 0
        case .afterFirstUnlock: return 1
        case .always: return 2
        case .whenUnlockedThisDeviceOnly: return 3
        case .afterFirstUnlockThisDeviceOnly: return 4
        case .alwaysThisDeviceOnly: return 5
        case .whenPasscodeSetThisDeviceOnly: return 6
        case .untilReboot: return 7
        }
    }
}
#endif
