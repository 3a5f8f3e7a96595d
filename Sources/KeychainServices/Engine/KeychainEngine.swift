#if !canImport(Security)
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Add, match, update and delete with Apple's semantics over one keychain directory.
///
/// One engine per keychain per process, shared by all threads. Writes (and everything
/// that must be judged under the write lock) go through one connection, serialized by a
/// lock; `SecItemCopyMatching` runs on a small pool of read connections, so threads read
/// in parallel (SQLite's WAL lets readers run beside each other and beside a writer).
/// Every read connection works in autocommit mode and resets each statement when the call
/// ends, so it holds no read transaction between calls: each read starts a new WAL
/// snapshot, which includes every write committed before it, in any thread or process.
/// Other processes use the same file through their own connections; SQLite's WAL locking
/// and `BEGIN IMMEDIATE` keep them consistent.
final class KeychainEngine: @unchecked Sendable {
    static let databaseName = "keychain.db"
    static let keyFileName = "device.key"

    let directory: URL
    private let lock = NSLock()
    private let storage: KeychainDatabase
    /// The key hierarchy: class keys, lock state, machine binding.
    let keys: KeyHierarchy
    /// How many pairs of searches were read as one (``matchingRecords(of:groups:readTogether:)``);
    /// for tests.
    let searchesReadTogether = Atomic<Int>(0)
    /// `"keysmith.item.v1" ‖ keychain-id`, the start of every item's associated data.
    let associatedDataPrefix: Data
    /// The write connection and what is prepared on it (used with the lock held).
    let writer: Connection
    /// Idle read connections (see ``Connection``); at most ``maximumIdleReaders`` are kept.
    private let idleReaders = Mutex<[Connection]>([])
    private static let maximumIdleReaders = 4

    /// One SQLite connection of this engine with its prepared searches and memoized group
    /// hashes. Used by one thread at a time: the writer with the engine's lock held, a
    /// reader while it is taken out of the pool.
    final class Connection: @unchecked Sendable {
        let storage: KeychainDatabase
        /// Prepared searches by the shape of their query.
        var searchStatements: [QueryShape: Statement] = [:]
        /// Keyed hashes of access group names, by the name's bytes.
        var groupHashes: [Data: Data] = [:]
        /// Set when a search ran its statement on this connection (so the read
        /// transaction the connection last started is that search's).
        var searched = false
        /// The data version of the read transaction in which this (read) connection last
        /// had the key hierarchy re-read its protection records (``KeyHierarchy/refreshRecords()``).
        var keysRefreshedAt: UInt32?
        /// The rows recent searches found (read connections only; see ``SearchCache``).
        let searchCache = SearchCache()
        /// The search just read from SQLite, to be cached once the read is judged current
        /// (a call of several searches collects each one's after it ran).
        var pendingFill: SearchCache.PendingFill?
        /// Set when the search just made was answered from ``searchCache`` (the anchor was
        /// checked before its rows were used); reset before each search.
        var answeredFromCache = false

        init(_ storage: KeychainDatabase) { self.storage = storage }
    }

    /// Opens (creating on first use) the keychain in `directory`.
    /// - Throws: ``KeychainFailure`` naming the file and the fix.
    init(directory: URL) throws {
        self.directory = directory
        try KeychainFiles.preparePrivateDirectory(directory)
        let databaseURL = directory.appendingPathComponent(Self.databaseName)
        let keyURL = directory.appendingPathComponent(Self.keyFileName)
        let databaseExists = FileManager.default.fileExists(atPath: databaseURL.path)
        // An existing database without its key file is unreadable: say so instead of
        // silently making a new key (which would orphan every item).
        let deviceKey = try DeviceKeyStore.load(keyFile: keyURL, create: !databaseExists || Self.isEmptyDatabase(databaseURL))
        // With the TPM key store, new ThisDeviceOnly rows are bound through the TPM too.
        let tpmTCTI = DeviceKeyStore.tpm2Configuration(keyFile: keyURL)
        keys = try KeyHierarchy(deviceKey: deviceKey, tpmTCTI: tpmTCTI)
        storage = try KeychainDatabase(path: databaseURL.path)
        try storage.prepare(checkValue: keys.checkValue)
        // Rollback detection: the item set is checked against keychain.anchor, MACed with a
        // key of its own derived from the device key; keychain.verified (MACed with another)
        // spares an unchanged keychain the recomputation of every row.
        // With the TPM key store, the anchor is also bound to a TPM NV counter.
        let keychainID = storage.keychainID
        let counter = tpmTCTI.map {
            TPM2RollbackCounter(tcti: $0, deviceKey: deviceKey, keychainID: keychainID)
        }
        try storage.attachAnchor(
            RollbackAnchor(directory: directory, key: Sodium.deriveKey(from: deviceKey, id: 1, context: "ksanchr1"), counter: counter),
            record: VerificationRecord(directory: directory, key: Sodium.deriveKey(from: deviceKey, id: 2, context: "ksverif1")))
        // After the anchor: the first open of an older keychain re-encrypts its items in
        // place, and the anchor records that write like any other.
        try keys.attach(storage: storage)
        associatedDataPrefix = Data("keysmith.item.v1".utf8) + storage.keychainID
        writer = Connection(storage)
        fileIdentity = Self.identity(of: databaseURL.path)
        lastConfirmed = DispatchTime.now().uptimeNanoseconds
    }

    /// Whether this engine's open took the item set's check from `keychain.verified`
    /// instead of recomputing every row's value.
    var openedWithVerificationRecord: Bool { storage.verifiedByRecord }

