import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Keysmith
import Testing

struct RetrievalKeyRetrieverCacheTests {
    @Test func aCacheHitTouchesNoSource() throws {
        let source = RetrievalCountingSource(.keychain, ["k": [("1", "v")]])
        let retriever = makeRetrievalRetriever([source])
        let first = try retriever.retrieve("k")
        source.resetLookups()
        for _ in 0..<100 { #expect(try retriever.retrieve("k") == first) }
        #expect(source.lookups.isEmpty)
    }

    @Test func missesAreNotCached() throws {
        let source = RetrievalCountingSource(.keychain, [:])
        let retriever = makeRetrievalRetriever([source])
        #expect(try retriever.retrieve("k") == nil)
        #expect(try retriever.retrieve("k") == nil)
        #expect(source.lookups.filter { $0 == "k" }.count == 2)
        #expect(retriever.cachedKeyCount == 0)
    }

    @Test func clearCacheMakesTheNextLookupConsultTheSources() throws {
        let source = RetrievalCountingSource(.keychain, ["k": [("1", "v")]])
        let retriever = makeRetrievalRetriever([source])
        _ = try retriever.retrieve("k")
        retriever.clearCache()
        #expect(retriever.cachedKeyCount == 0)
        source.resetLookups()
        _ = try retriever.retrieve("k")
        #expect(source.lookups == ["k"])
    }

    @Test func theEnvironmentTagIsPartOfTheCacheKey() throws {
        let source = RetrievalCountingSource(.keychain, ["k": [("1", "v")]])
        let retriever = makeRetrievalRetriever([source], environment: .debug)
        _ = try retriever.retrieve("k")
        retriever.setEnvironment(.init(tag: "staging", isRelease: false))
        source.resetLookups()
        #expect(try retriever.retrieve("k") != nil)
        #expect(source.lookups == ["k"])
        #expect(retriever.environment.tag == "staging")
    }

    @Test(arguments: [
        "UIApplicationDidEnterBackgroundNotification", "UIApplicationDidReceiveMemoryWarningNotification",
    ])
    func backgroundAndMemoryWarningsClearTheCache(_ name: String) throws {
        let center = NotificationCenter()
        let retriever = makeRetrievalRetriever(
            [RetrievalCountingSource(.keychain, ["k": [("1", "v")]])], center: center)
        _ = try retriever.retrieve("k")
        #expect(retriever.cachedKeyCount == 1)
        center.post(name: Notification.Name(name), object: nil)
        #expect(retriever.cachedKeyCount == 0)
    }

    @Test func entriesLeaveMemoryAfterTheTimeToLive() throws {
        let source = RetrievalCountingSource(.keychain, ["k": [("1", "v")], "j": [("1", "w")]])
        let retriever = makeRetrievalRetriever([source], ttl: .milliseconds(50))
        _ = try retriever.retrieve("k")
        _ = try retriever.retrieve("k")
        #expect(source.lookups == ["k"])
        _ = try retriever.retrieve("j", version: "1")
        #expect(retriever.cachedKeyCount == 2)
        // Removed by the sweeper at the deadline, without any lookup.
        let deadline = Date().addingTimeInterval(5)
        while retriever.cachedKeyCount > 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(retriever.cachedKeyCount == 0)
        _ = try retriever.retrieve("k")
        #expect(source.lookups == ["k", "j", "k"])
        #expect(retriever.cachedKeyCount == 1)
    }

    @Test func withoutATimeToLiveEntriesStay() throws {
        let source = RetrievalCountingSource(.keychain, ["k": [("1", "v")]])
        let retriever = makeRetrievalRetriever([source], ttl: nil)
        _ = try retriever.retrieve("k")
        Thread.sleep(forTimeInterval: 0.02)
        _ = try retriever.retrieve("k")
        #expect(source.lookups == ["k"])
    }

    @Test func concurrentFirstLookupsConsultTheSourcesOnce() throws {
        // The first lookup is held inside the source until every other caller is blocked,
        // either waiting for the first lookup's answer (as they should) or held inside the
        // source themselves (no single flight); then it is let go. Whether a caller is
        // blocked is the kernel's view of its thread, not a time limit, so a slow machine
        // only makes the test take longer.
        let source = GatedSource(["k": "v"])
        let retriever = makeRetrievalRetriever([source])
        let group = DispatchGroup()
        let results = RetrievalResults()
        let threads = ThreadIdentifiers()
        func caller() {
            group.enter()
            Thread.detachNewThread {
                threads.append(Self.currentThreadID())
                results.append((try? retriever.retrieve("k"))?.string())
                group.leave()
            }
        }
        caller()
        #expect(source.entered.wait(timeout: .now() + 60) == .success, "the first lookup never reached the source")
        for _ in 1..<8 { caller() }
        // Every caller's thread asleep in the kernel, on three looks in a row.
        let deadline = Date().addingTimeInterval(120)
        var asleepInARow = 0
        while asleepInARow < 3, Date() < deadline {
            let identifiers = threads.values
            asleepInARow = identifiers.count == 8 && identifiers.allSatisfy(Self.isAsleep) ? asleepInARow + 1 : 0
            usleep(20_000)
        }
        try #require(asleepInARow == 3, "the callers never all blocked")
        source.release()
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(results.values == Array(repeating: "v", count: 8))
        #expect(source.lookups == ["k"], "\(source.lookups.count) lookups reached the source")
    }

    /// Whether the thread `id` of this process is asleep (state S in
    /// `/proc/self/task/ID/stat`: blocked, here on a lock or a condition).
    static func isAsleep(_ id: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: end)...].split(separator: " ").first == "S"
    }

    /// The kernel's id of the calling thread (`/proc/thread-self` names `PID/task/TID`).
    static func currentThreadID() -> pid_t {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return pid_t(path.split(separator: "/").last.flatMap { Int32($0) } ?? -1)
    }

    final class ThreadIdentifiers: @unchecked Sendable {
        private let lock = NSLock()
        private var identifiers: [pid_t] = []
        func append(_ id: pid_t) { lock.withLock { identifiers.append(id) } }
        var values: [pid_t] { lock.withLock { identifiers } }
    }

    /// A source whose lookups signal `entered` and then wait until `release()`.
    final class GatedSource: KeySource, @unchecked Sendable {
        var kind: KeySourceKind { .keychain }
        var sourceDescription: String { "Gated(test)" }
        let entered = DispatchSemaphore(value: 0)
        private let gate = DispatchSemaphore(value: 0)
        private let keys: [String: String]
        private let lock = NSLock()
        private var calls: [String] = []
        private var released = false

        init(_ keys: [String: String]) { self.keys = keys }

        func release() {
            lock.lock()
            released = true
            lock.unlock()
            for _ in 0..<16 { gate.signal() }
        }

        func lookup(_ name: String) throws -> [KeyInfo] {
            lock.lock()
            calls.append(name)
            let mustWait = !released
            lock.unlock()
            entered.signal()
            if mustWait { gate.wait() }
            return keys[name].map {
                [KeyInfo(identifier: name, matchedName: name, version: "1", data: Data($0.utf8), source: kind,
                         sourceDescription: sourceDescription, location: "gated entry \"\(name)\"")]
            } ?? []
        }

        func identifiers() throws -> [String] { keys.keys.sorted() }

        var lookups: [String] { lock.lock(); defer { lock.unlock() }; return calls }
    }

    @Test func exactVersionLookupsAreCachedToo() throws {
        let source = RetrievalCountingSource(.keychain, ["k": [("1", "old"), ("2", "new")]])
        let retriever = makeRetrievalRetriever([source])
        #expect(try retriever.retrieve("k", version: "1")?.string() == "old")
        #expect(try retriever.retrieve("k", version: "1.0")?.string() == "old")
        #expect(source.lookups == ["k"])
    }
}

/// Thread-safe result collection.
final class RetrievalResults: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String?] = []

    func append(_ value: String?) {
        lock.lock()
        stored.append(value)
        lock.unlock()
    }

    var values: [String?] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}
