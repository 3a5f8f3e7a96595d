#if !canImport(Security)
import CSQLite
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One stored item row, as it lies in SQLite (everything secret is inside `ciphertext`).
struct StoredRow {
    var id: Int64
    var itemClass: String
    /// Keyed hash of the class and the primary-key attributes (UNIQUE).
    var primaryKeyHash: Data
    var accessGroupHash: Data
    var synchronizable: Bool
    var protection: String
    /// 16 random bytes: the persistent reference.
    var reference: Data
    var nonce: Data
    var ciphertext: Data
}

/// The two copies of SQLite's WAL-index header (96 bytes), compared as a whole.
struct WALIndexHeader: Equatable {
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    static func == (a: WALIndexHeader, b: WALIndexHeader) -> Bool {
        withUnsafeBytes(of: a.words) { x in withUnsafeBytes(of: b.words) { y in memcmp(x.baseAddress!, y.baseAddress!, 96) == 0 } }
    }
}

/// The SQLite side of a keychain: file, schema, migrations, and row reads and writes.
///
/// ```
/// items(id INTEGER PRIMARY KEY, class, pk UNIQUE, h1, h2, agrp, sync, pdmn, ref UNIQUE,
///       nonce, ciphertext, h3)     index (h1, h2), index (h2), index (h3, h1)
/// meta(key PRIMARY KEY, value)     keychain-id, key-check
/// ```
/// `h1`/`h2` are keyed hashes of the class's two lookup names (genp: service, account),
/// `h3` of the label (`kSecAttrLabel`, every class), so equality lookups stay indexed
/// while names are never stored in plaintext. `h3` came with schema 2: rows written
/// before it have none (NULL) until they are next rewritten, and a label lookup takes
/// them as candidates too.
/// WAL journal, `synchronous=FULL` (an acknowledged write survives power loss), writes
/// in `BEGIN IMMEDIATE` with a busy timeout so processes sharing the file wait for each
/// other instead of failing.
final class KeychainDatabase {
    static let schemaVersion: Int64 = 3
    static let busyTimeoutMilliseconds: Int32 = 30_000

    let database: Database
    /// The random identity of this keychain, bound into every item's ciphertext.
    private(set) var keychainID = Data()

    init(path: String) throws {
        try KeychainFiles.requirePrivateIfPresent(path: path, kind: "keychain database")
        if access(path, F_OK) != 0 {
            // Create the file ourselves so it is 0600 from the first byte (SQLite gives the
            // -wal and -shm files the same mode).
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { close(fd) }
        }
        do {
            database = try Database(path: path, create: true)
        } catch let error as DatabaseError {
            throw KeychainFailure(
                error.osStatus, "Cannot open the keychain database \(path): \(error.message ?? "SQLite error \(error.resultCode)").",
                recovery: "Check that the file is readable and writable by this user.")
        }
        database.setBusyTimeout(milliseconds: Self.busyTimeoutMilliseconds)
    }

    /// A read connection to the database `writer` has open and prepared: the same file,
    /// keychain identity and rollback anchor, no schema work, and `query_only` so nothing
    /// is ever written through it (writes, and judging a state that does not match the
    /// anchor, stay on the writer's connection, under its engine's lock).
    /// - Throws: ``DatabaseError`` when the file cannot be opened; ``KeychainFailure``
    ///   when the path now names another file than the one `writer` has open (the file or
    ///   a directory above it replaced or renamed): the caller reads on the writer then.
    init(readerOf writer: KeychainDatabase) throws {
        database = try Database(path: writer.database.path, create: false)
        // The writer's file was checked against the anchor at open; a file the path names
        // now was not (a read connection judges only the state in `meta`).
        if let checked = writer.database.openedFileIdentity {
            guard let opened = database.openedFileIdentity, opened == checked else {
                throw KeychainFailure(
                    errSecIO, "The keychain database \(writer.database.path) is no longer the file this process opened and checked.",
                    recovery: "Open the keychain again (a new process does).")
            }
        }
        database.setBusyTimeout(milliseconds: Self.busyTimeoutMilliseconds)
        try database.execute("PRAGMA query_only=ON")
        keychainID = writer.keychainID
        anchor = writer.anchor
    }

