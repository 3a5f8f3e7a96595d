// A full disk, simulated with a file-size limit (RLIMIT_FSIZE through `ulimit -f`) on a
// writer process: the writer gets a clear error status, and every item stored before is
// still there and readable afterwards; the keychain keeps working once space is back.
import Foundation
import KeychainServices
import Testing

struct FullDiskTests {
    @Test func fullDiskGivesACleanErrorAndLosesNothing() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let before = (0..<20).map { "before-\($0)" }
        keychain.run {
            for account in before {
                var add = genp("com.keysmith.workload", account)
                add[kSecValueData as String] = Data("kept-\(account)".utf8)
                #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            }
        }
        let databaseSize = (try FileManager.default.attributesOfItem(
            atPath: keychain.directory.appendingPathComponent("keychain.db").path)[.size] as? Int) ?? 0
        // Allow the files to grow by about 256 KiB (ulimit -f counts 512-byte blocks in dash
        // and 1024-byte blocks in bash; both leave room for some writes, then refuse).
        let blocks = max(databaseSize / 512, 64) + 256
        let run = try runWorkload(["fill", "fill", "100000"], keychain: keychain, shellPrefix: "ulimit -f \(blocks);")
        #expect(run.lines.contains { $0.hasPrefix("refused") }, "the limit was never hit: \(run.lines.suffix(2)) \(run.errors)")
        #expect(run.status == 0, "the refusal was not a clean status: \(run.lines.suffix(1)) \(run.errors)")

        #expect(integrityCheck(keychain) == "ok")
        keychain.run {
            let items = workloadItems()
            for account in before {
                #expect(items[account] == Data("kept-\(account)".utf8), "\(account) lost")
            }
            // Acknowledged writes of the filler are there too, and the keychain still works.
            let acknowledged = run.lines.filter { $0.hasPrefix("ack ") }.count
            #expect(items.keys.filter { $0.hasPrefix("fill-") }.count >= acknowledged)
            #expect(SecItemAdd(genp("com.keysmith.workload", "after").with(kSecValueData, Data("ok".utf8)) as CFDictionary, nil) == errSecSuccess)
        }
    }
}
