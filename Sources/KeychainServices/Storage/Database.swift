#if !canImport(Security)
import CSQLite
import Foundation

/// One SQLite connection. Not thread-safe by itself: ``KeychainStorage`` serializes all
/// use behind a lock. The connection is closed when the object goes away.
final class Database {
    /// The raw connection handle.
    let handle: OpaquePointer
    /// Where the database lives.
    let path: String
    private var statementCache: [String: Statement] = [:]

    /// Opens (creating when asked) the database at `path`.
    /// - Throws: ``DatabaseError`` when SQLite cannot open the file.
    init(path: String, create: Bool) throws {
        _ = Self.processConfiguration
        var handle: OpaquePointer?
        // NOFOLLOW: the engine checked the file (not a link, ours, private) and SQLite
        // reopens it by name, so a link put there in between must not be followed.
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        if create { flags |= SQLITE_OPEN_CREATE }
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) }
            if let handle { sqlite3_close_v2(handle) }
            throw DatabaseError(resultCode: code, message: message, sql: nil)
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
    }

    /// Process-wide SQLite settings, made once before the first connection opens: no global
    /// allocation statistics (the keychain never reads them, and keeping them serializes
    /// every allocation of every thread's connection on one mutex). Ignored, harmlessly, if
    /// something else in the process used SQLite first.
    private static let processConfiguration: Void = {
        _ = keysmith_sqlite_disable_memory_statistics()
    }()

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// The device and inode of the database file this connection reads: the file SQLite
    /// opened, which the path need not name any more (the file or a directory above it
    /// renamed since). `nil` when SQLite does not say.
    var openedFileIdentity: (device: UInt64, inode: UInt64)? {
        let descriptor = keysmith_sqlite_main_file_descriptor(handle)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Writes the database file's changed pages to disk (`fdatasync` of the file this
    /// connection reads). A page written back is mapped read-only again in every process,
    /// so the next write to it through a shared mapping faults and sets the file's change
    /// time. Returns whether it was done.
    func writeBackFile() -> Bool {
        let descriptor = keysmith_sqlite_main_file_descriptor(handle)
        return descriptor >= 0 && fdatasync(descriptor) == 0
    }

    /// Sets how long a statement waits for another connection's lock before failing.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Runs one or more statements that take no arguments and return no rows.
    /// - Throws: ``DatabaseError``.
    func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if code != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) }
            sqlite3_free(errorMessage)
            throw DatabaseError(resultCode: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// A prepared statement for `sql`, reused across calls (reset and cleared first).
    /// - Throws: ``DatabaseError`` when the SQL does not compile.
    func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try Statement(database: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// The error SQLite reports for the last failed call on this connection.
    func lastError(code: Int32, sql: String?) -> DatabaseError {
        DatabaseError(
            resultCode: sqlite3_extended_errcode(handle),
            message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// The rowid of the last inserted row.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`: the write lock is taken up front (so
    /// two writers never deadlock in the middle), and any error rolls the whole transaction
    /// back and is rethrown.
    /// - Throws: ``DatabaseError`` or what `body` throws.
    func writeTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }
}
#endif
