#if !canImport(Security)
import Foundation

/// The protection records of a keychain, as loaded from its `protection` table.
struct ProtectionRecords: Equatable {
    /// The key format (`nil`: a keychain of the first format, not yet upgraded).
    var format: UInt8?
    /// The passphrase's Argon2id parameters, when the keychain has a passphrase.
    var passphrase: PassphraseKey?
    /// The wrapped class keys.
    var wrapped: [KeyHierarchy.KeyClass: Data] = [:]
}

/// The key hierarchy's own connection to the keychain database: the `protection` table
/// (`name TEXT PRIMARY KEY, value BLOB`) with the key format, the passphrase parameters
/// and the wrapped class keys, and the few item-row operations that upgrades and
/// passphrase removal need. Used with ``KeyHierarchy``'s lock held.
final class ProtectionStore {
    let database: Database

    init(path: String) throws {
        do {
            database = try Database(path: path, create: false)
            database.setBusyTimeout(milliseconds: KeychainDatabase.busyTimeoutMilliseconds)
        } catch let error as DatabaseError {
            throw KeychainFailure(error.osStatus, "Cannot open the keychain database \(path): \(error.message ?? "SQLite error \(error.resultCode)").")
        }
    }

    /// Creates the table (inside the caller's write transaction).
    func createTable() throws {
        try database.execute("CREATE TABLE IF NOT EXISTS protection (name TEXT PRIMARY KEY, value BLOB NOT NULL)")
    }

    /// SQLite's `data_version`: changes when another connection commits.
    func dataVersion() throws -> Int64 {
        let statement = try database.cachedStatement("PRAGMA data_version")
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int64(at: 0)
    }

    /// Reads every record (an empty set when the table does not exist yet).
    func load() throws -> ProtectionRecords {
        let exists = try database.cachedStatement("SELECT 1 FROM sqlite_master WHERE type='table' AND name='protection'")
        defer { exists.reset() }
        guard try exists.step() else { return ProtectionRecords() }
        exists.reset()
        var records = ProtectionRecords()
        let statement = try database.cachedStatement("SELECT name, value FROM protection")
        defer { statement.reset() }
        while try statement.step() {
            let value = statement.data(at: 1)
            switch statement.string(at: 0) ?? "" {
            case "format": records.format = value.first
            case "passphrase":
                guard let parameters = PassphraseKey(record: value) else {
                    throw KeychainFailure(errSecDecode, "The keychain's passphrase record is damaged.", recovery: "Restore the keychain from a backup.")
                }
                records.passphrase = parameters
            case "key.a": records.wrapped[.a] = value
            case "key.c": records.wrapped[.c] = value
            case "key.d": records.wrapped[.d] = value
            default: break
            }
        }
        return records
    }

    func set(_ name: String, _ value: Data) throws {
        let statement = try database.cachedStatement("INSERT OR REPLACE INTO protection(name, value) VALUES (?, ?)")
        statement.bind(name, at: 1)
        statement.bind(value, at: 2)
        try statement.run()
    }

    func remove(_ name: String) throws {
        let statement = try database.cachedStatement("DELETE FROM protection WHERE name = ?")
        statement.bind(name, at: 1)
        try statement.run()
    }

    /// One item row, as the upgrade reads it.
    struct ItemRow {
        var id: Int64
        var itemClass: String
        var primaryKey: Data
        var label: String
        var reference: Data
        var nonce: Data
        var ciphertext: Data
    }

    func itemRows() throws -> [ItemRow] {
        let statement = try database.cachedStatement("SELECT id, class, pk, pdmn, ref, nonce, ciphertext FROM items ORDER BY id")
        defer { statement.reset() }
        var rows: [ItemRow] = []
        while try statement.step() {
            rows.append(ItemRow(
                id: statement.int64(at: 0), itemClass: statement.string(at: 1) ?? "", primaryKey: statement.data(at: 2),
                label: statement.string(at: 3) ?? "", reference: statement.data(at: 4), nonce: statement.data(at: 5),
                ciphertext: statement.data(at: 6)))
        }
        return rows
    }

    func rewriteRow(id: Int64, label: String, nonce: Data, ciphertext: Data) throws {
        let statement = try database.cachedStatement("UPDATE items SET pdmn = ?, nonce = ?, ciphertext = ? WHERE id = ?")
        statement.bind(label, at: 1)
        statement.bind(nonce, at: 2)
        statement.bind(ciphertext, at: 3)
        statement.bind(id, at: 4)
        try statement.run()
    }

    /// Deletes the rows whose label is `prefix` or `prefix@…` (every machine's).
    func deleteItems(labelPrefix prefix: String) throws {
        let statement = try database.cachedStatement("DELETE FROM items WHERE pdmn = ? OR substr(pdmn, 1, ?) = ?")
        statement.bind(prefix, at: 1)
        statement.bind(Int64(prefix.utf8.count + 1), at: 2)
        statement.bind(prefix + "@", at: 3)
        try statement.run()
    }

    func countsByLabel() throws -> [(String, Int)] {
        let statement = try database.cachedStatement("SELECT pdmn, count(*) FROM items GROUP BY pdmn")
        defer { statement.reset() }
        var result: [(String, Int)] = []
        while try statement.step() { result.append((statement.string(at: 0) ?? "", Int(statement.int64(at: 1)))) }
        return result
    }
}
#endif
