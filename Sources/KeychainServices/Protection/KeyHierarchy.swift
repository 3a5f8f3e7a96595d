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
///                   classes, so they open only on the machine that wrote them; with the
///                   TPM key store BLAKE2b(class key; "tpm-device", T, pdmn), where T is
///                   an HMAC of the machine id inside the TPM (``TPM2DeviceBinding``)
/// ```
///
/// Lock state: the unlock secrets sA and sC are kept in ``LockStateStore`` (the user's
/// kernel keyring), shared by the user's processes. Unlocked = sA present; locked = only
/// sC present (after the first unlock); before first unlock = neither. Setting, changing
/// or removing the passphrase replaces the A and C keys and the passcode key pair and
/// seals their items again (``setPassphrase(_:old:timeout:transaction:)``).
///
/// The protection records are covered by the rollback anchor; in a keychain with a
/// passphrase, an A or C key record or passcode key record that is not bound to it is
/// damage.
///
/// The `pdmn` column of a ThisDeviceOnly row carries the machine's tag (`aku@1a2b…`), so a
/// copy of the keychain opened on another machine skips those rows as absent instead of
/// reporting them damaged. Rows bound through the TPM carry `tpm.` and a tag of T
/// (`aku@tpm.1a2b…`): the binding is chosen per row, so rows written before (bound to the
/// machine id alone) still open, and a row written again gets the TPM binding.
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
    let machineTagBytes: [UInt8]

    let deviceKey: SecretKey
    let wrapBase: SecretKey
    let machineID: Data
    /// The TCTI of the TPM that holds the device key (TPM key store), `nil` otherwise: new
    /// ThisDeviceOnly rows are then bound through the TPM (``DeviceBinding/tpm``).
    let tpmTCTI: String?
    /// The TPM binding's secret and tag, computed when a ThisDeviceOnly row first needs them
    /// (read and set with ``bindingLock`` held).
    var tpmBindingValue: (secret: SecretKey, tag: [UInt8])?
    let bindingLock = NSLock()
    let lock = NSLock()
    private var store: ProtectionStore?
    /// The engine's database (for its anchor check on this hierarchy's connection).
    private var storage: KeychainDatabase?
    /// A copy of the engine's rollback anchor, used on this hierarchy's connection.
    private var anchor: RollbackAnchor?
    /// Whether the records were read once (at open, right after the engine's full check).
    private var recordsLoaded = false
    /// The access-control records this process created (in a write that may not have
    /// committed yet), which the engine's connection may read before this hierarchy does.
    var createdAccessControlRecords: [AccessControlKeys.Slot: Data] = [:]
    private(set) var keychainID = Data() {
        didSet { lockStateNames = LockStateNames(a: LockStateStore.Name(.a, keychainID: keychainID), c: LockStateStore.Name(.c, keychainID: keychainID)) }
    }
    /// The kernel-keyring names of this keychain's unlock secrets (made once, not per read).
    /// Two fields, not a dictionary: the first dictionary of a new key type costs the Swift
    /// runtime a scan of every protocol conformance in the program (about 0.2 ms at start).
    var lockStateNames: LockStateNames?

    /// The keyring names of the two slots.
    struct LockStateNames {
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
    var records = ProtectionRecords()
    var dataVersion: Int64 = -1
    /// Unwrapped class keys with what they were unwrapped from (record and secret), by
    /// ``KeyClass/index``.
    var classKeys: [CachedClassKey?] = Array(repeating: nil, count: KeyClass.allCases.count)
    /// Derived item keys by ``ProtectionClass`` position in `allCases` (and that plus the
    /// count of classes for ThisDeviceOnly rows bound through the TPM), with the class key
    /// they were derived from.
    var itemKeys: [(classKey: ObjectIdentifier, key: SecretKey)?] = Array(repeating: nil, count: 2 * ProtectionClass.allCases.count)
    /// Where unlock secrets are read to (used with the lock held; zeroed after each use).
    let scratch = SecretKey(uninitializedCount: Sodium.keyLength)

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

    struct CachedClassKey {
        let record: Data
        let secret: SecretKey?
        let key: SecretKey
    }

    /// Thrown when opening a row that belongs to another machine (a ThisDeviceOnly item in
    /// a copied keychain): callers treat it as absent.
    struct ForeignItem: Error {}

    init(deviceKey: SecretKey, tpmTCTI: String? = nil) throws {
        self.deviceKey = deviceKey
        self.tpmTCTI = tpmTCTI
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
        self.storage = storage
        anchor = storage.anchor?.copy()
        // The engine checked the whole database against its anchor just before: the records
        // read now are taken as they are; any later change is checked (``refresh(force:)``).
        try refresh(force: true)
        if records.format == nil {
            // On the engine's connection (the engine is not shared yet), through its
            // KeychainDatabase, so item rows are written in one place only.
            let engineStore = ProtectionStore(storage: storage)
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
    func upgradeFirstFormat(_ store: ProtectionStore, storage: KeychainDatabase) throws {
        var fresh: [KeyClass: SecretKey] = [:]
        for keyClass in KeyClass.allCases {
            let key = SecretKey.random()
            fresh[keyClass] = key
            try store.set("key.\(keyClass.rawValue)", wrap(key, keyClass: keyClass, secret: nil))
        }
        let prefix = Self.associatedDataPrefix(keychainID: keychainID)
        var rewritten = 0
        for item in try store.itemRows() {
            let row = item.row
            guard let protection = ProtectionClass(rawValue: row.protection) else { continue }
            let legacyKey = Sodium.deriveKey(from: deviceKey, id: protection.keyNumber, context: "ksclass1")
            let opened = Self.open(row, associatedData: Self.associatedData(for: row, prefix: prefix), key: legacyKey)
            // A row that does not authenticate was damaged before the upgrade: it stays as
            // it is, and keeps being reported as damaged.
            guard let opened else { continue }
            let newLabel = try label(for: protection)
            let newKey = try derivedItemKey(protection, classKey: fresh[protection.keyClass]!)
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
            try storage.update(rewrittenRow, firstName: item.firstName, secondName: item.secondName)
            rewritten += 1
            if rewritten == 1 { CrashPoint.reach("upgrade") }
        }
        try store.set("format", Data([Self.format]))
    }

    /// Re-reads the records when another connection changed the database.
    ///
    /// Records that changed since they were last read are used only once the whole
    /// database, as this connection sees it in one read transaction, matches its rollback
    /// anchor (every row's and record's value recomputed, ``KeychainDatabase/matchesAnchor(on:anchor:)``):
    /// a record planted, swapped or put back while this process has the keychain open is
    /// refused here, as the next open would refuse it. A legitimate change of the records
    /// (a passphrase set or changed, the first access-controlled item) is rare; this check
    /// costs as much as the one at open, once per change and process.
    /// - Throws: errSecDecode when the records do not match the anchor; the records read
    ///   before stay in use (nothing is opened with the changed ones).
    func refresh(force: Bool = false) throws {
        guard let store else { return }
        let version = try store.dataVersion()
        if force || version != dataVersion {
            let loaded = try store.load()
            if loaded != records {
                if recordsLoaded, let storage, let anchor {
                    records = try verifiedRecords(store: store, storage: storage, anchor: anchor)
                } else {
                    records = loaded
                }
                recordsLoaded = true
                dropKeys()
            }
            dataVersion = version
        }
    }

    /// The records and the whole database read in one read transaction, checked against
    /// the anchor. Rows and records that do not give the stored digest are refused at once;
    /// a state the anchor does not accept (yet) is read again for up to about two seconds,
    /// since other processes may commit, or be half-way through writing the anchor, while
    /// this transaction reads.
    private func verifiedRecords(store: ProtectionStore, storage: KeychainDatabase, anchor: RollbackAnchor) throws -> ProtectionRecords {
        for attempt in 0..<100 {
            if attempt > 0 { usleep(UInt32(min(1_000 * attempt, 20_000))) }
            try store.database.execute("BEGIN")
            let loaded: ProtectionRecords
            let match: KeychainDatabase.AnchorMatch
            do {
                loaded = try store.load()
                match = try storage.matchesAnchor(on: store.database, anchor: anchor)
                try store.database.execute("COMMIT")
            } catch {
                try? store.database.execute("ROLLBACK")
                throw error
            }
            if match == .matches { return loaded }
            if match == .differs { break }
        }
        throw anchor.rolledBack(
            "its protection records (class keys, passphrase, access-control keys) differ from what Keysmith last wrote (a record planted, swapped or put back).")
    }

    func dropKeys() {
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
    /// - Parameter binding: a ThisDeviceOnly row's binding (from its label,
    ///   ``protectionAndBinding(forLabel:)``); `nil`: the one new rows get.
    func itemKey(for protection: ProtectionClass, binding: DeviceBinding? = nil, recordsCurrent: Bool = false) throws -> SecretKey {
        try KeychainWithoutWaiting.acquire(lock, "the key hierarchy (an unlock or passphrase change)")
        defer { lock.unlock() }
        if !recordsCurrent { try refresh() }
        if protection == .whenPasscodeSetThisDeviceOnly && records.passphrase == nil {
            throw Self.noPasscode
        }
        let classKey = try unwrappedClassKey(protection.keyClass)
        let bound = binding ?? newRowBinding
        let slot = protection.tableIndex + (protection.isThisDeviceOnly && bound == .tpm ? ProtectionClass.allCases.count : 0)
        if let cached = itemKeys[slot], cached.classKey == ObjectIdentifier(classKey) { return cached.key }
        let key = try derivedItemKey(protection, classKey: classKey, binding: bound)
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

    /// Posted (by name, in this process) when protected data became available here: the
    /// same name as iOS's `UIApplication.protectedDataDidBecomeAvailableNotification`.
    static let availableNotification = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")

    /// Posted (by name, in this process) when this process locks the keychain or changes its
    /// passphrase: the same name as iOS's
    /// `UIApplication.protectedDataWillBecomeUnavailableNotification`.
    static let unavailableNotification = Notification.Name("UIApplicationProtectedDataWillBecomeUnavailable")

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

    func locking<Result>(_ body: () throws -> Result) throws -> Result {
        lock.lock()
        defer { lock.unlock() }
        do {
            return try body()
        } catch let error as DatabaseError {
            throw KeychainFailure(error.osStatus, "The keychain database failed: \(error.message ?? "SQLite error \(error.resultCode)").")
        }
    }

    // MARK: Shared helpers

    /// `"keysmith.item.v1" ‖ keychain-id`, the start of every item's associated data.
    /// The associated data a stored row is sealed with, as it stands.
    static func associatedData(for row: StoredRow, prefix: Data) -> [UInt8] {
        associatedData(
            prefix: prefix, itemClass: row.itemClass, reference: row.reference, primaryKey: row.primaryKeyHash,
            protection: row.protection)
    }

    /// The plaintext of a stored row under `key` and `associated` (its
    /// ``associatedData(for:prefix:)``); `nil` when it does not authenticate (damaged, or
    /// sealed under another key).
    static func open(_ row: StoredRow, associatedData associated: [UInt8], key: SecretKey) -> SecretBuffer? {
        row.ciphertext.withUnsafeBytes { ciphertext in
            row.nonce.withUnsafeBytes { nonce in
                associated.withUnsafeBytes { Sodium.open(ciphertext, nonce: nonce, associatedData: $0, key: key) }
            }
        }
    }

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

extension ProtectionClass {
    /// The position in `allCases`, for the key hierarchy's item-key table.
    var tableIndex: Int {
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