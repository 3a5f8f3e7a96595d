// A key file is rewritten where it was read, and only if it is still the file that was
// read. Between reading the file and rewriting it, the migration writes to the keychain;
// another program (or another user, when the file is in a directory they can write) can
// change the file or the path meanwhile. The logger, called after each key, stands in for
// that program here: it acts at a fixed point of the migration, without timing.
#if os(Linux)
import Foundation
import Glibc
import Keysmith
import KeychainServices
import Testing

private func temporaryDirectory(_ name: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("keysmith-race-\(name)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

private func keys(of url: URL) throws -> [String] {
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
    return object?.keys.sorted() ?? []
}

/// Runs `action` once, at the first migration event.
private final class OneShot: @unchecked Sendable {
    private let lock = NSLock()
    private var action: (() -> Void)?

    init(_ action: @escaping () -> Void) { self.action = action }

    var logger: SecureStoreLogger {
        SecureStoreLogger { [self] event in
            guard event.operation == .migratePlaintext else { return }
            lock.lock()
            let pending = action
            action = nil
            lock.unlock()
            pending?()
        }
    }
}

struct PlaintextFileRaceTests {
    /// The directory of the key file is replaced by a link to another directory (`/etc`,
    /// say) after the file was read: the rewrite must not land in the other directory.
    @Test func test_directorySwappedForALink_theOtherDirectoryIsUntouched() throws {
        try withTemporaryKeychain {
            let parent = try temporaryDirectory("parent")
            let elsewhere = try temporaryDirectory("elsewhere")
            defer {
                try? FileManager.default.removeItem(at: parent)
                try? FileManager.default.removeItem(at: elsewhere)
            }
            let directory = parent.appendingPathComponent("config", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let url = directory.appendingPathComponent("keys.json")
            try Data(#"{"api_key": "sk-1", "other": "x"}"#.utf8).write(to: url)
            let victim = elsewhere.appendingPathComponent("keys.json")
            try Data(#"{"system": "untouched"}"#.utf8).write(to: victim)
            let moved = parent.appendingPathComponent("config.moved", isDirectory: true)
            let swap = OneShot {
                _ = rename(directory.path, moved.path)
                _ = symlink(elsewhere.path, directory.path)
            }
            let store = try SecureStore(
                configuration: SecureStore.Configuration(servicePrefix: uniquePrefix(), logger: swap.logger))

            _ = try? store.migratePlaintext(fromFile: url, keys: ["api_key"], in: "config")
            #expect(try keys(of: victim) == ["system"], "the migration rewrote a file in the other directory")
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path) == ["keys.json"])
            #expect(try keys(of: moved.appendingPathComponent("keys.json")) == ["other"])
        }
    }

    /// A key added to the file after it was read (by the app, an editor, a deploy script)
    /// must not be lost by a rewrite from the stale copy.
    @Test func test_fileChangedAfterItWasRead_theChangeIsNotLost() throws {
        try withTemporaryKeychain {
            let directory = try temporaryDirectory("changed")
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("keys.json")
            try Data(#"{"api_key": "sk-1", "other": "x"}"#.utf8).write(to: url)
            let edit = OneShot {
                try? Data(#"{"api_key": "sk-1", "other": "x", "added_key": "sk-added"}"#.utf8).write(to: url)
            }
            let store = try SecureStore(
                configuration: SecureStore.Configuration(servicePrefix: uniquePrefix(), logger: edit.logger))

            let error = #expect(throws: SecureStoreError.self) {
                try store.migratePlaintext(fromFile: url, keys: ["api_key"], in: "config")
            }
            #expect(error?.message.contains("changed") == true, "\(String(describing: error))")
            // The fix fits the cause: run again; not general advice to report a failure.
            #expect(error?.recoverySuggestion?.contains("again") == true, "\(String(describing: error))")
            #expect(!String(describing: error).contains("report it if it persists"), "\(String(describing: error))")
            #expect(try keys(of: url) == ["added_key", "api_key", "other"], "a key added meanwhile was lost")
            // The next run finds the value in the keychain and finishes the job.
            let again = try store.migratePlaintext(fromFile: url, keys: ["api_key"], in: "config")
            #expect(again.alreadyPresent == ["api_key"])
            #expect(try keys(of: url) == ["added_key", "other"])
        }
    }
}
#endif
