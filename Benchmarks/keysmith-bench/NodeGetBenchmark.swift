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
    let rounds = 7
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
        // As the Node process sees it: no access groups configured, so the shared group.
        let environment = KeychainEnvironment(directory: directory, accessGroups: ["keysmith.shared"])
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
        let nodeGet = median(nodeRounds)
        let swiftRead = median(swiftRounds)
        return BenchmarkRow(
            name: name, value: formatDuration(nodeGet), baseline: "Swift " + formatDuration(swiftRead),
            ratio: formatRatio(nodeGet / swiftRead), target: "≤ 1.5x")
    }
}
