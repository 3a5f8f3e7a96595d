// Rollback: the database file alone written back to an older state (one row's old
// ciphertext, rows deleted, a whole older copy) is detected and refused with errSecDecode
// and a message that says what happened and how to accept the file on purpose. Never the
// old data.
import CSQLite
import Foundation
@testable import KeychainServices
import Testing

struct RollbackTests {
    private let service = "com.example.rollback"

    private func add(_ account: String, _ secret: String) -> OSStatus {
        SecItemAdd(genp(service, account).with(kSecValueData, Data(secret.utf8)) as CFDictionary, nil)
    }

    private func update(_ account: String, _ secret: String) -> OSStatus {
        SecItemUpdate(genp(service, account) as CFDictionary, [kSecValueData as String: Data(secret.utf8)] as CFDictionary)
    }

    private func read(_ account: String) -> (OSStatus, Data?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(genp(service, account).with(kSecReturnData, true) as CFDictionary, &result)
        return (status, result as? Data)
    }

    private func path(_ keychain: TemporaryKeychain, _ name: String) -> String {
        keychain.directory.appendingPathComponent(name).path
    }

    /// Closes the keychain in this process, as when the app quits (SQLite folds the WAL
    /// into the database file when its last connection closes).
    private func quit(_ keychain: TemporaryKeychain) {
        KeychainEngine.close(directory: keychain.directory)
    }

    private func expectRollbackRefused(_ keychain: TemporaryKeychain, _ account: String, _ comment: Comment) {
        keychain.run {
            let (status, data) = read(account)
            #expect(status == errSecDecode, comment)
            #expect(data == nil, comment)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("rolled back") == true, comment)
            #expect(KeychainDiagnostics.lastFailureRecovery?.contains("keychain.anchor.reset") == true, comment)
        }
    }

