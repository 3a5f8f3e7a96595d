// A decoding error names where it failed: property names and array positions (from the
// code), never a dictionary key (from the stored data, which can be a secret: a map of
// tokens to their expiry).
import Foundation
import Keysmith
import KeychainServices
import Testing

private struct Session: Codable {
    var expiries: [String: Int]
}

struct CodingPathRedactionTests {
    static let secretKey = "sk-live-4f9a8e7d6c5b"

    @Test func test_keychainStore_decodingError_doesNotNameADictionaryKeyFromTheData() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set(["expiries": [Self.secretKey: "not a number"]], for: "session")
            let error = #expect(throws: KeychainError.self) { try store.value(Session.self, for: "session") }
            let text = "\(String(describing: error)) \(error?.localizedDescription ?? "") \(error?.recoverySuggestion ?? "")"
            #expect(!text.contains(Self.secretKey), "\(text)")
            #expect(text.contains("expiries"), "the property name (from the code) still helps: \(text)")
        }
    }

    @Test func test_secureStore_decodingError_doesNotNameADictionaryKeyFromTheData() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set(["expiries": [Self.secretKey: "not a number"]], for: "session")
            let error = #expect(throws: SecureStoreError.self) { try store.value(Session.self, for: "session") }
            let text = "\(String(describing: error)) \(error?.localizedDescription ?? "")"
            #expect(!text.contains(Self.secretKey), "\(text)")
        }
    }
}