    /// Sets up the connection and the schema, migrating an older one, and checks that
    /// `checkValue` (from the key file) belongs to this database.
    func prepare(checkValue: Data) throws {
        do {
            try enableWriteAheadLog()
            try database.execute("PRAGMA synchronous=FULL")
            // Deleted and overwritten rows are zeroed in the file instead of left in free
            // space, and the WAL shrinks back to nothing when it restarts after a checkpoint
            // (so the old page versions it held do not stay in the file).
            try database.execute("PRAGMA secure_delete=ON")
            try database.execute("PRAGMA journal_size_limit=0")
            try database.execute("PRAGMA foreign_keys=OFF")
            let version = try userVersion()
            if version > Self.schemaVersion {
                throw KeychainFailure(
                    errSecNotAvailable,
                    "The keychain database was written by a newer Keysmith (schema \(version); this one knows \(Self.schemaVersion)).",
                    recovery: "Upgrade Keysmith; this version will not modify the newer database.")
            }
            if version < Self.schemaVersion {
                try database.writeTransaction {
                    // Re-check inside the write lock: another process may have migrated.
                    let current = try userVersion()
                    if current < 1 {
                        try createVersion1(checkValue: checkValue)
                        // A new keychain's anchor covers its protection records from the start.
                        try setMeta(Self.anchorScopeKey, Self.anchorScopeWithProtection)
                    }
                    if current < 2 { try addLabelHashes() }
                    // Schema 3 (the anchor also covers the protection records) is reached in
                    // the first anchored write of ``attachAnchor(_:record:)``, which adds the
                    // records to the anchored digest in the same transaction.
                    let reached = current < 1 ? Self.schemaVersion : max(current, 2)
                    try database.execute("PRAGMA user_version=\(reached)")
                }
            }
            let storedCheck = try metaValue("key-check")
            guard let storedCheck, let id = try metaValue("keychain-id") else {
                throw KeychainFailure(errSecDecode, "The keychain database at \(database.path) lacks its identity record.",
                                      recovery: "The file is damaged; restore it from a backup.")
            }
            guard Sodium.constantTimeEqual(storedCheck, checkValue) else {
                throw KeychainFailure(
                    errSecDecode,
                    "The device key does not belong to the keychain database at \(database.path): the key file (device.key), the TPM-sealed key (device.tpm2) or the systemd credential in use is another keychain's.",
                    recovery: "Put back the file that was created with this keychain, in the same directory (device.key, or device.tpm2 when the TPM holds its key), or point --keychain or KEYSMITH_HOME at that file's own keychain.")
            }
            keychainID = id
        } catch let error as DatabaseError {
            throw KeychainFailure(
                error.osStatus, "The keychain database at \(database.path) cannot be used: \(error.message ?? "SQLite error \(error.resultCode)").",
                recovery: error.primaryResultCode == SQLITE_NOTADB || error.primaryResultCode == SQLITE_CORRUPT
                    ? "The file is damaged or not a keychain; restore it from a backup or move it aside."
                    : nil)
        }
    }

    /// `PRAGMA journal_mode=WAL`, waiting while other connections use the file.
    ///
    /// Switching a database to WAL (a new keychain's, once) writes its header from inside a
    /// read, and SQLite answers SQLITE_BUSY at once, without its busy timeout, when another
    /// connection holds the file at that moment: several processes opening a new keychain
    /// together meet this. The switch is tried again, with short random pauses, until it is
    /// made (by this connection or another: a database already in WAL needs no write) or the
    /// busy timeout passes.
    private func enableWriteAheadLog() throws {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(Self.busyTimeoutMilliseconds) * 1_000_000
        var pause: UInt32 = 1_000
        while true {
            do {
                try database.execute("PRAGMA journal_mode=WAL")
                return
            } catch let error as DatabaseError where error.primaryResultCode == SQLITE_BUSY {
                guard DispatchTime.now().uptimeNanoseconds < deadline else { throw error }
                usleep(pause + UInt32.random(in: 0...pause))
                pause = min(pause * 2, 50_000)
            }
        }
    }

    private func createVersion1(checkValue: Data) throws {
        try database.execute(
            """
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS items (
                id INTEGER PRIMARY KEY,
                class TEXT NOT NULL,
                pk BLOB NOT NULL UNIQUE,
                h1 BLOB NOT NULL,
                h2 BLOB NOT NULL,
                agrp BLOB NOT NULL,
                sync INTEGER NOT NULL,
                pdmn TEXT NOT NULL,
                ref BLOB NOT NULL UNIQUE,
                nonce BLOB NOT NULL,
                ciphertext BLOB NOT NULL
            );
            CREATE INDEX IF NOT EXISTS items_names ON items(h1, h2);
            CREATE INDEX IF NOT EXISTS items_second_name ON items(h2);
            """)
        if try metaValue("keychain-id") == nil {
            try setMeta("keychain-id", Sodium.randomBytes(16))
            try setMeta("key-check", checkValue)
        }
    }

    /// Schema 2: the keyed hash of the label (`h3`), indexed together with the first name
    /// so a lookup by service and label reads only its own rows. Existing rows keep NULL
    /// (their labels are sealed, and the class keys may be locked now); they stay
    /// candidates of every label lookup until a write seals them again.
    private func addLabelHashes() throws {
        try database.execute(
            """
            ALTER TABLE items ADD COLUMN h3 BLOB;
            CREATE INDEX IF NOT EXISTS items_label ON items(h3, h1);
            """)
    }

    private func userVersion() throws -> Int64 {
        let statement = try database.cachedStatement("PRAGMA user_version")
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int64(at: 0)
    }

    private func metaValue(_ key: String) throws -> Data? {
        let statement = try database.cachedStatement("SELECT value FROM meta WHERE key = ?")
        statement.bind(key, at: 1)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.data(at: 0)
    }

