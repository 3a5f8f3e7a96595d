// Integrity: rows edited or swapped in the database file, and damaged or misplaced key and
// database files, give a clear error for what is damaged, never wrong data, and lose
// nothing else.
import CSQLite
import Foundation
@testable import KeychainServices
import Testing

/// Direct access to a keychain's SQLite file, as an attacker or a disk error would have.
struct RawKeychainFile {
    let path: String

    init(_ keychain: TemporaryKeychain) {
        path = keychain.directory.appendingPathComponent("keychain.db").path
    }

    func execute(_ sql: String) {
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        sqlite3_busy_timeout(handle, 5000)
        #expect(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK, "\(sql)")
    }

    /// Flips the lowest bit of byte `offset` of the `ciphertext` of row `id`, read and written
    /// back as a blob (so the row always changes, whatever its bytes).
    func flipCiphertextByte(at offset: Int = 0, row id: Int64) {
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        sqlite3_busy_timeout(handle, 5000)
        var bytes: [UInt8] = []
        var select: OpaquePointer?
        sqlite3_prepare_v2(handle, "SELECT ciphertext FROM items WHERE id = ?", -1, &select, nil)
        sqlite3_bind_int64(select, 1, id)
        if sqlite3_step(select) == SQLITE_ROW, let blob = sqlite3_column_blob(select, 0) {
            bytes = Array(UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(select, 0))))
        }
        sqlite3_finalize(select)
        guard offset < bytes.count else {
            Issue.record("row \(id) has no ciphertext byte \(offset)")
            return
        }
        bytes[offset] ^= 0x01
        var update: OpaquePointer?
        sqlite3_prepare_v2(handle, "UPDATE items SET ciphertext = ? WHERE id = ?", -1, &update, nil)
        defer { sqlite3_finalize(update) }
        _ = bytes.withUnsafeBytes { sqlite3_bind_blob(update, 1, $0.baseAddress, Int32($0.count), keysmith_sqlite_transient()) }
        sqlite3_bind_int64(update, 2, id)
        #expect(sqlite3_step(update) == SQLITE_DONE)
        #expect(sqlite3_changes(handle) == 1)
    }

    func rowIDs() -> [Int64] {
        var handle: OpaquePointer?
        sqlite3_open(path, &handle)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "SELECT id FROM items ORDER BY id", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        var ids: [Int64] = []
        while sqlite3_step(statement) == SQLITE_ROW { ids.append(sqlite3_column_int64(statement, 0)) }
        return ids
    }

    func contains(_ needle: String) -> Bool {
        let files = [path, path + "-wal"]
        return files.contains { file in
            guard let bytes = FileManager.default.contents(atPath: file) else { return false }
            return bytes.range(of: Data(needle.utf8)) != nil
        }
    }
}

struct TamperTests {
    private func add(_ account: String, _ secret: String) {
        #expect(SecItemAdd(genp("com.example.tamper", account).with(kSecValueData, Data(secret.utf8)) as CFDictionary, nil) == errSecSuccess)
    }

    private func read(_ account: String) -> (OSStatus, Data?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(genp("com.example.tamper", account).with(kSecReturnData, true) as CFDictionary, &result)
        return (status, result as? Data)
    }

    @Test func namesAndSecretsAreNotStoredInPlaintext() {
        TemporaryKeychain.with { keychain in
            add("alice@example.com", "correct horse battery staple")
            let file = RawKeychainFile(keychain)
            #expect(!file.contains("alice@example.com"))
            #expect(!file.contains("com.example.tamper"))
            #expect(!file.contains("correct horse battery staple"))
            #expect(!file.contains("com.example.app"), "access group names are hashed too")
        }
    }

    @Test func flippedCiphertextByteFailsOnlyThatItem() {
        TemporaryKeychain.with { keychain in
            add("a", "secret-a")
            add("b", "secret-b")
            let file = RawKeychainFile(keychain)
            let ids = file.rowIDs()
            #expect(ids.count == 2)
            // Flip a bit of the first byte of item a's ciphertext.
            file.flipCiphertextByte(row: ids[0])
            let (status, data) = read("a")
            #expect(status == errSecDecode)
            #expect(data == nil)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("damaged") == true)
            #expect(read("b") == (errSecSuccess, Data("secret-b".utf8)), "other items stay readable")
        }
    }

