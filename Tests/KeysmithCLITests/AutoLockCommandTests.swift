#if os(Linux)
import Foundation
import Glibc
import Testing

@testable import KeychainServices

/// Auto-lock and the sharing of the unlock across the user's processes, seen from outside:
/// the kernel keyring's own view of the unlock keys (`/proc/keys`: their timeout) and
/// `keysmith` processes that must or must not find a class A item.
/// Whether this machine keeps the lock state in the kernel keyring (not in containers whose
/// seccomp profile refuses the keyring system calls).
private let lockStateIsInTheKernelKeyring = KeychainEnvironment.lockStateStore == "kernel keyring"

@Suite(.enabled(if: lockStateIsInTheKernelKeyring))
struct AutoLockCommandTests {
    static let fast = KeychainStateCommandTests.fast

    /// A keychain with a passphrase and one class A item ("a") and one class C item ("c").
    static func keychainWithItems() throws -> TemporaryHome {
        let home = TemporaryHome()
        let created = try keysmith(["create", "--stdin"], home: home, standardInput: "open sesame\n", environment: fast)
        #expect(created.status == 0, "\(created)")
        #expect(try KeychainStateCommandTests.add(home, "a", "whenUnlocked", "class-a").status == 0)
        #expect(try KeychainStateCommandTests.add(home, "c", "afterFirstUnlock", "class-c").status == 0)
        return home
    }

    /// The keychain's id (its `meta` record), which names its unlock keys in the keyring.
    static func keychainID(_ home: TemporaryHome) throws -> String {
        let database = try Database(path: home.keychain.appendingPathComponent("keychain.db").path, create: false)
        let statement = try database.cachedStatement("SELECT value FROM meta WHERE key = 'keychain-id'")
        defer { statement.reset() }
        #expect(try statement.step(), "the keychain has an id")
        let id = statement.data(at: 0)
        #expect(id.count == 16)
        return id.map { String(format: "%02x", $0) }.joined()
    }

    /// The timeout column of `/proc/keys` for the unlock key of `slot` ("perm", "expd",
    /// "14m", "59s", ...), or `nil` when the keyring has no such key.
    static func keyringTimeout(_ home: TemporaryHome, _ slot: String) throws -> String? {
        let description = "keysmith:\(try keychainID(home)):\(slot):"
        let keys = try Self.procKeys()
        for line in keys.split(separator: "\n") {
            // serial flags usage timeout perm uid gid type description: length
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // The live key: one replaced by an unlock is invalidated and stays listed (flag
            // "i", or "D" once dead) until the kernel's collector runs.
            guard fields.count > 8, !fields[1].contains("i"), !fields[1].contains("D"), !fields[1].contains("R") else { continue }
            if fields[7] == "user", fields[8] == description[...] { return String(fields[3]) }
        }
        return nil
    }

    /// All of `/proc/keys`, read to its end (it is generated as it is read, a page at a time,
    /// and has no size to go by).
    static func procKeys() throws -> String {
        let fd = open("/proc/keys", O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0, "cannot read /proc/keys")
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Minutes from a `/proc/keys` timeout such as "14m", or `nil` for anything else.
    static func minutes(_ timeout: String?) -> Int? {
        guard let timeout, timeout.hasSuffix("m") else { return nil }
        return Int(timeout.dropLast())
    }

    @Test func unlockWithATimeoutLocksClassAAgainByItself() throws {
        let home = try Self.keychainWithItems()
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        // Without a timeout class A stays readable (the item and the lock state work).
        #expect(try keysmith(["unlock", "--timeout", "0", "--stdin"], home: home, standardInput: "open sesame\n").status == 0)
        #expect(try Self.keyringTimeout(home, "a") == "perm")
        #expect(try KeychainStateCommandTests.find(home, "a").stdout == "class-a\n")

        let unlocked = try keysmith(["unlock", "--timeout", "1", "--stdin"], home: home, standardInput: "open sesame\n")
        #expect(unlocked.status == 0, "\(unlocked)")
        // The kernel enforces the timeout: however long the processes took, 2.5 s after the
        // unlock returned the key has expired.
        Thread.sleep(forTimeInterval: 2.5)
        let refused = try KeychainStateCommandTests.find(home, "a")
        #expect(refused.status == 1, "class A is still readable after its timeout: \(refused)")
        #expect(refused.stderr.contains("errSecInteractionNotAllowed"), "\(refused)")
        #expect(!refused.stdout.contains("class-a"))
        // Class C has no timeout: it stays until 'lock --all' or a restart.
        #expect(try KeychainStateCommandTests.find(home, "c").stdout == "class-c\n")
        #expect(try Self.keyringTimeout(home, "c") == "perm")
        #expect(try KeychainStateCommandTests.lockState(home) == "locked")
    }

    @Test func unlockWithoutATimeoutLocksAfterFifteenMinutesOrKEYSMITH_AUTO_LOCK() throws {
        let home = try Self.keychainWithItems()
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        // The default: 900 s, which /proc/keys shows as 14m or 15m left (minutes, rounded
        // down); "perm" would mean it never locks.
        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "open sesame\n").status == 0)
        let byDefault = try Self.keyringTimeout(home, "a")
        #expect(Self.minutes(byDefault).map { (10...15).contains($0) } == true, "class A key timeout: \(byDefault ?? "no key")")
        #expect(try Self.keyringTimeout(home, "c") == "perm")

