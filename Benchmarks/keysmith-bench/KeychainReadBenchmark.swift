import CBaseline
import Foundation
import KeychainServices

/// Uncached `SecItemCopyMatching` (genp, return data) on a keychain of `itemCount` items,
/// against the C baseline (one keyed hash, one SQLite point query, one AEAD decryption)
/// measured in the same run, interleaved round by round.
struct KeychainReadBenchmark {
    let itemCount: Int
    let rounds = 7
    let lookupsPerRound = 2_000
    let secretSize = 200

    func run() -> (rows: [BenchmarkRow], keychainNs: Double, baselineNs: Double, appStyleNs: Double) {
        let directory = temporaryDirectory("read-\(itemCount)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainEnvironment(directory: directory, accessGroups: ["com.keysmith.bench"])
        let baselinePath = directory.appendingPathComponent("baseline.db").path

        populateBenchmarkKeychain(environment, itemCount: itemCount, secretSize: secretSize)
        precondition(keysmith_baseline_prepare(baselinePath, Int32(itemCount), Int32(secretSize)) == 0)

        var appStyleRounds: [Double] = []
        var prebuiltRounds: [Double] = []
        var baselineRounds: [Double] = []
        var generator = SplitMix(seed: 42)
        for round in 0..<rounds {
            let baseline = keysmith_baseline_read(baselinePath, Int32(itemCount), Int32(lookupsPerRound), UInt32(round + 1))
            precondition(baseline > 0, "baseline read failed")
            baselineRounds.append(Double(baseline) / Double(lookupsPerRound))
            let accounts = (0..<lookupsPerRound).map { _ in "account-\(generator.next() % UInt64(itemCount))" }
            // As app code writes it: a Swift dictionary literal bridged on every call.
            let appStyle: UInt64 = KeychainEnvironment.withEnvironment(environment) {
                let start = nanoseconds()
                for account in accounts {
                    let query: [String: Any] = [
                        kSecClass as String: kSecClassGenericPassword,
                        kSecAttrService as String: "com.keysmith.bench",
                        kSecAttrAccount as String: account,
                        kSecReturnData as String: true,
                    ]
                    var result: CFTypeRef?
                    let status = SecItemCopyMatching(query as CFDictionary, &result)
                    precondition(status == errSecSuccess && (result as? Data)?.count == secretSize)
                }
                return nanoseconds() - start
            }
            appStyleRounds.append(Double(appStyle) / Double(lookupsPerRound))
            // The keychain call alone: the query dictionary is built before timing.
            let queries: [CFDictionary] = accounts.map { account in
                [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: "com.keysmith.bench",
                    kSecAttrAccount as String: account,
                    kSecReturnData as String: true,
                ] as CFDictionary
            }
            let prebuilt: UInt64 = KeychainEnvironment.withEnvironment(environment) {
                let start = nanoseconds()
                for query in queries {
                    var result: CFTypeRef?
                    let status = SecItemCopyMatching(query, &result)
                    precondition(status == errSecSuccess && (result as? Data)?.count == secretSize)
                }
                return nanoseconds() - start
            }
            prebuiltRounds.append(Double(prebuilt) / Double(lookupsPerRound))
        }
        let appStyle = median(appStyleRounds)
        let prebuilt = median(prebuiltRounds)
        let baseline = median(baselineRounds)
        let rows = [
            BenchmarkRow(
                name: "SecItemCopyMatching genp+data, \(itemCount) items", value: formatDuration(prebuilt),
                baseline: "C limit " + formatDuration(baseline), ratio: formatRatio(prebuilt / baseline), target: "≤ 2x"),
            BenchmarkRow(
                name: "  same, app-style (Swift dictionary bridged per call)", value: formatDuration(appStyle),
                baseline: "C limit " + formatDuration(baseline), ratio: formatRatio(appStyle / baseline), target: "≤ 2.5x"),
        ]
        return (rows, prebuilt, baseline, appStyle)
    }
}

/// A small deterministic random generator (SplitMix64).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `count` SecItemCopyMatching calls of one kind on a keychain of 100 items, untimed: a
/// clean per-call figure under callgrind (`--only read-calls prebuilt|app-style COUNT`),
/// with the queries built exactly as ``KeychainReadBenchmark`` builds them.
func runReadCalls(appStyle: Bool, count: Int) {
    // KEYSMITH_BENCH_READ_ITEMS: another keychain size (more items than the read
    // connections' search caches hold makes most calls read SQLite).
    let itemCount = ProcessInfo.processInfo.environment["KEYSMITH_BENCH_READ_ITEMS"].flatMap { Int($0) } ?? 100
    let directory = temporaryDirectory("read-calls")
    defer { try? FileManager.default.removeItem(at: directory) }
    let environment = KeychainEnvironment(directory: directory, accessGroups: ["com.keysmith.bench"])
    populateBenchmarkKeychain(environment, itemCount: itemCount, secretSize: 200)
    let accounts = (0..<count).map { "account-\($0 % itemCount)" }
    let queries: [CFDictionary] = appStyle ? [] : accounts.map { account in
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "com.keysmith.bench",
            kSecAttrAccount as String: account,
            kSecReturnData as String: true,
        ] as CFDictionary
    }
    KeychainEnvironment.withEnvironment(environment) {
        for index in 0..<count {
            var result: CFTypeRef?
            let status: OSStatus
            if appStyle {
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: "com.keysmith.bench",
                    kSecAttrAccount as String: accounts[index],
                    kSecReturnData as String: true,
                ]
                status = SecItemCopyMatching(query as CFDictionary, &result)
            } else {
                status = SecItemCopyMatching(queries[index], &result)
            }
            precondition(status == errSecSuccess && (result as? Data)?.count == 200)
        }
    }
}
