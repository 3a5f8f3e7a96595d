// keychain.verified: an open of an unchanged keychain takes the item set's check from the
// record instead of recomputing every row; any change to the database, its WAL, the anchor
// or the record itself means the full check (and tampering is still refused).
import CSQLite
import Foundation
@testable import KeychainServices
import Testing

struct VerificationRecordTests {
    private let service = "com.example.verified"

    private func add(_ account: String, _ secret: String) -> OSStatus {
        SecItemAdd(genp(service, account).with(kSecValueData, Data(secret.utf8)) as CFDictionary, nil)
    }

    private func read(_ account: String) -> (OSStatus, Data?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(genp(service, account).with(kSecReturnData, true) as CFDictionary, &result)
        return (status, result as? Data)
    }

    private func path(_ keychain: TemporaryKeychain, _ name: String) -> String {
        keychain.directory.appendingPathComponent(name).path
    }

    /// Whether a fresh open of the keychain (its own engine, as a new process has) used the
    /// record. The engine's connections close when it goes away.
    private func opensWithRecord(_ keychain: TemporaryKeychain) throws -> Bool {
        try KeychainEngine(directory: keychain.directory).openedWithVerificationRecord
    }

    /// A keychain of two items, closed, whose database has settled (older than the record's
    /// minimum age), opened once so that the record is written, and checked to be used.
    private func keychainWithRecord() throws -> TemporaryKeychain {
        let keychain = TemporaryKeychain()
        keychain.run {
            #expect(add("a", "first") == errSecSuccess)
            #expect(add("b", "second") == errSecSuccess)
        }
        KeychainEngine.close(directory: keychain.directory)
        settle()
        #expect(try opensWithRecord(keychain) == false, "the first open does the full check")
        #expect(FileManager.default.fileExists(atPath: path(keychain, VerificationRecord.fileName)))
        #expect(try opensWithRecord(keychain) == true, "nothing changed since")
        return keychain
    }

    private func settle() {
        usleep(useconds_t(VerificationRecord.minimumAge / 1000 + 200_000))
    }

    private func expectRefused(_ keychain: TemporaryKeychain, _ comment: Comment) {
        KeychainEngine.close(directory: keychain.directory)
        keychain.run {
            let (status, data) = read("a")
            #expect(status == errSecDecode, comment)
            #expect(data == nil, comment)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("rolled back") == true, comment)
        }
    }

    @Test func recordIsUsedWhileNothingChangesAndReadsStillWork() throws {
        let keychain = try keychainWithRecord()
        defer { keychain.remove() }
        #expect(try opensWithRecord(keychain) == true)
        keychain.run { #expect(read("a").1 == Data("first".utf8)) }
    }

    @Test func noRecordIsWrittenForADatabaseThatJustChanged() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        // A change now could fall into the same timestamp tick as the one a record would bind.
        // An open that ended less than the minimum age after the database's last change must
        // not write a record; one that ended later proves nothing either way (a slow machine),
        // so the change and the open are then done again, until one is quick enough.
        var decided = false
        for attempt in 0..<20 where !decided {
            keychain.run { #expect(add("a\(attempt)", "first") == errSecSuccess) }
            KeychainEngine.close(directory: keychain.directory)
            let usedRecord = try opensWithRecord(keychain)
            let openEnded = VerificationRecord.now()
            var info = stat()
            try #require(stat(path(keychain, "keychain.db"), &info) == 0)
            let changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
            if openEnded - changed < VerificationRecord.minimumAge {
                decided = true
                #expect(usedRecord == false)
                #expect(!FileManager.default.fileExists(atPath: path(keychain, VerificationRecord.fileName)),
                        "a record was written \(Double(openEnded - changed) / 1e9) s after the database changed")
            } else {
                unlink(path(keychain, VerificationRecord.fileName))
            }
        }
        try #require(decided, "no open ended within \(VerificationRecord.minimumAge / 1_000_000_000) s of the change")
    }