    @Test func swappedCiphertextsNeverReturnTheOtherItemsData() {
        TemporaryKeychain.with { keychain in
            add("a", "secret-a")
            add("b", "secret-b")
            add("c", "secret-c")
            let file = RawKeychainFile(keychain)
            let ids = file.rowIDs()
            file.execute(
                """
                CREATE TEMP TABLE saved AS SELECT id, nonce, ciphertext FROM items;
                UPDATE items SET nonce = (SELECT nonce FROM saved WHERE id = \(ids[1])), ciphertext = (SELECT ciphertext FROM saved WHERE id = \(ids[1])) WHERE id = \(ids[0]);
                UPDATE items SET nonce = (SELECT nonce FROM saved WHERE id = \(ids[0])), ciphertext = (SELECT ciphertext FROM saved WHERE id = \(ids[0])) WHERE id = \(ids[1]);
                """)
            let (statusA, dataA) = read("a")
            let (statusB, dataB) = read("b")
            #expect(statusA == errSecDecode && dataA == nil)
            #expect(statusB == errSecDecode && dataB == nil)
            #expect(read("c") == (errSecSuccess, Data("secret-c".utf8)))
            // A broad query does not hand out any data while damage is among its matches.
            var all: CFTypeRef?
            let broad = [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                         kSecReturnData as String: true] as [String: Any]
            #expect(SecItemCopyMatching(broad as CFDictionary, &all) == errSecDecode)
            #expect(all == nil)
        }
    }

    @Test func swappedIndexColumnsNeverReturnTheWrongItem() {
        TemporaryKeychain.with { keychain in
            add("a", "secret-a")
            add("b", "secret-b")
            let file = RawKeychainFile(keychain)
            let ids = file.rowIDs()
            // Point item a's lookup hashes at item b's row and vice versa.
            file.execute(
                """
                CREATE TEMP TABLE saved AS SELECT id, h1, h2 FROM items;
                UPDATE items SET h2 = (SELECT h2 FROM saved WHERE id = \(ids[1])) WHERE id = \(ids[0]);
                UPDATE items SET h2 = (SELECT h2 FROM saved WHERE id = \(ids[0])) WHERE id = \(ids[1]);
                """)
            let (statusA, dataA) = read("a")
            #expect(dataA != Data("secret-b".utf8))
            #expect(statusA == errSecItemNotFound)
        }
    }

    @Test func damagedItemCanBeDeletedAndStoredAgain() {
        TemporaryKeychain.with { keychain in
            add("a", "secret-a")
            let file = RawKeychainFile(keychain)
            file.execute("UPDATE items SET ciphertext = zeroblob(length(ciphertext))")
            #expect(read("a").0 == errSecDecode)
            #expect(SecItemDelete(genp("com.example.tamper", "a") as CFDictionary) == errSecSuccess)
            add("a", "secret-a2")
            #expect(read("a") == (errSecSuccess, Data("secret-a2".utf8)))
        }
    }
}

