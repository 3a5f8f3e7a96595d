// Deleted and overwritten ciphertext does not stay in the keychain's files, where a later
// copy of the file (a backup, a stolen disk image) would still decrypt it with the
// unchanged key. And a key file interrupted while it was written leaves no copy behind.
import CSQLite
import Foundation
@testable import KeychainServices
import Testing

struct DeletedDataTests {
    /// The stored ciphertext of every row, read from outside the engine.
    /// - Throws: when the database cannot be opened or read (never an empty answer instead).
    private func ciphertexts(_ keychain: TemporaryKeychain) throws -> [Data] {
        var handle: OpaquePointer?
        let path = keychain.directory.appendingPathComponent("keychain.db").path
        defer { sqlite3_close(handle) }
        try #require(sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, "cannot open \(path)")
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        try #require(sqlite3_prepare_v2(handle, "SELECT ciphertext FROM items ORDER BY id", -1, &statement, nil) == SQLITE_OK,
                     "cannot read the items of \(path)")
        var result: [Data] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(Data(bytes: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0))))
        }
        return result
    }

    /// Whether `bytes` lie anywhere in the database file or its WAL.
    private func filesContain(_ keychain: TemporaryKeychain, _ bytes: Data) -> [String] {
        ["keychain.db", "keychain.db-wal"].filter { name in
            guard let contents = FileManager.default.contents(atPath: keychain.directory.appendingPathComponent(name).path) else {
                return false
            }
            return contents.range(of: bytes) != nil
        }
    }

    @Test func overwrittenAndDeletedCiphertextIsGoneFromTheFiles() throws {
        try TemporaryKeychain.with { keychain in
            let secret = Data(repeating: 0x41, count: 600)
            #expect(SecItemAdd(genp("wipe", "kept").with(kSecValueData, secret) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(genp("wipe", "rotated").with(kSecValueData, secret) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(genp("wipe", "deleted").with(kSecValueData, secret) as CFDictionary, nil) == errSecSuccess)
            let before = try ciphertexts(keychain)
            try #require(before.count == 3)
            let (kept, rotated, deleted) = (before[0], before[1], before[2])
            #expect(filesContain(keychain, rotated).count > 0, "the test can see ciphertext in the files")

            #expect(SecItemUpdate(genp("wipe", "rotated") as CFDictionary,
                                  [kSecValueData as String: Data(repeating: 0x42, count: 600)] as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete(genp("wipe", "deleted") as CFDictionary) == errSecSuccess)

            // While the keychain is still open (a running app), and after it was closed.
            #expect(filesContain(keychain, rotated) == [], "the overwritten ciphertext lingers")
            #expect(filesContain(keychain, deleted) == [], "the deleted ciphertext lingers")
            #expect(filesContain(keychain, kept).count > 0, "live items are still there")
            KeychainEngine.close(directory: keychain.directory)
            #expect(filesContain(keychain, rotated) == [])
            #expect(filesContain(keychain, deleted) == [])
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(genp("wipe", "rotated").with(kSecReturnData, true) as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data(repeating: 0x42, count: 600))
        }
    }
}

struct KeyFileLeftoverTests {
    /// A writer killed between writing the new key to its temporary file and linking it
    /// into place leaves `.device.key.PID.RANDOM.tmp`: the next open removes it.
    @Test func interruptedKeyFileCopyIsRemovedAtOpen() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(SecItemAdd(genp().with(kSecValueData, Data("1".utf8)) as CFDictionary, nil) == errSecSuccess) }
        KeychainEngine.close(directory: keychain.directory)
        let stale = keychain.directory.appendingPathComponent(".device.key.4242.17.tmp")
        var bytes = Data("KSDEVK01".utf8)
        bytes.append(Data(repeating: 0x33, count: 32))
        #expect(FileManager.default.createFile(atPath: stale.path, contents: bytes, attributes: [.posixPermissions: 0o600]))
        // A file of the user's own that merely looks similar is left alone.
        let unrelated = keychain.directory.appendingPathComponent("device.key.backup")
        #expect(FileManager.default.createFile(atPath: unrelated.path, contents: Data("x".utf8), attributes: [.posixPermissions: 0o600]))
        keychain.run { #expect(SecItemCopyMatching(genp() as CFDictionary, nil) == errSecSuccess) }
        #expect(!FileManager.default.fileExists(atPath: stale.path), "the interrupted copy of a key is removed")
        #expect(FileManager.default.fileExists(atPath: unrelated.path))
    }
}
