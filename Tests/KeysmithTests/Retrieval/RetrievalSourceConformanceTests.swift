import Foundation
import Keysmith
import Testing

/// The conformance check itself: it passes good sources and catches bad ones.
struct RetrievalSourceConformanceTests {
    /// A source that breaks every rule it can.
    struct BrokenSource: KeySource {
        var kind: KeySourceKind { .remote }
        var sourceDescription: String { "Broken\nsource" }
        func lookup(_ name: String) throws -> [KeyInfo] {
            // Fuzzy: any name that shares a prefix matches; the record lies about itself.
            guard name.hasPrefix("api") else { return [] }
            return [
                KeyInfo(
                    identifier: name, matchedName: "api_key", version: "", data: Data("secret-bytes".utf8),
                    source: .keychain, sourceDescription: "Broken", location: "value secret-bytes")
            ]
        }
        func identifiers() throws -> [String] { ["api_key", "api_key"] }
    }

    @Test func catchesABrokenSource() async {
        let problems = await SourceConformance.problems(in: BrokenSource(), expecting: ["token": []])
        let joined = problems.joined(separator: "\n")
        #expect(joined.contains("single line"))
        #expect(joined.contains("more than once"))
        #expect(joined.contains("has source Keychain, the source is Remote"))
        #expect(joined.contains("empty version"))
        #expect(joined.contains("contains the key bytes"))
        #expect(joined.contains("matching must be exact"))
        #expect(joined.contains("expected key \"token\" is missing"))
        await #expect(throws: SourceConformance.Failure.self) { try await SourceConformance.check(BrokenSource()) }
    }

    @Test func passesTheInMemorySources() async throws {
        try await SourceConformance.check(RetrievalCountingSource(.remote, ["a": [("1", "xxxx"), ("2", "yyyy")]]))
        // A source with keys, and other variables it must not serve.
        try await SourceConformance.check(
            EnvironmentKeySource(prefix: "XY", environment: ["XY_API_KEY": "abcd", "XY_MAPS_KEY": "efgh", "XYZ_OTHER": "ijkl", "HOME": "/root"]),
            expecting: ["api_key": ["env"], "maps_key": ["env"]])
    }
}