    @Test func writingARecordRemovesWhatAnInterruptedWriteLeft() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(add("a", "first") == errSecSuccess) }
        KeychainEngine.close(directory: keychain.directory)
        let leftover = path(keychain, ".\(VerificationRecord.fileName).123.456.tmp")
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data([1]), attributes: [.posixPermissions: 0o600]))
        settle()
        #expect(try opensWithRecord(keychain) == false)
        #expect(FileManager.default.fileExists(atPath: path(keychain, VerificationRecord.fileName)))
        #expect(!FileManager.default.fileExists(atPath: leftover))
    }

    @Test func tamperedRecordIsNotUsedAndIsReplaced() throws {
        let keychain = try keychainWithRecord()
        defer { keychain.remove() }
        let record = path(keychain, VerificationRecord.fileName)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: record))
        bytes[40] ^= 1
        let fd = open(record, O_WRONLY)
        #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == bytes.count)
        close(fd)
        #expect(try opensWithRecord(keychain) == false)
        #expect(try opensWithRecord(keychain) == true, "the full check wrote a new record")
    }

    @Test func recordOfAnotherKeychainIsNotUsed() throws {
        let keychain = try keychainWithRecord()
        let other = try keychainWithRecord()
        defer {
            keychain.remove()
            other.remove()
        }
        let record = path(keychain, VerificationRecord.fileName)
        unlink(record)
        #expect(copyfile(path(other, VerificationRecord.fileName), to: record))
        #expect(try opensWithRecord(keychain) == false)
    }

    @Test func rowChangedWithSQLiteIsRefusedDespiteTheRecord() throws {
        let keychain = try keychainWithRecord()
        defer { keychain.remove() }
        // The state record in meta stays as it was: only the full check sees this.
        RawKeychainFile(keychain).execute("UPDATE items SET ciphertext = ciphertext || x'00' WHERE id = (SELECT min(id) FROM items)")
        expectRefused(keychain, "a row changed behind the keychain's back")
    }

    @Test func rowChangedInTheWALIsRefusedDespiteTheRecord() throws {
        let keychain = try keychainWithRecord()
        defer { keychain.remove() }
        // The change stays in the WAL (the connection is still open): the database file
        // itself is exactly as the record says.
        var handle: OpaquePointer?
        #expect(sqlite3_open(path(keychain, "keychain.db"), &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        #expect(sqlite3_exec(handle, "DELETE FROM items WHERE id = (SELECT max(id) FROM items)", nil, nil, nil) == SQLITE_OK)
        #expect(VerificationRecord.DatabaseFiles.current(databasePath: path(keychain, "keychain.db")) == nil)
        expectRefused(keychain, "a row deleted in the WAL")
    }

    @Test func nonEmptyWALIsNeverVouchedFor() throws {
        let keychain = try keychainWithRecord()
        defer { keychain.remove() }
        let databasePath = path(keychain, "keychain.db")
        #expect(VerificationRecord.DatabaseFiles.current(databasePath: databasePath) != nil)
        let fd = open(databasePath + "-wal", O_WRONLY | O_CREAT, 0o600)
        #expect(write(fd, "x", 1) == 1)
        close(fd)
        #expect(VerificationRecord.DatabaseFiles.current(databasePath: databasePath) == nil)
    }

    @Test func olderDatabaseAndRecordPutBackTogetherAreRefused() throws {
        let keychain = try keychainWithRecord()
        defer { keychain.remove() }
        let saved = path(keychain, "saved.db")
        let savedRecord = try Data(contentsOf: URL(fileURLWithPath: path(keychain, VerificationRecord.fileName)))
        #expect(copyfile(path(keychain, "keychain.db"), to: saved))
        keychain.run {
            #expect(SecItemUpdate(genp(service, "a") as CFDictionary, [kSecValueData as String: Data("new".utf8)] as CFDictionary) == errSecSuccess)
        }
        KeychainEngine.close(directory: keychain.directory)
        #expect(rename(saved, path(keychain, "keychain.db")) == 0)
        try savedRecord.write(to: URL(fileURLWithPath: path(keychain, VerificationRecord.fileName)))
        expectRefused(keychain, "the older database with its older record")
    }

    @Test func changedAnchorIsNotVouchedFor() throws {
        let keychain = try keychainWithRecord()
        defer { keychain.remove() }
        let deviceKey = try DeviceKeyStore.load(keyFile: keychain.directory.appendingPathComponent("device.key"), create: false, [:])
        let anchor = RollbackAnchor(directory: keychain.directory, key: Sodium.deriveKey(from: deviceKey, id: 1, context: "ksanchr1"))
        var contents = try #require(try anchor.read())
        // Still accepts the database (its committed state is unchanged), but is not what the
        // record was written with.
        contents.pending = ItemSetState(generation: contents.committed.generation + 1, digest: contents.committed.digest)
        try anchor.write(contents, durable: false)
        #expect(try opensWithRecord(keychain) == false)
    }

    /// The record speaks for the file that SQLite reads, not only for the one the path
    /// names when it is checked: a directory renamed between SQLite's open and the check
    /// (which changes no file's change time) must not let a tampered database that SQLite
    /// already has open pass on the record of the original one beside it.
    @Test func databaseSwappedWithItsDirectoryIsNotVouchedFor() throws {
        let keychain = try keychainWithRecord()
        let directory = keychain.directory.path
        let tampered = directory + ".tampered"
        let original = directory + ".original"
        defer {
            keychain.remove()
            try? FileManager.default.removeItem(atPath: tampered)
            try? FileManager.default.removeItem(atPath: original)
        }
        // A copy of the keychain directory with one row deleted behind the keychain's back
        // (the state record in meta left as it was).
        #expect(mkdir(tampered, 0o700) == 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            #expect(copyfile(directory + "/" + name, to: tampered + "/" + name))
        }
        var handle: OpaquePointer?
        #expect(sqlite3_open(tampered + "/keychain.db", &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, "DELETE FROM items WHERE id = (SELECT max(id) FROM items)", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        // SQLite opens the tampered copy; then the original directory is put back.
        #expect(rename(directory, original) == 0)
        #expect(rename(tampered, directory) == 0)
        let deviceKey = try DeviceKeyStore.load(keyFile: keychain.directory.appendingPathComponent("device.key"), create: false, [:])
        let keys = try KeyHierarchy(deviceKey: deviceKey)
        let storage = try KeychainDatabase(path: directory + "/keychain.db")
        try storage.prepare(checkValue: keys.checkValue)
        #expect(rename(directory, tampered) == 0)
        #expect(rename(original, directory) == 0)
        let anchor = RollbackAnchor(directory: keychain.directory, key: Sodium.deriveKey(from: deviceKey, id: 1, context: "ksanchr1"))
        let record = VerificationRecord(directory: keychain.directory, key: Sodium.deriveKey(from: deviceKey, id: 2, context: "ksverif1"))
        #expect(throws: KeychainFailure.self, "a row deleted in the file SQLite has open") {
            try storage.attachAnchor(anchor, record: record)
        }
        #expect(!storage.verifiedByRecord)
        #expect(try opensWithRecord(keychain) == true, "the original database is still vouched for")
    }

    /// The other way round: SQLite opens an intact copy, which passes the full check, while
    /// the path names a tampered (settled) database when the record is written. The record
    /// must not then vouch for the tampered file at the next open.
    @Test func noRecordIsWrittenForAFileOtherThanTheOneChecked() throws {
        let keychain = try keychainWithRecord()
        let directory = keychain.directory.path
        let intact = directory + ".intact"
        let original = directory + ".original"
        defer {
            keychain.remove()
            try? FileManager.default.removeItem(atPath: intact)
            try? FileManager.default.removeItem(atPath: original)
        }
        #expect(mkdir(intact, 0o700) == 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            #expect(copyfile(directory + "/" + name, to: intact + "/" + name))
        }
        RawKeychainFile(keychain).execute("DELETE FROM items WHERE id = (SELECT max(id) FROM items)")
        settle()
        #expect(rename(directory, original) == 0)
        #expect(rename(intact, directory) == 0)
        let deviceKey = try DeviceKeyStore.load(keyFile: keychain.directory.appendingPathComponent("device.key"), create: false, [:])
        let keys = try KeyHierarchy(deviceKey: deviceKey)
        let storage = try KeychainDatabase(path: directory + "/keychain.db")
        try storage.prepare(checkValue: keys.checkValue)
        #expect(rename(directory, intact) == 0)
        #expect(rename(original, directory) == 0)
        let anchor = RollbackAnchor(directory: keychain.directory, key: Sodium.deriveKey(from: deviceKey, id: 1, context: "ksanchr1"))
        let record = VerificationRecord(directory: keychain.directory, key: Sodium.deriveKey(from: deviceKey, id: 2, context: "ksverif1"))
        // The intact copy passes.
        try storage.attachAnchor(anchor, record: record)
        expectRefused(keychain, "a row deleted, and a record written after checking another file")
    }

    /// A read connection opened later must read the file the open checked: one opened while
    /// the keychain directory is swapped for a tampered copy is refused (the read then goes
    /// to the write connection).
    @Test func readConnectionToAnotherFileIsNotOpened() throws {
        let keychain = try keychainWithRecord()
        let directory = keychain.directory.path
        let tampered = directory + ".tampered"
        let original = directory + ".original"
        defer {
            keychain.remove()
            try? FileManager.default.removeItem(atPath: tampered)
            try? FileManager.default.removeItem(atPath: original)
        }
        #expect(mkdir(tampered, 0o700) == 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            #expect(copyfile(directory + "/" + name, to: tampered + "/" + name))
        }
        var handle: OpaquePointer?
        #expect(sqlite3_open(tampered + "/keychain.db", &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, "DELETE FROM items WHERE id = (SELECT max(id) FROM items)", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        let deviceKey = try DeviceKeyStore.load(keyFile: keychain.directory.appendingPathComponent("device.key"), create: false, [:])
        let keys = try KeyHierarchy(deviceKey: deviceKey)
        let storage = try KeychainDatabase(path: directory + "/keychain.db")
        try storage.prepare(checkValue: keys.checkValue)
        try storage.attachAnchor(
            RollbackAnchor(directory: keychain.directory, key: Sodium.deriveKey(from: deviceKey, id: 1, context: "ksanchr1")),
            record: VerificationRecord(directory: keychain.directory, key: Sodium.deriveKey(from: deviceKey, id: 2, context: "ksverif1")))
        _ = try KeychainDatabase(readerOf: storage)
        #expect(rename(directory, original) == 0)
        #expect(rename(tampered, directory) == 0)
        #expect(throws: (any Error).self, "a read connection to the tampered copy") {
            _ = try KeychainDatabase(readerOf: storage)
        }
        #expect(rename(directory, tampered) == 0)
        #expect(rename(original, directory) == 0)
    }

    /// A write through a shared mapping of the database sets its change time only when it
    /// faults on a clean page: a page made dirty before a record is written can then be
    /// changed without any new change time until it is written back. Here an item's older
    /// row (the whole page of the items table from before an update) is written that way
    /// after the record: the next open must still refuse the keychain.
    @Test func rowWrittenThroughASharedMappingIsRefusedDespiteTheRecord() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "first") == errSecSuccess)
            #expect(add("b", "second") == errSecSuccess)
        }
        KeychainEngine.close(directory: keychain.directory)
        let databasePath = path(keychain, "keychain.db")
        var handle: OpaquePointer?
        #expect(sqlite3_open_v2(databasePath, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "SELECT (SELECT rootpage FROM sqlite_master WHERE name = 'items'), (SELECT page_size FROM pragma_page_size)", -1, &statement, nil)
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        let pageSize = Int(sqlite3_column_int64(statement, 1))
        let itemsPage = (Int(sqlite3_column_int64(statement, 0)) - 1) * pageSize
        sqlite3_finalize(statement)
        sqlite3_close(handle)
        let older = try #require(FileManager.default.contents(atPath: databasePath))
        keychain.run {
            #expect(SecItemUpdate(genp(service, "a") as CFDictionary, [kSecValueData as String: Data("new".utf8)] as CFDictionary) == errSecSuccess)
        }
        KeychainEngine.close(directory: keychain.directory)
        let fd = open(databasePath, O_RDWR)
        defer { close(fd) }
        let size = Int(lseek(fd, 0, SEEK_END))
        let mapping = try #require(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)).assumingMemoryBound(to: UInt8.self)
        defer { munmap(mapping, size) }
        // The page made dirty (its byte written back unchanged): the change time is now.
        var changeTime = stat()
        #expect(stat(databasePath, &changeTime) == 0)
        let byte = mapping[itemsPage]
        mapping[itemsPage] = byte ^ 1
        mapping[itemsPage] = byte
        var dirtied = stat()
        #expect(stat(databasePath, &dirtied) == 0)
        print("change time set by the first write through the mapping:", dirtied.st_ctim.tv_nsec != changeTime.st_ctim.tv_nsec)
        settle()
        #expect(try opensWithRecord(keychain) == false, "the full check, which writes a record")
        var before = stat()
        #expect(stat(databasePath, &before) == 0)
        let olderPage = [UInt8](older[itemsPage..<(itemsPage + pageSize)])
        for offset in 0..<pageSize { mapping[itemsPage + offset] = olderPage[offset] }
        var after = stat()
        #expect(stat(databasePath, &after) == 0)
        // The older row is in the file, with the change time it had (unless its page was
        // written back in between); either way the keychain must be refused.
        print("change time kept by the write through the mapping:", after.st_ctim.tv_sec == before.st_ctim.tv_sec && after.st_ctim.tv_nsec == before.st_ctim.tv_nsec)
        expectRefused(keychain, "an older row written through a mapping")
    }

    private func copyfile(_ source: String, to target: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: source) else { return false }
        guard FileManager.default.createFile(atPath: target, contents: data, attributes: [.posixPermissions: 0o600]) else { return false }
        return true
    }
}