        // KEYSMITH_AUTO_LOCK=300: 4 or 5 minutes left.
        let fiveMinutes = ["KEYSMITH_AUTO_LOCK": "300"]
        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "open sesame\n", environment: fiveMinutes).status == 0)
        let configured = try Self.keyringTimeout(home, "a")
        #expect(Self.minutes(configured).map { (1...5).contains($0) } == true, "class A key timeout: \(configured ?? "no key")")

        // KEYSMITH_AUTO_LOCK=0: never by itself.
        #expect(try keysmith(["unlock", "--stdin"], home: home, standardInput: "open sesame\n", environment: ["KEYSMITH_AUTO_LOCK": "0"]).status == 0)
        #expect(try Self.keyringTimeout(home, "a") == "perm")

        // --timeout wins over KEYSMITH_AUTO_LOCK.
        #expect(try keysmith(["unlock", "--timeout", "1200", "--stdin"], home: home, standardInput: "open sesame\n", environment: fiveMinutes).status == 0)
        let explicit = try Self.keyringTimeout(home, "a")
        #expect(Self.minutes(explicit).map { (15...20).contains($0) } == true, "class A key timeout: \(explicit ?? "no key")")
    }

    /// A small program that runs its arguments in a new, empty session keyring (what
    /// `keyctl session -` or systemd's `KeyringMode=private` give a service): the user
    /// keyring is not linked from it, so its keys are not possessed there, and only the
    /// permissions granted to the user let that process read them.
    static func buildSessionLauncher(in directory: URL) throws -> String {
        let source = directory.appendingPathComponent("new-session.c")
        let program = directory.appendingPathComponent("new-session")
        try Data(
            #"""
            #include <linux/keyctl.h>
            #include <stdio.h>
            #include <sys/syscall.h>
            #include <unistd.h>

            int main(int argc, char **argv) {
                if (argc < 2) return 2;
                if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, (char *)0) < 0) { perror("join session keyring"); return 125; }
                execv(argv[1], argv + 1);
                perror("execv");
                return 126;
            }
            """#.utf8
        ).write(to: source)
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["cc", "-O1", "-o", program.path, source.path]
        try compiler.run()
        compiler.waitUntilExit()
        try #require(compiler.terminationStatus == 0, "cannot build the session launcher with cc (make deps installs gcc)")
        return program.path
    }

    @Test func aProcessWithoutTheSessionKeyringSeesTheUnlock() throws {
        let home = try Self.keychainWithItems()
        defer { _ = try? keysmith(["lock", "--all"], home: home) }
        let launcher = try Self.buildSessionLauncher(in: home.url)
        #expect(try keysmith(["unlock", "--timeout", "0", "--stdin"], home: home, standardInput: "open sesame\n").status == 0)
        let found = try keysmith(
            ["find-generic-password", "-s", "svc", "-a", "a", "-w"], home: home, environment: Self.fast, launcher: [launcher])
        #expect(found.status == 0, "a process in another session keyring does not see the unlock: \(found)")
        #expect(found.stdout == "class-a\n")
        // And the lock reaches it as well.
        #expect(try keysmith(["lock"], home: home).status == 0)
        let locked = try keysmith(
            ["find-generic-password", "-s", "svc", "-a", "a", "-w"], home: home, environment: Self.fast, launcher: [launcher])
        #expect(locked.status == 1, "\(locked)")
        #expect(locked.stderr.contains("errSecInteractionNotAllowed"), "\(locked)")
    }
}
#endif
