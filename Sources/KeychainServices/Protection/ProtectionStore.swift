#if !canImport(Security)
import Foundation

/// The protection records of a keychain, as loaded from its `protection` table.
struct ProtectionRecords: Equatable {
    /// The key format (`nil`: a keychain of the first format, not yet upgraded).
    var format: UInt8?
    /// The passphrase's Argon2id parameters, when the keychain has a passphrase.
    var passphrase: PassphraseKey?
    /// The wrapped class keys.
    var wrapped = WrappedClassKeys()
    /// The access-control key pairs (public key and wrapped private key), once an item
    /// with access control was stored or a passphrase was set.
    var accessControl: [AccessControlKeys.Slot: Data] = [:]
}

/// The wrapped key of each class, by class. A table, not a dictionary: the first
/// dictionary of a new key type costs the Swift runtime a scan of every protocol
/// conformance in the program, once in each process, so at every run of a tool that
/// opens a keychain. (``ProtectionRecords/accessControl`` stays a dictionary: it is
/// filled only once an item with access control was stored or a passphrase was set.)
struct WrappedClassKeys: Equatable {
    private var keys = [Data?](repeating: nil, count: KeyHierarchy.KeyClass.allCases.count)

    /// The wrapped key of `keyClass`, or `nil` when the keychain has none.
    subscript(keyClass: KeyHierarchy.KeyClass) -> Data? {
        get { keys[keyClass.index] }
        set { keys[keyClass.index] = newValue }
    }
}

/// The `protection` table (`name TEXT PRIMARY KEY, value BLOB`) with the key format, the
/// passphrase parameters and the wrapped class keys, and the item-row reads that upgrades
/// and passphrase changes need; either on the key hierarchy's own read connection (used
/// with its lock held) or on the engine's connection inside its write transaction. Rows and
/// records are only ever written through the engine's ``KeychainDatabase``, so that the
/// rollback anchor's digest follows every write.
final class ProtectionStore {
    let database: Database
    /// The engine's database, through which records are written (`nil`: read only).
    private let storage: KeychainDatabase?

    /// Works on the engine's connection inside its write transaction.
    init(storage: KeychainDatabase) {
        self.storage = storage
        self.database = storage.database
    }

    init(path: String) throws {
        storage = nil
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
            case AccessControlKeys.Slot.biometry.recordName: records.accessControl[.biometry] = value
            case AccessControlKeys.Slot.passcode.recordName: records.accessControl[.passcode] = value
            default: break
            }
        }
        return records
    }

    /// Writes a record (inside the engine's write transaction).
    func set(_ name: String, _ value: Data) throws {
        guard let storage else { preconditionFailure("protection records are written through the engine's database") }
        try storage.setProtection(name, value)
    }

    /// Removes a record (inside the engine's write transaction).
    func remove(_ name: String) throws {
        guard let storage else { preconditionFailure("protection records are written through the engine's database") }
        try storage.removeProtection(name)
    }

    /// One item row with its lookup hashes, as an upgrade or a passphrase change reads it.
    struct ItemRow {
        var row: StoredRow
        var firstName: Data
        var secondName: Data
        /// The label hash (`nil`: a row written before there was one).
        var label: Data?
    }

    /// Every item row with its lookup hashes.
    func itemRows() throws -> [ItemRow] {
        let statement = try database.cachedStatement(
            "SELECT id, class, pk, agrp, sync, pdmn, ref, nonce, ciphertext, h1, h2, h3 FROM items ORDER BY id")
        defer { statement.reset() }
        var rows: [ItemRow] = []
        while try statement.step() {
            let row = StoredRow(
                id: statement.int64(at: 0), itemClass: statement.string(at: 1) ?? "", primaryKeyHash: statement.data(at: 2),
                accessGroupHash: statement.data(at: 3), synchronizable: statement.int64(at: 4) != 0,
                protection: statement.string(at: 5) ?? "", reference: statement.data(at: 6), nonce: statement.data(at: 7),
                ciphertext: statement.data(at: 8))
            rows.append(ItemRow(
                row: row, firstName: statement.data(at: 9), secondName: statement.data(at: 10),
                label: statement.isNull(at: 11) ? nil : statement.data(at: 11)))
        }
        return rows
    }

    /// The ids of the rows whose label is `prefix` or `prefix@…` (every machine's).
    func itemIDs(labelPrefix prefix: String) throws -> [Int64] {
        let statement = try database.cachedStatement("SELECT id FROM items WHERE pdmn = ? OR substr(pdmn, 1, ?) = ?")
        statement.bind(prefix, at: 1)
        statement.bind(Int64(prefix.utf8.count + 1), at: 2)
        statement.bind(prefix + "@", at: 3)
        defer { statement.reset() }
        var ids: [Int64] = []
        while try statement.step() { ids.append(statement.int64(at: 0)) }
        return ids
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
