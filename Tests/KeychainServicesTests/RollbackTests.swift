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

    // MARK: Changes while a process has the keychain open (its read connections keep the
    // anchor file open and remember the state they last checked)

    private func anchorBytes(_ keychain: TemporaryKeychain) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path(keychain, "keychain.anchor")))
    }

    /// Writes `bytes` over the anchor file in place (same inode, same size) and gives it
    /// back the modification time it had, as a careful attacker would.
    private func writeInPlace(_ bytes: Data, anchorOf keychain: TemporaryKeychain) {
        let anchor = path(keychain, "keychain.anchor")
        var before = stat()
        #expect(stat(anchor, &before) == 0)
        let fd = open(anchor, O_WRONLY)
        #expect(fd >= 0)
        #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == bytes.count)
        var times = [before.st_atim, before.st_mtim]
        #expect(futimens(fd, &times) == 0)
        close(fd)
    }

    /// Copies the database as it is now (a consistent snapshot, through SQLite) to `target`.
    private func saveDatabase(_ keychain: TemporaryKeychain, to target: String) {
        copyDatabase(from: path(keychain, "keychain.db"), to: target)
    }

    /// Writes `source` into the keychain's open database file with SQLite's backup API
    /// (so open connections see the change, as with any write through SQLite).
    private func restoreDatabase(_ keychain: TemporaryKeychain, from source: String) {
        copyDatabase(from: source, to: path(keychain, "keychain.db"))
    }

    private func copyDatabase(from sourcePath: String, to targetPath: String) {
        var source: OpaquePointer?
        var target: OpaquePointer?
        #expect(sqlite3_open(sourcePath, &source) == SQLITE_OK)
        #expect(sqlite3_open(targetPath, &target) == SQLITE_OK)
        sqlite3_busy_timeout(target, 5000)
        let backup = sqlite3_backup_init(target, "main", source, "main")
        #expect(sqlite3_backup_step(backup, -1) == SQLITE_DONE)
        sqlite3_backup_finish(backup)
        sqlite3_close(source)
        sqlite3_close(target)
    }

    /// A shared, writable mapping of the anchor file. A write through it changes the file's
    /// bytes without a system call: once its page is writable (after the first write), later
    /// writes change neither the change time nor the modification time (until the page is
    /// written back to the disk, and on file systems such as tmpfs never).
    private final class MappedAnchor {
        let fd: Int32
        let memory: UnsafeMutableRawPointer

        init(_ path: String) throws {
            fd = open(path, O_RDWR)
            try #require(fd >= 0)
            let mapped = mmap(nil, RollbackAnchor.fileLength, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            try #require(mapped != MAP_FAILED && mapped != nil)
            memory = mapped!
        }

        func write(_ bytes: Data) {
            bytes.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }

        deinit {
            munmap(memory, RollbackAnchor.fileLength)
            close(fd)
        }
    }

    private struct FileTimes: Equatable {
        var changed: [Int]
        var modified: [Int]
        var inode: UInt64
        var size: Int64

        init(_ path: String) {
            var info = stat()
            #expect(stat(path, &info) == 0)
            changed = [info.st_ctim.tv_sec, info.st_ctim.tv_nsec]
            modified = [info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
        }
    }

    @Test func olderAnchorWrittenInPlaceWhileOpenIsRefusedAtTheNextRead() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "version 1") == errSecSuccess)
            #expect(read("a") == (errSecSuccess, Data("version 1".utf8)))
        }
        let older = try anchorBytes(keychain)
        keychain.run {
            #expect(update("a", "version 2") == errSecSuccess)
            #expect(read("a") == (errSecSuccess, Data("version 2".utf8)))
        }
        let current = try anchorBytes(keychain)
        #expect(current != older)
        let anchor = path(keychain, "keychain.anchor")
        let mapping = try MappedAnchor(anchor)
        // Same inode, same size, same change and modification times as when the process
        // last read the anchor: only the bytes differ. The first write through the mapping
        // (of the bytes the file holds) makes its page writable, which may set the times;
        // the process then reads the anchor as it is. The second write changes no time,
        // unless the page was written back in between: then all of it is done again.
        var onlyTheBytesDiffer = false
        for _ in 0..<5 where !onlyTheBytesDiffer {
            mapping.write(current)
            keychain.run { #expect(read("a") == (errSecSuccess, Data("version 2".utf8))) }
            let before = FileTimes(anchor)
            mapping.write(older)
            onlyTheBytesDiffer = FileTimes(anchor) == before
        }
        try #require(onlyTheBytesDiffer, "every write through the mapping changed the anchor's times")
        expectRollbackRefused(keychain, "a", "an older anchor written into the open anchor file")
    }

    /// Two keychains created one after the other in the same directory (the database
    /// removed, the device key kept) have anchors that authenticate under the same key and,
    /// both empty and anchored once, record the same item state (their protection records,
    /// fresh keys each, differ): the first keychain's anchor put back is refused for naming
    /// another keychain, which is checked before any state.
    @Test func anAnchorOfAnotherKeychainIsRefusedEvenInTheSameState() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        // Reads do not create a keychain; an add does. The same add and delete in both
        // keychains: the same generation, and no rows.
        func addAndDelete() {
            keychain.run {
                #expect(add("a", "1") == errSecSuccess)
                #expect(SecItemDelete(genp(service, "a") as CFDictionary) == errSecSuccess)
                #expect(read("a").0 == errSecItemNotFound)
            }
        }
        addAndDelete()
        quit(keychain)
        let first = try anchorBytes(keychain)
        let database = path(keychain, "keychain.db")
        for suffix in ["", "-wal", "-shm"] { unlink(database + suffix) }
        unlink(path(keychain, "keychain.verified"))
        // A new keychain in the old one's place: the old anchor is replaced by its own.
        addAndDelete()
        quit(keychain)
        let second = try anchorBytes(keychain)
        let idRange = 8..<24
        #expect(first[idRange] != second[idRange], "the second keychain has its own id")
        // The same generation in both; the digests differ, as they cover each keychain's
        // protection records (its own random class keys), so even the closest state another
        // keychain can reach is not this one's.
        let generationRange = 24..<32
        #expect(first[generationRange] == second[generationRange], "both anchors record the same generation")

        // The first keychain's anchor put back: same key, same state, another keychain.
        try first.write(to: URL(fileURLWithPath: path(keychain, "keychain.anchor")))
        chmod(path(keychain, "keychain.anchor"), 0o600)
        keychain.run {
            let (status, data) = read("a")
            #expect(status == errSecDecode, "another keychain's anchor was accepted")
            #expect(data == nil)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("another keychain") == true,
                    "\(KeychainDiagnostics.lastFailureDescription ?? "no failure")")
        }
    }

    @Test func rowAddedBehindTheKeychainsBackIsDetected() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "1") == errSecSuccess)
            #expect(add("b", "2") == errSecSuccess)
        }
        quit(keychain)
        // A copy of row b under a new id, primary key and reference (the unique columns).
        RawKeychainFile(keychain).execute(
            """
            INSERT INTO items (class, pk, h1, h2, agrp, sync, pdmn, ref, nonce, ciphertext, h3)
                SELECT class, randomblob(length(pk)), h1, h2, agrp, sync, pdmn, randomblob(length(ref)), nonce, ciphertext, h3
                FROM items WHERE id = (SELECT max(id) FROM items)
            """)
        expectRollbackRefused(keychain, "a", "a row added behind the keychain's back")
    }

    @Test func olderAnchorRenamedIntoPlaceWhileOpenIsRefusedAtTheNextRead() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(add("a", "version 1") == errSecSuccess) }
        let older = try anchorBytes(keychain)
        keychain.run {
            #expect(update("a", "version 2") == errSecSuccess)
            #expect(read("a") == (errSecSuccess, Data("version 2".utf8)))
        }
        let copy = path(keychain, "anchor.copy")
        #expect(FileManager.default.createFile(atPath: copy, contents: older, attributes: [.posixPermissions: 0o600]))
        #expect(rename(copy, path(keychain, "keychain.anchor")) == 0)
        expectRollbackRefused(keychain, "a", "an older anchor renamed over the anchor file")
    }

    @Test func anchorRemovedWhileOpenIsRefusedAtTheNextRead() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "1") == errSecSuccess)
            #expect(read("a") == (errSecSuccess, Data("1".utf8)))
        }
        unlink(path(keychain, "keychain.anchor"))
        expectRollbackRefused(keychain, "a", "the anchor removed while open")
    }

    @Test func anchorMadeReadableByOthersWhileOpenIsRefusedAtTheNextRead() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "1") == errSecSuccess)
            #expect(read("a") == (errSecSuccess, Data("1".utf8)))
        }
        chmod(path(keychain, "keychain.anchor"), 0o644)
        keychain.run {
            #expect(read("a").0 != errSecSuccess)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("anchor file") == true)
        }
        chmod(path(keychain, "keychain.anchor"), 0o600)
        keychain.run { #expect(read("a") == (errSecSuccess, Data("1".utf8))) }
    }

    /// The database written back after another process wrote (the anchor moved on), with
    /// no read of this process in between: its read connections last saw the older state
    /// accepted, and must not accept it again.
    @Test func databaseWrittenBackAfterAnotherProcessWroteIsRefusedAtTheNextRead() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "version 1") == errSecSuccess)
            #expect(read("a") == (errSecSuccess, Data("version 1".utf8)))
        }
        let saved = path(keychain, "saved.db")
        saveDatabase(keychain, to: saved)
        // Another process: an engine of its own (its own connections and anchor), writing.
        let other = try KeychainEngine(directory: keychain.directory)
        try other.writeTransaction { _ in }
        restoreDatabase(keychain, from: saved)
        expectRollbackRefused(keychain, "a", "the database written back after another process's write")
    }

    /// The same, with the anchor also written back in place to the bytes this process's
    /// read connections authenticated (the anchor the older database matches): the pair
    /// is accepted, as an older pair put back together always is.
    @Test func olderDatabaseAndAnchorPutBackTogetherWhileOpenAreAccepted() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "version 1") == errSecSuccess)
            #expect(read("a") == (errSecSuccess, Data("version 1".utf8)))
        }
        let saved = path(keychain, "saved.db")
        saveDatabase(keychain, to: saved)
        let older = try anchorBytes(keychain)
        keychain.run {
            #expect(update("a", "version 2") == errSecSuccess)
            #expect(read("a") == (errSecSuccess, Data("version 2".utf8)))
        }
        restoreDatabase(keychain, from: saved)
        writeInPlace(older, anchorOf: keychain)
        keychain.run { #expect(read("a") == (errSecSuccess, Data("version 1".utf8))) }
    }

    /// Reads after writes of another process see each new state, and never trip the check.
    @Test func readsFollowWritesOfAnotherProcess() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(add("a", "1") == errSecSuccess) }
        let other = try KeychainEngine(directory: keychain.directory)
        for round in 0..<5 {
            keychain.run { #expect(read("a") == (errSecSuccess, Data("1".utf8)), "round \(round)") }
            try other.writeTransaction { _ in }
            keychain.run { #expect(read("a") == (errSecSuccess, Data("1".utf8)), "round \(round), after a write") }
        }
    }
}

