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

    /// Keychains created with a passphrase (so unlocked) and then deleted never stop the
    /// next unlock, however full the user's key quota: one in four is deleted with
    /// `delete-keychain` (which removes its keys), the others by removing their folders
    /// (whose keys make room when the quota is full). `make stress` creates 1,000
    /// (`KEYSMITH_STRESS_KEYCHAINS`); `make test` first fills the quota with the unlock
    /// secrets that removed keychain folders leave (`keysmith:<id>:c` keys, made with
    /// `keyctl`, which costs far less than making the keychains), then creates 12. The loop is
    /// one shell script run as that uid, waited for without holding a thread of the test
    /// runner.
    @Test(.enabled(if: canRunAsAnotherUser, "needs root to run the tool as another uid"))
    func deletedKeychainsNeverStopTheNextUnlock() async throws {
        let home = Self.homeOwnedByUser()
        let stress = Int(ProcessInfo.processInfo.environment["KEYSMITH_STRESS_KEYCHAINS"] ?? "")
        let count = stress ?? 12
        // What removed keychain folders leave: class C secrets of keychains nobody can open.
        let prefill = stress != nil || !FileManager.default.isExecutableFile(atPath: "/usr/bin/keyctl") ? "" : """
            n=0
            while head -c 32 /dev/urandom | keyctl padd user "keysmith:$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n'):c" @u >/dev/null 2>&1; do
              n=$((n + 1)); [ $n -lt 1000 ] || break
            done
            """
        let script = """
            K=\(keysmithExecutable().path); H=\(home.url.path)
            printf 'real pass\\n' | $K --keychain $H/real create --stdin >/dev/null || { echo "creating the real keychain failed"; exit 3; }
            printf kept | $K --keychain $H/real add-generic-password -s s -a a --stdin >/dev/null || exit 4
            $K --keychain $H/real lock --all >/dev/null || exit 5
            \(prefill)
            quota() {
              awk -v u="\(Self.user):" '$1 == u { split($4, k, "/"); split($5, b, "/"); if (k[1] >= k[2] - 4 || b[1] >= b[2] - 400) print "quota full" }' /proc/key-users
            }
            quota
            i=0
            while [ $i -lt \(count) ]; do
              out=$(printf "temporary $i\\n" | $K --keychain $H/t$i create --stdin 2>&1) || { echo "create $i failed: $out"; exit 6; }
              case "$out" in *"it is unlocked"*) ;; *) echo "create $i: $out"; exit 7;; esac
              if [ $((i % 4)) -eq 0 ]; then
                $K --keychain $H/t$i delete-keychain >/dev/null || { echo "delete-keychain $i failed"; exit 8; }
                [ ! -e $H/t$i ] || { echo "delete-keychain $i left the folder"; exit 9; }
              else
                rm -rf $H/t$i
              fi
              quota
              i=$((i + 1))
            done
            out=$(printf 'real pass\\n' | $K --keychain $H/real unlock --stdin 2>&1) || { echo "unlock failed: $out"; exit 10; }
            echo "found: $($K --keychain $H/real find-generic-password -s s -a a -w)"
            $K --keychain $H/real lock --all >/dev/null
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.asUser[0])
        process.arguments = Array(Self.asUser.dropFirst()) + ["/bin/sh", "-c", script]
        process.environment = subprocessEnvironment(home: home, extra: Self.fast)
        process.currentDirectoryURL = home.url
        let output = home.url.appendingPathComponent("loop.out")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        defer { try? handle.close() }
        process.standardOutput = handle
        process.standardError = handle
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            process.terminationHandler = { _ in done.resume() }
            do { try process.run() } catch { done.resume() }
        }
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "\(text.suffix(2_000))")
        // The quota was full at some point: room was made, not merely left over.
        #expect(text.contains("quota full"), "the user's key quota was never full: \(String(describing: Self.userQuota()))")
        #expect(text.contains("found: kept"), "\(text.suffix(2_000))")
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
