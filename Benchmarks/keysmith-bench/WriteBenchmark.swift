// Durable upsert: Keysmith's SecItemUpdate of an existing item, with the keychain's own
// durability (WAL, synchronous=FULL: one fsync per acknowledged write), against the same
// write done by hand in C on a bare SQLite table with the same pragmas (CBaseline's
// keysmith_baseline_write, full=1: one keyed hash, one AEAD encryption, one UPDATE in its
// own transaction), measured in the same run, interleaved round by round; and libsecret's
// file backend store of an existing item (secret-bench) for comparison. Each at 100 and
// 10,000 items, to show how each grows with the number of items.
import CBaseline
import Foundation
import KeychainServices

struct WriteBenchmark {
    let itemCount: Int
    let rounds = 7
    let writesPerRound = 40
    let secretSize = 200

    /// Median ns per durable write: Keysmith's SecItemUpdate and the C baseline's.
    func run() -> (keysmithNs: Double, baselineNs: Double) {
        let directory = temporaryDirectory("write-\(itemCount)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainEnvironment(directory: directory, accessGroups: ["com.keysmith.bench"])
        let baselinePath = directory.appendingPathComponent("baseline.db").path

        populateBenchmarkKeychain(environment, itemCount: itemCount, secretSize: secretSize, label: "write benchmark")
        // The baseline updates rows 0..<100 in turn, so it needs at least 100.
        precondition(keysmith_baseline_prepare(baselinePath, Int32(max(itemCount, 100)), Int32(secretSize)) == 0)

        var keysmithRounds: [Double] = []
        var baselineRounds: [Double] = []
        var generator = SplitMix(seed: 7)
        for _ in 0..<rounds {
            let baseline = keysmith_baseline_write(baselinePath, Int32(writesPerRound), 1, Int32(secretSize))
            precondition(baseline > 0, "baseline write failed")
            baselineRounds.append(Double(baseline) / Double(writesPerRound))

            let updates: [(query: CFDictionary, change: CFDictionary)] = (0..<writesPerRound).map { _ in
                let index = Int(generator.next() % UInt64(itemCount))
                var secret = Data(count: secretSize)
                for offset in 0..<8 { secret[offset] = UInt8(truncatingIfNeeded: generator.next()) }
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: "com.keysmith.bench",
                    kSecAttrAccount as String: "account-\(index)",
                ]
                return (query as CFDictionary, [kSecValueData as String: secret] as CFDictionary)
            }
            let elapsed: UInt64 = KeychainEnvironment.withEnvironment(environment) {
                let start = nanoseconds()
                for update in updates {
                    let status = SecItemUpdate(update.query, update.change)
                    precondition(status == errSecSuccess, "update failed: \(status)")
                }
                return nanoseconds() - start
            }
            keysmithRounds.append(Double(elapsed) / Double(writesPerRound))
        }
        return (median(keysmithRounds), median(baselineRounds))
    }

    /// Runs the write benchmark at each item count and makes the rows: Keysmith against the C
    /// baseline and against libsecret's file backend at each count, then how each grows.
    static func rows(sizes: [Int], libsecret: LibsecretBenchmark.Result) -> [BenchmarkRow] {
        var keysmith: [Int: Double] = [:]
        var baseline: [Int: Double] = [:]
        var rows: [BenchmarkRow] = []
        for size in sizes {
            let result = WriteBenchmark(itemCount: size).run()
            keysmith[size] = result.keysmithNs
            baseline[size] = result.baselineNs
            rows.append(BenchmarkRow(
                name: "SecItemUpdate durable (synchronous=FULL), \(size) items", value: formatDuration(result.keysmithNs),
                baseline: "C SQLite FULL " + formatDuration(result.baselineNs),
                ratio: formatRatio(result.keysmithNs / result.baselineNs), target: "(info)"))
            if libsecret.built, let other = libsecret.file.median("write", "file", items: size) {
                rows.append(BenchmarkRow(
                    name: "  vs libsecret file backend store, \(size) items", value: formatDuration(result.keysmithNs),
                    baseline: "libsecret file " + formatDuration(other),
                    ratio: formatFaster(other: other, keysmith: result.keysmithNs), target: "(info)"))
            }
        }
        if !libsecret.built {
            rows.append(skippedRow("libsecret file backend writes", "libsecret … not built (run make bench)"))
        }
        if let small = sizes.min(), let large = sizes.max(), large > small {
            func growth(_ name: String, _ figures: (Int) -> Double?) {
                guard let a = figures(small), let b = figures(large) else { return }
                rows.append(BenchmarkRow(
                    name: "write time at \(large) vs \(small) items: \(name)", value: formatDuration(b),
                    baseline: formatDuration(a), ratio: formatRatio(b / a), target: "(info)"))
            }
            growth("Keysmith SecItemUpdate") { keysmith[$0] }
            growth("C SQLite FULL") { baseline[$0] }
            growth("libsecret file backend") { libsecret.file.median("write", "file", items: $0) }
            if libsecret.gnomeKeyring.itemCounts("gnome-keyring").count > 1 {
                let counts = libsecret.gnomeKeyring.itemCounts("gnome-keyring")
                if let a = libsecret.gnomeKeyring.median("write", "gnome-keyring", items: counts.first!),
                    let b = libsecret.gnomeKeyring.median("write", "gnome-keyring", items: counts.last!)
                {
                    rows.append(BenchmarkRow(
                        name: "write time at \(counts.last!) vs \(counts.first!) items: gnome-keyring", value: formatDuration(b),
                        baseline: formatDuration(a), ratio: formatRatio(b / a), target: "(info)"))
                }
            }
        }
        return rows
    }
}
