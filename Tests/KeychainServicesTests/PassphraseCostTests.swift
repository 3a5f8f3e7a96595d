// The Argon2id cost (docs/SECURITY.md: 3 passes over 128 MiB) of what a real program makes:
// a keychain passphrase, an export archive and an application password. Each is made by a
// separate process (keychain-workload) that never sets the tests' fast setting, and read
// back from what it stored: the protection record, the archive's header, the item's sealed
// envelope.
import CSQLite
import Foundation
@testable import KeychainServices
import Testing

struct PassphraseCostTests {
    static let documentedPasses: UInt64 = 3
    static let documentedMemory: UInt64 = 128 << 20

    static func expectDocumentedCost(_ parameters: PassphraseKey?, _ what: Comment) {
        #expect(parameters?.opsLimit == documentedPasses, what)
        #expect(parameters?.memLimit == documentedMemory, what)
    }

    /// The value of row `name` of the keychain's `protection` table.
    static func protectionRecord(_ keychain: TemporaryKeychain, _ name: String) throws -> Data {
        var handle: OpaquePointer?
        let path = keychain.directory.appendingPathComponent("keychain.db").path
        defer { sqlite3_close_v2(handle) }
        try #require(sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, "cannot open \(path)")
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        try #require(sqlite3_prepare_v2(handle, "SELECT value FROM protection WHERE name = ?", -1, &statement, nil) == SQLITE_OK)
        sqlite3_bind_text(statement, 1, name, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        try #require(sqlite3_step(statement) == SQLITE_ROW, "no \(name) record")
        return Data(bytes: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0)))
    }

    @Test func aKeychainPassphraseAndAnArchiveMadeByAProgramCarryTheDocumentedCost() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let archive = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-cost-\(UUID().uuidString).archive")
        defer { try? FileManager.default.removeItem(at: archive) }
        let run = try runWorkload(["real-cost", archive.path, "1"], keychain: keychain)
        try #require(run.status == 0, "\(run.errors)")

        Self.expectDocumentedCost(PassphraseKey(record: try Self.protectionRecord(keychain, "passphrase")), "the keychain passphrase")

        // KSARCHV1, then the parameters as a passphrase record stores them (without its version byte).
        let bytes = try Data(contentsOf: archive)
        let magic = KeychainArchive.magic
        try #require(bytes.count > magic.count + 32 && bytes.prefix(magic.count) == magic)
        let header = bytes.subdata(in: magic.count..<(magic.count + 32))
        Self.expectDocumentedCost(PassphraseKey(record: Data([1]) + header), "the export archive")
    }

    @Test func anApplicationPasswordItemMadeByAProgramCarriesTheDocumentedCost() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let run = try runWorkload(["application-password", "paid", "1"], keychain: keychain)
        try #require(run.status == 0, "\(run.errors)")

        // The item's row opened with the keychain's own keys (no passphrase: every class is
        // open), as the engine opens it, down to the envelope its access control sealed.
        var handle: OpaquePointer?
        let path = keychain.directory.appendingPathComponent("keychain.db").path
        defer { sqlite3_close_v2(handle) }
        try #require(sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        try #require(sqlite3_prepare_v2(handle, "SELECT class, pk, pdmn, ref, nonce, ciphertext FROM items", -1, &statement, nil) == SQLITE_OK)
        try #require(sqlite3_step(statement) == SQLITE_ROW, "the item is stored")
        func blob(_ column: Int32) -> Data {
            Data(bytes: sqlite3_column_blob(statement, column), count: Int(sqlite3_column_bytes(statement, column)))
        }
        let itemClass = String(cString: sqlite3_column_text(statement, 0))
        let label = String(cString: sqlite3_column_text(statement, 2))
        let (primaryKey, reference, nonce, ciphertext) = (blob(1), blob(3), blob(4), blob(5))
        #expect(sqlite3_step(statement) == SQLITE_DONE, "one item")

        let engine = try KeychainEngine(directory: keychain.directory)
        let protection = try #require(try engine.keys.protection(forLabel: label))
        let key = try engine.keys.itemKey(for: protection)
        let associated = KeyHierarchy.associatedData(
            prefix: KeyHierarchy.associatedDataPrefix(keychainID: engine.keys.keychainID), itemClass: itemClass,
            reference: reference, primaryKey: primaryKey, protection: label)
        let opened = try #require(
            ciphertext.withUnsafeBytes { c in
                nonce.withUnsafeBytes { n in associated.withUnsafeBytes { Sodium.open(c, nonce: n, associatedData: $0, key: key) } }
            }, "the row opens with the keychain's key")
        let decoded = try ItemCodec.decode(opened)
        #expect(decoded.sealedForAccessControl)
        let envelope = try AccessControlEnvelope(decoding: try #require(decoded.secret))
        Self.expectDocumentedCost(envelope.passwordParameters, "the application password")
    }
}