    private func setMeta(_ key: String, _ value: Data) throws {
        let statement = try database.cachedStatement("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)")
        statement.bind(key, at: 1)
        statement.bind(value, at: 2)
        try statement.run()
    }

    // MARK: Transactions

    /// Runs `body` in a write transaction (``Database/writeTransaction(_:)``). When
    /// `erasing` (the transaction overwrote or deleted ciphertext), the WAL is then copied
    /// into the database file and truncated, so the old versions of the changed pages (with
    /// the old ciphertext in them) leave the files now rather than at some later checkpoint.
    ///
    /// With an anchor attached, the transaction also checks the database against the
    /// anchor (under the write lock, so no other writer is half-way), writes the anchor with
    /// both the state it starts from and the state it is about to commit before `COMMIT`,
    /// and records only the new state once committed (see ``RollbackAnchor``).
    func writeTransaction<Result>(erasing: Bool, _ body: () throws -> Result) throws -> Result {
        // After the transaction (committed, rolled back or failed), before the caller hears
        // of it: the search caches of this process's read connections stop being used.
        defer { anchor?.writeEpoch.add(1, ordering: .sequentiallyConsistent) }
        var states: (current: ItemSetState, next: ItemSetState)?
        let result = try database.writeTransaction { () throws -> Result in
            guard let anchor else { return try body() }
            let contents = try anchor.read()
            let current = try check(state: storedState(), contents: contents, anchor: anchor)
            added = .zero
            removed = .zero
            protectionChanged = false
            countsProtection = try metaValue(Self.anchorScopeKey) != nil
            let result = try body()
            var digest = current.digest
            digest.add(added)
            digest.subtract(removed)
            let next = ItemSetState(generation: current.generation + 1, digest: digest)
            // Bound to a TPM counter: the binding carried over, or (a new epoch, a changed
            // protection record, no binding yet) the counter incremented after the anchor
            // records the value it is about to reach.
            var binding = contents?.counter
            if let counter = anchor.counter, Self.needsIncrement(binding, protectionChanged: protectionChanged) {
                binding = try advanceCounter(counter, from: binding, anchor: anchor) { binding in
                    try anchor.write(.init(keychainID: keychainID, committed: current, pending: next, counter: binding), durable: true)
                }
            } else {
                try anchor.write(.init(keychainID: keychainID, committed: current, pending: next, counter: binding), durable: true)
            }
            try setMeta(Self.anchorStateKey, next.encoded)
            states = (current, next)
            return result
        }
        if let anchor, let states { finalize(anchor, from: states.current, to: states.next) }
        if erasing { checkpointDiscardingOldVersions() }
        return result
    }

    // MARK: Rollback anchor

    static let anchorStateKey = "anchor-state"
    /// The anchor this database is checked against (attached at open).
    private(set) var anchor: RollbackAnchor?
    /// Whether the last ``attachAnchor(_:record:)`` took the item set's check from the
    /// verification record instead of recomputing every row's value.
    private(set) var verifiedByRecord = false
    /// The values of the rows the current write transaction added and removed.
    private var added = ItemSetDigest.zero
    private var removed = ItemSetDigest.zero
    /// Whether the current write transaction wrote or removed a protection record (which
    /// always starts a new epoch of the TPM counter, ``TPM2RollbackCounter``).
    private var protectionChanged = false

