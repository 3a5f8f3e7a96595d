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
        let source = RetrievalCountingSource(.keychain, ["k": [("1", "v")]], delay: 0.2)
        let retriever = makeRetrievalRetriever([source])
        let group = DispatchGroup()
        let results = RetrievalResults()
        for _ in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                results.append((try? retriever.retrieve("k"))?.string())
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(results.values == Array(repeating: "v", count: 8))
        #expect(source.lookups == ["k"])
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
