// A secret passed to SecItemAdd or SecItemUpdate leaves no copy in the process's memory
// once the call returns and the caller has wiped its own buffer: the engine copies the
// caller's bytes once, into a buffer it zeroes. `keychain-workload residue` does the calls
// and scans every readable mapping of its own process (/proc/self/maps, /proc/self/mem)
// for a 5 KiB random canary; in a process of its own, because the scan holds up every
// other thread of the process it reads.
import Foundation
import KeychainServices
import Testing

#if os(Linux)
struct SecretResidueTests {
    @Test func addAndUpdateLeaveNoCopyOfTheSecretInMemory() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let run = try runWorkload(["residue", "canary", "5120"], keychain: keychain)
        #expect(run.status == 0, "\(run.errors)")
        var seen: [String: Int] = [:]
        for line in run.lines {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { seen[String(parts[0])] = value }
        }
        #expect(seen["add"] == Int(errSecSuccess))
        #expect((seen["held"] ?? 0) >= 1, "the scan finds the caller's own buffer")
        #expect(seen["after-add"] == 0, "copies of the added secret are left in memory")
        #expect(seen["update"] == Int(errSecSuccess))
        #expect(seen["after-update"] == 0, "copies of the updated secret are left in memory")
        #expect(seen["delete"] == Int(errSecSuccess))
    }
}
#endif
