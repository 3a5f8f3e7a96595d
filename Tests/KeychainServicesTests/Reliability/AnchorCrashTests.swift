// The rollback anchor's write protocol, killed at every step: a small C library loaded with
// LD_PRELOAD counts the calls that open, write, sync, link or remove a file whose path
// names keychain.anchor, and kills the process (SIGKILL) just before the Nth one. The test
// runs a writer once per N, from a fresh keychain and from one written before anchors
// existed (the writer then anchors it), and after each kill requires that the keychain
// opens in a new process, holds every item written before and every acknowledged one, and
// takes a write (which removes what an interrupted creation left). A keychain that nobody
// changed is never refused as rolled back.
import Foundation
@testable import KeychainServices
import Testing

struct AnchorCrashTests {
    static let interposer = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <signal.h>
        #include <stdarg.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <sys/types.h>
        #include <unistd.h>

        static long counter;

        static int anchor_path(const char *path) { return path && strstr(path, "keychain.anchor") != 0; }

        static int anchor_fd(int fd) {
            char link[64], path[4096];
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t length = readlink(link, path, sizeof path - 1);
            if (length <= 0) return 0;
            path[length] = 0;
            return anchor_path(path);
        }

        /* Called just before a call on an anchor file: the Nth one is never made. */
        static void step(void) {
            const char *at = getenv("ANCHOR_CRASH_AT");
            counter++;
            if (at && counter == atol(at)) raise(SIGKILL);
        }

        __attribute__((destructor)) static void report(void) {
            char line[64];
            int length = snprintf(line, sizeof line, "anchor-steps %ld\n", counter);
            ssize_t ignored = write(2, line, (size_t)length);
            (void)ignored;
        }

