// What `KeyRetriever.shared` consults: the keychain, a key file named by KEYSMITH_CONFIG,
// the key file of a bundle (the app's, or a SwiftPM resource bundle passed in), the
// environment, and compiled keys only when the app passes its generated source.
import Foundation
import Keysmith
import Testing

/// A bundle without any key file: a fresh empty directory.
private func makeEmptyBundle() throws -> (Bundle, URL) {
    let directory = try makeRetrievalDirectory()
    return (try #require(Bundle(path: directory.path)), directory)
}

struct RetrievalDefaultSourcesTests {

    @Test func withoutAnyKeyFile_keychainThenEnvironment_noCompiledKeys() throws {
        let (emptyBundle, empty) = try makeEmptyBundle()
        defer { try? FileManager.default.removeItem(at: empty) }
        let sources = KeyRetriever.defaultSources(service: "com.example.keys", bundle: emptyBundle, environment: [:])
        #expect(sources.map(\.kind) == [.keychain, .environment])
        #expect(!sources.contains { $0.kind == .compiled })
        #expect(KeyRetriever.shared.sources.map(\.kind).contains(.keychain))
        #expect(!KeyRetriever.shared.sources.contains { $0.kind == .compiled })
    }

    @Test func compiledKeys_areAddedWhenPassed() throws {
        let (emptyBundle, empty) = try makeEmptyBundle()
        defer { try? FileManager.default.removeItem(at: empty) }
        let compiled = CompiledKeySource(environmentTag: "debug", salt: [1, 2, 3], entries: [])
        let sources = KeyRetriever.defaultSources(
            service: "com.example.keys", bundle: emptyBundle, environment: [:], compiledKeys: compiled)
        #expect(sources.map(\.kind) == [.keychain, .environment, .compiled])
    }

    @Test func keysmithConfig_namingAFile_isConsulted() throws {
        let (emptyBundle, empty) = try makeEmptyBundle()
        defer { try? FileManager.default.removeItem(at: empty) }
        let directory = try makeRetrievalDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("app-keys.json")
        try Data(#"{"maps_key": "text-key"}"#.utf8).write(to: file)

        let sources = KeyRetriever.defaultSources(
            service: "com.example.keys", bundle: emptyBundle, environment: ["KEYSMITH_CONFIG": file.path])
        #expect(sources.map(\.kind) == [.keychain, .configFile, .environment])
        let retriever = makeRetrievalRetriever(Array(sources.dropFirst()))
        let key = try #require(try retriever.retrieve("maps_key"))
        #expect(key.location.contains(file.path))
    }

    @Test func keysmithConfig_namingADirectory_findsKeysPlistOrJson() throws {
        let (emptyBundle, empty) = try makeEmptyBundle()
        defer { try? FileManager.default.removeItem(at: empty) }
        let directory = try makeRetrievalDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try writeRetrievalPlist(["maps_key": "text-key"], to: directory.appendingPathComponent("Keys.plist"))

        let sources = KeyRetriever.defaultSources(
            service: "com.example.keys", bundle: emptyBundle, environment: ["KEYSMITH_CONFIG": directory.path])
        let retriever = makeRetrievalRetriever(Array(sources.dropFirst()))
        #expect(try retriever.retrieve("maps_key")?.sourceDescription == "ConfigFile(plist)")
    }

    @Test func keysmithConfig_namingNothing_isReported_notIgnored() throws {
        let (emptyBundle, empty) = try makeEmptyBundle()
        defer { try? FileManager.default.removeItem(at: empty) }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString).json")
        let sources = KeyRetriever.defaultSources(
            service: "com.example.keys", bundle: emptyBundle, environment: ["KEYSMITH_CONFIG": missing.path])
        let config = try #require(sources.first { $0.kind == .configFile })
        let error = #expect(throws: KeyRetrievalError.self) { try config.lookup("maps_key") }
        #expect("\(error.map { "\($0)" } ?? "")".contains(missing.path))
        #expect("\(error.map { "\($0)" } ?? "")".contains("KEYSMITH_CONFIG"))
    }

    @Test func aResourceBundle_passedIn_isSearched() throws {
        // A SwiftPM resource bundle is a directory on Linux (`Package_Target.resources`);
        // an app passes `Bundle.module`.
        let directory = try makeRetrievalDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"maps_key": {"value": "dGV4dA==", "version": "2"}}"#.utf8)
            .write(to: directory.appendingPathComponent("Keys.json"))
        let bundle = try #require(Bundle(path: directory.path))

        let sources = KeyRetriever.defaultSources(service: "com.example.keys", bundle: bundle, environment: [:])
        #expect(sources.map(\.kind) == [.keychain, .configFile, .environment])
        let retriever = makeRetrievalRetriever(Array(sources.dropFirst()))
        #expect(try retriever.retrieve("maps_key")?.version == "2")
    }
}
