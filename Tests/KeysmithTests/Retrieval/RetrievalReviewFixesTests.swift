import Foundation
import Keysmith
import Testing

/// Regression tests for the review of `Sources/Keysmith/Retrieval`: each test failed before
/// its fix.
struct RetrievalReviewFixesTests {
    static let secretText = "S3CR3T-REVIEW-K3Y-5a4b3c"
    static let otherSecret = "P4SSW0RD-NOT-A-KEY-77e1"
    static let binary = Data([0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04])

    /// The bytes as text, hex (both cases), base64 (padded and not) and as `dump` lists them.
    static func leaks(_ text: String, _ data: Data) -> Bool {
        var needles = [data.map { String(format: "%02x", $0) }.joined(), data.map { String(format: "%02X", $0) }.joined()]
        let base64 = data.base64EncodedString()
        needles.append(base64)
        needles.append(base64.replacingOccurrences(of: "=", with: ""))
        if let utf8 = String(data: data, encoding: .utf8) { needles.append(utf8) }
        if needles.contains(where: text.contains) { return true }
        // dump prints [UInt8] and Data one byte per line.
        let dumped = text.split(whereSeparator: \.isNewline).compactMap { line -> UInt8? in
            let trimmed = line.drop { $0 == " " }
            return trimmed.hasPrefix("- ") ? UInt8(trimmed.dropFirst(2)) : nil
        }
        let wanted = Array(data)
        guard dumped.count >= wanted.count else { return false }
        return (0...(dumped.count - wanted.count)).contains { Array(dumped[$0..<($0 + wanted.count)]) == wanted }
    }

