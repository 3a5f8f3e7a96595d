// README's getting-started, KeychainStore/SecureStore and key-file snippets, compiled and
// run as written (on a temporary keychain), and its Package.swift snippet checked against
// the package's real product names.
import Foundation
import Keysmith
import Testing

struct ReadmeGettingStartedTests {
    struct Profile: Codable, Equatable { var nickname: String; var avatar: URL }

    private func withTemporaryKeychain(_ body: () throws -> Void) throws {
        #if os(Linux)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try KeychainEnvironment.withEnvironment(
            KeychainEnvironment(directory: directory, accessGroups: ["com.example.app"]), body)
        #else
        try body()
        #endif
    }

    /// The package's root: three levels above this file.
    private var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    @Test func packageSnippet_namesProductsThePackageDeclares() throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let manifest = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let named = readme.matches(of: #/\.product\(name: "([A-Za-z]+)", package: "Keysmith"\)/#).map { String($0.1) }
        #expect(Set(named) == ["Keysmith", "KeychainServices", "KeychainAuthentication"])
        // `package: "Keysmith"` works whatever the checkout is called only with the name given
        // on the dependency line, and that name must be the manifest's.
        #expect(readme.contains(".package(name: \"Keysmith\", path: "))
        #expect(manifest.contains("let package = Package(\n    name: \"Keysmith\","))
        for product in named + ["KeychainAuthentication"] {
            #expect(manifest.contains(".library(name: \"\(product)\""), "\(product)")
        }
        #expect(manifest.contains(".executable(name: \"keysmith\""))
        let makefile = try String(contentsOf: packageRoot.appendingPathComponent("Makefile"), encoding: .utf8)
        #expect(readme.contains("make install PREFIX="))
        #expect(makefile.contains("\ninstall:") && makefile.contains("$(PREFIX)/bin"))
    }

    @Test func keychainStore_takesACodableValue() throws {
        try withTemporaryKeychain {
            let profile = Profile(nickname: "kim", avatar: URL(string: "https://example.com/a.png")!)
            let store = try KeychainStore(service: "com.example.app.auth")
            try store.set(profile, for: "profile")
            #expect(try store.value(Profile.self, for: "profile") == profile)
        }
    }

    @Test func keyFile_bareStringIsText_nestedValueIsBase64() throws {
        try withTemporaryKeychain {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-keys-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("Keys.json")
            try Data(
                """
                {
                  "maps_key": "plain text key",
                  "api_key":  { "value": "c2stbGl2ZS0xMjM0", "version": "2024.07.01" },
                  "db_key":   [ { "value": "b2xk", "version": "v1" }, { "value": "bmV3", "version": "v2" } ]
                }
                """.utf8
            ).write(to: file)

            let retriever = KeyRetriever(sources: [
                KeychainKeySource(service: "com.example.app.keys"),
                try ConfigFileKeySource(url: file),   // checked now: a bad file throws here
            ])
            let maps = try retriever.retrieve("maps_key")                          // data == Data("plain text key".utf8)
            #expect(maps?.data == Data("plain text key".utf8))
            #expect(try retriever.retrieve("api_key")?.data == Data("sk-live-1234".utf8))
            #expect(try retriever.retrieve("db_key")?.data == Data("new".utf8))
            #expect(try retriever.retrieve("db_key")?.version == "v2")
        }
    }

    @Test func sharedRetriever_withAResourceBundle() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"maps_key": "plain text key"}"#.utf8).write(to: directory.appendingPathComponent("Keys.json"))
        let module = try #require(Bundle(path: directory.path))   // what Bundle.module is in a SwiftPM target
        let sources = KeyRetriever.defaultSources(bundle: module)
        #expect(sources.contains { $0.sourceDescription == "ConfigFile(json)" })
    }
}
