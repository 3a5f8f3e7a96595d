#if !canImport(Security)
import CSQLite
import Foundation

/// A prepared SQLite statement; finalized when the object goes away.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    private unowned let database: Database

    init(database: Database, sql: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v2(database.handle, sql, -1, &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw database.lastError(code: code, sql: sql)
        }
        self.handle = handle
        self.sql = sql
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and clears its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Binding (1-based indexes, as SQLite counts)

    func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ value: String, at index: Int32) {
        sqlite3_bind_text(handle, index, value, -1, keysmith_sqlite_transient())
    }

    func bind(_ value: Data, at index: Int32) {
        value.withUnsafeBytes { buffer in
            // An empty Data has no base address; SQLite needs a non-NULL pointer for a
            // zero-length blob (NULL would store SQL NULL).
            let base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
            _ = sqlite3_bind_blob(handle, index, base, Int32(buffer.count), keysmith_sqlite_transient())
        }
    }

    func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    // MARK: Stepping

    /// Advances to the next row. Returns `false` when the statement is done.
    /// - Throws: ``DatabaseError`` for any failure (including SQLITE_BUSY after the busy
    ///   timeout ran out).
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.lastError(code: code, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        while try step() {}
    }

    // MARK: Reading columns (0-based, as SQLite counts)

    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func data(at column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// Calls `body` with the column's bytes in place (valid only during the call).
    func withBytes<Result>(at column: Int32, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    func string(at column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: text)
    }
}
#endif
