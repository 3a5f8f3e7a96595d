import Foundation
import Keysmith
import Testing

struct RetrievalKeyVersionLookupTests {
    private let keychain = RetrievalCountingSource(.keychain, ["db_key": [("2024.06.01", "old"), ("2024.7.1", "new")]])
    private let config = RetrievalCountingSource(.configFile, ["db_key": [("2024.08.01", "config")]])

    @Test func retrieveReturnsTheNewestVersionOfTheFirstSource() throws {
        let retriever = makeRetrievalRetriever([keychain, config])
        let info = try #require(try retriever.retrieve("db_key"))
        #expect(info.string() == "new")
        #expect(info.version == "2024.7.1")
    }

    @Test func minVersionTakesTheNewestAtOrAboveTheMinimum() throws {
        let retriever = makeRetrievalRetriever([keychain, config])
        #expect(try retriever.retrieve("db_key", minVersion: "2024.06.30")?.string() == "new")
        #expect(try retriever.retrieve("db_key", minVersion: "2024.07.01")?.string() == "new")
        #expect(try retriever.retrieve("db_key", minVersion: "2024.1")?.string() == "new")
    }

    @Test func minVersionMovesOnToTheNextSourceThatHasOne() throws {
        let retriever = makeRetrievalRetriever([keychain, config])
        let info = try #require(try retriever.retrieve("db_key", minVersion: "2024.08"))
        #expect(info.source == .configFile)
    }

    @Test func minVersionThatNoSourceHasIsNil() throws {
        let retriever = makeRetrievalRetriever([keychain, config])
        #expect(try retriever.retrieve("db_key", minVersion: "2025") == nil)
    }

    @Test func unversionedCopiesNeverSatisfyANumericMinimum() throws {
        let plain = RetrievalCountingSource(.configFile, ["k": [("builtin", "x")]])
        let retriever = makeRetrievalRetriever([plain])
        #expect(try retriever.retrieve("k", minVersion: "0") == nil)
        #expect(try retriever.retrieve("k")?.version == "builtin")
    }

    @Test func exactVersionFindsTheOldKeyForOldData() throws {
        let retriever = makeRetrievalRetriever([keychain, config])
        #expect(try retriever.retrieve("db_key", version: "2024.06.01")?.string() == "old")
        #expect(try retriever.retrieve("db_key", version: "2024.07.01")?.string() == "new")
        #expect(try retriever.retrieve("db_key", version: "2024.8.1")?.source == .configFile)
        #expect(try retriever.retrieve("db_key", version: "1999") == nil)
    }

    @Test func aCachedNewestKeyAnswersAMinimumItSatisfies() throws {
        let retriever = makeRetrievalRetriever([keychain, config])
        _ = try retriever.retrieve("db_key")
        keychain.resetLookups()
        #expect(try retriever.retrieve("db_key", minVersion: "2024.7")?.string() == "new")
        #expect(keychain.lookups.isEmpty)
    }
}
