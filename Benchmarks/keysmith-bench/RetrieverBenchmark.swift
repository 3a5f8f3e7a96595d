// The cost of a cached KeyRetriever.retrieve, against the cheapest thing that does the
// same job: a [String: Data] dictionary behind a Mutex, measured in the same run.
// Target: within 3x of that baseline (a cached retrieve under ~100 ns).
import Foundation
import Keysmith
import Synchronization

/// An in-memory source for the benchmark (the cache path never reaches it).
private struct RetrieverBenchSource: KeySource {
    let keys: [String: Data]
    var kind: KeySourceKind { .keychain }
    var sourceDescription: String { "Bench" }

    func lookup(_ name: String) -> [KeyInfo] {
        guard let data = keys[name] else { return [] }
        return [
            KeyInfo(
                identifier: name, matchedName: name, version: "1", data: data, source: .keychain,
                sourceDescription: "Bench")
        ]
    }

    func identifiers() -> [String] { keys.keys.sorted() }
}

/// The baseline: a lock-protected dictionary.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
private final class RetrieverBenchBaseline: Sendable {
    let table: Mutex<[String: Data]>
    init(_ keys: [String: Data]) { table = Mutex(keys) }

    @inline(never)
    func lookup(_ name: String) -> Data? { table.withLock { $0[name] } }
}

/// Measures a cached `KeyRetriever.retrieve` against a `[String: Data]` lookup behind a
/// `Mutex`, several rounds each (interleaved), and returns printable lines: the median
/// ns/op of each and their ratio.
/// - Returns: The report lines.
func retrieverBenchmarkLines() -> [String] {
    let keyCount = 64
    let names = (0..<keyCount).map { "api_key_\($0)" }  // short names, as apps use
    var keys: [String: Data] = [:]
    for (index, name) in names.enumerated() { keys[name] = Data(repeating: UInt8(index), count: 32) }

    func makeRetriever(ttl: Duration?) -> KeyRetriever {
        let retriever = KeyRetriever(
            sources: [RetrieverBenchSource(keys: keys)], environment: .release, cacheTimeToLive: ttl,
            logging: .disabled, notificationCenter: nil)
        for name in names { _ = try? retriever.retrieve(name) }  // warm the cache
        return retriever
    }
    let retriever = makeRetriever(ttl: .seconds(300))  // the default configuration
    let retrieverNoTTL = makeRetriever(ttl: nil)
    guard retriever.cachedKeyCount == keyCount else { return ["retriever benchmark: cache warm-up failed"] }

    let iterations = 2_000_000
    let rounds = 7
    var sink = 0

    func measure(_ body: (String) -> Int) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        var local = 0
        var index = 0
        for _ in 0..<iterations {
            local &+= body(names[index])
            index = index == keyCount - 1 ? 0 : index + 1
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        sink &+= local
        return Double(elapsed) / Double(iterations)
    }

    var cached: [Double] = []
    var cachedNoTTL: [Double] = []
    var baseline: [Double] = []
    let baselineLookup: (String) -> Int
    let baselineName: String
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
        let table = RetrieverBenchBaseline(keys)
        baselineLookup = { table.lookup($0)?.count ?? 0 }
        baselineName = "[String: Data] behind a Mutex"
    } else {
        let lock = NSLock()
        baselineLookup = { name in
            lock.lock()
            defer { lock.unlock() }
            return keys[name]?.count ?? 0
        }
        baselineName = "[String: Data] behind an NSLock"
    }
    for _ in 0..<rounds {
        baseline.append(measure(baselineLookup))
        cached.append(measure { (try? retriever.retrieve($0))??.data.count ?? 0 })
        cachedNoTTL.append(measure { (try? retrieverNoTTL.retrieve($0))??.data.count ?? 0 })
    }

    func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
    let base = median(baseline)
    let withTTL = median(cached)
    let withoutTTL = median(cachedNoTTL)
    func ns(_ value: Double) -> String { String(format: "%.1f ns", value) }
    func ratio(_ value: Double) -> String { String(format: "%.2fx", value / base) }
    return [
        "KeyRetriever cached retrieve (\(keyCount) keys, \(rounds) rounds x \(iterations) lookups, medians)"
            + (sink == 42 ? " " : ""),  // keeps the measured work observable
        "  baseline, \(baselineName): \(ns(base))/op",
        "  cached retrieve, default 5-minute TTL: \(ns(withTTL))/op, \(ratio(withTTL)) the baseline (target ≤ 3x, < 100 ns)",
        "  cached retrieve, no TTL: \(ns(withoutTTL))/op, \(ratio(withoutTTL)) the baseline",
    ]
}
