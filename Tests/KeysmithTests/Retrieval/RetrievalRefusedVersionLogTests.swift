// A lookup that finds a key, but not in an acceptable version, says what it found and why
// it refused it: "not found in any source" would send the reader looking for a missing key.
import Foundation
import Keysmith
import Testing

struct RetrievalRefusedVersionLogTests {
    private func source() throws -> ConfigFileKeySource {
        let json = #"{"db_key": [{"value": "b2xk", "version": "2024.06.01"}, {"value": "b2xkZXI=", "version": "2024.03.01"}]}"#
        return try ConfigFileKeySource(data: Data(json.utf8), format: .json, path: "/app/Keys.json")
    }

    @Test func minVersion_aboveEveryStoredVersion_logsWhatWasFound() throws {
        let log = RetrievalLogCollector()
        let retriever = KeyRetriever(
            sources: [try source()], environment: .debug, logging: log.logging, notificationCenter: nil)

        #expect(try retriever.retrieve("db_key", minVersion: "2025.01.01") == nil)
        let line = try #require(log.events.last).description
        #expect(!line.contains("not found in any source"), "\(line)")
        #expect(line.contains("2025.01.01"), "\(line)")
        #expect(line.contains("2024.06.01") && line.contains("2024.03.01"), "\(line)")
        #expect(line.contains("ConfigFile(json)"), "\(line)")
        let event = try #require(log.events.last)
        #expect(event.refusedCopies.map(\.versions) == [["2024.03.01", "2024.06.01"]])
    }

    @Test func exactVersion_missing_logsTheVersionsThatExist() throws {
        let log = RetrievalLogCollector()
        let retriever = KeyRetriever(
            sources: [try source()], environment: .debug, logging: log.logging, notificationCenter: nil)

        #expect(try retriever.retrieve("db_key", version: "2024.05.01") == nil)
        let line = try #require(log.events.last).description
        #expect(!line.contains("not found in any source"), "\(line)")
        #expect(line.contains("2024.05.01") && line.contains("2024.06.01"), "\(line)")
    }

    @Test func trulyMissingKey_stillSaysNotFound() throws {
        let log = RetrievalLogCollector()
        let retriever = KeyRetriever(
            sources: [try source()], environment: .debug, logging: log.logging, notificationCenter: nil)
        #expect(try retriever.retrieve("other_key", minVersion: "1") == nil)
        #expect(try #require(log.events.last).description.contains("not found in any source"))
        #expect(try #require(log.events.last).refusedCopies.isEmpty)
    }
}
