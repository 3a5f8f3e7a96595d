// Keychain files prepared by another user are refused, as ssh refuses a key file it does
// not own: otherwise that user could read everything stored afterwards. The tests run as
// root in CI, so they can hand a file to `nobody`; as an ordinary user they are skipped.
import CSQLite
import Foundation
@testable import KeychainServices
import Testing

struct FileOwnershipTests {
    /// The uid and gid of `nobody`, when this process may give files away.
    static var nobody: (uid: uid_t, gid: gid_t)? {
        guard geteuid() == 0, let entry = getpwnam("nobody") else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    private func readAll() -> OSStatus {
        SecItemCopyMatching(genp().with(kSecReturnData, true) as CFDictionary, nil)
    }

    @Test(.enabled(if: nobody != nil, "needs root to give a file to another user"))
    func directoryOwnedByAnotherUserIsRefused() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let (uid, gid) = try #require(Self.nobody)
        // Another user prepared the directory (mode 0700, as a careful attacker would).
        try FileManager.default.createDirectory(at: keychain.directory, withIntermediateDirectories: true)
        chmod(keychain.directory.path, 0o700)
        #expect(chown(keychain.directory.path, uid, gid) == 0)
        keychain.run {
            #expect(SecItemAdd(genp().with(kSecValueData, Data("stored".utf8)) as CFDictionary, nil) == errSecWrPerm)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("belongs to another user") == true)
            #expect(KeychainDiagnostics.lastFailureRecovery?.contains("chown") == true)
        }
        #expect(!FileManager.default.fileExists(atPath: keychain.directory.appendingPathComponent("device.key").path),
                "nothing is written into a directory another user controls")
    }

    @Test(.enabled(if: nobody != nil, "needs root to give a file to another user"))
    func keyFileOrDatabaseOwnedByAnotherUserIsRefused() throws {
        let (uid, gid) = try #require(Self.nobody)
        for name in ["device.key", "keychain.db"] {
            let keychain = TemporaryKeychain()
            defer { keychain.remove() }
            keychain.run { #expect(SecItemAdd(genp().with(kSecValueData, Data("1".utf8)) as CFDictionary, nil) == errSecSuccess) }
            KeychainEngine.close(directory: keychain.directory)
            let path = keychain.directory.appendingPathComponent(name).path
            #expect(chown(path, uid, gid) == 0)
            keychain.run {
                #expect(readAll() == errSecWrPerm, "\(name)")
                #expect(KeychainDiagnostics.lastFailureDescription?.contains("belongs to another user") == true, "\(name)")
                #expect(KeychainDiagnostics.lastFailureRecovery?.contains("chown") == true, "\(name)")
            }
            #expect(chown(path, 0, 0) == 0)
            KeychainEngine.close(directory: keychain.directory)
            keychain.run { #expect(readAll() == errSecSuccess, "\(name): usable again once fixed") }
        }
    }

    /// SQLite reopens the database by name after the engine checked it; the open itself
    /// must refuse a symbolic link, or a link swapped in between would be followed.
    @Test func databaseOpenRefusesASymbolicLink() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-link-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("elsewhere.db").path
        let link = directory.appendingPathComponent("keychain.db").path
        var handle: OpaquePointer?
        #expect(sqlite3_open(target, &handle) == SQLITE_OK)
        sqlite3_exec(handle, "CREATE TABLE t(x)", nil, nil, nil)
        sqlite3_close(handle)
        #expect(symlink(target, link) == 0)
        #expect(throws: DatabaseError.self) { _ = try Database(path: link, create: false) }
        #expect(throws: DatabaseError.self) { _ = try Database(path: link, create: true) }
    }
}
