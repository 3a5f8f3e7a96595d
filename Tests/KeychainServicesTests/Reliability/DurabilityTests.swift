// Durability: an acknowledged write survives power loss. Killing a process cannot show this
// (the kernel still holds the data), so the test watches the promise itself: a small C
// library loaded into a writer with LD_PRELOAD reports every fsync and fdatasync that
// completes, and the value of `PRAGMA synchronous` on the connection that writes items.
// Every acknowledged add must be preceded by a completed sync of the write-ahead log
// (`synchronous=FULL` in WAL mode syncs the log at each commit; NORMAL and OFF do not).
import Foundation
import KeychainServices
import Testing

struct DurabilityTests {
    /// The interposer: it writes its reports on standard output, where the writer also
    /// writes its acknowledgements, so the order of the lines is the order of the calls.
    static let interposer = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <stdio.h>
        #include <string.h>
        #include <unistd.h>

        static void report(const char *text) { ssize_t ignored = write(1, text, strlen(text)); (void)ignored; }

        static void synced(const char *call, int fd) {
            char link[64], path[4096], line[4200];
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t length = readlink(link, path, sizeof path - 1);
            path[length > 0 ? length : 0] = 0;
            snprintf(line, sizeof line, "%s %s\n", call, path);
            report(line);
        }

        int fsync(int fd) {
            static int (*real)(int);
            if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
            int result = real(fd);
            if (result == 0) synced("fsync", fd);
            return result;
        }

        int fdatasync(int fd) {
            static int (*real)(int);
            if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
            int result = real(fd);
            if (result == 0) synced("fdatasync", fd);
            return result;
        }

        typedef int (*prepare_fn)(void *, const char *, int, void **, const char **);
        static __thread int inside;

        /* Reports PRAGMA synchronous of a connection that is about to write items. */
        static void report_synchronous(void *db) {
            prepare_fn prepare = (prepare_fn)dlsym(RTLD_NEXT, "sqlite3_prepare_v2");
            int (*step)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "sqlite3_step");
            int (*column)(void *, int) = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "sqlite3_column_int");
            int (*finalize)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "sqlite3_finalize");
            void *statement = 0;
            char line[64];
            if (prepare(db, "PRAGMA synchronous", -1, &statement, 0) == 0 && statement && step(statement) == 100) {
                snprintf(line, sizeof line, "synchronous %d\n", column(statement, 0));
            } else {
                snprintf(line, sizeof line, "synchronous unknown\n");
            }
            if (statement) finalize(statement);
            report(line);
        }

        int sqlite3_prepare_v2(void *db, const char *sql, int length, void **statement, const char **tail) {
            static prepare_fn real;
            if (!real) real = (prepare_fn)dlsym(RTLD_NEXT, "sqlite3_prepare_v2");
            int result = real(db, sql, length, statement, tail);
            if (!inside && sql && strncmp(sql, "INSERT INTO items", 17) == 0) {
                inside = 1;
                report_synchronous(db);
                inside = 0;
            }
            return result;
        }
        """#

    /// Builds the interposer with the system C compiler (`make deps` installs gcc).
    static func buildInterposer(in directory: URL) throws -> URL {
        let source = directory.appendingPathComponent("sync-report.c")
        let library = directory.appendingPathComponent("sync-report.so")
        try Data(interposer.utf8).write(to: source)
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["cc", "-shared", "-fPIC", "-O1", "-o", library.path, source.path, "-ldl"]
        let errors = Pipe()
        compiler.standardError = errors
        try compiler.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else {
            throw DurabilityTestError(
                message: "cannot build the sync reporter with cc (make deps installs gcc): \(message)")
        }
        return library
    }

    struct DurabilityTestError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    @Test func everyAcknowledgedWriteFollowsASyncOfTheLog() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let library = try Self.buildInterposer(in: scratch)

        let count = 40
        let run = try runWorkload(
            ["ack-log", "durable", "\(count)"], keychain: keychain, environment: ["LD_PRELOAD": library.path])
        #expect(run.status == 0, "\(run.errors)")

        let log = keychain.directory.appendingPathComponent("keychain.db-wal").path
        var acknowledged = 0
        var unsynced: [String] = []
        var logSyncedSinceLastAck = false
        var logSyncs = 0
        var synchronousValues: [String] = []
        for line in run.lines {
            if line.hasPrefix("fsync ") || line.hasPrefix("fdatasync ") {
                let path = line.split(separator: " ", maxSplits: 1).last.map(String.init) ?? ""
                if path == log {
                    logSyncedSinceLastAck = true
                    logSyncs += 1
                }
            } else if line.hasPrefix("synchronous ") {
                synchronousValues.append(String(line.dropFirst("synchronous ".count)))
            } else if line.hasPrefix("ack ") {
                acknowledged += 1
                if !logSyncedSinceLastAck { unsynced.append(line) }
                logSyncedSinceLastAck = false
            }
        }
        #expect(acknowledged == count, "the writer acknowledged \(acknowledged) of \(count) writes: \(run.errors)")
        #expect(unsynced.isEmpty, "acknowledged before the log reached the disk: \(unsynced.prefix(5)) (of \(unsynced.count))")
        #expect(logSyncs >= count, "\(logSyncs) syncs of \(log) for \(count) writes")
        // 2 is FULL, 3 EXTRA; 0 (OFF) and 1 (NORMAL) lose acknowledged writes on power loss.
        #expect(!synchronousValues.isEmpty, "the connection that writes items was never seen")
        #expect(synchronousValues.allSatisfy { $0 == "2" || $0 == "3" }, "PRAGMA synchronous: \(synchronousValues)")
    }

    /// The anchor file records the state a write is about to commit, so that a database
    /// found in that state after a crash is accepted: that record must be on the disk before
    /// the commit is. Every acknowledged add must be preceded by a sync of the anchor that
    /// comes before the sync of the log that commits it.
    @Test func everyAcknowledgedWriteSyncsTheAnchorBeforeItsCommit() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let library = try Self.buildInterposer(in: scratch)

        let count = 20
        let run = try runWorkload(
            ["ack-log", "anchored", "\(count)"], keychain: keychain, environment: ["LD_PRELOAD": library.path])
        #expect(run.status == 0, "\(run.errors)")

        let log = keychain.directory.appendingPathComponent("keychain.db-wal").path
        let anchor = keychain.directory.appendingPathComponent("keychain.anchor").path
        var acknowledged = 0
        var anchorSyncs = 0
        var anchorSyncedSinceLastAck = false
        var commitAfterAnchorSync = false
        var unsynced: [String] = []
        for line in run.lines {
            if line.hasPrefix("fsync ") || line.hasPrefix("fdatasync ") {
                let path = line.split(separator: " ", maxSplits: 1).last.map(String.init) ?? ""
                if path == anchor {
                    anchorSyncs += 1
                    anchorSyncedSinceLastAck = true
                } else if path == log, anchorSyncedSinceLastAck {
                    commitAfterAnchorSync = true
                }
            } else if line.hasPrefix("ack ") {
                acknowledged += 1
                if !commitAfterAnchorSync { unsynced.append(line) }
                anchorSyncedSinceLastAck = false
                commitAfterAnchorSync = false
            }
        }
        #expect(acknowledged == count, "the writer acknowledged \(acknowledged) of \(count) writes: \(run.errors)")
        #expect(anchorSyncs >= count, "\(anchorSyncs) syncs of \(anchor) for \(count) writes")
        #expect(unsynced.isEmpty, "committed before the anchor reached the disk: \(unsynced.prefix(5)) (of \(unsynced.count))")
    }
}