    /// Checks the whole database against `anchor` (every row's value recomputed) and keeps
    /// it for every later write and read. Anchors a keychain that has none yet, and accepts
    /// the database as it is when the owner asked for it (`keychain.anchor.reset`).
    ///
    /// With `record`: when it vouches for the database files as they are and for the anchor
    /// as read, the rows' values are not recomputed (the state is still judged against the
    /// anchor); after a full check of a settled database, a new record is written (see
    /// ``VerificationRecord``). A WAL left with commits in it is checkpointed first, without
    /// waiting, so the database file holds them and a record can apply.
    /// - Throws: errSecDecode when the database was rolled back or changed outside Keysmith.
    func attachAnchor(_ anchor: RollbackAnchor, record: VerificationRecord? = nil) throws {
        var info = stat()
        if lstat(anchor.resetRequestPath, &info) == 0, info.st_uid == geteuid() {
            // One request accepts the database once: it is removed first, and one that
            // cannot be removed (a directory of that name, say) accepts nothing, or every
            // later open would accept whatever database it finds.
            guard (info.st_mode & S_IFMT) == S_IFREG, unlink(anchor.resetRequestPath) == 0 else {
                throw KeychainFailure(
                    errSecDecode, "The request to accept the keychain database as it is, \(anchor.resetRequestPath), cannot be used: it is not a file this user can remove.",
                    recovery: "Remove it (rm -r \(anchor.resetRequestPath)) and create an empty file in its place: touch \(anchor.resetRequestPath)")
            }
            try database.writeTransaction {
                let previous = try? anchor.read()
                let newest = previous?.newestGeneration ?? 0
                let state = ItemSetState(
                    generation: max(newest, try storedState()?.generation ?? 0) + 1, digest: try fullDigest(anchor))
                if let counter = anchor.counter {
                    // Bound again to the counter as it is now, incremented: every anchor
                    // written before (the one accepted now included) is older than it.
                    _ = try rebindCounter(counter, previous: previous?.counter, anchor: anchor) { binding in
                        try anchor.write(.init(keychainID: keychainID, committed: state, pending: nil, counter: binding), durable: true)
                    }
                } else {
                    try anchor.write(.init(keychainID: keychainID, committed: state, pending: nil), durable: true)
                }
                try setMeta(Self.anchorStateKey, state.encoded)
            }
        }
        // The anchor is read before and after one read transaction: when it did not change
        // in between, no write happened half-way through and the snapshot can be judged
        // against it. After a few tries with writers in the way, under the write lock.
        if record != nil, VerificationRecord.DatabaseFiles.current(databasePath: database.path) == nil {
            checkpointDiscardingOldVersions()
        }
        var checked = false
        for _ in 0..<3 where !checked {
            // A failed read may be a write seen half-way: judged under the lock below.
            guard let before = try? anchor.read() else { break }
            // The files before and after the read transaction: when they are the same, no
            // change came in between (any change would have a later change time than a
            // settled file's), so the record speaks for what the transaction read.
            let now = VerificationRecord.now()
            var filesBefore = record == nil ? nil : readDatabaseFiles()
            let vouched = filesBefore.map { record!.vouches(keychainID: keychainID, files: $0, anchor: before) } ?? false
            // Before a full check that may write a record: the file's changed pages written
            // back, so that from here on a write through another process's shared mapping
            // (which sets the change time only when it faults on a page written back) gives
            // the file a new change time instead of slipping in under the record.
            if !vouched, let files = filesBefore, files.isSettled(at: now) {
                filesBefore = database.writeBackFile() ? readDatabaseFiles() : nil
            }
            try database.execute("BEGIN")
            let (state, digest): (ItemSetState?, ItemSetDigest?)
            do {
                state = try storedState()
                digest = try vouched ? nil : fullDigest(anchor)
                try database.execute("COMMIT")
            } catch {
                try? database.execute("ROLLBACK")
                throw error
            }
            guard let after = try? anchor.read(), after == before else { continue }
            let filesAfter = record == nil ? nil : VerificationRecord.DatabaseFiles.current(databasePath: database.path)
            if vouched && filesAfter != filesBefore { continue }
            _ = try check(state: state, contents: before, anchor: anchor, fullDigest: digest)
            checked = true
            verifiedByRecord = vouched
            if let record, !vouched, state != nil, let filesBefore, filesAfter == filesBefore, filesBefore.isSettled(at: now) {
                record.write(keychainID: keychainID, files: filesBefore, anchor: before)
            }
        }
        if !checked {
            try database.writeTransaction {
                _ = try check(state: storedState(), contents: anchor.read(), anchor: anchor, fullDigest: fullDigest(anchor))
            }
        }
        if let counter = anchor.counter { try checkCounter(counter, anchor: anchor) }
        self.anchor = anchor
        if try storedState() == nil {
            // Not anchored yet (a new keychain, or one written before anchors): anchor it
            // with an empty write.
            try writeTransaction(erasing: false) {}
        } else if anchor.counter != nil, (try? anchor.read())?.counter == nil {
            // A TPM keychain whose anchor is not bound to a counter yet (created before
            // anchors had one, or moved into the TPM since): one write binds it.
            try writeTransaction(erasing: false) {}
        }
        if try metaValue(Self.anchorScopeKey) == nil {
            // Anchored before the anchor covered the protection records: one write adds
            // their values to the anchored digest (and takes the schema to version 3, so an
            // older Keysmith says that a newer one wrote the keychain instead of finding a
            // digest it cannot explain). Re-checked under the write lock: another process
            // may have done it meanwhile.
            try writeTransaction(erasing: false) {
                guard try metaValue(Self.anchorScopeKey) == nil else { return }
                added.add(try protectionDigest(anchor, on: database))
                try setMeta(Self.anchorScopeKey, Self.anchorScopeWithProtection)
                try database.execute("PRAGMA user_version=\(Self.schemaVersion)")
            }
        }
    }

    // MARK: Protection records under the anchor

    /// `meta` key saying that the anchored digest includes the protection records (the
    /// wrapped class keys, the passphrase parameters, the access-control key pairs), not
    /// only the item rows. Keychains anchored before have none until their first open by a
    /// version that adds the records (``attachAnchor(_:record:)``). Removing it does not
    /// help anyone: the digest then recomputed (items only) no longer matches the anchored
    /// one, which includes the records.
    static let anchorScopeKey = "anchor-scope"
    static let anchorScopeWithProtection = Data("items+protection".utf8)