    /// `String(describing:)`, `String(reflecting:)` and `dump` of `value`.
    static func texts(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), dumped]
    }

    static func expectClean(
        _ value: Any, of secrets: [Data], _ label: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (index, text) in texts(value).enumerated() {
            for secret in secrets {
                #expect(
                    !leaks(text, secret), "\(label) form \(index) leaks key bytes: \(text.prefix(300))",
                    sourceLocation: sourceLocation)
            }
        }
    }

    // MARK: 1. Secrets in default descriptions

    @Test func environmentSourceNeverPrintsItsVariables() async throws {
        let source = EnvironmentKeySource(
            prefix: "XY", environment: ["XY_API_KEY": Self.secretText, "DATABASE_PASSWORD": Self.otherSecret])
        Self.expectClean(
            source, of: [Data(Self.secretText.utf8), Data(Self.otherSecret.utf8)], "EnvironmentKeySource")
        #expect(String(describing: source).contains("XY"))
        try await SourceConformance.check(source, expecting: ["api_key": ["env"]])
    }

    @Test func configFileSourceNeverPrintsKeyBytes() async throws {
        let plist: [String: Any] = [
            "api_key": Self.secretText,
            "seed": Self.binary,
            "token": ["value": Data(Self.otherSecret.utf8).base64EncodedString(), "version": "2024.06.01"],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        let source = try ConfigFileKeySource(data: data, format: .plist, path: "/tmp/Keys.plist")
        Self.expectClean(
            source, of: [Data(Self.secretText.utf8), Self.binary, Data(Self.otherSecret.utf8)], "ConfigFileKeySource")
        #expect(String(describing: source).contains("/tmp/Keys.plist"))
        try await SourceConformance.check(source, expecting: ["api_key": [], "seed": [], "token": ["2024.06.01"]])
    }

    @Test func compiledSourceNeverPrintsSaltNoncesOrBytes() async throws {
        var generator = RetrievalSeededGenerator(state: 11)
        let keys: [CompiledKeyGenerator.Key] = [
            .init(name: "api_key", data: Data(Self.secretText.utf8)), .init(name: "seed", data: Self.binary),
        ]
        let source = try #require(
            CompiledKeyGenerator.makeSources([.init(tag: "debug", keys: keys)], using: &generator)["debug"])
        Self.expectClean(source, of: [Data(Self.secretText.utf8), Self.binary], "CompiledKeySource")
        for text in Self.texts(source) {
            // The obfuscation tables are as good as the keys: salt and nonces never show.
            #expect(!text.contains("salt"), "\(text.prefix(300))")
            #expect(!text.contains("nonce"), "\(text.prefix(300))")
        }
        let entry = CompiledKeySource.Entry(name: "k", version: "1", nonce: [1, 2, 3, 4], bytes: Array(Self.binary))
        Self.expectClean(entry, of: [Self.binary, Data([1, 2, 3, 4])], "CompiledKeySource.Entry")
        try await SourceConformance.check(source, expecting: ["api_key": [], "seed": []])
    }

    @Test func generatorKeysAndEnvironmentsNeverShowBytes() {
        let key = CompiledKeyGenerator.Key(name: "api_key", version: "1", data: Self.binary)
        Self.expectClean(key, of: [Self.binary], "CompiledKeyGenerator.Key")
        Self.expectClean(
            CompiledKeyGenerator.Environment(tag: "debug", keys: [key]), of: [Self.binary],
            "CompiledKeyGenerator.Environment")
        #expect(String(reflecting: key).contains("api_key"))
    }

    /// A source whose records are clean but whose own description prints its keys.
    struct LeakySource: KeySource, CustomStringConvertible {
        let keys: [String: Data]
        var kind: KeySourceKind { .remote }
        var sourceDescription: String { "Leaky" }
        var description: String { "Leaky(\(keys.mapValues { String(decoding: $0, as: UTF8.self) }))" }
        func lookup(_ name: String) throws -> [KeyInfo] {
            keys[name].map {
                [KeyInfo(identifier: name, matchedName: name, version: "1", data: $0, source: .remote,
                         sourceDescription: "Leaky")]
            } ?? []
        }
        func identifiers() throws -> [String] { keys.keys.sorted() }
    }

    /// A source whose only leak is the default mirror (`dump` lists the bytes one per line).
    struct DumpLeakySource: KeySource {
        let bytes: [UInt8]
        var kind: KeySourceKind { .remote }
        var sourceDescription: String { "DumpLeaky" }
        func lookup(_ name: String) throws -> [KeyInfo] {
            name == "k"
                ? [KeyInfo(identifier: name, matchedName: name, version: "1", data: Data(bytes), source: .remote,
                           sourceDescription: "DumpLeaky")] : []
        }
        func identifiers() throws -> [String] { ["k"] }
    }

    @Test func conformanceCatchesASourceThatPrintsItsKeys() async {
        let leaky = LeakySource(keys: ["api_key": Data(Self.secretText.utf8)])
        let problems = await SourceConformance.problems(in: leaky)
        #expect(problems.contains { $0.contains("dump of the source") && $0.contains("api_key") })
        for problem in problems { #expect(!problem.contains(Self.secretText)) }

        let dumpLeaky = DumpLeakySource(bytes: Array(Self.binary))
        #expect(await SourceConformance.problems(in: dumpLeaky).contains { $0.contains("dump of the source") })
    }

    // MARK: 2. Sensitive-key policy by canonical form

    @Test func suffixedUpperCaseRequestOfASensitiveKeyIsRefused() throws {
        let plist = try writeTemporaryPlist(["DB_KEY": "plaintext-db-key"])
        defer { try? FileManager.default.removeItem(at: plist.deletingLastPathComponent()) }
        let retriever = makeRetrievalRetriever(
            [try ConfigFileKeySource(url: plist)], environment: .release, policy: KeyPolicy(sensitive: ["db_key"]))
        #expect(throws: KeyRetrievalError.self) { try retriever.retrieve("DB_KEY_PROD") }
        #expect(throws: KeyRetrievalError.self) { try retriever.retrieve("DB_KEY") }
    }

    @Test func camelCasePolicyCoversASuffixedSnakeCaseRequest() throws {
        let plist = try writeTemporaryPlist(["db_encryption_key": "plaintext-db-key"])
        defer { try? FileManager.default.removeItem(at: plist.deletingLastPathComponent()) }
        let retriever = makeRetrievalRetriever(
            [try ConfigFileKeySource(url: plist)], environment: .release,
            policy: KeyPolicy(sensitive: ["dbEncryptionKey"]))
        do {
            _ = try retriever.retrieve("db_encryption_key_prod")
            Issue.record("a sensitive key was served from a plaintext source")
        } catch KeyRetrievalError.sensitiveKeyInPlaintextSource(_, let matchedName, let source, _) {
            #expect(matchedName == "db_encryption_key")
            #expect(source == .configFile)
        }
        #expect(retriever.explain("db_encryption_key_prod").isSensitive)
        // A debug build still may read it (releaseOnly), and unrelated keys are unaffected.
        let debug = makeRetrievalRetriever(
            [try ConfigFileKeySource(url: plist)], environment: .debug, policy: KeyPolicy(sensitive: ["dbEncryptionKey"]))
        #expect(try debug.retrieve("db_encryption_key_prod")?.string() == "plaintext-db-key")
        #expect(!KeyPolicy(sensitive: ["dbEncryptionKey"]).isSensitive("db_key"))
    }

    @Test func aListedNameWithASuffixCoversEverySpelling() throws {
        // Neither the request nor any of its candidates is listed verbatim; their canonical
        // forms match.
        let config = RetrievalCountingSource(.configFile, ["signing_key": [("1", "plaintext")]])
        let retriever = makeRetrievalRetriever(
            [config], environment: .release, policy: KeyPolicy(sensitive: ["SIGNING_KEY_TEST"]))
        #expect(throws: KeyRetrievalError.self) { try retriever.retrieve("signingKey") }
    }

    @Test func auditWarnsAboutSensitiveKeysByCanonicalForm() throws {
        let config = RetrievalCountingSource(
            .configFile, ["db_encryption_key_prod": [("1", "plaintext")], "DB_KEY": [("1", "plaintext")]])
        let retriever = makeRetrievalRetriever(
            [config], environment: .release, policy: KeyPolicy(sensitive: ["dbEncryptionKey", "db_key_test"]))
        let audit = try retriever.audit()
        for name in ["db_encryption_key_prod", "DB_KEY"] {
            let entry = try #require(audit.entry(name))
            #expect(entry.isSensitive, "\(name)")
            #expect(
                entry.warnings.contains {
                    if case .sensitiveKeyInPlaintextSource = $0 { return true } else { return false }
                }, "\(name)")
        }
    }

    // MARK: 4. No caching of a fallback found while a better source failed

    /// A keychain-like source that fails its first `failures` lookups (locked), then answers.
    final class FlakySource: KeySource, @unchecked Sendable {
        struct Locked: Error {}
        let kind: KeySourceKind = .keychain
        let sourceDescription = "Keychain(flaky)"
        private let lock = NSLock()
        private var failures: Int

        init(failures: Int) { self.failures = failures }

        func lookup(_ name: String) throws -> [KeyInfo] {
            lock.lock()
            let fail = failures > 0
            if fail { failures -= 1 }
            lock.unlock()
            if fail { throw Locked() }
            guard name == "api_key" else { return [] }
            return [
                KeyInfo(
                    identifier: name, matchedName: name, version: "2024.07.01", data: Data("keychain-copy".utf8),
                    source: .keychain, sourceDescription: sourceDescription)
            ]
        }

        func identifiers() throws -> [String] { ["api_key"] }
    }

    @Test func fallbackAnswerAfterAFailedSourceIsNotCached() throws {
        let keychain = FlakySource(failures: 1)
        let config = RetrievalCountingSource(.configFile, ["api_key": [("builtin", "stale-config-copy")]])
        let retriever = makeRetrievalRetriever([keychain, config], ttl: .seconds(3600))
        let first = try #require(try retriever.retrieve("api_key"))
        #expect(first.source == .configFile)  // the keychain was locked: the fallback answers
        #expect(retriever.cachedKeyCount == 0)
        let second = try #require(try retriever.retrieve("api_key"))
        #expect(second.source == .keychain)  // unlocked: the keychain copy wins at once
        #expect(second.string() == "keychain-copy")
        #expect(retriever.cachedKeyCount == 1)  // a clean answer is cached as before
    }

    // MARK: 5. Strict nested config entries

    @Test(arguments: ["encodng", "Encoding", "vesion", "Value"])
    func nestedEntriesRejectUnknownFields(_ field: String) throws {
        let json = #"{"api_key": {"value": "YWJj", "\#(field)": "utf8"}}"#
        do {
            _ = try ConfigFileKeySource(data: Data(json.utf8), path: "Keys.json")
            Issue.record("unknown field \(field) was accepted")
        } catch KeyRetrievalError.malformedFile(let path, let key, let reason) {
            #expect(path == "Keys.json")
            #expect(key == "api_key")
            #expect(reason.contains(field))
        }
    }

    @Test func booleanVersionsAreRejected() throws {
        for json in [
            #"{"api_key": {"value": "YWJj", "version": true}}"#, #"{"version": false, "api_key": "text"}"#,
            #"{"api_key": [{"value": "YWJj", "version": true}]}"#,
        ] {
            #expect(throws: KeyRetrievalError.self, "\(json)") {
                try ConfigFileKeySource(data: Data(json.utf8), path: "Keys.json")
            }
        }
        let plist: [String: Any] = ["api_key": ["value": "YWJj", "version": true]]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        #expect(throws: KeyRetrievalError.self) { try ConfigFileKeySource(data: data, format: .plist) }
        // Whole numbers stay allowed.
        let numbered = try ConfigFileKeySource(data: Data(#"{"k": {"value": "YWJj", "version": 3}}"#.utf8))
        #expect(numbered.lookup("k").first?.version == "3")
    }

    @Test(arguments: ["YWJj====", "YWJj=", "YWI", "YW Jj", "YWJ\nj", "YWK="])
    func nonCanonicalBase64IsRejected(_ value: String) throws {
        let json = try JSONSerialization.data(withJSONObject: ["api_key": ["value": value]])
        do {
            _ = try ConfigFileKeySource(data: json, path: "Keys.json")
            Issue.record("non-canonical base64 \(value.debugDescription) was accepted")
        } catch KeyRetrievalError.malformedFile(let path, let key, _) {
            #expect(path == "Keys.json")
            #expect(key == "api_key")
        }
        let canonical = try ConfigFileKeySource(data: Data(#"{"api_key": {"value": "YWJj"}}"#.utf8))
        #expect(canonical.lookup("api_key").first?.string() == "abc")
    }

    // MARK: 6. Custom environments in generated code

    @Test func customEnvironmentsAreCompiledOnlyUnderTheirOwnFlag() throws {
        var generator = RetrievalSeededGenerator(state: 21)
        let source = try CompiledKeyGenerator.generateSource(
            [
                .init(tag: "debug", keys: [.init(name: "k", data: Data("d".utf8))]),
                .init(tag: "release", keys: [.init(name: "k", data: Data("r".utf8))]),
                .init(tag: "staging", keys: [.init(name: "k", data: Data("s".utf8))]),
                .init(tag: "eu-west", keys: [.init(name: "k", data: Data("e".utf8))]),
            ], using: &generator)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (tag, type, flag) in [
            ("staging", "CompiledKeysStaging", "KEYSMITH_KEYS_STAGING"),
            ("eu-west", "CompiledKeysEuWest", "KEYSMITH_KEYS_EU_WEST"),
        ] {
            // The table and its registration are each directly inside `#if FLAG`.
            let declaration = try #require(lines.firstIndex { $0.contains("enum \(type) {") })
            #expect(lines[declaration - 2] == "#if \(flag)", "\(tag)")
            let registration = try #require(lines.firstIndex { $0.contains("sources[\"\(tag)\"]") })
            #expect(lines[registration - 1].trimmingCharacters(in: .whitespaces) == "#if \(flag)", "\(tag)")
            #expect(source.contains("WARNING") && source.contains("define(\"\(flag)\")"), "\(tag)")
        }
        // No table is registered unconditionally.
        let unconditional = lines.indices.filter { index in
            lines[index].contains("sources[\"") && !lines[index - 1].contains("#if")
        }
        #expect(unconditional.isEmpty)
    }

    // MARK: Helpers

    private func writeTemporaryPlist(_ object: [String: Any]) throws -> URL {
        let directory = try makeRetrievalDirectory()
        let url = directory.appendingPathComponent("Keys.plist")
        try writeRetrievalPlist(object, to: url)
        return url
    }
}

#if os(Linux)
    /// The keychain source: the extended leak check, and `removeVersions` safety.
    struct RetrievalReviewFixesKeychainTests {
        @Test func keychainSourcePassesTheExtendedLeakCheck() async throws {
            try await withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data(RetrievalReviewFixesTests.secretText.utf8), for: "api_key", version: "1")
                RetrievalReviewFixesTests.expectClean(
                    source, of: [Data(RetrievalReviewFixesTests.secretText.utf8)], "KeychainKeySource")
                try await SourceConformance.check(source, expecting: ["api_key": ["1"]])
            }
        }

        @Test func removeVersionsNeverRemovesTheNewestVersion() throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("old".utf8), for: "db_key", version: "2024.06.01")
                try source.store(Data("new".utf8), for: "db_key", version: "2024.07.01")
                #expect(try source.removeVersions(of: "db_key", olderThan: "2024.12") == 1)
                #expect(try source.versions(of: "db_key") == ["2024.07.01"])
                #expect(try source.lookup("db_key").first?.string() == "new")
                // Again: the only version left is the newest, so nothing goes.
                #expect(try source.removeVersions(of: "db_key", olderThan: "2099") == 0)
                #expect(try source.versions(of: "db_key") == ["2024.07.01"])
            }
        }

        @Test(arguments: ["builtin", "latest", "", "2024.x"])
        func removeVersionsNeedsANumericVersion(_ olderThan: String) throws {
            try withRetrievalKeychain {
                let source = KeychainKeySource(service: retrievalService())
                try source.store(Data("v1".utf8), for: "k", version: "1")
                try source.store(Data("v2".utf8), for: "k", version: "2")
                do {
                    _ = try source.removeVersions(of: "k", olderThan: olderThan)
                    Issue.record("olderThan \(olderThan.debugDescription) was accepted")
                } catch KeyRetrievalError.invalidVersion(let version, _) {
                    #expect(version == olderThan)
                }
                #expect(try source.versions(of: "k") == ["1", "2"])
            }
        }
    }
#endif
