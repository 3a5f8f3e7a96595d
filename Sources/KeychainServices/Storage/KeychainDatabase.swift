#if !canImport(Security)
import CSQLite
import Foundation
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

/// The SQLite side of a keychain: file, schema, migrations, and row reads and writes.
///
/// ```
/// items(id INTEGER PRIMARY KEY, class, pk UNIQUE, h1, h2, agrp, sync, pdmn, ref UNIQUE,
///       nonce, ciphertext)         index (h1, h2), index (h2)
/// meta(key PRIMARY KEY, value)     keychain-id, key-check
/// ```
/// `h1`/`h2` are keyed hashes of the class's two lookup names (genp: service, account),
/// so equality lookups stay indexed while names are never stored in plaintext.
/// WAL journal, `synchronous=FULL` (an acknowledged write survives power loss), writes
/// in `BEGIN IMMEDIATE` with a busy timeout so processes sharing the file wait for each
/// other instead of failing.
final class KeychainDatabase {
    static let schemaVersion: Int64 = 1
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

    /// Sets up the connection and the schema, migrating an older one, and checks that
    /// `checkValue` (from the key file) belongs to this database.
    func prepare(checkValue: Data) throws {
        do {
            try database.execute("PRAGMA journal_mode=WAL")
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
                    if current < 1 { try createVersion1(checkValue: checkValue) }
                    try database.execute("PRAGMA user_version=\(Self.schemaVersion)")
                }
            }
            let storedCheck = try metaValue("key-check")
            guard let storedCheck, let id = try metaValue("keychain-id") else {
                throw KeychainFailure(errSecDecode, "The keychain database at \(database.path) lacks its identity record.",
                                      recovery: "The file is damaged; restore it from a backup.")
            }
            guard Sodium.constantTimeEqual(storedCheck, checkValue) else {
                throw KeychainFailure(
                    errSecDecode, "The key file does not belong to the keychain database at \(database.path).",
                    recovery: "Put back the key file that was created with this keychain (device.key in the same directory).")
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
    func writeTransaction<Result>(erasing: Bool, _ body: () throws -> Result) throws -> Result {
        let result = try database.writeTransaction(body)
        if erasing { checkpointDiscardingOldVersions() }
        return result
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
    func insert(_ row: StoredRow, firstName: Data, secondName: Data) throws -> Int64 {
        let statement = try database.cachedStatement(
            "INSERT INTO items(class, pk, h1, h2, agrp, sync, pdmn, nonce, ciphertext, ref) VALUES (?,?,?,?,?,?,?,?,?,?)")
        bindContent(of: row, firstName: firstName, secondName: secondName, to: statement)
        statement.bind(row.reference, at: 10)
        try statement.run()
        return database.lastInsertedRowID
    }

    /// Rewrites a row in place (same id and reference); a primary-key collision throws.
    func update(_ row: StoredRow, firstName: Data, secondName: Data) throws {
        let statement = try database.cachedStatement(
            "UPDATE items SET class=?, pk=?, h1=?, h2=?, agrp=?, sync=?, pdmn=?, nonce=?, ciphertext=? WHERE id=?")
        bindContent(of: row, firstName: firstName, secondName: secondName, to: statement)
        statement.bind(row.id, at: 10)
        try statement.run()
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
        let statement = try database.cachedStatement("DELETE FROM items WHERE id=?")
        statement.bind(id, at: 1)
        try statement.run()
    }
}
#endif