struct DamagedFilesTests {
    @Test func missingKeyFileIsRefusedWithoutLosingItems() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(SecItemAdd(genp().with(kSecValueData, Data("kept".utf8)) as CFDictionary, nil) == errSecSuccess)
        }
        KeychainEngine.close(directory: keychain.directory)
        let keyFile = keychain.directory.appendingPathComponent("device.key")
        let saved = keychain.directory.appendingPathComponent("device.key.saved")
        try FileManager.default.moveItem(at: keyFile, to: saved)
        keychain.run {
            #expect(SecItemCopyMatching(genp().with(kSecReturnData, true) as CFDictionary, nil) == errSecNotAvailable)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("device.key") == true)
            #expect(SecItemAdd(genp("x", "y").with(kSecValueData, Data()) as CFDictionary, nil) == errSecNotAvailable,
                    "no new key is made for a keychain that has items")
        }
        #expect(!FileManager.default.fileExists(atPath: keyFile.path))
        KeychainEngine.close(directory: keychain.directory)
        try FileManager.default.moveItem(at: saved, to: keyFile)
        keychain.run {
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(genp().with(kSecReturnData, true) as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("kept".utf8))
        }
    }

    @Test func keyFileOfAnotherKeychainIsRefused() throws {
        let first = TemporaryKeychain()
        let second = TemporaryKeychain()
        defer { first.remove(); second.remove() }
        first.run { _ = SecItemAdd(genp().with(kSecValueData, Data("1".utf8)) as CFDictionary, nil) }
        second.run { _ = SecItemAdd(genp().with(kSecValueData, Data("2".utf8)) as CFDictionary, nil) }
        KeychainEngine.close(directory: first.directory)
        let key = first.directory.appendingPathComponent("device.key")
        try FileManager.default.removeItem(at: key)
        try FileManager.default.copyItem(at: second.directory.appendingPathComponent("device.key"), to: key)
        first.run {
            #expect(SecItemCopyMatching(genp() as CFDictionary, nil) == errSecDecode)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("does not belong") == true)
        }
    }

    @Test func filesReadableByOthersAreRefused() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { _ = SecItemAdd(genp().with(kSecValueData, Data("1".utf8)) as CFDictionary, nil) }
        let key = keychain.directory.appendingPathComponent("device.key").path
        let attributes = try FileManager.default.attributesOfItem(atPath: key)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let directoryMode = try FileManager.default.attributesOfItem(atPath: keychain.directory.path)[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
        let database = keychain.directory.appendingPathComponent("keychain.db").path
        #expect((try FileManager.default.attributesOfItem(atPath: database)[.posixPermissions] as? Int) == 0o600)

        KeychainEngine.close(directory: keychain.directory)
        chmod(key, 0o644)
        keychain.run {
            #expect(SecItemCopyMatching(genp() as CFDictionary, nil) == errSecWrPerm)
            #expect(KeychainDiagnostics.lastFailureRecovery == "Run: chmod 600 \(key)")
        }
        chmod(key, 0o600)
        chmod(keychain.directory.path, 0o755)
        KeychainEngine.close(directory: keychain.directory)
        keychain.run {
            #expect(SecItemCopyMatching(genp() as CFDictionary, nil) == errSecWrPerm)
            #expect(KeychainDiagnostics.lastFailureRecovery?.contains("chmod 700") == true)
        }
        chmod(keychain.directory.path, 0o700)
        KeychainEngine.close(directory: keychain.directory)
        keychain.run { #expect(SecItemCopyMatching(genp() as CFDictionary, nil) == errSecSuccess) }
    }

    @Test func truncatedDatabaseGivesClearErrorAndLeavesFileAlone() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            for index in 0..<50 {
                _ = SecItemAdd(genp("s", "a\(index)").with(kSecValueData, Data(repeating: 7, count: 500)) as CFDictionary, nil)
            }
        }
        KeychainEngine.close(directory: keychain.directory)
        let database = keychain.directory.appendingPathComponent("keychain.db")
        // Fold the WAL into the main file, then cut the file in the middle.
        RawKeychainFile(keychain).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let bytes = try Data(contentsOf: database)
        let truncated = bytes.prefix(bytes.count / 3)
        try truncated.write(to: database)
        chmod(database.path, 0o600)
        keychain.run {
            var result: CFTypeRef?
            let status = SecItemCopyMatching(genp("s", "a49").with(kSecReturnData, true) as CFDictionary, &result)
            #expect(status != errSecSuccess)
            #expect(result == nil)
            #expect(KeychainDiagnostics.lastFailureDescription != nil)
            // A write is refused too, and nothing repairs, replaces or truncates the file.
            #expect(SecItemAdd(genp("s", "new").with(kSecValueData, Data("x".utf8)) as CFDictionary, nil) != errSecSuccess)
        }
        KeychainEngine.close(directory: keychain.directory)
        #expect(try Data(contentsOf: database) == truncated, "the damaged file was modified")
        let log = (try? FileManager.default.attributesOfItem(atPath: database.path + "-wal")[.size] as? Int) ?? 0
        #expect(log == 0, "\(log) bytes were logged for the damaged file")
    }
}

struct ReplacedKeychainTests {
    /// A keychain deleted underneath a running process: later writes go to the new
    /// keychain on disk, never into the unlinked old file.
    @Test func deletedKeychainIsReopenedNotWrittenIntoTheVoid() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(SecItemAdd(genp("s", "before").with(kSecValueData, Data("1".utf8)) as CFDictionary, nil) == errSecSuccess) }
        try FileManager.default.removeItem(at: keychain.directory)
        keychain.run {
            #expect(SecItemAdd(genp("s", "after").with(kSecValueData, Data("2".utf8)) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemCopyMatching(genp("s", "before") as CFDictionary, nil) == errSecItemNotFound)
        }
        #expect(FileManager.default.fileExists(atPath: keychain.directory.appendingPathComponent("keychain.db").path))
        // The item is in the file on disk, not only in the process.
        #expect(RawKeychainFile(keychain).rowIDs().count == 1)
    }
}

struct OversizedItemTests {
    @Test func oversizedDataAndAttributesGiveDataTooLargeAndStoreNothing() {
        TemporaryKeychain.with { _ in
            let huge = Data(count: 64 << 20 + 1)
            #expect(SecItemAdd(genp("big", "data").with(kSecValueData, huge) as CFDictionary, nil) == errSecDataTooLarge)
            let longLabel = String(repeating: "x", count: (1 << 20) + 1)
            #expect(SecItemAdd(genp("big", "label").with(kSecAttrLabel, longLabel) as CFDictionary, nil) == errSecDataTooLarge)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "big"] as CFDictionary, nil) == errSecItemNotFound)
            // Just under the limits is fine.
            #expect(SecItemAdd(genp("big", "ok").with(kSecValueData, Data(count: 1 << 20)) as CFDictionary, nil) == errSecSuccess)
        }
    }
}