        #define REAL(name, type) \
            typedef __typeof__(type) name##_type; \
            static name##_type real_##name; \
            if (!real_##name) real_##name = (name##_type)dlsym(RTLD_NEXT, #name)

        int open(const char *path, int flags, ...) {
            REAL(open, int (*)(const char *, int, ...));
            mode_t mode = 0;
            if (flags & O_CREAT) { va_list list; va_start(list, flags); mode = (mode_t)va_arg(list, int); va_end(list); }
            if (anchor_path(path) && (flags & (O_WRONLY | O_RDWR | O_CREAT))) step();
            return real_open(path, flags, mode);
        }
        int open64(const char *path, int flags, ...) {
            REAL(open64, int (*)(const char *, int, ...));
            mode_t mode = 0;
            if (flags & O_CREAT) { va_list list; va_start(list, flags); mode = (mode_t)va_arg(list, int); va_end(list); }
            if (anchor_path(path) && (flags & (O_WRONLY | O_RDWR | O_CREAT))) step();
            return real_open64(path, flags, mode);
        }
        ssize_t pwrite(int fd, const void *bytes, size_t count, off_t offset) {
            REAL(pwrite, ssize_t (*)(int, const void *, size_t, off_t));
            if (anchor_fd(fd)) step();
            return real_pwrite(fd, bytes, count, offset);
        }
        ssize_t pwrite64(int fd, const void *bytes, size_t count, off_t offset) {
            REAL(pwrite64, ssize_t (*)(int, const void *, size_t, off_t));
            if (anchor_fd(fd)) step();
            return real_pwrite64(fd, bytes, count, offset);
        }
        ssize_t write(int fd, const void *bytes, size_t count) {
            REAL(write, ssize_t (*)(int, const void *, size_t));
            if (fd > 2 && anchor_fd(fd)) step();
            return real_write(fd, bytes, count);
        }
        int fsync(int fd) { REAL(fsync, int (*)(int)); if (anchor_fd(fd)) step(); return real_fsync(fd); }
        int fdatasync(int fd) { REAL(fdatasync, int (*)(int)); if (anchor_fd(fd)) step(); return real_fdatasync(fd); }
        int ftruncate(int fd, off_t length) {
            REAL(ftruncate, int (*)(int, off_t));
            if (anchor_fd(fd)) step();
            return real_ftruncate(fd, length);
        }
        int link(const char *from, const char *to) {
            REAL(link, int (*)(const char *, const char *));
            if (anchor_path(to)) step();
            return real_link(from, to);
        }
        int rename(const char *from, const char *to) {
            REAL(rename, int (*)(const char *, const char *));
            if (anchor_path(to)) step();
            return real_rename(from, to);
        }
        int unlink(const char *path) {
            REAL(unlink, int (*)(const char *));
            if (anchor_path(path)) step();
            return real_unlink(path);
        }
        """#

    enum Start: String, CaseIterable {
        case fresh
        case writtenBeforeAnchors
    }

    @Test(arguments: Start.allCases)
    func killedAtAnyStepOfTheAnchorProtocolLeavesAKeychainThatOpens(start: Start) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-anchor-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let library = try buildInterposer(in: scratch)

        // The starting keychain, copied afresh for every kill.
        let seed = TemporaryKeychain()
        defer { seed.remove() }
        var before: [String: Data] = [:]
        if start == .writtenBeforeAnchors {
            seed.run {
                for index in 0..<3 {
                    let account = "old-\(index)"
                    let value = Data("value-old-\(index)".utf8)
                    let add = genp("com.keysmith.workload", account).with(kSecValueData, value)
                    #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
                    before[account] = value
                }
            }
            KeychainEngine.close(directory: seed.directory)
            RawKeychainFile(seed).execute("DELETE FROM meta WHERE key = 'anchor-state'; PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(unlink(seed.directory.appendingPathComponent("keychain.anchor").path) == 0)
        }

        func copyOfSeed() throws -> TemporaryKeychain {
            let keychain = TemporaryKeychain(accessGroups: seed.accessGroups)
            if FileManager.default.fileExists(atPath: seed.directory.path) {
                try FileManager.default.copyItem(at: seed.directory, to: keychain.directory)
                chmod(keychain.directory.path, 0o700)
            }
            return keychain
        }

        // How many steps a whole run takes.
        let whole = try copyOfSeed()
        defer { whole.remove() }
        let full = try runWorkload(["ack-log", "w", "2"], keychain: whole, environment: ["LD_PRELOAD": library.path])
        #expect(full.status == 0, "\(full.errors)")
        let steps = full.errors.split(separator: "\n").compactMap { line -> Int? in
            line.hasPrefix("anchor-steps ") ? Int(line.dropFirst("anchor-steps ".count)) : nil
        }.last ?? 0
        #expect(steps >= 4, "the interposer saw \(steps) calls on the anchor: \(full.errors)")

        var killed = 0
        for step in 1...max(steps, 1) {
            let keychain = try copyOfSeed()
            defer {
                KeychainEngine.close(directory: keychain.directory)
                keychain.remove()
            }
            let run = try runWorkload(
                ["ack-log", "w", "2"], keychain: keychain,
                environment: ["LD_PRELOAD": library.path, "ANCHOR_CRASH_AT": "\(step)"])
            if run.reason == .uncaughtSignal { killed += 1 }
            var expected = before
            for line in run.lines where line.hasPrefix("ack ") {
                let index = line.dropFirst(4)
                expected["w-\(index)"] = Data("value-w-\(index)".utf8)
            }
            // A new process opens it (the whole database is checked against the anchor).
            let check = try runWorkload(["ack-log", "after", "1"], keychain: keychain)
            #expect(check.status == 0, "killed before anchor step \(step) of \(steps) (\(start)): \(check.errors)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: keychain.directory.path)) ?? []
            #expect(!left.contains { $0.hasPrefix(".keychain.anchor.") }, "killed before anchor step \(step): \(left) left behind")
            let items = keychain.run { workloadItems() }
            for (account, value) in expected {
                #expect(items[account] == value, "killed before anchor step \(step) (\(start)): \(account) lost")
            }
        }
        #expect(killed == steps, "\(killed) of \(steps) runs were killed")
    }

    private func buildInterposer(in directory: URL) throws -> URL {
        let source = directory.appendingPathComponent("anchor-crash.c")
        let library = directory.appendingPathComponent("anchor-crash.so")
        try Data(Self.interposer.utf8).write(to: source)
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["cc", "-shared", "-fPIC", "-O1", "-o", library.path, source.path, "-ldl"]
        let errors = Pipe()
        compiler.standardError = errors
        try compiler.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else {
            throw DurabilityTests.DurabilityTestError(message: "cannot build the crash interposer with cc (make deps installs gcc): \(message)")
        }
        return library
    }
}
