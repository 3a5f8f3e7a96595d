// migratePlaintext(fromFile:) removes migrated keys from the file without loosening it: the
// rewritten file keeps its mode and owner, a symbolic link is followed (the real file is
// rewritten and the link kept), and a rewrite that fails is reported, not ignored.
#if os(Linux)
import Foundation
import Glibc
import Keysmith
import KeychainServices
import Testing

private func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("keysmith-plaintext-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

private func status(of url: URL) -> stat {
    var info = stat()
    _ = stat(url.path, &info)
    return info
}

private func keys(of url: URL) throws -> [String] {
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
    return object?.keys.sorted() ?? []
}

struct PlaintextFileRewriteTests {
    @Test func test_rewrite_keepsTheFilesMode() throws {
        try withTemporaryKeychain {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("secrets.json")
            try Data(#"{"api_key": "sk-1", "db_password": "pw"}"#.utf8).write(to: url)
            // 0640: a mode a new file never gets by default (0600 for a private temporary
            // file, 0644 under the usual umask), so only copying the mode over gives it.
            #expect(chmod(url.path, 0o640) == 0)
            let store = try makeStore()

            let report = try store.migratePlaintext(fromFile: url, keys: ["api_key"], in: "config")
            #expect(report.migrated == ["api_key"])
            #expect(try keys(of: url) == ["db_password"])
            #expect(status(of: url).st_mode & 0o777 == 0o640)
        }
    }

    /// Only root can give a file to another user: elsewhere this test is skipped, and says so.
    @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
    func test_rewrite_keepsTheFilesOwner() throws {
        try withTemporaryKeychain {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("secrets.json")
            try Data(#"{"api_key": "sk-1", "db_password": "pw"}"#.utf8).write(to: url)
            #expect(chown(url.path, 65534, 65534) == 0)
            #expect(chmod(url.path, 0o640) == 0)
            let store = try makeStore()

            try store.migratePlaintext(fromFile: url, keys: ["api_key"], in: "config")
            let info = status(of: url)
            #expect(info.st_uid == 65534 && info.st_gid == 65534)
            #expect(info.st_mode & 0o777 == 0o640)
        }
    }

    @Test func test_symbolicLink_theRealFileIsRewritten_andTheLinkKept() throws {
        try withTemporaryKeychain {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let real = directory.appendingPathComponent("real-secrets.json")
            let link = directory.appendingPathComponent("secrets.json")
            try Data(#"{"api_key": "sk-1", "db_password": "pw"}"#.utf8).write(to: real)
            #expect(chmod(real.path, 0o600) == 0)
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
            let store = try makeStore()

            let report = try store.migratePlaintext(fromFile: link, keys: ["api_key"], in: "config")
            #expect(report.migrated == ["api_key"])
            // The migrated secret is gone from the real file, which keeps its mode; the link stays a link.
            #expect(try keys(of: real) == ["db_password"])
            #expect(status(of: real).st_mode & 0o777 == 0o600)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == real.path)
        }
    }

    @Test func test_symbolicLink_lastKeyMigrated_removesTheRealFileAndTheLink() throws {
        try withTemporaryKeychain {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let real = directory.appendingPathComponent("real-secrets.json")
            let link = directory.appendingPathComponent("secrets.json")
            try Data(#"{"api_key": "sk-1"}"#.utf8).write(to: real)
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
            let store = try makeStore()

            try store.migratePlaintext(fromFile: link, in: "config")
            #expect(!FileManager.default.fileExists(atPath: real.path))
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) == nil)
        }
    }

    @Test func test_hardLinkedFile_isRefused_beforeAnythingMoves() throws {
        try withTemporaryKeychain {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("secrets.json")
            let other = directory.appendingPathComponent("backup.json")
            try Data(#"{"api_key": "sk-1", "db_password": "pw"}"#.utf8).write(to: url)
            #expect(link(url.path, other.path) == 0)
            let store = try makeStore()

            let error = #expect(throws: SecureStoreError.self) {
                try store.migratePlaintext(fromFile: url, keys: ["api_key"], in: "config")
            }
            #expect(error?.code == .invalidValue)
            #expect(error?.message.contains("2 names") == true)
            #expect(try keys(of: url) == ["api_key", "db_password"])
            #expect(try store.contains("api_key", in: "config") == false)
        }
    }

    @Test func test_failedRewrite_isReported_andTheFileKeepsItsContents() throws {
        try withTemporaryKeychain {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            // A name so long that no temporary file can be made beside it (even by root):
            // the rewrite fails after the keychain write.
            let url = directory.appendingPathComponent(String(repeating: "s", count: 250) + ".json")
            try Data(#"{"api_key": "sk-1", "db_password": "pw"}"#.utf8).write(to: url)
            let store = try makeStore()

            let error = #expect(throws: SecureStoreError.self) {
                try store.migratePlaintext(fromFile: url, keys: ["api_key"], in: "config")
            }
            #expect(error?.code == .unknown)
            #expect(error?.message.contains("api_key") == true)
            #expect(error?.message.contains("sk-1") == false)
            #expect(try keys(of: url) == ["api_key", "db_password"])
            // The keychain copy is verified and stays; the next run finds it already present.
            #expect(try store.get("api_key", as: String.self, in: "config") == "sk-1")
        }
    }
}
#endif
