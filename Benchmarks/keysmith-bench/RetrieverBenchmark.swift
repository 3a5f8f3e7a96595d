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
/// Item 1 of the table: a cached `retrieve` against a dictionary behind a lock.
func retrieverBenchmarkRows() -> [BenchmarkRow] {
    guard let figures = measureCachedRetrieve() else {
        return [BenchmarkRow(name: "KeyRetriever cached retrieve", value: "failed", baseline: "", ratio: "", target: "≤ 3x")]
    }
    return [
        BenchmarkRow(
            name: "KeyRetriever.retrieve, cached (default 5-minute TTL)", value: String(format: "%.1f ns", figures.withTTL),
            baseline: "\(figures.baselineName) " + String(format: "%.1f ns", figures.baseline),
            ratio: formatRatio(figures.withTTL / figures.baseline), target: "≤ 3x"),
        BenchmarkRow(
            name: "  same, no TTL", value: String(format: "%.1f ns", figures.withoutTTL),
            baseline: String(format: "%.1f ns", figures.baseline),
            ratio: formatRatio(figures.withoutTTL / figures.baseline), target: "≤ 3x"),
    ]
}

/// The cached-retrieve figures, in ns per lookup (medians).
struct CachedRetrieveFigures {
    let baseline: Double
    let withTTL: Double
    let withoutTTL: Double
    let baselineName: String
}


func measureCachedRetrieve() -> CachedRetrieveFigures? {
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
    guard retriever.cachedKeyCount == keyCount else { return nil }

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
    if sink == 42 { progress("") }  // keeps the measured work observable
    return CachedRetrieveFigures(
        baseline: median(baseline), withTTL: median(cached), withoutTTL: median(cachedNoTTL), baselineName: baselineName)
}
