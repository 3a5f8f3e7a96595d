import Foundation
import Keysmith
import KeychainServices

/// A `get` from Node (`SecureStore.get` of the JavaScript package, through its addon and
/// libkeysmith.so, each awaited before the next) against the Swift `KeychainStore` read of the
/// same items (`string(for:)`), interleaved round by round in the same run: what the
/// JavaScript layers add to a keychain read.
///
/// The package must be built (`make node`; `make bench` builds it in release mode); it is
/// found in `$KEYSMITH_NODE_PACKAGE`, else `bindings/node` under the current directory.
struct NodeGetBenchmark {
    let itemCount = 100
    let rounds = 9
    let lookupsPerRound = 2_000
    let secretSize = 200
    static let name = "SecureStore.get from Node vs Swift KeychainStore.string(for:), 100 items"

    func row() -> BenchmarkRow {
        let name = NodeGetBenchmark.name
        guard let node = findInPath("node") else { return skippedRow(name, "node not found on the PATH", target: "≤ 1.5x") }
        let environmentVariables = ProcessInfo.processInfo.environment
        let package = environmentVariables["KEYSMITH_NODE_PACKAGE"] ?? "bindings/node"
        let script = environmentVariables["KEYSMITH_NODE_BENCH_SCRIPT"] ?? "Benchmarks/node/get-bench.js"
        guard FileManager.default.fileExists(atPath: "\(package)/lib/index.js"),
            FileManager.default.fileExists(atPath: "\(package)/build/keysmith.node"),
            FileManager.default.fileExists(atPath: script)
        else {
            return skippedRow(name, "the JavaScript package is not built (make node)", target: "≤ 1.5x")
        }

        progress("measuring SecureStore.get from Node against KeychainStore.string(for:)")
        let directory = temporaryDirectory("node-get")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Both sides as programs that configure no access groups: the shared group first, then
        // their own local group (`local.node` there, `local.keysmith-bench` here), so a read
        // searches the same number of groups on each side.
        let environment = KeychainEnvironment(directory: directory, accessGroups: KeychainEnvironment.defaultAccessGroups())
        let prefix = "com.keysmith.bench.node"
        let namespace = "auth"
        let service = "\(prefix).\(namespace)"
        var generator = SplitMix(seed: 7)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        KeychainEnvironment.withEnvironment(environment) {
            let store = try! KeychainStore(service: service, accessGroup: "keysmith.shared")
            for index in 0..<itemCount {
                let token = String((0..<secretSize).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
                try! store.set(token, for: "account-\(index)")
            }
        }
        var nodeEnvironment = environmentVariables
        nodeEnvironment["KEYSMITH_HOME"] = directory.path
        nodeEnvironment.removeValue(forKey: "KEYSMITH_ACCESS_GROUPS")
        nodeEnvironment.removeValue(forKey: "KEYSMITH_ENTITLEMENTS")

        var swiftRounds: [Double] = []
        var nodeRounds: [Double] = []
        for round in 0..<rounds {
            let accounts = (0..<lookupsPerRound).map { _ in "account-\(generator.next() % UInt64(itemCount))" }
            let swift: UInt64 = KeychainEnvironment.withEnvironment(environment) {
                let store = try! KeychainStore(service: service)
                for account in accounts.prefix(200) { precondition(try! store.string(for: account) != nil) }
                let start = nanoseconds()
                for account in accounts {
                    precondition(try! store.string(for: account)?.count == secretSize)
                }
                return nanoseconds() - start
            }
            swiftRounds.append(Double(swift) / Double(lookupsPerRound))
            guard
                let run = runCapturing(
                    node,
                    [script, package, prefix, namespace, "\(itemCount)", "\(lookupsPerRound)", "\(round + 1)"],
                    environment: nodeEnvironment),
                run.status == 0, let perGet = Double(run.output.trimmingCharacters(in: .whitespacesAndNewlines))
            else {
                return skippedRow(name, "the Node round failed (run make node, then retry)", target: "≤ 1.5x")
            }
            nodeRounds.append(perGet)
        }
        // The ratio of each round's pair (measured back to back), then their median: a busy
        // machine slows both sides of a pair alike, which two separate medians would not see.
        let ratios = zip(nodeRounds, swiftRounds).map { $0 / $1 }
        return BenchmarkRow(
            name: name, value: formatDuration(median(nodeRounds)), baseline: "Swift " + formatDuration(median(swiftRounds)),
            ratio: formatRatio(median(ratios)), target: "≤ 1.5x")
    }
}
