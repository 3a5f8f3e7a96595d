// The unlock state in the kernel keyring as a user who is not root meets it: a key quota
// of 200 keys (`/proc/sys/kernel/keys/maxkeys`), shared by every keychain the user ever
// unlocked since the machine started. The tests run the tool as another uid (setpriv).
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct UnlockStateQuotaTests {
    static let fast = ["KEYSMITH_KDF_PROFILE": "fast"]
    /// A uid that is not root and owns nothing on the machine.
    static let user: uid_t = 54321

    static var canRunAsAnotherUser: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    }

    /// The keys the kernel counts against the user's quota (`/proc/key-users`:
    /// "UID: usage nkeys/nikeys qnkeys/maxkeys qnbytes/maxbytes").
    static func userKeyCount() -> Int? { userQuota()?.keys }

    /// The user's keys and their bytes, with the two limits.
    static func userQuota() -> (keys: Int, maxKeys: Int, bytes: Int, maxBytes: Int)? {
        let text = (try? String(contentsOfFile: "/proc/key-users", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == ":" })
            guard fields.first == "\(user)", fields.count >= 5 else { continue }
            let keys = fields[3].split(separator: "/"), bytes = fields[4].split(separator: "/")
            guard keys.count == 2, bytes.count == 2, let k = Int(keys[0]), let mk = Int(keys[1]), let b = Int(bytes[0]),
                let mb = Int(bytes[1])
            else { return nil }
            return (k, mk, b, mb)
        }
        return nil
    }

    /// Whether the user's quota is (nearly) full: in keys, or in bytes (about 100 a secret).
    static func quotaIsFull() -> Bool {
        guard let quota = userQuota() else { return false }
        return quota.keys >= quota.maxKeys - 4 || quota.bytes >= quota.maxBytes - 400
    }

    static let asUser = ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--clear-groups"]

    /// The user's key quota (`maxkeys`), 200 unless the administrator changed it.
    static var keyQuota: Int {
        Int((try? String(contentsOfFile: "/proc/sys/kernel/keys/maxkeys", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 200
    }

    /// A home that the other uid owns (so the keychain directories in it are its own).
    static func homeOwnedByUser() -> TemporaryHome {
        let home = TemporaryHome()
        chown(home.url.path, user, user)
        return home
    }

    static func run(_ arguments: [String], _ home: TemporaryHome, keychain: URL, input: String? = nil) throws -> RunResult {
        try keysmith(
            ["--keychain", keychain.path] + arguments, home: home, standardInput: input, environment: fast,
            useKeychainFlag: false, launcher: asUser)
    }

    /// Enough keychains, created with a passphrase (so unlocked) and then deleted, to fill
    /// the user's key quota (two keys each) never stop the next unlock: one in four is
    /// deleted with `delete-keychain` (which removes its keys), the others by removing their
    /// folders (whose keys make room when the quota is full). `make test` runs enough for
    /// the removed folders alone to pass the quota (maxkeys * 2 / 3 + 20 keychains); `make
    /// stress` runs 1,000 (`KEYSMITH_STRESS_KEYCHAINS`).
    @Test(.enabled(if: canRunAsAnotherUser, "needs root to run the tool as another uid"))
    func deletedKeychainsNeverStopTheNextUnlock() throws {
        let home = Self.homeOwnedByUser()
        let real = home.url.appendingPathComponent("real")
        defer { _ = try? Self.run(["lock", "--all"], home, keychain: real) }
        #expect(try Self.run(["create", "--stdin"], home, keychain: real, input: "real pass\n").status == 0)
        #expect(try keysmith(
            ["--keychain", real.path, "add-generic-password", "-s", "s", "-a", "a", "--stdin"], home: home,
            standardInput: "kept", environment: Self.fast, useKeychainFlag: false, launcher: Self.asUser).status == 0)
        #expect(try Self.run(["lock", "--all"], home, keychain: real).status == 0)
        let count = Int(ProcessInfo.processInfo.environment["KEYSMITH_STRESS_KEYCHAINS"] ?? "") ?? (Self.keyQuota * 2 / 3 + 20)
        var quotaFilled = false
        for index in 0..<count {
            let temporary = home.url.appendingPathComponent("temporary-\(index)")
            let created = try Self.run(["create", "--stdin"], home, keychain: temporary, input: "temporary \(index)\n")
            #expect(created.status == 0, "keychain \(index): \(created)")
            #expect(created.stdout.contains("it is unlocked"), "keychain \(index): \(created)")
            quotaFilled = quotaFilled || Self.quotaIsFull()
            if index % 4 == 0 {
                let deleted = try Self.run(["delete-keychain"], home, keychain: temporary)
                #expect(deleted.status == 0, "\(deleted)")
                #expect(!FileManager.default.fileExists(atPath: temporary.path))
            } else {
                try FileManager.default.removeItem(at: temporary)
            }
            if created.status != 0 { break }
        }
        // The quota was full at some point: room was made, not merely left over.
        #expect(quotaFilled, "the user's key quota was never full: \(String(describing: Self.userQuota()))")
        let unlocked = try Self.run(["unlock", "--stdin"], home, keychain: real, input: "real pass\n")
        #expect(unlocked.status == 0, "\(unlocked)")
        let found = try keysmith(
            ["--keychain", real.path, "find-generic-password", "-s", "s", "-a", "a", "-w"], home: home,
            environment: Self.fast, useKeychainFlag: false, launcher: Self.asUser)
        #expect(found.stdout == "kept\n", "\(found)")
    }

    /// Deleting a keychain removes its unlock state: the user's key count (as the kernel
    /// counts it against the quota) goes down by its two keys.
    @Test(.enabled(if: canRunAsAnotherUser, "needs root to run the tool as another uid"))
    func deleteKeychainRemovesItsKeys() throws {
        let home = Self.homeOwnedByUser()
        let keychain = home.url.appendingPathComponent("kc")
        func userKeys() -> Int? { Self.userKeyCount() }
        #expect(try Self.run(["create", "--stdin"], home, keychain: keychain, input: "pw\n").status == 0)
        let withKeys = try #require(userKeys())
        #expect(try Self.run(["delete-keychain"], home, keychain: keychain).status == 0)
        // The kernel frees removed keys shortly after (its key collector).
        var after = userKeys() ?? 0
        for _ in 0..<100 where after > withKeys - 2 {
            usleep(20_000)
            after = userKeys() ?? 0
        }
        #expect(after <= withKeys - 2, "keys before delete: \(withKeys), after: \(after)")
        let again = try Self.run(["delete-keychain"], home, keychain: keychain)
        #expect(again.status == 0)
        #expect(again.stdout.contains("there is no keychain"))
    }
}