    @Test func oldCiphertextWrittenBackIntoARowIsDetected() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "old secret") == errSecSuccess)
            #expect(add("b", "other") == errSecSuccess)
        }
        let raw = RawKeychainFile(keychain)
        raw.execute("CREATE TABLE IF NOT EXISTS saved AS SELECT id, nonce, ciphertext FROM items")
        keychain.run { #expect(update("a", "new secret") == errSecSuccess) }
        quit(keychain)
        raw.execute(
            """
            UPDATE items SET nonce = (SELECT nonce FROM saved WHERE saved.id = items.id),
                ciphertext = (SELECT ciphertext FROM saved WHERE saved.id = items.id);
            DROP TABLE saved;
            """)
        // Without the check, the old secret decrypts (its row, reference and key are unchanged).
        expectRollbackRefused(keychain, "a", "one row rolled back")
    }

    @Test func deletedRowIsDetected() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "1") == errSecSuccess)
            #expect(add("b", "2") == errSecSuccess)
        }
        quit(keychain)
        RawKeychainFile(keychain).execute("DELETE FROM items WHERE id = (SELECT max(id) FROM items)")
        expectRollbackRefused(keychain, "a", "a row deleted behind the keychain's back")
    }

    @Test func olderCopyOfTheWholeDatabaseIsDetectedAndCanBeAccepted() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(add("a", "version 1") == errSecSuccess) }
        quit(keychain)
        let database = path(keychain, "keychain.db")
        let saved = database + ".saved"
        try FileManager.default.copyItem(atPath: database, toPath: saved)
        keychain.run {
            #expect(update("a", "version 2") == errSecSuccess)
            #expect(add("b", "added later") == errSecSuccess)
        }
        quit(keychain)
        for suffix in ["", "-wal", "-shm"] { unlink(database + suffix) }
        #expect(rename(saved, database) == 0)
        expectRollbackRefused(keychain, "a", "an older copy of the database")
        keychain.run { #expect(add("c", "x") == errSecDecode, "nothing is written on top of a rolled-back file") }

        // The owner accepts the older copy on purpose: it opens, as it is, and is anchored anew.
        quit(keychain)
        #expect(FileManager.default.createFile(atPath: path(keychain, "keychain.anchor.reset"), contents: Data()))
        keychain.run {
            #expect(read("a") == (errSecSuccess, Data("version 1".utf8)))
            #expect(read("b").0 == errSecItemNotFound)
            #expect(add("c", "x") == errSecSuccess)
        }
        #expect(!FileManager.default.fileExists(atPath: path(keychain, "keychain.anchor.reset")))
        quit(keychain)
        keychain.run { #expect(read("c").0 == errSecSuccess) }
    }

    @Test func olderCopyCopiedInPlaceWhileOpenIsDetectedOnRead() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(add("a", "version 1") == errSecSuccess) }
        quit(keychain)
        let database = path(keychain, "keychain.db")
        let saved = try Data(contentsOf: URL(fileURLWithPath: database))
        keychain.run {
            #expect(update("a", "version 2") == errSecSuccess)
            #expect(read("a") == (errSecSuccess, Data("version 2".utf8)))
        }
        // Written into the same file (same inode) under the running process, with SQLite's
        // own backup API so the open connection sees the change.
        let copy = database + ".old"
        try saved.write(to: URL(fileURLWithPath: copy))
        var source: OpaquePointer?
        var target: OpaquePointer?
        #expect(sqlite3_open(copy, &source) == SQLITE_OK)
        #expect(sqlite3_open(database, &target) == SQLITE_OK)
        let backup = sqlite3_backup_init(target, "main", source, "main")
        #expect(sqlite3_backup_step(backup, -1) == SQLITE_DONE)
        sqlite3_backup_finish(backup)
        sqlite3_close(source)
        sqlite3_close(target)
        keychain.run {
            let (status, data) = read("a")
            #expect(status == errSecDecode)
            #expect(data != Data("version 1".utf8))
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("rolled back") == true)
        }
    }

    /// A row written back under a process that has the keychain open is served by that
    /// process's reads until it reopens; its writes never make the change legitimate: the
    /// next open still refuses the keychain, whichever item the process wrote.
    @Test(arguments: ["a", "b"])
    func rowRolledBackWhileOpenStaysRefusedAfterTheProcessWrites(written: String) throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "old secret") == errSecSuccess)
            #expect(add("b", "other") == errSecSuccess)
        }
        let raw = RawKeychainFile(keychain)
        raw.execute("CREATE TABLE IF NOT EXISTS saved AS SELECT id, nonce, ciphertext FROM items")
        keychain.run { #expect(update("a", "new secret") == errSecSuccess) }
        raw.execute(
            """
            UPDATE items SET nonce = (SELECT nonce FROM saved WHERE saved.id = items.id),
                ciphertext = (SELECT ciphertext FROM saved WHERE saved.id = items.id);
            DROP TABLE saved;
            """)
        keychain.run { #expect(update(written, "written after the rollback") == errSecSuccess) }
        quit(keychain)
        expectRollbackRefused(keychain, "b", "a rolled-back row, then a write of \(written)")
    }

    /// A request to accept the database that cannot be removed (a directory of that name)
    /// would otherwise accept every later database: it is refused, and accepts nothing.
    @Test func resetRequestThatCannotBeRemovedAcceptsNothing() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(add("a", "1") == errSecSuccess) }
        quit(keychain)
        let request = path(keychain, "keychain.anchor.reset")
        #expect(mkdir(request, 0o700) == 0)
        RawKeychainFile(keychain).execute("DELETE FROM items")
        keychain.run {
            #expect(read("a").0 == errSecDecode, "a database with its items deleted was accepted")
            #expect(KeychainDiagnostics.lastFailureRecovery?.contains("rm -r \(request)") == true,
                    "\(KeychainDiagnostics.lastFailureRecovery ?? "no recovery")")
        }
        quit(keychain)
        keychain.run { #expect(read("a").0 == errSecDecode, "accepted at a later open") }
    }

    @Test func missingAnchorIsRefusedButAKeychainThatNeverHadOneIsAnchored() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(add("a", "1") == errSecSuccess) }
        quit(keychain)
        let anchor = path(keychain, "keychain.anchor")
        #expect(FileManager.default.fileExists(atPath: anchor))
        #expect((try FileManager.default.attributesOfItem(atPath: anchor)[.posixPermissions] as? Int) == 0o600)
        unlink(anchor)
        expectRollbackRefused(keychain, "a", "the anchor was removed")

        // A keychain written before anchors existed has neither: it is anchored as it is.
        quit(keychain)
        RawKeychainFile(keychain).execute("DELETE FROM meta WHERE key = 'anchor-state'")
        keychain.run { #expect(read("a") == (errSecSuccess, Data("1".utf8))) }
        #expect(FileManager.default.fileExists(atPath: anchor))
    }

    @Test func editedAnchorIsRefused() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(add("a", "1") == errSecSuccess) }
        quit(keychain)
        let anchor = URL(fileURLWithPath: path(keychain, "keychain.anchor"))
        var bytes = try Data(contentsOf: anchor)
        bytes[30] ^= 1
        try bytes.write(to: anchor)
        chmod(anchor.path, 0o600)
        keychain.run {
            #expect(read("a").0 == errSecDecode)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("anchor") == true)
        }
    }

    @Test func ordinaryUseNeverTripsTheCheck() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        for round in 0..<5 {
            keychain.run {
                #expect(add("r\(round)", "v") == errSecSuccess)
                #expect(update("r\(round)", "w") == errSecSuccess)
                if round > 0 { #expect(SecItemDelete(genp(service, "r\(round - 1)") as CFDictionary) == errSecSuccess) }
                #expect(read("r\(round)") == (errSecSuccess, Data("w".utf8)))
            }
            quit(keychain)
        }
    }
}
