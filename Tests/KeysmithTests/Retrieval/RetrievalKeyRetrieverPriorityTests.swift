import Foundation
import Keysmith
import Testing

struct RetrievalKeyRetrieverPriorityTests {
    @Test func defaultPriorityIsKeychainConfigEnvironmentCompiled() {
        #expect(KeySourceKind.defaultPriority == [.keychain, .configFile, .environment, .compiled, .remote])
        let retriever = makeRetrievalRetriever([])
        #expect(retriever.sourcePriority == KeySourceKind.defaultPriority)
    }

    @Test func theMostSecureSourceWinsWhateverTheOrderOfSources() throws {
        let config = RetrievalCountingSource(.configFile, ["api_key": [("builtin", "from-config")]])
        let keychain = RetrievalCountingSource(.keychain, ["api_key": [("1", "from-keychain")]])
        let retriever = makeRetrievalRetriever([config, keychain])
        let info = try #require(try retriever.retrieve("api_key"))
        #expect(info.source == .keychain)
        #expect(info.string() == "from-keychain")
        #expect(config.lookups.isEmpty)
    }

    @Test func sourceIsTheOuterLoopAndCandidateTheInner() throws {
        let keychain = RetrievalCountingSource(.keychain, ["api_key": [("1", "kc")]])
        let config = RetrievalCountingSource(.configFile, ["apiKey": [("builtin", "cfg")]])
        let retriever = makeRetrievalRetriever([keychain, config])
        let info = try #require(try retriever.retrieve("apiKey"))
        #expect(info.source == .keychain)
        #expect(info.identifier == "apiKey")
        #expect(info.matchedName == "api_key")
        #expect(keychain.lookups == ["apiKey", "apikey", "APIKEY", "api_key"])
        #expect(config.lookups.isEmpty)
    }

    @Test func everyCandidateInEverySourceBeforeGivingUp() throws {
        let keychain = RetrievalCountingSource(.keychain, [:])
        let config = RetrievalCountingSource(.configFile, [:])
        let retriever = makeRetrievalRetriever([keychain, config])
        #expect(try retriever.retrieve("apiKey") == nil)
        #expect(keychain.lookups == ["apiKey", "apikey", "APIKEY", "api_key"])
        #expect(config.lookups == ["apiKey", "apikey", "APIKEY", "api_key"])
    }

    @Test func changingThePriorityChangesTheWinnerAndClearsTheCache() throws {
        let keychain = RetrievalCountingSource(.keychain, ["k": [("1", "kc")]])
        let config = RetrievalCountingSource(.configFile, ["k": [("builtin", "cfg")]])
        let retriever = makeRetrievalRetriever([keychain, config])
        #expect(try retriever.retrieve("k")?.source == .keychain)
        #expect(retriever.cachedKeyCount == 1)
        try retriever.setSourcePriority([.configFile, .keychain])
        #expect(retriever.cachedKeyCount == 0)
        #expect(retriever.sourcePriority == [.configFile, .keychain])
        #expect(try retriever.retrieve("k")?.source == .configFile)
    }

    @Test func kindsMissingFromThePriorityAreNotConsulted() throws {
        let keychain = RetrievalCountingSource(.keychain, [:])
        let compiled = RetrievalCountingSource(.compiled, ["k": [("builtin", "c")]])
        let retriever = makeRetrievalRetriever([keychain, compiled], priority: [.keychain])
        #expect(try retriever.retrieve("k") == nil)
        #expect(compiled.lookups.isEmpty)
    }

    @Test func anEmptyPriorityIsRefusedAndDuplicatesIgnored() throws {
        let retriever = makeRetrievalRetriever([])
        #expect(throws: KeyRetrievalError.self) { try retriever.setSourcePriority([]) }
        #expect(retriever.sourcePriority == KeySourceKind.defaultPriority)
        try retriever.setSourcePriority([.configFile, .keychain, .configFile])
        #expect(retriever.sourcePriority == [.configFile, .keychain])
    }

    @Test func sourcesOfOneKindKeepTheirOrder() throws {
        let first = RetrievalCountingSource(.configFile, ["k": [("1", "first")]], description: "ConfigFile(a)")
        let second = RetrievalCountingSource(.configFile, ["k": [("2", "second")]], description: "ConfigFile(b)")
        let retriever = makeRetrievalRetriever([first, second])
        #expect(try retriever.retrieve("k")?.string() == "first")
    }

    @Test func aFailingSourceIsSkippedForOrdinaryKeys() throws {
        let config = RetrievalCountingSource(.configFile, ["k": [("builtin", "cfg")]])
        let retriever = makeRetrievalRetriever([RetrievalFailingSource(kind: .keychain), config])
        #expect(try retriever.retrieve("k")?.source == .configFile)
    }

    @Test func replacingSourcesClearsTheCache() throws {
        let a = RetrievalCountingSource(.keychain, ["k": [("1", "a")]])
        let b = RetrievalCountingSource(.keychain, ["k": [("1", "b")]])
        let retriever = makeRetrievalRetriever([a])
        #expect(try retriever.retrieve("k")?.string() == "a")
        retriever.setSources([b])
        #expect(retriever.sources.count == 1)
        #expect(try retriever.retrieve("k")?.string() == "b")
    }

    @Test func emptyIdentifierIsAnError() {
        let retriever = makeRetrievalRetriever([])
        #expect(throws: KeyRetrievalError.self) { try retriever.retrieve("") }
    }
}
