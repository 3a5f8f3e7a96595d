// The typed layer's reads against the keychain call they make: `KeychainStore.data(for:)`
// and `string(for:)`, and an uncached `KeyRetriever.retrieve` from a keychain source,
// each against `SecItemCopyMatching` (genp, return data, prebuilt query) on the same
// keychain, interleaved round by round.
import Foundation
import KeychainServices
import Keysmith

struct StoreReadBenchmark {
    let itemCount: Int
    let rounds = 7
    let readsPerRound = 2_000
    let secretSize = 200

    private static let storeService = "com.keysmith.bench.store"
    private static let keyService = "com.keysmith.bench.keys"

    func rows() -> [BenchmarkRow] {
        let directory = temporaryDirectory("store-\(itemCount)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainEnvironment(directory: directory, accessGroups: ["com.keysmith.bench"])
        progress("typed reads: a keychain of \(itemCount) items for KeychainStore and KeyRetriever")
        return KeychainEnvironment.withEnvironment(environment) { () -> [BenchmarkRow] in
            guard let store = try? KeychainStore(service: Self.storeService) else {
                return [skippedRow("KeychainStore reads", "could not create a KeychainStore")]
            }
            let source = KeychainKeySource(service: Self.keyService)
            let secret = String(repeating: "s", count: secretSize)
            for index in 0..<itemCount {
                do {
                    try store.set(secret, for: "key-\(index)")
                    try source.store(Data(secret.utf8), for: "key_\(index)", version: "1")
                } catch {
                    return [skippedRow("KeychainStore reads", "could not fill the keychain: \(error)")]
                }
            }
            let retriever = KeyRetriever(
                sources: [source], environment: .release, cacheTimeToLive: nil, logging: .disabled,
                notificationCenter: nil)
            var generator = SplitMix(seed: 11)
            var direct: [Double] = [], data: [Double] = [], string: [Double] = [], retrieve: [Double] = []
            for _ in 0..<rounds {
                let picks = (0..<readsPerRound).map { _ in Int(generator.next() % UInt64(itemCount)) }
                let queries: [CFDictionary] = picks.map { index in
                    [
                        kSecClass as String: kSecClassGenericPassword,
                        kSecAttrService as String: Self.storeService,
                        kSecAttrAccount as String: "key-\(index)",
                        kSecReturnData as String: true,
                    ] as CFDictionary
                }
                let storeKeys = picks.map { "key-\($0)" }
                let retrieverKeys = picks.map { "key_\($0)" }
                direct.append(time(queries.count) {
                    for query in queries {
                        var result: CFTypeRef?
                        precondition(SecItemCopyMatching(query, &result) == errSecSuccess)
                    }
                })
                data.append(time(storeKeys.count) {
                    for key in storeKeys { precondition((try? store.data(for: key))??.count == secretSize) }
                })
                string.append(time(storeKeys.count) {
                    for key in storeKeys { precondition((try? store.string(for: key))??.utf8.count == secretSize) }
                })
                retrieve.append(time(retrieverKeys.count) {
                    for key in retrieverKeys {
                        retriever.clearCache()
                        precondition((try? retriever.retrieve(key))??.data.count == secretSize)
                    }
                })
            }
            let base = median(direct)
            let baseline = "SecItemCopyMatching " + formatDuration(base)
            return [
                BenchmarkRow(
                    name: "KeychainStore.data(for:), \(itemCount) items", value: formatDuration(median(data)),
                    baseline: baseline, ratio: formatRatio(median(data) / base), target: "≤ 1.2x"),
                BenchmarkRow(
                    name: "KeychainStore.string(for:), \(itemCount) items", value: formatDuration(median(string)),
                    baseline: baseline, ratio: formatRatio(median(string) / base), target: "≤ 1.2x"),
                BenchmarkRow(
                    name: "KeyRetriever.retrieve, uncached, from the keychain, \(itemCount) keys",
                    value: formatDuration(median(retrieve)), baseline: baseline,
                    ratio: formatRatio(median(retrieve) / base), target: "≤ 1.5x"),
            ]
        }
    }

    /// ns per operation of `body`, which does `count` operations.
    private func time(_ count: Int, _ body: () -> Void) -> Double {
        let start = nanoseconds()
        body()
        return Double(nanoseconds() - start) / Double(count)
    }
}

/// Untimed, for callgrind (`--only typed-calls data|string|retrieve|prebuilt [COUNT]`):
/// `count` calls of one typed read on the keychain of ``StoreReadBenchmark`` (100 keys),
/// or of the `SecItemCopyMatching` call it is compared with, so that a profile divided by
/// `count` gives the instructions of one call.
func runTypedCalls(kind: String, count: Int) {
    let itemCount = 100
    let storeService = "com.keysmith.bench.store"
    let keyService = "com.keysmith.bench.keys"
    let directory = temporaryDirectory("typed-calls")
    defer { try? FileManager.default.removeItem(at: directory) }
    let environment = KeychainEnvironment(directory: directory, accessGroups: ["com.keysmith.bench"])
    KeychainEnvironment.withEnvironment(environment) {
        guard let store = try? KeychainStore(service: storeService) else { fatalError("could not create a KeychainStore") }
        let source = KeychainKeySource(service: keyService)
        let secret = String(repeating: "s", count: 200)
        for index in 0..<itemCount {
            do {
                try store.set(secret, for: "key-\(index)")
                try source.store(Data(secret.utf8), for: "key_\(index)", version: "1")
            } catch {
                fatalError("could not fill the keychain: \(error)")
            }
        }
        let retriever = KeyRetriever(
            sources: [source], environment: .release, cacheTimeToLive: nil, logging: .disabled,
            notificationCenter: nil)
        let storeKeys = (0..<count).map { "key-\($0 % itemCount)" }
        let retrieverKeys = (0..<count).map { "key_\($0 % itemCount)" }
        switch kind {
        case "data":
            for key in storeKeys { precondition((try? store.data(for: key))??.count == 200) }
        case "string":
            for key in storeKeys { precondition((try? store.string(for: key))??.utf8.count == 200) }
        case "retrieve":
            for key in retrieverKeys {
                retriever.clearCache()
                precondition((try? retriever.retrieve(key))??.data.count == 200)
            }
        case "prebuilt":
            let queries: [CFDictionary] = storeKeys.map { key in
                [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: storeService,
                    kSecAttrAccount as String: key,
                    kSecReturnData as String: true,
                ] as CFDictionary
            }
            for query in queries {
                var result: CFTypeRef?
                precondition(SecItemCopyMatching(query, &result) == errSecSuccess)
            }
        default:
            FileHandle.standardError.write(Data("typed-calls: data, string, retrieve or prebuilt\n".utf8))
            exit(2)
        }
    }
}