    /// The keyed value of one protection record. Its first field is the 10-byte domain
    /// `protection`, where every item row's is its 8-byte id, so no record has a row's value.
    private static func protectionValue(name: String, value: Data, anchor: RollbackAnchor) -> ItemSetDigest {
        anchor.value { feed in
            protectionDomain.withUnsafeBytes { feed($0) }
            var name = name
            name.withUTF8 { feed(UnsafeRawBufferPointer($0)) }
            value.withUnsafeBytes { feed($0) }
        }
    }

    private static let protectionDomain = Array("protection".utf8)

    /// The sum of the protection records' values on `database` (zero without the table).
    private func protectionDigest(_ anchor: RollbackAnchor, on database: Database) throws -> ItemSetDigest {
        let exists = try database.cachedStatement("SELECT 1 FROM sqlite_master WHERE type='table' AND name='protection'")
        let hasTable = try exists.step()
        exists.reset()
        guard hasTable else { return .zero }
        let statement = try database.cachedStatement("SELECT name, value FROM protection")
        defer { statement.reset() }
        var digest = ItemSetDigest.zero
        while try statement.step() {
            digest.add(Self.protectionValue(name: statement.string(at: 0) ?? "", value: statement.data(at: 1), anchor: anchor))
        }
        return digest
    }

    /// Whether this write counts the protection records in the digest (read under the
    /// write lock at the start of each write: a process that opened the keychain before
    /// another one added the records follows at its next write).
    private var countsProtection = false

    /// Writes a protection record inside the current write transaction, with the anchored
    /// digest following (its old value removed, the new one added).
    func setProtection(_ name: String, _ value: Data) throws {
        protectionChanged = true
        try noteProtectionRemoval(name)
        let statement = try database.cachedStatement("INSERT OR REPLACE INTO protection(name, value) VALUES (?, ?)")
        statement.bind(name, at: 1)
        statement.bind(value, at: 2)
        try statement.run()
        if let anchor, countsProtection { added.add(Self.protectionValue(name: name, value: value, anchor: anchor)) }
    }

    /// Removes a protection record inside the current write transaction (see
    /// ``setProtection(_:_:)``).
    func removeProtection(_ name: String) throws {
        protectionChanged = true
        try noteProtectionRemoval(name)
        let statement = try database.cachedStatement("DELETE FROM protection WHERE name = ?")
        statement.bind(name, at: 1)
        try statement.run()
    }

    private func noteProtectionRemoval(_ name: String) throws {
        guard let anchor, countsProtection else { return }
        let statement = try database.cachedStatement("SELECT value FROM protection WHERE name = ?")
        statement.bind(name, at: 1)
        defer { statement.reset() }
        if try statement.step() { removed.add(Self.protectionValue(name: name, value: statement.data(at: 0), anchor: anchor)) }
    }

    /// Checks the database as `database` (another connection to the same file: the key
    /// hierarchy's) sees it now, in the read transaction the caller has open there: every
    /// row's and protection record's value recomputed must give the stored digest, and the
    /// anchor must accept the stored state. The key hierarchy calls it when the protection
    /// records it reads changed, so a record planted or put back while a process has the
    /// keychain open is refused there too, not only at the next open.
    /// - Parameter anchor: a copy of this database's anchor for that connection's thread
    ///   (``RollbackAnchor/copy()``).
    /// - Returns: ``AnchorMatch/matches``; ``AnchorMatch/differs`` when the rows and records
    ///   do not give the stored digest (or there is no state); ``AnchorMatch/notAccepted``
    ///   when the anchor does not accept the state read (the caller tries again: another
    ///   process may have committed since this read transaction began, or be half-way
    ///   through writing the anchor).
    func matchesAnchor(on database: Database, anchor: RollbackAnchor) throws -> AnchorMatch {
        let scope = try Self.metaValue(Self.anchorScopeKey, on: database)
        guard let stateValue = try Self.metaValue(Self.anchorStateKey, on: database),
            let state = ItemSetState(encoded: stateValue)
        else { return .differs }
        var digest = try Self.itemDigest(anchor, on: database)
        if scope != nil { digest.add(try protectionDigest(anchor, on: database)) }
        guard digest == state.digest else { return .differs }
        guard let contents = try? anchor.read(), contents.keychainID.hasSameBytes(as: keychainID), contents.accepts(state)
        else { return .notAccepted }
        return .matches
    }

    /// What ``matchesAnchor(on:anchor:)`` found.
    enum AnchorMatch {
        case matches, differs, notAccepted
    }

    private static func metaValue(_ key: String, on database: Database) throws -> Data? {
        let statement = try database.cachedStatement("SELECT value FROM meta WHERE key = ?")
        statement.bind(key, at: 1)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.data(at: 0)
    }

    /// The database files as ``VerificationRecord/DatabaseFiles/current(databasePath:)``
    /// finds them, when the file the path names is the one this connection reads; `nil`
    /// otherwise (the record then neither vouches nor is written). A path only names a file:
    /// a directory renamed after SQLite opened the database changes no file's change time, so
    /// the path could name the checked file while SQLite reads another, or the other way round.
    private func readDatabaseFiles() -> VerificationRecord.DatabaseFiles? {
        guard VerificationRecord.fileSystemKeepsChangeTimes(databasePath: database.path),
            let files = VerificationRecord.DatabaseFiles.current(databasePath: database.path),
            let opened = database.openedFileIdentity, opened.device == files.device, opened.inode == files.inode
        else { return nil }
        return files
    }

