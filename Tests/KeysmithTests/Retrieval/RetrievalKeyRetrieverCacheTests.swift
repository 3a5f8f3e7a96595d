import Foundation
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
        // The first lookup is held inside the source until every other caller has started;
        // then it is let go once all eight are inside the source (no single flight) or, when
        // the others wait for it as they should, after a bounded wait for that to happen.
        let source = GatedSource(["k": "v"])
        let retriever = makeRetrievalRetriever([source])
        let group = DispatchGroup()
        let results = RetrievalResults()
        let started = DispatchSemaphore(value: 0)
        func caller() {
            group.enter()
            Thread.detachNewThread {
                started.signal()
                results.append((try? retriever.retrieve("k"))?.string())
                group.leave()
            }
        }
        caller()
        #expect(source.entered.wait(timeout: .now() + 60) == .success, "the first lookup never reached the source")
        for _ in 1..<8 { caller() }
        for _ in 0..<8 { #expect(started.wait(timeout: .now() + 60) == .success) }
        // If the others are not held back, each reaches the source now.
        var inside = 1
        while inside < 8, source.entered.wait(timeout: .now() + 2) == .success { inside += 1 }
        source.release()
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(results.values == Array(repeating: "v", count: 8))
        #expect(source.lookups == ["k"], "\(source.lookups.count) lookups reached the source")
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
