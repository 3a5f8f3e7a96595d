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
        for environment in environments {
            for key in environment.keys {
                let forms = RetrievalGeneratedSourceScan.forms(of: key.data, foundIn: source)
                #expect(forms.isEmpty, "\(environment.tag) \(key.name) is in the source as \(forms)")
            }
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

    /// What the fixture must hold, derived from the generator's rules rather than from its
    /// output: per environment (sorted by tag) a 32-byte salt drawn from the seeded generator,
    /// then per key (sorted by name) an 8-byte nonce drawn next, and the key's bytes XORed
    /// with the documented stream: byte i ^ (i * 167 + 13) ^ salt[i % 32] ^ nonce[(i + nonce[0]) % 8].
    /// The plaintexts are the keys file's, written out here.
    static func expectedFixtureArrays(seed: UInt64) -> [(tag: String, salt: [UInt8], entries: [(name: String, version: String, nonce: [UInt8], bytes: [UInt8])])] {
        let plaintexts: [(tag: String, keys: [(name: String, version: String, data: [UInt8])])] = [
            ("debug", [("api_key", "2024.06.01", Array("debug-api-key".utf8)), ("seed", "7", [0, 1, 2, 3, 4])]),
            ("release", [("api_key", "2024.07.01", Array("release-api-key".utf8))]),
            ("staging", [("api_key", "2024.06.01", Array("staging-api-key".utf8))]),
        ]
        var generator = RetrievalSeededGenerator(state: seed)
        func draw(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) } }
        return plaintexts.map { environment in
            let salt = draw(32)
            let entries = environment.keys.map { key -> (String, String, [UInt8], [UInt8]) in
                let nonce = draw(8)
                let bytes = key.data.enumerated().map { index, byte in
                    byte ^ UInt8(truncatingIfNeeded: index * 167 + 13) ^ salt[index % salt.count]
                        ^ nonce[(index + Int(nonce[0])) % nonce.count]
                }
                return (key.name, key.version, nonce, bytes)
            }
            return (environment.tag, salt, entries.map { (name: $0.0, version: $0.1, nonce: $0.2, bytes: $0.3) })
        }
    }

    /// The byte arrays of generated source, in order: per environment its tag and salt,
    /// per entry its name, version, nonce and bytes.
    static func parseArrays(_ source: String) -> [(tag: String, salt: [UInt8], entries: [(name: String, version: String, nonce: [UInt8], bytes: [UInt8])])] {
        func bytes(_ text: Substring) -> [UInt8] {
            text.split(whereSeparator: { $0 == "," || $0.isWhitespace }).compactMap { UInt8($0.dropFirst(2), radix: 16) }
        }
        func array(after label: String, in text: Substring) -> (Substring, Substring)? {
            guard let start = text.range(of: label + "["), let close = text[start.upperBound...].firstIndex(of: "]") else { return nil }
            return (text[start.upperBound..<close], text[text.index(after: close)...])
        }
        var result: [(tag: String, salt: [UInt8], entries: [(name: String, version: String, nonce: [UInt8], bytes: [UInt8])])] = []
        for block in source.components(separatedBy: "environmentTag: \"").dropFirst() {
            let tag = String(block.prefix { $0 != "\"" })
            guard let (salt, afterSalt) = array(after: "salt: ", in: Substring(block)) else { continue }
            var entries: [(name: String, version: String, nonce: [UInt8], bytes: [UInt8])] = []
            for entry in afterSalt.components(separatedBy: "CompiledKeySource.Entry(").dropFirst() {
                let fields = entry.components(separatedBy: "\"")
                guard fields.count > 3, let (nonce, rest) = array(after: "nonce: ", in: Substring(entry)),
                    let (data, _) = array(after: "bytes: ", in: rest)
                else { continue }
                entries.append((fields[1], fields[3], bytes(nonce), bytes(data)))
            }
            result.append((tag, bytes(salt), entries))
        }
        return result
    }

    /// The fixture next to this file compiles into this test target (which proves generated
    /// code builds), holds exactly the bytes the rules give for seed 42, and regenerating it
    /// with that seed gives the same text.
    @Test func generatedFixtureCompilesResolvesAndFollowsTheRules() throws {
        let fixtureURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("RetrievalFixtureKeys.generated.swift")
        let fixture = try String(contentsOf: fixtureURL, encoding: .utf8)
        let expected = Self.expectedFixtureArrays(seed: 42)
        let found = Self.parseArrays(fixture)
        #expect(found.map(\.tag) == expected.map(\.tag))
        for (want, have) in zip(expected, found) {
            #expect(have.salt == want.salt, "\(want.tag): the salt is not the seeded generator's first draws")
            #expect(have.entries.map(\.name) == want.entries.map(\.name))
            for (wantEntry, haveEntry) in zip(want.entries, have.entries) {
                #expect(haveEntry.version == wantEntry.version, "\(want.tag) \(wantEntry.name)")
                #expect(haveEntry.nonce == wantEntry.nonce, "\(want.tag) \(wantEntry.name): nonce")
                #expect(haveEntry.bytes == wantEntry.bytes, "\(want.tag) \(wantEntry.name): bytes do not follow the rule")
            }
        }

        let environments = try CompiledKeyGenerator.environments(
            fromKeysFile: Data(Self.keysFile.utf8), path: "Keys.json")
        var generator = RetrievalSeededGenerator(state: 42)
        let regenerated = try CompiledKeyGenerator.generateSource(
            environments,
            options: .init(
                typeNamePrefix: "RetrievalFixtureKeys", inputDescription: "RetrievalCompiledKeysTests.keysFile"),
            using: &generator)
        let regeneratedArrays = Self.parseArrays(regenerated)
        #expect(regeneratedArrays.map(\.salt) == expected.map(\.salt), "the generator no longer draws salts as the rule says")
        #expect(
            regeneratedArrays.flatMap { $0.entries.map(\.bytes) } == expected.flatMap { $0.entries.map(\.bytes) },
            "the generator's bytes do not follow the rule")
        // The text around the bytes (comments, layout) may change with the generator; the
        // bytes above may not. Update the fixture only for such a change, by hand.
        #expect(regenerated == fixture, "the generator's text differs from the fixture (the bytes are checked above)")

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
