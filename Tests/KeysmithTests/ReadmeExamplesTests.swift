// The README's code, compiled and run as written (on a temporary keychain), so the README
// cannot drift from the API.
import Foundation
import Keysmith
import Testing

struct ReadmeExamplesTests {
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

    @Test func tokenInFiveLines() throws {
        try withTemporaryKeychain {
            let token = "eyJhbGciOi.example"
            let store = try KeychainStore(service: "com.example.app.auth")   // explicit service, no bundle-ID default
            try store.set(token, for: "access_token")                          // update first, add if missing
            let saved = try store.string(for: "access_token")                  // nil when absent
            try store.remove("access_token")                                   // absent is fine
            #expect(saved == token)
            #expect(try store.string(for: "access_token") == nil)
        }
    }

    @Test func codableProfileInFiveLines() throws {
        try withTemporaryKeychain {
            let userID = "42"
            let profile = Profile(nickname: "kim", avatar: URL(string: "https://example.com/a.png")!)
            let secure = try SecureStore(servicePrefix: "com.example.app.store")  // namespace service = prefix.namespace
            try secure.set(profile, for: "user_profile", in: .account(userID))    // any Encodable; strings stored raw
            let loaded = try secure.value(Profile.self, for: "user_profile", in: .account(userID))  // nil when absent
            try secure.resetNamespace(.account(userID))                           // sign-out clears only this account
            #expect(loaded == profile)
            #expect(try secure.value(Profile.self, for: "user_profile", in: .account(userID)) == nil)
        }
    }

    @Test func findingAKey() throws {
        try withTemporaryKeychain {
            let source = KeychainKeySource(service: "com.example.app.keys")
            try source.store(Data("old".utf8), for: "api_key", version: "2024.06.01")
            try source.store(Data("new".utf8), for: "api_key", version: "2024.07.01")
            let retriever = KeyRetriever(sources: [source])
            let key = try retriever.retrieve("api_key")
            #expect(key?.sourceDescription == "Keychain")
            #expect(key?.version == "2024.07.01")
            let old = try retriever.retrieve("api_key", version: "2024.06.01")
            #expect(old?.data == Data("old".utf8))
            // explain names the winning copy and the versions it chose from.
            let trace = retriever.explain("api_key")
            #expect(trace.identifier == "api_key")
            #expect(trace.winner?.sourceDescription == "Keychain")
            #expect(trace.winner?.version == "2024.07.01")
            #expect(trace.description.contains("hit 2024.07.01 (versions: 2024.06.01, 2024.07.01)"), "\(trace)")
        }
    }
}
