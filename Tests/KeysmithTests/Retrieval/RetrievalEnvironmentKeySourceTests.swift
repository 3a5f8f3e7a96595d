import Foundation
import Keysmith
import Testing

struct RetrievalEnvironmentKeySourceTests {
    @Test func exactNameThenPrefixedUpperCase() {
        let source = EnvironmentKeySource(
            prefix: "XY", environment: ["api_key": "exact", "XY_API_KEY": "prefixed", "XY_TOKEN": "t"])
        #expect(source.lookup("api_key").first?.string() == "exact")
        #expect(source.lookup("token").first?.string() == "t")
        #expect(source.lookup("token").first?.location == "environment variable XY_TOKEN")
        #expect(source.lookup("token").first?.version == "env")
        #expect(source.lookup("missing").isEmpty)
    }

    @Test func emptyValuesCountAsAbsent() {
        let source = EnvironmentKeySource(prefix: "XY", environment: ["api_key": "", "XY_API_KEY": "prefixed"])
        #expect(source.lookup("api_key").first?.string() == "prefixed")
    }

    @Test func prefixWithOrWithoutUnderscore() {
        #expect(EnvironmentKeySource(prefix: "XY_").variableNames(for: "k") == ["k", "XY_K"])
        #expect(EnvironmentKeySource(prefix: "XY").variableNames(for: "k") == ["k", "XY_K"])
        #expect(EnvironmentKeySource(prefix: nil).variableNames(for: "k") == ["k"])
        #expect(EnvironmentKeySource(prefix: "").prefix == nil)
    }

    @Test func listsOnlyPrefixedVariables() {
        let source = EnvironmentKeySource(
            prefix: "XY", environment: ["PATH": "/bin", "XY_API_KEY": "a", "XY_EMPTY": ""])
        #expect(source.identifiers() == ["api_key"])
        #expect(EnvironmentKeySource(prefix: nil, environment: ["PATH": "/bin"]).identifiers().isEmpty)
    }

    @Test func conformsToTheSourceContract() async throws {
        let source = EnvironmentKeySource(prefix: "XY", environment: ["XY_API_KEY": "abcdef", "XY_TOKEN": "tok-123"])
        try await SourceConformance.check(source, expecting: ["api_key": ["env"], "token": []])
    }
}