    /// Before a read: the database's generation against the anchor's (one indexed read
    /// and a `stat`; the file is re-read only when it was replaced). A mismatch is judged
    /// again under the write lock, where no writer is half-way.
    /// - Throws: errSecDecode when the database was rolled back (here: replaced in place by
    ///   an older copy while open).
    func checkBeforeRead() throws {
        guard let anchor else { return }
        if let state = try storedState(), let contents = try? anchor.read(), contents.accepts(state),
            contents.keychainID.hasSameBytes(as: keychainID)
        {
            return
        }
        try database.writeTransaction {
            _ = try check(state: storedState(), contents: anchor.read(), anchor: anchor)
        }
    }

    /// The anchor file as this connection last authenticated it (read connections only).
    private var anchorSnapshot: RollbackAnchor.Snapshot?
    /// The database state this connection last found the anchor to accept, and the data
    /// version of the read transaction it was read in (read connections only).
    private var verifiedState: (dataVersion: UInt32, state: ItemSetState)?

    /// This connection's data version (`SQLITE_FCNTL_DATA_VERSION`): it changes whenever a
    /// read transaction of this connection starts on a database that differs from the one
    /// its previous transaction saw (a commit of any connection, in any process, or the
    /// file changed under SQLite's locks), and stays the same otherwise. `nil` when SQLite
    /// does not say.
    var dataVersion: UInt32? {
        var version: UInt32 = 0
        let code = withUnsafeMutablePointer(to: &version) {
            sqlite3_file_control(database.handle, "main", SQLITE_FCNTL_DATA_VERSION, $0)
        }
        return code == SQLITE_OK ? version : nil
    }

