import Foundation
import KeychainServices
import Keysmith

// Helpers for the retrieval tests. Names carry a `Retrieval`/`retrieval` prefix because
// the whole KeysmithTests target is one module shared with other test files.

/// A source in memory that counts its lookups, for cache and order tests.
final class RetrievalCountingSource: KeySource, @unchecked Sendable {
    let kind: KeySourceKind
    let sourceDescription: String
    private let keys: [String: [(version: String, data: Data)]]
    private let lock = NSLock()
    private var calls: [String] = []
    private let delay: TimeInterval

    /// - Parameters:
    ///   - kind: The kind to report.
    ///   - keys: name -> [(version, text)].
    ///   - delay: Seconds each lookup sleeps (to make concurrent first lookups overlap).
    init(
        _ kind: KeySourceKind, _ keys: [String: [(String, String)]], description: String? = nil, delay: TimeInterval = 0
    ) {
        self.kind = kind
        self.sourceDescription = description ?? "\(kind)(test)"
        self.keys = keys.mapValues { $0.map { (version: $0.0, data: Data($0.1.utf8)) } }
        self.delay = delay
    }

    func lookup(_ name: String) throws -> [KeyInfo] {
        lock.lock()
        calls.append(name)
        lock.unlock()
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        return (keys[name] ?? []).map {
            KeyInfo(
                identifier: name, matchedName: name, version: $0.version, data: $0.data, source: kind,
                sourceDescription: sourceDescription, location: "\(sourceDescription) entry \"\(name)\"")
        }
    }

    func identifiers() throws -> [String] { keys.keys.sorted() }

    /// The names looked up so far, in order.
    var lookups: [String] {
        lock.lock()
        defer { lock.unlock() }
        return calls
    }

    func resetLookups() {
        lock.lock()
        calls.removeAll()
        lock.unlock()
    }
}

/// A source that always fails, like a locked keychain.
struct RetrievalFailingSource: KeySource {
    struct Locked: Error, CustomStringConvertible {
        var description: String { "keychain is locked (test)" }
    }

    let kind: KeySourceKind
    var sourceDescription: String { "\(kind)(failing)" }

    func lookup(_ name: String) throws -> [KeyInfo] { throw Locked() }
    func identifiers() throws -> [String] { throw Locked() }
}

/// A deterministic random number generator (SplitMix64) for reproducible generator output.
struct RetrievalSeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A retriever that does not log and does not listen to the process-wide notification center.
func makeRetrievalRetriever(
    _ sources: [any KeySource], priority: [KeySourceKind] = KeySourceKind.defaultPriority,
    environment: KeyRetriever.BuildEnvironment = .debug, policy: KeyPolicy = .none,
    allowsEnvironmentInRelease: Bool = false, ttl: Duration? = .seconds(300),
    center: NotificationCenter? = nil
) -> KeyRetriever {
    KeyRetriever(
        sources: sources, priority: priority, environment: environment, policy: policy,
        allowsEnvironmentInRelease: allowsEnvironmentInRelease, cacheTimeToLive: ttl, logging: .disabled,
        notificationCenter: center)
}

/// A fresh temporary directory (created), removed by the caller.
func makeRetrievalDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-retrieval-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A keychain service no other test uses.
func retrievalService(_ name: String = #function) -> String {
    "com.example.retrieval.\(name.filter { $0.isLetter || $0.isNumber }).\(UUID().uuidString.prefix(8))"
}

/// Writes a property list to `url`.
func writeRetrievalPlist(_ object: Any, to url: URL) throws {
    let data = try PropertyListSerialization.data(fromPropertyList: object, format: .xml, options: 0)
    try data.write(to: url)
}

#if os(Linux)
    /// Runs `body` in a fresh temporary keychain (task-local, so parallel tests never share
    /// one), removed afterwards. Never the user's keychain.
    func withRetrievalKeychain<Result>(_ body: () throws -> Result) throws -> Result {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("keysmith-retrieval-keychain-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainEnvironment(
            directory: directory, accessGroups: ["com.example.tests", "com.example.shared"])
        return try KeychainEnvironment.withEnvironment(environment, body)
    }

    /// The asynchronous variant: child tasks inherit the temporary keychain.
    func withRetrievalKeychain<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("keysmith-retrieval-keychain-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainEnvironment(
            directory: directory, accessGroups: ["com.example.tests", "com.example.shared"])
        return try await KeychainEnvironment.withEnvironment(environment, body)
    }
#endif

/// Collects log events, thread-safely.
final class RetrievalLogCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [KeyLookupEvent] = []

    var logging: RetrieverLogging {
        .enabled { [self] event in
            lock.lock()
            collected.append(event)
            lock.unlock()
        }
    }

    var events: [KeyLookupEvent] {
        lock.lock()
        defer { lock.unlock() }
        return collected
    }
}

/// Test sources follow the same rule as the built-in ones: printing or dumping the source
/// never shows key bytes (SourceConformance checks it).
extension RetrievalCountingSource: CustomReflectable {
    var customMirror: Mirror {
        Mirror(self, children: ["kind": kind, "sourceDescription": sourceDescription, "names": keys.keys.sorted()])
    }
}