/// The anchor file as a read connection keeps it between reads (``RollbackAnchor/Snapshot``):
/// any change to the file, or to what its path names, is seen.
struct RollbackAnchorSnapshotTests {
    private func anchor(in directory: URL) throws -> RollbackAnchor {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return RollbackAnchor(directory: directory, key: SecretKey.random())
    }

    private func contents(_ generation: UInt64) -> RollbackAnchor.Contents {
        RollbackAnchor.Contents(
            keychainID: Data(repeating: 7, count: 16), committed: ItemSetState(generation: generation, digest: .zero),
            pending: nil)
    }

    private func withAnchor(_ body: (RollbackAnchor, URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anchor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let anchor = try anchor(in: directory)
        try anchor.write(contents(1), durable: false)
        try body(anchor, directory)
    }

    @Test func unchangedFileIsRecognized() throws {
        try withAnchor { anchor, _ in
            let snapshot = try #require(try anchor.snapshot())
            #expect(snapshot.contents == contents(1))
            #expect(anchor.isUnchanged(snapshot))
            #expect(anchor.isUnchanged(snapshot))
        }
    }

    /// The case timestamps cannot see (two writes within one tick of the file system's
    /// clock, or times set back): the bytes read through the open file differ.
    @Test func rewriteInPlaceIsSeenWhateverTheTimestamps() throws {
        try withAnchor { anchor, _ in
            let snapshot = try #require(try anchor.snapshot())
            try anchor.write(contents(2), durable: false)
            #expect(!anchor.fileHoldsAuthenticatedBytes(of: snapshot))
            #expect(!anchor.isUnchanged(snapshot))
            // Written back to the very bytes that were authenticated: the same again.
            try anchor.write(contents(1), durable: false)
            #expect(anchor.fileHoldsAuthenticatedBytes(of: snapshot))
            // Longer than an anchor: changed.
            let fd = open(anchor.path, O_WRONLY | O_APPEND)
            #expect(write(fd, "x", 1) == 1)
            close(fd)
            #expect(!anchor.fileHoldsAuthenticatedBytes(of: snapshot))
        }
    }

    /// A file with the very same bytes under the anchor's name is another file: read afresh.
    @Test func sameBytesInAnotherFileAreNotTheSameFile() throws {
        try withAnchor { anchor, directory in
            let snapshot = try #require(try anchor.snapshot())
            let bytes = try Data(contentsOf: anchor.url)
            let copy = directory.appendingPathComponent("copy").path
            #expect(FileManager.default.createFile(atPath: copy, contents: bytes, attributes: [.posixPermissions: 0o600]))
            #expect(rename(copy, anchor.path) == 0)
            #expect(anchor.fileHoldsAuthenticatedBytes(of: snapshot), "the old file is unchanged")
            #expect(!anchor.pathNamesFile(of: snapshot))
            #expect(!anchor.isUnchanged(snapshot))
            let fresh = try #require(try anchor.snapshot())
            #expect(anchor.isUnchanged(fresh))
        }
    }

    @Test func removedLinkedOrOpenedUpFileIsNotTheSameFile() throws {
        try withAnchor { anchor, directory in
            let snapshot = try #require(try anchor.snapshot())
            chmod(anchor.path, 0o640)
            #expect(!anchor.isUnchanged(snapshot), "readable by the group")
            chmod(anchor.path, 0o600)
            let aside = directory.appendingPathComponent("aside").path
            #expect(rename(anchor.path, aside) == 0)
            #expect(!anchor.isUnchanged(snapshot), "removed")
            #expect(try anchor.snapshot() == nil)
            #expect(symlink(aside, anchor.path) == 0)
            #expect(!anchor.isUnchanged(snapshot), "a symbolic link to the same file")
            #expect(throws: KeychainFailure.self) { try anchor.snapshot() }
        }
    }

    /// Reading afresh and the kept snapshot say the same, also for a damaged file.
    @Test func snapshotReadsWhatReadReads() throws {
        try withAnchor { anchor, _ in
            #expect(try anchor.snapshot()?.contents == anchor.read())
            var bytes = try Data(contentsOf: anchor.url)
            bytes[40] ^= 1
            let fd = open(anchor.path, O_WRONLY)
            #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == bytes.count)
            close(fd)
            #expect(throws: KeychainFailure.self) { try anchor.read() }
            #expect(throws: KeychainFailure.self) { try anchor.snapshot() }
            #expect(truncate(anchor.path, 10) == 0)
            #expect(throws: KeychainFailure.self) { try anchor.read() }
            #expect(throws: KeychainFailure.self) { try anchor.snapshot() }
        }
    }
}