    /// The WAL-index header of this connection's database as SQLite's shared memory holds
    /// it now (both copies), or `nil` when it cannot be read consistently (not in WAL mode,
    /// the shared memory not mapped, a writer half-way through updating it). Every commit
    /// of any connection, in any process, changes it (its change counter, frame count and
    /// checksums), and so do a checkpoint that restarts the WAL and a WAL reset: SQLite
    /// keeps a connection's page cache across transactions by the same comparison.
    var walIndexHeader: WALIndexHeader? {
        var header = WALIndexHeader()
        let read = withUnsafeMutableBytes(of: &header.words) { bytes in
            keysmith_wal_index_header(database.handle, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return read == 1 ? header : nil
    }

    /// The write epoch of this process's connections (``RollbackAnchor/writeEpoch``), or
    /// `nil` without an anchor.
    var writeEpoch: UInt64? { anchor?.writeEpoch.load(ordering: .sequentiallyConsistent) }

    /// The data version at which this read connection last found the database's state
    /// accepted by the anchor (``stateMatchesAnchor(afterReading:)``).
    var verifiedDataVersion: UInt32? { verifiedState?.dataVersion }

    /// For a read answered without a read transaction, from rows this connection read at
    /// data version `version` when nothing has been committed since (the caller compared
    /// the WAL-index header): whether the anchor file still accepts the state that
    /// version was found in. The anchor file is checked as on every read.
    func stateMatchesAnchor(unchangedSince version: UInt32) -> Bool {
        guard let anchor else { return true }
        if anchorSnapshot.map(anchor.isUnchanged) != true {
            anchorSnapshot = nil
            guard let fresh = try? anchor.snapshot() else { return false }
            anchorSnapshot = fresh
        }
        guard let contents = anchorSnapshot?.contents, contents.keychainID.hasSameBytes(as: keychainID),
            let verifiedState, verifiedState.dataVersion == version
        else { return false }
        return contents.accepts(verifiedState.state)
    }

    /// After a read on a read connection: whether the database it read was in a state the
    /// anchor accepts. `false` means the state has to be judged under the write lock
    /// (``checkBeforeRead()`` on the write connection): a write half-way in another
    /// process, or a database rolled back.
    ///
    /// - Parameter afterReading: the read's last statement ran on this connection just
    ///   before (and nothing since): the state it saw is the one checked.
    ///
    /// The anchor file is checked on every call: the path must still name the file this
    /// connection authenticated, with the same bytes (``RollbackAnchor/isUnchanged(_:)``),
    /// or it is read and authenticated afresh. The database's state is read from `meta`
    /// only when the database changed since this connection last read it: when the read
    /// transaction that just ended has the data version of the one the state was read in,
    /// no commit came in between, so the database is still in that state.
    func stateMatchesAnchor(afterReading: Bool) throws -> Bool {
        guard let anchor else { return true }
        if anchorSnapshot.map(anchor.isUnchanged) != true {
            anchorSnapshot = nil
            // A failed read may be a write seen half-way: judged under the lock.
            guard let fresh = try? anchor.snapshot() else { return false }
            anchorSnapshot = fresh
        }
        guard let contents = anchorSnapshot?.contents, contents.keychainID.hasSameBytes(as: keychainID) else { return false }
        let version = dataVersion
        if afterReading, let version, let verifiedState, verifiedState.dataVersion == version {
            return contents.accepts(verifiedState.state)
        }
        verifiedState = nil
        guard let state = try storedState(), contents.accepts(state) else { return false }
        // The state read above must be the one the read saw: no commit in between.
        guard let stateVersion = dataVersion, !afterReading || stateVersion == version else { return false }
        verifiedState = (stateVersion, state)
        return true
    }

    /// Judges the database's state against the anchor's contents; returns the state a
    /// write starts from.
    private func check(
        state: ItemSetState?, contents: RollbackAnchor.Contents?, anchor: RollbackAnchor, fullDigest full: ItemSetDigest? = nil
    ) throws -> ItemSetState {
        guard let contents else {
            // No anchor: a keychain that was never anchored is anchored as it is.
            if state == nil { return ItemSetState(generation: 0, digest: try full ?? fullDigest(anchor)) }
            throw anchor.rolledBack("its anchor file \(RollbackAnchor.fileName) is missing (removed, or not restored together with the database).")
        }
        guard contents.keychainID.hasSameBytes(as: keychainID) else {
            // A new, empty database where a removed keychain's anchor remains.
            if state == nil, try rowCount() == 0 { return ItemSetState(generation: 0, digest: .zero) }
            throw anchor.rolledBack("the anchor file \(RollbackAnchor.fileName) belongs to another keychain.")
        }
        let current = try state ?? ItemSetState(generation: 0, digest: full ?? fullDigest(anchor))
        if let full, full != current.digest {
            throw anchor.rolledBack(
                "its items differ from what Keysmith last wrote (an item's old data written back, an item deleted or added).")
        }
        if contents.accepts(current) { return current }
        if current.generation < contents.newestGeneration {
            throw anchor.rolledBack(
                "it is an older copy (write \(current.generation); the anchor records write \(contents.newestGeneration)).")
        }
        throw anchor.rolledBack(
            "it does not match its anchor (write \(current.generation); the anchor records write \(contents.newestGeneration)).")
    }

    /// After a commit, under the write lock again (without waiting: a writer holding it
    /// replaces the anchor itself): the anchor then accepts only the committed state.
    private func finalize(_ anchor: RollbackAnchor, from current: ItemSetState, to next: ItemSetState) {
        database.setBusyTimeout(milliseconds: 0)
        defer { database.setBusyTimeout(milliseconds: Self.busyTimeoutMilliseconds) }
        guard (try? database.execute("BEGIN IMMEDIATE")) != nil else { return }
        defer { try? database.execute("COMMIT") }
        guard let stored = try? storedState(), stored == next,
            let contents = try? anchor.read(), contents.committed == current, contents.pending == next
        else { return }
        try? anchor.write(.init(keychainID: keychainID, committed: next, pending: nil, counter: contents.counter), durable: false)
    }

    private func storedState() throws -> ItemSetState? {
        guard let value = try metaValue(Self.anchorStateKey) else { return nil }
        guard let state = ItemSetState(encoded: value) else {
            throw KeychainFailure(errSecDecode, "The keychain database at \(database.path) has a damaged state record.",
                                  recovery: "Restore keychain.db and keychain.anchor together from a backup.")
        }
        return state
    }

    private func rowCount() throws -> Int64 {
        let statement = try database.cachedStatement("SELECT count(*) FROM items")
        defer { statement.reset() }
        return try statement.step() ? statement.int64(at: 0) : 0
    }

    private static let valueColumns = "id, class, pk, h1, h2, agrp, sync, pdmn, ref, nonce, ciphertext, h3"

    /// The value of the row the statement is on (columns as in ``valueColumns``), read in
    /// place. The label hash follows the other columns when the row has one, so a row
    /// written before it (NULL) keeps the value it was anchored with.
    private static func value(of statement: Statement, anchor: RollbackAnchor) -> ItemSetDigest {
        anchor.value { feed in
            for column in Int32(0)..<11 {
                if column == 0 || column == 6 {
                    withUnsafeBytes(of: statement.int64(at: column).littleEndian) { feed($0) }
                } else {
                    statement.withBytes(at: column) { feed($0) }
                }
            }
            if !statement.isNull(at: 11) { statement.withBytes(at: 11) { feed($0) } }
        }
    }

    /// The sum of every row's value, recomputed, and of every protection record's once the
    /// anchor covers them (``anchorScopeKey``).
    private func fullDigest(_ anchor: RollbackAnchor) throws -> ItemSetDigest {
        var digest = try Self.itemDigest(anchor, on: database)
        if try metaValue(Self.anchorScopeKey) != nil { digest.add(try protectionDigest(anchor, on: database)) }
        return digest
    }

    /// The sum of every item row's value on `database`.
    private static func itemDigest(_ anchor: RollbackAnchor, on database: Database) throws -> ItemSetDigest {
        let statement = try database.cachedStatement("SELECT \(Self.valueColumns) FROM items")
        defer { statement.reset() }
        var digest = ItemSetDigest.zero
        while try statement.step() { digest.add(value(of: statement, anchor: anchor)) }
        return digest
    }

    /// Adds the stored row `id` to the values the current write removes.
    private func noteRemoval(id: Int64) throws {
        guard let anchor else { return }
        let statement = try database.cachedStatement("SELECT \(Self.valueColumns) FROM items WHERE id = ?")
        statement.bind(id, at: 1)
        defer { statement.reset() }
        if try statement.step() { removed.add(Self.value(of: statement, anchor: anchor)) }
    }

    private func noteAddition(_ row: StoredRow, id: Int64, firstName: Data, secondName: Data, label: Data?) {
        guard let anchor else { return }
        added.add(anchor.value { feed in
            withUnsafeBytes(of: id.littleEndian) { feed($0) }
            var itemClass = row.itemClass
            itemClass.withUTF8 { feed(UnsafeRawBufferPointer($0)) }
            for data in [row.primaryKeyHash, firstName, secondName, row.accessGroupHash] { data.withUnsafeBytes { feed($0) } }
            withUnsafeBytes(of: Int64(row.synchronizable ? 1 : 0).littleEndian) { feed($0) }
            var protection = row.protection
            protection.withUTF8 { feed(UnsafeRawBufferPointer($0)) }
            for data in [row.reference, row.nonce, row.ciphertext] { data.withUnsafeBytes { feed($0) } }
            label?.withUnsafeBytes { feed($0) }
        })
    }

    /// `wal_checkpoint(TRUNCATE)` without waiting: when another connection is reading or
    /// writing at this moment, SQLite checkpoints what it can and the rest leaves the WAL
    /// at the next checkpoint (the WAL restarts from its start and is truncated then, as
    /// `journal_size_limit=0` asks). The write has committed already: a failure here is
    /// not the write's failure.
    private func checkpointDiscardingOldVersions() {
        database.setBusyTimeout(milliseconds: 0)
        _ = sqlite3_wal_checkpoint_v2(database.handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        database.setBusyTimeout(milliseconds: Self.busyTimeoutMilliseconds)
    }

    // MARK: Rows

    static let rowColumns = "id, class, pk, agrp, sync, pdmn, ref, nonce, ciphertext"

    /// Inserts a row; a primary-key collision throws errSecDuplicateItem.
    func insert(_ row: StoredRow, firstName: Data, secondName: Data, label: Data) throws -> Int64 {
        let statement = try database.cachedStatement(
            "INSERT INTO items(class, pk, h1, h2, agrp, sync, pdmn, nonce, ciphertext, ref, h3) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
        bindContent(of: row, firstName: firstName, secondName: secondName, to: statement)
        statement.bind(row.reference, at: 10)
        statement.bind(label, at: 11)
        try statement.run()
        let id = database.lastInsertedRowID
        noteAddition(row, id: id, firstName: firstName, secondName: secondName, label: label)
        return id
    }

    /// Rewrites a row in place (same id and reference); a primary-key collision throws.
    /// `label` is the keyed hash of the sealed label; `nil` (a rewrite that does not open
    /// the item, such as a key-format upgrade) leaves the row without one, a candidate of
    /// every label lookup.
    func update(_ row: StoredRow, firstName: Data, secondName: Data, label: Data? = nil) throws {
        try noteRemoval(id: row.id)
        let statement = try database.cachedStatement(
            "UPDATE items SET class=?, pk=?, h1=?, h2=?, agrp=?, sync=?, pdmn=?, nonce=?, ciphertext=?, h3=? WHERE id=?")
        bindContent(of: row, firstName: firstName, secondName: secondName, to: statement)
        if let label { statement.bind(label, at: 10) } else { statement.bindNull(at: 10) }
        statement.bind(row.id, at: 11)
        try statement.run()
        noteAddition(row, id: row.id, firstName: firstName, secondName: secondName, label: label)
    }

    /// Binds parameters 1 to 9, in the column order insert and update share.
    private func bindContent(of row: StoredRow, firstName: Data, secondName: Data, to statement: Statement) {
        statement.bind(row.itemClass, at: 1)
        statement.bind(row.primaryKeyHash, at: 2)
        statement.bind(firstName, at: 3)
        statement.bind(secondName, at: 4)
        statement.bind(row.accessGroupHash, at: 5)
        statement.bind(row.synchronizable ? 1 : 0, at: 6)
        statement.bind(row.protection, at: 7)
        statement.bind(row.nonce, at: 8)
        statement.bind(row.ciphertext, at: 9)
    }

    func delete(id: Int64) throws {
        try noteRemoval(id: id)
        let statement = try database.cachedStatement("DELETE FROM items WHERE id=?")
        statement.bind(id, at: 1)
        try statement.run()
    }
}
#endif