    /// Whether the database file is empty (or cannot be examined): a `stat`, not
    /// FileManager's attribute dictionary, whose `Any` values cost a conformance search
    /// when cast.
    private static func isEmptyDatabase(_ url: URL) -> Bool {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return true }
        return info.st_size == 0
    }

    // MARK: Shared engines

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [String: KeychainEngine] = [:]
    nonisolated(unsafe) private static var registryOrder: [String] = []
    nonisolated(unsafe) private static var mostRecent: KeychainEngine?
    private static let registryCapacity = 16

    /// The engine for `directory`, opened on first use and kept for later calls (the
    /// most recently used few stay open).
    ///
    /// Before every write (and at most once a second before reads) the cached engine checks
    /// that its database file is still the one at the path: if the keychain was deleted or
    /// replaced underneath the process (`rm -rf`, a restore), the call opens the new one
    /// instead of writing into an unlinked file.
    ///
    /// With `creating` false (every call but an add), a keychain that does not exist yet is
    /// not created: the call reports errSecItemNotFound naming the directory, as reading an
    /// empty keychain would, and leaves no directory or key file behind.
    static func engine(for directory: URL, forWriting: Bool = false, creating: Bool = true) throws -> KeychainEngine {
        try KeychainWithoutWaiting.acquire(registryLock, "the keychain registry")
        defer { registryLock.unlock() }
        if let mostRecent, mostRecent.directory == directory, mostRecent.isCurrent(always: forWriting) { return mostRecent }
        let key = directory.standardizedFileURL.path
        if let engine = registry[key], !engine.isCurrent(always: forWriting) {
            registry[key] = nil
            registryOrder.removeAll { $0 == key }
            if mostRecent === engine { mostRecent = nil }
        }
        if let engine = registry[key] {
            mostRecent = engine
            if registryOrder.last != key, let index = registryOrder.firstIndex(of: key) {
                registryOrder.remove(at: index)
                registryOrder.append(key)
            }
            return engine
        }
        if !creating && !FileManager.default.fileExists(atPath: directory.appendingPathComponent(databaseName).path) {
            throw KeychainFailure(
                errSecItemNotFound, "No item matches the query: there is no keychain at \(directory.path) yet.",
                recovery: "Check the keychain directory (KEYSMITH_HOME or KeychainEnvironment.directory); the first item added there creates it.")
        }
        if KeychainWithoutWaiting.isActive {
            throw KeychainWithoutWaiting.wouldWait("the keychain at \(directory.path) is not open in this process yet")
        }
        let engine = try KeychainEngine(directory: directory)
        mostRecent = engine
        registry[key] = engine
        registryOrder.append(key)
        if registryOrder.count > registryCapacity {
            registry[registryOrder.removeFirst()] = nil
        }
        return engine
    }

    /// Forgets the open engine for `directory` (after its files were removed or replaced).
    static func close(directory: URL) {
        let key = directory.standardizedFileURL.path
        registryLock.lock()
        registry[key] = nil
        registryOrder.removeAll { $0 == key }
        if mostRecent?.directory.standardizedFileURL.path == key { mostRecent = nil }
        registryLock.unlock()
    }

    /// The database file this engine opened (device and inode), and when that was last
    /// confirmed (uptime nanoseconds). Read and written with `registryLock` held.
    private var fileIdentity: (device: UInt64, inode: UInt64)?
    private var lastConfirmed: UInt64 = 0
    private static let confirmationInterval: UInt64 = 1_000_000_000

    private static func identity(of path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Whether the database file at the path is still the one this engine has open:
    /// checked on every write (`always`), and at most once per ``confirmationInterval``
    /// for reads. Called with `registryLock` held.
    private func isCurrent(always: Bool) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        if !always && now &- lastConfirmed < Self.confirmationInterval { return true }
        let current = Self.identity(of: directory.appendingPathComponent(Self.databaseName).path)
        guard let current, let fileIdentity, current == fileIdentity else { return false }
        lastConfirmed = now
        return true
    }

    /// Runs `body` in a write transaction on this engine's database with the engine's lock
    /// held: the key hierarchy's passphrase changes, one transaction with the items they
    /// delete.
    func writeTransaction(_ body: (KeychainDatabase) throws -> Void) throws {
        try locked { try storage.writeTransaction(erasing: true) { try body(storage) } }
    }

    private func locked<Result>(_ body: () throws -> Result) throws -> Result {
        try KeychainWithoutWaiting.acquire(lock, "the keychain's write lock")
        defer { lock.unlock() }
        if KeychainWithoutWaiting.isActive {
            storage.database.setBusyTimeout(milliseconds: 0)
            defer { storage.database.setBusyTimeout(milliseconds: KeychainDatabase.busyTimeoutMilliseconds) }
            return try Self.describingDatabaseErrors(body)
        }
        return try Self.describingDatabaseErrors(body)
    }

    private static func describingDatabaseErrors<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as DatabaseError where error.isBusy && KeychainWithoutWaiting.isActive {
            throw KeychainWithoutWaiting.wouldWait("another connection holds the database (\(error.description))")
        } catch let error as DatabaseError {
            throw KeychainFailure(
                error.osStatus, "The keychain database failed: \(error.message ?? "SQLite error \(error.resultCode)").",
                recovery: error.osStatus == errSecDiskFull ? "Free some disk space and try again; nothing was changed." : nil)
        }
    }

    /// Runs `body` on an idle read connection (opening one when none is idle), without the
    /// engine's lock. Returns `nil` when no read connection can be opened; the caller then
    /// reads on the write connection. A connection whose call failed is closed, not reused.
    private func reading<Result>(_ body: (Connection) throws -> Result) throws -> Result? {
        var reader = idleReaders.withLock { $0.popLast() }
        let withoutWaiting = KeychainWithoutWaiting.isActive
        if reader == nil {
            // Without waiting, no connection is opened: the writer answers if its lock is free.
            if withoutWaiting { return nil }
            guard let opened = try? KeychainDatabase(readerOf: storage) else { return nil }
            reader = Connection(opened)
        }
        guard let reader else { return nil }
        if withoutWaiting { reader.storage.database.setBusyTimeout(milliseconds: 0) }
        defer { if withoutWaiting { reader.storage.database.setBusyTimeout(milliseconds: KeychainDatabase.busyTimeoutMilliseconds) } }
        let result = try Self.describingDatabaseErrors { try body(reader) }
        idleReaders.withLock { idle in
            if idle.count < Self.maximumIdleReaders { idle.append(reader) }
        }
        return result
    }

    // MARK: Add

    /// Adds one item. Returns the requested result (or `nil`).
    func add(_ query: ItemQuery, groups: AccessGroups) throws -> AnyObject? {
        guard let itemClass = query.itemClass else { throw KeychainFailure.param("The dictionary has no kSecClass.") }
        guard let schema = itemClass.schema else {
            throw KeychainFailure.param("Identities cannot be added directly; add the certificate and the key.")
        }
        if query.persistentReference != nil {
            throw KeychainFailure.param("kSecValuePersistentRef cannot be used to add an item.")
        }
        if query.authenticationUI == .skip {
            throw KeychainFailure.param("kSecUseAuthenticationUISkip is only for SecItemCopyMatching.")
        }
        if query.hasItemList { throw KeychainFailure.param("kSecUseItemList is not supported.") }

        var attributes = query.attributes
        let group: String
        if let explicit = query.accessGroup {
            guard groups.canWrite(explicit) else { throw AccessGroups.missing(explicit, write: true) }
            group = explicit
        } else {
            guard let first = groups.defaultGroup else {
                throw groups.all.isEmpty ? AccessGroups.none : AccessGroups.noWritableGroup
            }
            group = first
        }
        attributes["agrp"] = .string(group)

        // Protection: an explicit accessibility, else the access control's, else Apple's
        // default (ak; dk for certificates).
        if let control = query.accessControl {
            if case .string(let given)? = attributes["pdmn"], given != control.protection {
                throw KeychainFailure.param("kSecAttrAccessible and kSecAttrAccessControl disagree; give only the access control.")
            }
            attributes["pdmn"] = .string(control.protection)
            attributes["accc"] = .accessControl(protection: control.protection, flags: control.flags.rawValue)
        } else if attributes["pdmn"] == nil {
            // Apple's defaults: ak; dk for certificates; dku for the push service's group.
            let inferred = group == "com.apple.apsd" ? "dku" : itemClass == .certificate ? "dk" : "ak"
            attributes["pdmn"] = .string(inferred)
        }
        let synchronizable: Bool
        if case .only(let flag)? = query.sync { synchronizable = flag } else { synchronizable = false }
        if synchronizable, let control = query.accessControl, control.requiresAuthentication {
            throw KeychainFailure.param("An item with an authentication-requiring kSecAttrAccessControl cannot be synchronizable.")
        }
        attributes["sync"] = .number(synchronizable ? 1 : 0)
        for spec in schema.attributes.values where attributes[spec.tag] == nil {
            if let value = spec.defaultValue { attributes[spec.tag] = value }
        }
        let now = Date().timeIntervalSinceReferenceDate
        attributes["cdat"] = .date(now)
        attributes["mdat"] = .date(now)

        let record = ItemRecord(
            rowID: 0, itemClass: itemClass, attributes: attributes, secret: query.valueData,
            reference: Sodium.randomBytes(16))
        if record.protection == .whenPasscodeSetThisDeviceOnly && !keys.hasPasscode {
            throw KeychainFailure(
                errSecNotAvailable, "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly needs a keychain passphrase, and none is set.",
                recovery: "Set a passphrase for the keychain, or choose another accessibility.")
        }
        // Access control: what sealing the secret needs is gathered before the lock (the
        // application password is stretched), the keychain's public keys inside the write.
        var gate: AccessControlGate?
        var sealingInputs: AccessControlGate.SealingInputs?
        if record.needsAuthentication, let control = record.accessControl {
            let made = AccessControlGate(query: query, keys: keys)
            sealingInputs = try made.sealingInputs(for: control)
            gate = made
        }
        return try locked {
            let rowID: Int64 = try storage.writeTransaction(erasing: false) {
                var toSeal = record
                if let gate, let sealingInputs, let control = record.accessControl, let secret = record.secret {
                    toSeal.secret = try gate.seal(
                        secret, control: control, reference: record.reference, protection: record.protection,
                        publicKeys: keys.accessControlPublicKeys(creatingIn: storage), inputs: sealingInputs)
                    toSeal.sealedForAccessControl = true
                }
                let sealed = try seal(toSeal, schema: schema)
                do {
                    return try storage.insert(sealed.row, firstName: sealed.firstName, secondName: sealed.secondName, label: sealed.label)
                } catch let error as DatabaseError where error.osStatus == errSecDuplicateItem {
                    // A ThisDeviceOnly item written on another machine is absent here: it
                    // gives way to the new item.
                    if try keys.removeForeignRow(primaryKey: sealed.row.primaryKeyHash, in: storage) {
                        return try storage.insert(sealed.row, firstName: sealed.firstName, secondName: sealed.secondName, label: sealed.label)
                    }
                    throw KeychainFailure(
                        errSecDuplicateItem, "An item with the same primary key already exists (\(ConstantNames.uniqueness(of: itemClass.rawValue, primaryKey: schema.primaryKey))).",
                        recovery: "Update the existing item with SecItemUpdate, or delete it first.")
                }
            }
            let stored = ItemRecord(
                rowID: rowID, itemClass: itemClass, attributes: record.attributes, secret: record.secret,
                reference: record.reference)
            return ResultBuilder.result(for: stored, query: query)
        }
    }

    // MARK: Copy matching

    /// Finds items and shapes the result. Throws errSecItemNotFound when nothing matches.
    ///
    /// Runs on a read connection of the pool; when the database's state does not match the
    /// rollback anchor at first sight (a write half-way in another process, or a rollback),
    /// the read is judged again under the write lock on the write connection.
    func copyMatching(_ query: ItemQuery, groups: AccessGroups) throws -> AnyObject? {
        let matches = try matchingRecords(query, groups: groups)
        if case .one = query.limit {
            // At most one match: its result, without an array of results around it.
            return matches.first.flatMap { ResultBuilder.result(for: $0, query: query) }
        }
        var results: [AnyObject] = []
        for record in matches {
            if let result = ResultBuilder.result(for: record, query: query) { results.append(result) }
        }
        switch query.limit {
        case .one: return results.first
        case .many: return query.hasReturnKeys ? NSArray(array: results) : nil
        }
    }

    /// The items `SecItemCopyMatching` answers `query` with, before they are shaped into
    /// its result: every check, the rollback check and the evaluations of access control
    /// (a secret behind it is opened when the data is asked for). `copyMatching` and the
    /// typed reads (``KeychainTypedReads``) both go through here.
    /// - Throws: errSecItemNotFound when nothing matches, and every failure
    ///   `SecItemCopyMatching` reports.
    func matchingRecords(_ query: ItemQuery, groups: AccessGroups) throws -> [ItemRecord] {
        guard case .read(let readable, let wanted) = try prepareSearch(query, groups: groups) else {
            throw KeychainFailure.notFound
        }
        // Reads run on a pooled read connection; what they found is used when the database
        // they read was in the state the rollback anchor vouches for (checked right after
        // the search, against the snapshot the search read); anything else is judged on the
        // writer, under the lock, before anything is read there.
        // A search asked again while nothing was committed is answered from the rows the
        // connection's search cache kept (each still decrypted and compared; the anchor is
        // checked before they are used), and one read from SQLite is cached once its read
        // is judged current.
        let pooled: [ItemRecord]?? = try reading { reader in
            reader.searched = false
            reader.answeredFromCache = false
            reader.pendingFill = nil
            defer { reader.pendingFill = nil }
            let found: Result<[ItemRecord], any Error>
            do {
                found = .success(try collectMatches(of: query, groups: readable, wanted: wanted, on: reader, caching: true))
            } catch {
                found = .failure(error)
            }
            let searched: Bool
            if case .success = found { searched = reader.searched } else { searched = false }
            if case .success(let records) = found, reader.answeredFromCache { return .some(records) }
            guard try reader.storage.stateMatchesAnchor(afterReading: searched) else { return nil }
            if searched { cachePendingFill(on: reader) }
            return .some(try found.get())
        }
        let matches: [ItemRecord]
        if let pooled = pooled ?? nil {
            matches = pooled
        } else {
            matches = try locked {
                try storage.checkBeforeRead()
                return try collectMatches(of: query, groups: readable, wanted: wanted, on: writer)
            }
        }
        guard !matches.isEmpty else { throw KeychainFailure.notFound }
        return try openingAccessControl(of: matches, for: query)
    }

    /// Caches the rows of the search the call just read from SQLite on `reader`, when the
    /// stamp taken before its read transaction still holds and the anchor check of that
    /// read was made at the read's data version.
    private func cachePendingFill(on reader: Connection) {
        guard let fill = reader.pendingFill else { return }
        cache(fill, on: reader)
    }

    /// Caches the rows of one search read from SQLite on `reader` (see ``cachePendingFill(on:)``).
    private func cache(_ fill: SearchCache.PendingFill, on reader: Connection) {
        guard let rows = fill.rows, let version = fill.dataVersion,
            reader.storage.verifiedDataVersion == version, let header = reader.storage.walIndexHeader,
            let epoch = reader.storage.writeEpoch
        else { return }
        guard SearchCache.Stamp(header: header, epoch: epoch) == fill.taken else { return }
        reader.searchCache.store(rows, for: fill.key, taken: fill.taken, dataVersion: version)
    }

    /// `matches` with the secrets behind access control opened when the `query` asks for the
    /// data, after the evaluations they need: outside the lock and off the read connection
    /// (a prompt does not hold up other threads).
    private func openingAccessControl(of matches: [ItemRecord], for query: ItemQuery) throws -> [ItemRecord] {
        guard query.returnData, matches.contains(where: \.needsAuthentication) else { return matches }
        if KeychainWithoutWaiting.isActive { throw KeychainWithoutWaiting.wouldWait("an item needs authentication") }
        var gate: AccessControlGate?
        var opened = matches
        for index in opened.indices where opened[index].needsAuthentication {
            let current = gate ?? AccessControlGate(query: query, keys: keys)
            gate = current
            opened[index].secret = try current.open(opened[index])
            opened[index].sealedForAccessControl = false
        }
        return opened
    }

    /// A failure of ``matchingRecords(of:groups:readTogether:)``: which search failed, and how.
    struct SearchFailure: Error {
        let index: Int
        let failure: any Error
    }

    /// One search of ``matchingRecords(of:groups:readTogether:)``, checked: nothing to read (its class
    /// holds no items, or it asks for none), or what to read.
    fileprivate enum PreparedSearch {
        case nothing
        case read(groups: [String]?, wanted: Int?)
    }

    private func prepareSearch(_ query: ItemQuery, groups: AccessGroups) throws -> PreparedSearch {
        try validateSearch(query)
        guard let itemClass = query.itemClass, itemClass.schema != nil else { return .nothing }
        if let group = query.accessGroup, !groups.canRead(group) { throw AccessGroups.missing(group, write: false) }
        let wanted: Int? = { if case .many(let n) = query.limit { return n } else { return 1 } }()
        if wanted == 0 { return .nothing }
        return .read(groups: groups.readsEverything ? nil : groups.all, wanted: wanted)
    }

    /// The items of several searches in one call, each as ``matchingRecords(_:groups:)``
    /// finds them, with the same steps (``prepareSearch(_:groups:)``, the rollback check,
    /// ``collectMatches(of:groups:wanted:on:)``, ``openingAccessControl(of:for:)``), and
    /// empty where it reports errSecItemNotFound. On a read connection the searches run
    /// one after the other and must all have read one snapshot (one data version; a
    /// search answered from the search cache counts at the version its rows were read in),
    /// which is then checked against the rollback anchor; anything else is read again on
    /// the write connection under the lock, after its rollback check. Access control is evaluated after the
    /// reads, in search order.
    ///
    /// With `readTogether`, two searches of one key's two layouts (the first by label, the
    /// second by second name; the same class, first name, access group and synchronizable
    /// filter, no reference or host: ``EitherSearch`` checks, and anything else is read
    /// search by search) are read as one search of the rows of either, and answer as they
    /// would separately: every candidate is still decrypted and checked against each
    /// search. When that read fails (a locked class, a damaged row), the searches are read
    /// again one by one, so the failure and the search it is reported for are the same.
    /// - Throws: ``SearchFailure`` with the failure that separate calls, made in this
    ///   order, would report first, and the index of the search whose call reports it.
    func matchingRecords(of queries: [ItemQuery], groups: AccessGroups, readTogether: Bool = false) throws -> [[ItemRecord]] {
        // Checks, in order; the first failure ends the call at that search.
        var plans: [PreparedSearch] = []
        plans.reserveCapacity(queries.count)
        var failure: SearchFailure?
        for (index, query) in queries.enumerated() {
            do {
                plans.append(try prepareSearch(query, groups: groups))
            } catch {
                failure = SearchFailure(index: index, failure: error)
                break
            }
        }
        // Reads, on a pooled read connection when the database is in the state the rollback
        // anchor vouches for; anything else is judged on the writer, under the lock. A
        // failing read ends the reading; the searches read before it keep their items.
        var collected: [[ItemRecord]] = []
        collected.reserveCapacity(plans.count)
        if let firstRead = plans.firstIndex(where: { if case .read = $0 { return true } else { return false } }) {
            // Two searches that differ only in the second name and the label (one item of
            // either layout) are read as one search; each item found is checked against
            // both, and goes to every search it matches, in insertion order.
            let either = readTogether && failure == nil ? EitherSearch(queries, plans: plans) : nil
            func collect(on connection: Connection, caching: Bool = false, afterEachSearch: () -> Void = {}) throws {
                collected.removeAll(keepingCapacity: true)
                if let either {
                    do {
                        let both = try Self.describingDatabaseErrors {
                            try collectMatches(of: queries[0], or: queries[1], in: either, on: connection, caching: caching)
                        }
                        searchesReadTogether.add(1, ordering: .relaxed)
                        collected.append(contentsOf: both)
                        afterEachSearch()
                        return
                    } catch {
                        // Which search fails, and how, is what separate searches say: they
                        // run again one by one, with nothing of this read kept for the cache.
                        connection.pendingFill = nil
                        connection.answeredFromCache = false
                    }
                }
                for (index, plan) in plans.enumerated() {
                    guard case .read(let readable, let wanted) = plan else {
                        collected.append([])
                        continue
                    }
                    do {
                        collected.append(try Self.describingDatabaseErrors {
                            try collectMatches(of: queries[index], groups: readable, wanted: wanted, on: connection, caching: caching)
                        })
                    } catch {
                        throw SearchFailure(index: index, failure: error)
                    }
                    afterEachSearch()
                }
            }
            do {
                // As for one search: the reads first, then the anchor check of the snapshot
                // they read. Each search is its own read transaction, so they must all have
                // read the same snapshot (one data version) for that check to cover them.
                // A search answered from the search cache counts at the data version its
                // rows were read in (its anchor check was made at that version); the others
                // at their read transaction's. Searches read from SQLite are cached once the
                // anchor check of the snapshot they all read has passed.
                let pooled: Bool? = try reading { reader in
                    reader.searched = false
                    reader.answeredFromCache = false
                    reader.pendingFill = nil
                    defer { reader.pendingFill = nil }
                    var versions: [UInt32?] = []
                    var fills: [SearchCache.PendingFill] = []
                    var readFromSQLite = false
                    let outcome: Result<Void, any Error>
                    do {
                        try collect(on: reader, caching: true) {
                            if reader.answeredFromCache {
                                versions.append(reader.searchCache.dataVersion)
                            } else {
                                versions.append(reader.storage.dataVersion)
                                readFromSQLite = true
                            }
                            if let fill = reader.pendingFill { fills.append(fill) }
                            reader.pendingFill = nil
                            reader.answeredFromCache = false
                        }
                        outcome = .success(())
                    } catch {
                        outcome = .failure(error)
                    }
                    let oneSnapshot = versions.allSatisfy { $0 != nil && $0 == versions.first ?? nil }
                    let searched: Bool
                    if case .success = outcome { searched = reader.searched } else { searched = false }
                    guard oneSnapshot else { return false }
                    if case .failure = outcome {
                        guard try reader.storage.stateMatchesAnchor(afterReading: false) else { return false }
                    } else if readFromSQLite {
                        guard try reader.storage.stateMatchesAnchor(afterReading: searched) else { return false }
                        for fill in fills { cache(fill, on: reader) }
                    }
                    try outcome.get()
                    return true
                }
                if pooled != true {
                    try locked {
                        try storage.checkBeforeRead()
                        try collect(on: writer)
                    }
                }
            } catch let readFailure as SearchFailure {
                failure = readFailure
            } catch {
                // The rollback check: the first search that reads would report it.
                collected.removeAll()
                failure = SearchFailure(index: firstRead, failure: error)
            }
        } else {
            collected = Array(repeating: [], count: plans.count)
        }
        // Access control, search by search, as each call evaluates it after its read.
        for index in collected.indices {
            do {
                collected[index] = try openingAccessControl(of: collected[index], for: queries[index])
            } catch {
                throw SearchFailure(index: index, failure: error)
            }
        }
        if let failure { throw failure }
        return collected
    }

    /// Two searches of one key's two layouts, read as one (``matchingRecords(of:groups:readTogether:)``):
    /// the items labelled with its name, and the items whose second name (account) is its
    /// name, of one class, first name (service), access group and synchronizable filter.
    fileprivate struct EitherSearch {
        /// The groups both searches read (from the keychain's entitlements).
        let groups: [String]?

        /// `nil` unless both searches are to be read, every item of each wanted, and what
        /// the one SQL search takes from the first (class, first name, synchronizable
        /// filter, access group) holds for the second too. Whether the first has a label
        /// and the second a second name is checked when the search is made (which fails,
        /// and is then read as separate searches, when they do not).
        init?(_ queries: [ItemQuery], plans: [PreparedSearch]) {
            guard queries.count == 2, plans.count == 2, case .read(let groups, nil) = plans[0],
                case .read(_, nil) = plans[1], let itemClass = queries[0].itemClass,
                queries[1].itemClass == itemClass, let schema = itemClass.schema, queries[0].sync == queries[1].sync,
                queries[0].persistentReference == nil, queries[1].persistentReference == nil,
                queries[0].hostOrSubdomain == nil, queries[1].hostOrSubdomain == nil,
                queries[0].accessGroup == queries[1].accessGroup
            else { return nil }
            let first = schema.indexedNames.0
            guard let service = queries[0].attributes[first], queries[1].attributes[first] == service else { return nil }
            self.groups = groups
        }
    }

    /// The items of `byLabel` and of `bySecondName`, read as one search in `either`'s
    /// groups, as ``collectMatches(of:groups:wanted:on:caching:)`` collects each: one list
    /// per search, in insertion order.
    private func collectMatches(
        of byLabel: ItemQuery, or bySecondName: ItemQuery, in either: EitherSearch, on connection: Connection,
        caching: Bool
    ) throws -> [[ItemRecord]] {
        var labelled: [ItemRecord] = []
        var named: [ItemRecord] = []
        try forEachCandidate(
            of: byLabel, orOf: bySecondName, groups: either.groups, deleteDamaged: false, on: connection,
            caching: caching
        ) { record, matchesLabel, matchesSecondName in
            let needsUser = record.accessControl?.requiresAuthentication == true
            if matchesLabel && !(needsUser && byLabel.authenticationUI == .skip) { labelled.append(record) }
            if matchesSecondName && !(needsUser && bySecondName.authenticationUI == .skip) { named.append(record) }
            return true
        }
        return [labelled, named]
    }

    /// The items `SecItemCopyMatching` answers with for `query`, read on `connection` (at
    /// most `wanted`; items that need the user are left out under `kSecUseAuthenticationUISkip`).
    private func collectMatches(
        of query: ItemQuery, groups readable: [String]?, wanted: Int?, on connection: Connection, caching: Bool = false
    ) throws -> [ItemRecord] {
        var matches: [ItemRecord] = []
        try forEachMatch(of: query, groups: readable, deleteDamaged: false, on: connection, caching: caching) { record in
            if query.authenticationUI == .skip, record.accessControl?.requiresAuthentication == true {
                return true
            }
            matches.append(record)
            if let wanted, matches.count >= wanted { return false }
            return true
        }
        return matches
    }

    // MARK: Update

    /// Applies `changes` to every matching item in one transaction; any failure (such as
    /// a primary-key collision) rolls all of them back.
    func update(_ query: ItemQuery, changes: ItemQuery, groups: AccessGroups) throws {
        if query.hasReturnKeys {
            throw KeychainFailure.param("SecItemUpdate's query cannot contain kSecReturn… keys.")
        }
        if query.hasMatchKeys {
            throw KeychainFailure.param("SecItemUpdate's query cannot contain kSecMatch… keys (it always updates every match).")
        }
        if query.hasItemList { throw KeychainFailure.param("kSecUseItemList is not supported.") }
        if query.authenticationUI == .skip {
            throw KeychainFailure.param("kSecUseAuthenticationUISkip is only for SecItemCopyMatching.")
        }
        try validateReferenceQuery(query)
        guard let itemClass = query.itemClass, let schema = itemClass.schema else { throw KeychainFailure.notFound }
        if let group = changes.accessGroup, !groups.canWrite(group) { throw AccessGroups.missing(group, write: true) }
        if let control = changes.accessControl, case .string(let given)? = changes.attributes["pdmn"], given != control.protection {
            throw KeychainFailure.param("kSecAttrAccessible and kSecAttrAccessControl disagree; give only the access control.")
        }
        let writable = query.accessGroup.map { [$0] } ?? groups.writable
        // Items behind access control are evaluated first, outside the lock, as Apple
        // requires for an update; their secrets are then sealed again for their (possibly
        // new) access control.
        let guarded: [ItemRecord] = try locked {
            try storage.checkBeforeRead()
            var guarded: [ItemRecord] = []
            try forEachMatch(of: query, groups: writable, deleteDamaged: false, on: writer) { record in
                if record.needsAuthentication { guarded.append(record) }
                return true
            }
            return guarded
        }
        // The gate (and the authenticators in force) only where access control is involved.
        let needsGate = !guarded.isEmpty || changes.accessControl?.requiresAuthentication == true
        let gate = needsGate ? AccessControlGate(query: query, keys: keys) : nil
        // By reference: the secret opened for the user, and the stored bytes it was opened from.
        var opened: [Data: SecretData] = [:]
        var openedFrom: [Data: SecretData] = [:]
        for record in guarded {
            opened[record.reference] = try gate?.open(record)
            openedFrom[record.reference] = record.secret
        }
        var inputsByFlags: [UInt: AccessControlGate.SealingInputs] = [:]
        if let control = changes.accessControl, control.requiresAuthentication {
            inputsByFlags[control.flags.rawValue] = try gate?.sealingInputs(for: control)
        }
        for record in guarded {
            if let control = record.accessControl, changes.accessControl == nil, inputsByFlags[control.flags.rawValue] == nil {
                inputsByFlags[control.flags.rawValue] = try gate?.sealingInputs(for: control)
            }
        }
        try locked {
            try storage.writeTransaction(erasing: true) {
                var matches: [ItemRecord] = []
                try forEachMatch(of: query, groups: writable, deleteDamaged: false, on: writer) { record in
                    matches.append(record)
                    return true
                }
                guard !matches.isEmpty else { throw KeychainFailure.notFound }
                var publicKeys: [AccessControlKeys.Slot: Data]?
                let now = Date().timeIntervalSinceReferenceDate
                for var record in matches {
                    for (tag, value) in changes.attributes.entries { record.attributes[tag] = value }
                    if let control = changes.accessControl {
                        record.attributes["pdmn"] = .string(control.protection)
                        record.attributes["accc"] = .accessControl(protection: control.protection, flags: control.flags.rawValue)
                    } else if changes.attributes["pdmn"] != nil, case .accessControl(_, let flags)? = record.attributes["accc"],
                        case .string(let protection)? = changes.attributes["pdmn"]
                    {
                        record.attributes["accc"] = .accessControl(protection: protection, flags: flags)
                    }
                    if case .only(let flag)? = changes.sync { record.attributes["sync"] = .number(flag ? 1 : 0) }
                    if record.synchronizable, record.accessControl?.requiresAuthentication == true {
                        throw KeychainFailure.param("An item with an authentication-requiring kSecAttrAccessControl cannot be synchronizable.")
                    }
                    let before = openedFrom[record.reference]
                    if record.sealedForAccessControl || (record.secret != nil && before != nil) {
                        // The secret opened before the lock, and only if the item still holds
                        // the bytes it was opened from: a secret replaced meanwhile by another
                        // call is not written back over.
                        guard let secret = opened[record.reference], let before, let stored = record.secret,
                            before.withUnsafeBytes({ old in stored.withUnsafeBytes { old.elementsEqual($0) } })
                        else { throw Self.changedWhileAuthenticating }
                        record.secret = secret
                        record.sealedForAccessControl = false
                    }
                    if let secret = changes.valueData { record.secret = secret }
                    if record.needsAuthentication, let control = record.accessControl, let secret = record.secret {
                        var inputs = inputsByFlags[control.flags.rawValue]
                        if inputs == nil {
                            // An item without data before, or one given access control by this
                            // update: nothing to evaluate, only to seal (an application
                            // password comes from the context).
                            guard !control.flags.contains(.applicationPassword) || control == changes.accessControl else {
                                throw AccessControlEnvelope.missingPassword
                            }
                            let current = gate ?? AccessControlGate(query: query, keys: keys)
                            inputs = try current.sealingInputs(for: control)
                            inputsByFlags[control.flags.rawValue] = inputs
                        }
                        if publicKeys == nil { publicKeys = try keys.accessControlPublicKeys(creatingIn: storage) }
                        record.secret = try (gate ?? AccessControlGate(query: query, keys: keys)).seal(
                            secret, control: control, reference: record.reference, protection: record.protection,
                            publicKeys: publicKeys!, inputs: inputs!)
                        record.sealedForAccessControl = true
                    }
                    record.attributes["mdat"] = .date(now)
                    if record.protection == .whenPasscodeSetThisDeviceOnly && !keys.hasPasscode {
                        throw KeychainFailure(errSecNotAvailable, "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly needs a keychain passphrase, and none is set.")
                    }
                    var sealed = try seal(record, schema: schema)
                    sealed.row.id = record.rowID
                    do {
                        try storage.update(sealed.row, firstName: sealed.firstName, secondName: sealed.secondName, label: sealed.label)
                    } catch let error as DatabaseError where error.osStatus == errSecDuplicateItem {
                        throw KeychainFailure(
                            errSecDuplicateItem, "The update would give an item the same primary key as another item; nothing was changed.",
                            recovery: "Delete the other item first, or change a different attribute.")
                    }
                }
            }
        }
    }

    private static let changedWhileAuthenticating = KeychainFailure(
        errSecAuthFailed, "The matching items changed while the user was authenticating; nothing was changed.",
        recovery: "Try the update again.")

    // MARK: Delete

    /// Deletes every matching item. Throws errSecItemNotFound when nothing matches.
    func delete(_ query: ItemQuery, groups: AccessGroups) throws {
        if query.hasMatchKeys {
            throw KeychainFailure.param("SecItemDelete's query cannot contain kSecMatch… keys (it always deletes every match).")
        }
        if query.hasItemList { throw KeychainFailure.param("kSecUseItemList is not supported.") }
        if query.authenticationUI == .skip {
            throw KeychainFailure.param("kSecUseAuthenticationUISkip is only for SecItemCopyMatching.")
        }
        try validateReferenceQuery(query)
        guard let itemClass = query.itemClass, itemClass.schema != nil else { throw KeychainFailure.notFound }
        let writable = query.accessGroup.map { [$0] } ?? groups.writable
        try locked {
            try storage.writeTransaction(erasing: true) {
                var ids: [Int64] = []
                try forEachMatch(of: query, groups: writable, deleteDamaged: true, on: writer) { record in
                    ids.append(record.rowID)
                    return true
                }
                guard !ids.isEmpty else { throw KeychainFailure.notFound }
                for id in ids { try storage.delete(id: id) }
            }
        }
    }

    // MARK: Matching

    private func validateSearch(_ query: ItemQuery) throws {
        if query.hasItemList { throw KeychainFailure.param("kSecUseItemList is not supported.") }
        try validateReferenceQuery(query)
        if query.hostOrSubdomain != nil && query.itemClass != .internetPassword {
            throw KeychainFailure(errSecUnimplemented, "kSecMatchHostOrSubdomainOfHost applies only to internet passwords.")
        }
        for key in query.certificateMatchKeys {
            let needsPKI = key == "m_Issuers" || key == "m_Policy"
                || query.itemClass == .certificate || query.itemClass == .identity
            if needsPKI {
                throw KeychainFailure(
                    errSecUnimplemented, "\(ConstantNames.key(key)) needs certificate evaluation, which this keychain does not do.",
                    recovery: "Match certificates by their attributes (issuer, serial number, label) instead.")
            }
        }
    }

    private func validateReferenceQuery(_ query: ItemQuery) throws {
        if query.persistentReference != nil && (!query.attributes.isEmpty || query.sync != nil) {
            throw KeychainFailure.param("A persistent reference cannot be combined with other attributes in one query.")
        }
    }

    /// Calls `visit` with every item that matches `query` in `groups` (`nil`: all), in
    /// insertion order, until it returns `false`, reading on `connection`.
    ///
    /// Candidates come from the index columns; each is decrypted and checked against every
    /// attribute of the query, so a damaged index can never return a wrong item. A
    /// candidate that fails to decrypt makes the call fail with errSecDecode, unless
    /// `deleteDamaged` is set and the query is answered by the index alone, in which case
    /// the damaged row is passed on as a match (so it can be deleted).
    ///
    /// With `caching` (a read connection), the search may be answered
    /// from the connection's ``SearchCache`` and sets ``Connection/answeredFromCache``, or
    /// leaves its rows in ``Connection/pendingFill`` for the caller to cache.
    private func forEachMatch(
        of query: ItemQuery, groups: [String]?, deleteDamaged: Bool, on connection: Connection, caching: Bool = false,
        _ visit: (ItemRecord) throws -> Bool
    ) throws {
        try forEachCandidate(
            of: query, orOf: nil, groups: groups, deleteDamaged: deleteDamaged, on: connection, caching: caching
        ) { record, _, _ in try visit(record) }
    }

    /// ``forEachMatch(of:groups:deleteDamaged:on:caching:_:)``, for one query or, when
    /// `alternative` is given (an ``EitherSearch``), for the items of either query in one
    /// search: `visit` gets each item that matches at least one of them, with which ones
    /// it matches.
    private func forEachCandidate(
        of query: ItemQuery, orOf alternative: ItemQuery?, groups: [String]?, deleteDamaged: Bool,
        on connection: Connection, caching: Bool = false,
        _ visit: (_ record: ItemRecord, _ matchesQuery: Bool, _ matchesAlternative: Bool) throws -> Bool
    ) throws {
        guard let itemClass = query.itemClass, let schema = itemClass.schema else { return }
        let (first, second) = schema.indexedNames
        let groupFilter: [String]? = query.accessGroup.map { [$0] } ?? groups
        if let groupFilter, groupFilter.isEmpty { return }

        // The statement depends only on the shape of the query; it is prepared once per shape.
        // The indexed values are looked up once, for the shape, the cache key and the binding.
        var shape = QueryShape(groupCount: groupFilter?.count ?? -1)
        var indexed = IndexedValues()
        if let reference = query.persistentReference {
            if case .uuid = reference.locator { shape.reference = 1 } else { shape.reference = 2 }
        } else {
            indexed = IndexedValues(
                first: query.attributes[first], second: (alternative ?? query).attributes[second],
                label: query.attributes[Self.labelTag])
            shape.either = alternative != nil
            if shape.either && (indexed.second == nil || indexed.label == nil) {
                throw KeychainFailure(errSecInternalComponent, "A search for either of two items lacks its second name or label.")
            }
            shape.firstName = indexed.first != nil
            shape.secondName = indexed.second != nil
            shape.label = indexed.label != nil
            switch query.sync {
            case .only?: shape.sync = 1
            case .any?: shape.sync = 2
            case nil: shape.sync = 0
            }
        }
        var fill: SearchCache.PendingFill?
        if caching && connection !== writer,
            let key = searchKey(query, itemClass: itemClass, shape: shape, indexed: indexed, groups: groupFilter),
            let header = connection.storage.walIndexHeader, let epoch = connection.storage.writeEpoch
        {
            let stamp = SearchCache.Stamp(header: header, epoch: epoch)
            let cache = connection.searchCache
            let cached = cache.rows(for: key, at: stamp)
            if let rows = cached {
                if connection.storage.stateMatchesAnchor(unchangedSince: cache.dataVersion) {
                    SearchCache.searchesAnsweredFromCache.add(1, ordering: .relaxed)
                    connection.answeredFromCache = true
                    try visitCachedRows(
                        rows, itemClass: itemClass, groupFilter: groupFilter, query: query, alternative: alternative,
                        version: cache.dataVersion, on: connection, visit)
                    return
                }
                cache.removeAll()
            }
            // A search is cached the second time it is read from SQLite (not every search
            // of a large keychain read once pays for being copied).
            if cached != nil || cache.admits(key) { fill = SearchCache.PendingFill(key: key, taken: stamp) }
        }
        // Whether the index alone selects the candidates (a damaged row among them can then
        // only be the item the caller means); needed only when rows are read from SQLite.
        var coveredByIndex = query.hostOrSubdomain == nil
        for tag in query.attributes.keys where tag != first && tag != second && tag != "agrp" {
            coveredByIndex = false
        }
        let statement: Statement
        if let prepared = connection.searchStatements[shape] {
            prepared.reset()
            statement = prepared
        } else {
            statement = try Statement(database: connection.storage.database, sql: shape.sql)
            connection.searchStatements[shape] = statement
        }
        var index: Int32 = 1
        if let reference = query.persistentReference {
            switch reference.locator {
            case .uuid(let bytes): statement.bind(bytes, at: index)
            case .rowID(let id): statement.bind(id, at: index)
            }
            index += 1
        }
        statement.bind(itemClass.rawValue, at: index)
        index += 1
        if query.persistentReference == nil {
            if let value = indexed.first {
                statement.bind(nameHash(itemClass, slot: 1, value), at: index)
                index += 1
            }
            if let value = indexed.second {
                statement.bind(nameHash(itemClass, slot: 2, value), at: index)
                index += 1
            }
            if let value = indexed.label {
                statement.bind(nameHash(itemClass, slot: 3, value), at: index)
                index += 1
            }
            if case .only(let flag)? = query.sync {
                statement.bind(flag ? 1 : 0, at: index)
                index += 1
            }
        }
        for group in groupFilter ?? [] {
            statement.bind(groupHash(group, memo: connection), at: index)
            index += 1
        }
        defer { statement.reset() }
        connection.searched = true
        var recordsCurrent = false
        defer { if fill != nil { connection.pendingFill = fill } }
        var visiting = true
        while try statement.step() {
            // The row as the cache keeps it, when this search is being cached: opened from
            // that copy below (its associated data computed once, for both).
            var copied: SearchCache.Row?
            if fill != nil {
                if fill!.rows != nil && fill!.rows!.count >= SearchCache.maximumRowsPerSearch { fill!.rows = nil }
                if fill!.rows != nil {
                    let row = cachedRow(of: statement)
                    fill!.bytes += row.byteCount
                    if fill!.bytes > SearchCache.maximumBytesPerSearch {
                        fill!.rows = nil
                    } else {
                        fill!.rows!.append(row)
                        fill!.dataVersion = connection.storage.dataVersion
                    }
                    copied = row
                }
                // The search stopped early (enough matches): its remaining candidates are
                // read, not opened, to cache the whole search (unless it is too large to cache).
                if !visiting {
                    if fill!.rows == nil { return }
                    continue
                }
            }
            guard visiting else { return }
            if !recordsCurrent && connection !== writer {
                // On a read connection, the protection records are read again only when a
                // commit came since they last were (the data version of the transaction
                // this search runs in, fixed from its first step, says so).
                try refreshKeys(on: connection, at: connection.storage.dataVersion)
                recordsCurrent = true
            }
            let record: ItemRecord
            do {
                if let copied {
                    record = try open(copied, recordsCurrent: recordsCurrent)
                } else {
                    record = try openCurrentRow(of: statement, recordsCurrent: recordsCurrent)
                }
            } catch is KeyHierarchy.ForeignItem {
                continue
            } catch let failure as KeychainFailure where failure.status == errSecDecode {
                if deleteDamaged && coveredByIndex {
                    let placeholder = ItemRecord(
                        rowID: statement.int64(at: 0), itemClass: itemClass, attributes: [:], secret: nil,
                        reference: statement.data(at: 6))
                    if try !visit(placeholder, true, false) { return }
                    continue
                }
                throw failure
            }
            if let groupFilter, !AccessGroups.list(groupFilter, contains: record.accessGroup) { continue }
            let matchesQuery = record.matches(query)
            let matchesAlternative = alternative.map { record.matches($0) } ?? false
            guard matchesQuery || matchesAlternative else { continue }
            if try !visit(record, matchesQuery, matchesAlternative) {
                if fill == nil || fill!.rows == nil { return }
                visiting = false
            }
        }
        // A search with no candidate at all is cached too (its answer: none), at the data
        // version of the read transaction it ran in, like one that found rows.
        if fill != nil, let rows = fill!.rows, rows.isEmpty { fill!.dataVersion = connection.storage.dataVersion }
    }

    /// Has the key hierarchy re-read its protection records for `connection` unless it last
    /// did so at data version `version` (no commit came since); `nil` always re-reads.
    private func refreshKeys(on connection: Connection, at version: UInt32?) throws {
        guard version == nil || version != connection.keysRefreshedAt else { return }
        connection.keysRefreshedAt = nil
        try keys.refreshRecords()
        connection.keysRefreshedAt = version
    }

    /// Opens and checks the cached candidate rows of a search, as ``forEachMatch`` does
    /// with the rows SQLite returns.
    private func visitCachedRows(
        _ rows: [SearchCache.Row], itemClass: ItemClass, groupFilter: [String]?, query: ItemQuery,
        alternative: ItemQuery?, version: UInt32, on connection: Connection,
        _ visit: (ItemRecord, Bool, Bool) throws -> Bool
    ) throws {
        // No commit came since the rows were read (the stamp says so): the protection
        // records are current when they were refreshed at that read's data version.
        if !rows.isEmpty { try refreshKeys(on: connection, at: version) }
        for row in rows {
            let record: ItemRecord
            do {
                record = try open(row, recordsCurrent: true)
            } catch is KeyHierarchy.ForeignItem {
                continue
            }
            if let groupFilter, !AccessGroups.list(groupFilter, contains: record.accessGroup) { continue }
            let matchesQuery = record.matches(query)
            let matchesAlternative = alternative.map { record.matches($0) } ?? false
            guard matchesQuery || matchesAlternative else { continue }
            if try !visit(record, matchesQuery, matchesAlternative) { return }
        }
    }

    /// Decrypts and checks a row as the search cache keeps it (``openRow``).
    private func open(_ row: SearchCache.Row, recordsCurrent: Bool) throws -> ItemRecord {
        try row.nonce.withUnsafeBytes { nonce in
            try row.ciphertext.withUnsafeBytes { ciphertext in
                try openRow(
                    id: row.id, className: row.itemClass, primaryKey: row.primaryKey,
                    synchronizable: row.synchronizable, protectionName: row.protection, reference: row.reference,
                    nonce: nonce, ciphertext: ciphertext, recordsCurrent: recordsCurrent,
                    associatedData: row.associatedData)
            }
        }
    }

    /// The row the statement is on, as the search cache keeps it.
    private func cachedRow(of statement: Statement) -> SearchCache.Row {
        let itemClass = statement.string(at: 1) ?? "", protection = statement.string(at: 5) ?? ""
        let primaryKey = statement.data(at: 2), reference = statement.data(at: 6)
        return SearchCache.Row(
            id: statement.int64(at: 0), itemClass: itemClass, primaryKey: primaryKey,
            synchronizable: statement.int64(at: 4), protection: protection, reference: reference,
            nonce: statement.data(at: 7), ciphertext: statement.data(at: 8),
            associatedData: associatedData(
                itemClass: itemClass, reference: reference, primaryKey: primaryKey, protection: protection))
    }

    /// The values of a query's indexed attributes (the two names of its class and the
    /// label), looked up once per search.
    private struct IndexedValues {
        var first: AttributeValue?
        var second: AttributeValue?
        var label: AttributeValue?

        subscript(slot: Int) -> AttributeValue? { slot == 0 ? first : slot == 1 ? second : label }
    }

    /// The search cache's key for a search: everything its SQL depends on (see
    /// ``SearchCache``), or `nil` when it is too long to cache.
    private func searchKey(
        _ query: ItemQuery, itemClass: ItemClass, shape: QueryShape, indexed: IndexedValues, groups: [String]?
    ) -> SearchCache.Key? {
        var key: [UInt8] = []
        key.reserveCapacity(96)
        key.append(UInt8(shape.reference) | (shape.either ? 0x80 : 0))
        key.append(UInt8(shape.sync))
        Self.appendInteger(Int32(shape.groupCount), to: &key)
        Self.appendCounted(itemClass.rawValue, to: &key)
        if let reference = query.persistentReference {
            switch reference.locator {
            case .uuid(let bytes):
                Self.appendInteger(UInt32(truncatingIfNeeded: bytes.count), to: &key)
                key.append(contentsOf: bytes)
            case .rowID(let id):
                Self.appendInteger(id, to: &key)
            }
        } else {
            for slot in 0..<3 {
                guard let value = indexed[slot] else {
                    key.append(0)
                    continue
                }
                key.append(1)
                let lengthAt = key.count
                Self.appendInteger(UInt32(0), to: &key)
                value.appendMatchBytes(to: &key)
                let length = UInt32(truncatingIfNeeded: key.count - lengthAt - 4).littleEndian
                withUnsafeBytes(of: length) { bytes in
                    for offset in 0..<4 { key[lengthAt + offset] = bytes[offset] }
                }
                if key.count > SearchCache.maximumKeyLength { return nil }
            }
            if case .only(let flag)? = query.sync { key.append(flag ? 1 : 0) }
        }
        for group in groups ?? [] {
            Self.appendCounted(group, to: &key)
            if key.count > SearchCache.maximumKeyLength { return nil }
        }
        return SearchCache.Key(bytes: key)
    }

    /// Appends `value` little-endian to a cache key.
    private static func appendInteger<T: FixedWidthInteger>(_ value: T, to key: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { key.append(contentsOf: $0) }
    }

    /// Appends the UTF-8 length of `text` (four bytes) and its UTF-8 bytes to a cache key.
    private static func appendCounted(_ text: String, to key: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            appendInteger(UInt32(truncatingIfNeeded: bytes.count), to: &key)
            key.append(contentsOf: bytes)
        }
    }

    /// The label (`kSecAttrLabel`): every class has one, and its keyed hash is the `h3`
    /// index column.
    static let labelTag = "labl"

    /// What the candidate SQL depends on.
    struct QueryShape: Hashable {
        /// 0: none, 1: UUID reference, 2: rowid reference.
        var reference = 0
        var firstName = false
        var secondName = false
        var label = false
        /// The rows with the second name or the label (an ``EitherSearch``), instead of
        /// the rows with both.
        var either = false
        /// 0: implicit sync = 0, 1: explicit value, 2: any.
        var sync = 0
        /// -1: every group.
        var groupCount: Int

        init(groupCount: Int) { self.groupCount = groupCount }

        /// The candidates, by id. Parameters are numbered (`?N`) in the order
        /// ``KeychainEngine/forEachCandidate(of:orOf:groups:deleteDamaged:on:caching:_:)``
        /// binds them: reference, class, first name, second name, label, sync, groups.
        ///
        /// A label lookup takes the rows with that label hash and the rows written before
        /// the label was indexed (no hash), as two indexed searches merged in id order.
        /// With ``either``, the rows with the second name are a third indexed search, and
        /// the union keeps a row found twice once.
        var sql: String {
            var number = 0
            func parameter() -> String {
                number += 1
                return "?\(number)"
            }
            var conditions: String
            var secondParameter = ""
            var labelParameter = ""
            switch reference {
            case 1: conditions = "ref = \(parameter()) AND class = \(parameter())"
            case 2: conditions = "id = \(parameter()) AND class = \(parameter())"
            default:
                conditions = "class = \(parameter())"
                if firstName { conditions += " AND h1 = \(parameter())" }
                if secondName {
                    secondParameter = parameter()
                    if !either { conditions += " AND h2 = \(secondParameter)" }
                }
                if label { labelParameter = parameter() }
                if sync == 0 { conditions += " AND sync = 0" } else if sync == 1 { conditions += " AND sync = \(parameter())" }
            }
            if groupCount >= 0 {
                conditions += " AND agrp IN (" + (0..<groupCount).map { _ in parameter() }.joined(separator: ",") + ")"
            }
            let select = "SELECT \(KeychainDatabase.rowColumns) FROM items WHERE "
            if either {
                // Three indexed searches; UNION keeps a row found by two of them once.
                return select + conditions + " AND h2 = \(secondParameter) UNION "
                    + select + conditions + " AND h3 = \(labelParameter) UNION "
                    + select + conditions + " AND h3 IS NULL ORDER BY id"
            }
            guard !labelParameter.isEmpty else { return select + conditions + " ORDER BY id" }
            return select + conditions + " AND h3 = \(labelParameter) UNION ALL "
                + select + conditions + " AND h3 IS NULL ORDER BY id"
        }
    }
}
#endif
