// A lookup that misses while a source could not be read (a mistyped KEYSMITH_CONFIG, a
// malformed key file) says which source failed and why: "not found in any source" would
// send the reader looking for a missing key instead of at the broken file.
import Foundation
import Keysmith
import Testing

struct RetrievalFailedSourceLogTests {
    @Test func missingConfiguredFile_theLogNamesItInsteadOfNotFound() throws {
        let log = RetrievalLogCollector()
        let missing = "/nonexistent-\(UUID().uuidString)/Keys.json"
        let sources = KeyRetriever.defaultSources(
            service: "com.example.tests.failedsource.\(UUID().uuidString.prefix(8))", environmentPrefix: nil,
            environment: [KeyRetriever.configEnvironmentVariable: missing])
        let retriever = KeyRetriever(sources: sources, environment: .debug, logging: log.logging, notificationCenter: nil)

        let found = try withTemporaryKeychain { try retriever.retrieve("api_key") }
        #expect(found == nil)
        let event = try #require(log.events.last)
        #expect(!event.description.contains("not found in any source"), "\(event)")
        #expect(event.description.contains(missing), "\(event)")
        #expect(event.description.contains("KEYSMITH_CONFIG"), "\(event)")
        #expect(event.sourceFailures.count == 1)
    }

    @Test func malformedFile_theLogNamesTheFileAndEntry_neverTheValue() throws {
        let log = RetrievalLogCollector()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("Keys-\(UUID().uuidString).json")
        try Data(#"{"db_key": {"value": "c2VjcmV0LXZhbHVl!", "version": "v1"}, "maps_key": "x"}"#.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let sources = KeyRetriever.defaultSources(
            service: "com.example.tests.failedsource.\(UUID().uuidString.prefix(8))", environmentPrefix: nil,
            environment: [KeyRetriever.configEnvironmentVariable: url.path])
        let retriever = KeyRetriever(sources: sources, environment: .debug, logging: log.logging, notificationCenter: nil)

        #expect(try withTemporaryKeychain { try retriever.retrieve("maps_key") } == nil)
        let line = try #require(log.events.last).description
        #expect(line.contains(url.lastPathComponent) && line.contains("db_key"), "\(line)")
        #expect(!line.contains("c2VjcmV0LXZhbHVl"), "\(line)")
    }
}
