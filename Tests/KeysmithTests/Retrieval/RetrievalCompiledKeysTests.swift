import Foundation
import Keysmith
import Testing

struct RetrievalCompiledKeysTests {
    static let keysFile = """
        {
          "version": "2024.06.01",
          "debug": { "api_key": "debug-api-key", "seed": {"value": "AAECAwQ=", "version": "7"} },
          "release": { "api_key": {"value": "cmVsZWFzZS1hcGkta2V5", "version": "2024.07.01"} },
          "staging": { "api_key": "staging-api-key" }
        }
        """

    @Test func readsAKeysFilePerEnvironment() throws {
        let environments = try CompiledKeyGenerator.environments(
            fromKeysFile: Data(Self.keysFile.utf8), path: "Keys.json")
        #expect(environments.map(\.tag) == ["debug", "release", "staging"])
        let debug = try #require(environments.first)
        #expect(debug.keys.map(\.name) == ["api_key", "seed"])
        #expect(debug.keys.first?.version == "2024.06.01")
        #expect(debug.keys.last?.data == Data([0, 1, 2, 3, 4]))
        #expect(environments[1].keys.first?.data == Data("release-api-key".utf8))
    }

    @Test(arguments: [#"{"debug": "not a dictionary"}"#, #"{}"#, #"{"version": "1"}"#, #"{"debug": {"k": 1}}"#])
    func malformedKeysFilesAreErrors(_ json: String) {
        #expect(throws: KeyRetrievalError.self) {
            try CompiledKeyGenerator.environments(fromKeysFile: Data(json.utf8), path: "Keys.json")
        }
    }

    @Test func readsKeysFromPrefixedVariables() {
        let environment = CompiledKeyGenerator.environment(
            fromVariables: ["KEYSMITH_KEY_API_KEY": "abc", "PATH": "/bin"], prefix: "KEYSMITH_KEY", tag: "ci")
        #expect(environment.tag == "ci")
        #expect(environment.keys.map(\.name) == ["api_key"])
        #expect(environment.keys.first?.data == Data("abc".utf8))
    }

    @Test func obfuscatedSourcesGiveBackTheOriginalBytes() async throws {
        let environments = try CompiledKeyGenerator.environments(
            fromKeysFile: Data(Self.keysFile.utf8), path: "Keys.json")
        var generator = RetrievalSeededGenerator(state: 1)
        let sources = CompiledKeyGenerator.makeSources(environments, using: &generator)
        let debug = try #require(sources["debug"])
        #expect(debug.sourceDescription == "Compiled(debug)")
        #expect(debug.lookup("api_key").first?.string() == "debug-api-key")
        #expect(debug.lookup("seed").first?.data == Data([0, 1, 2, 3, 4]))
        #expect(debug.identifiers() == ["api_key", "seed"])
        #expect(sources["release"]?.lookup("api_key").first?.version == "2024.07.01")
        try await SourceConformance.check(debug, expecting: ["api_key": ["2024.06.01"], "seed": ["7"]])
    }

    @Test func generatedSourceIsObfuscatedAndSaysSo() throws {
        let environments = try CompiledKeyGenerator.environments(
            fromKeysFile: Data(Self.keysFile.utf8), path: "Keys.json")
        var generator = RetrievalSeededGenerator(state: 2)
        let source = try CompiledKeyGenerator.generateSource(
            environments, options: .init(inputDescription: "Keys.json"), using: &generator)
        #expect(source.contains("Obfuscation is not secrecy"))
        #expect(source.contains("enum CompiledKeysDebug"))
        #expect(source.contains("enum CompiledKeysRelease"))
        #expect(source.contains("enum CompiledKeysStaging"))
        #expect(source.contains("#if DEBUG"))
        #expect(source.contains("#if !DEBUG"))
        #expect(source.contains("import Keysmith"))
        for plain in [
            "debug-api-key", "release-api-key", "staging-api-key", "ZGVidWctYXBpLWtleQ", "cmVsZWFzZS1hcGkta2V5",
        ] {
            #expect(!source.contains(plain))
        }
        // A fresh salt per generation: two runs differ.
        var other = RetrievalSeededGenerator(state: 3)
        #expect(try CompiledKeyGenerator.generateSource(environments, using: &other) != source)
    }

    @Test func typeNamesAndLiteralsAreSafe() throws {
        var generator = RetrievalSeededGenerator(state: 4)
        let source = try CompiledKeyGenerator.generateSource(
            [.init(tag: "eu-west", keys: [.init(name: "we\"ird\\name", data: Data("x".utf8))])], using: &generator)
        #expect(source.contains("enum CompiledKeysEuWest"))
        #expect(source.contains(#"name: "we\"ird\\name""#))
        #expect(throws: KeyRetrievalError.self) {
            var g = RetrievalSeededGenerator(state: 5)
            _ = try CompiledKeyGenerator.generateSource(
                [.init(tag: "a-b", keys: []), .init(tag: "a_b", keys: [])], using: &g)
        }
        #expect(throws: KeyRetrievalError.self) {
            _ = try CompiledKeyGenerator.generateSource([], options: .init(accessLevel: "open"))
        }
    }

    /// The fixture next to this file was written by the generator (seed 42); it compiles
    /// into this test target, which proves generated code builds, and regenerating it
    /// gives the same text.
    @Test func generatedFixtureCompilesResolvesAndIsReproducible() throws {
        let environments = try CompiledKeyGenerator.environments(
            fromKeysFile: Data(Self.keysFile.utf8), path: "Keys.json")
        var generator = RetrievalSeededGenerator(state: 42)
        let regenerated = try CompiledKeyGenerator.generateSource(
            environments,
            options: .init(
                typeNamePrefix: "RetrievalFixtureKeys", inputDescription: "RetrievalCompiledKeysTests.keysFile"),
            using: &generator)
        let fixtureURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("RetrievalFixtureKeys.generated.swift")
        let fixture = try String(contentsOf: fixtureURL, encoding: .utf8)
        if fixture != regenerated {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
                "RetrievalFixtureKeys.generated.swift")
            try? regenerated.write(to: scratch, atomically: true, encoding: .utf8)
            Issue.record("the generator's output changed; the new output is in \(scratch.path)")
        }

        #if DEBUG
            let source = try #require(RetrievalFixtureKeys.source(for: "debug"))
            #expect(source.lookup("api_key").first?.string() == "debug-api-key")
            #expect(RetrievalFixtureKeys.source(for: "release") == nil)
        #else
            #expect(RetrievalFixtureKeys.source(for: "release")?.lookup("api_key").first?.string() == "release-api-key")
        #endif
        // A custom environment is compiled only when the build defines its flag; this test
        // target does not define KEYSMITH_KEYS_STAGING, so the staging keys are not in it.
        #if KEYSMITH_KEYS_STAGING
            #expect(RetrievalFixtureKeys.source(for: "staging")?.lookup("api_key").first?.string() == "staging-api-key")
        #else
            #expect(RetrievalFixtureKeys.source(for: "staging") == nil)
        #endif
    }

    @Test func aRetrieverServesCompiledKeysLast() throws {
        var generator = RetrievalSeededGenerator(state: 6)
        let compiled = try #require(
            CompiledKeyGenerator.makeSources(
                [.init(tag: "debug", keys: [.init(name: "api_key", data: Data("compiled".utf8))])], using: &generator
            )["debug"])
        let config = RetrievalCountingSource(.configFile, ["api_key": [("builtin", "config")]])
        let retriever = makeRetrievalRetriever([compiled, config])
        #expect(try retriever.retrieve("api_key")?.source == .configFile)
        retriever.setSources([compiled])
        let info = try #require(try retriever.retrieve("apiKey"))
        #expect(info.source == .compiled)
        #expect(info.string() == "compiled")
    }
}
