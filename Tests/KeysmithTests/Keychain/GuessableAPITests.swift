// The spellings a newcomer guesses work: `set(value, for: key)` takes any Encodable on
// KeychainStore, and SecureStore takes the same argument order (value, then key).
import Foundation
import Keysmith
import KeychainServices
import Testing

/// Stores a value from generic code, where the compiler cannot pick the String or Data overload.
private func storeGenerically<Value: Encodable>(_ value: Value, in store: KeychainStore, key: String) throws {
    try store.set(value, for: key)
}

struct GuessableAPITests {
    @Test func keychainStore_setCodable_forKey_roundTrips() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set(sampleProfile, for: "profile")
            #expect(try store.value(Profile.self, for: "profile") == sampleProfile)
            #expect(try store.value(for: "profile") == sampleProfile)
        }
    }

    @Test func keychainStore_genericSet_storesStringsAndDataAsTheirOwnOverloadsDo() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try storeGenerically("plain text", in: store, key: "text")
            #expect(try store.string(for: "text") == "plain text")
            #expect(try store.value(String.self, for: "text") == "plain text")
            try storeGenerically(Data([0, 1, 2]), in: store, key: "bytes")
            #expect(try store.data(for: "bytes") == Data([0, 1, 2]))
            #expect(try store.value(Data.self, for: "bytes") == Data([0, 1, 2]))
            try store.set("raw", for: "raw")
            #expect(try store.value(String.self, for: "raw") == "raw")
        }
    }

    @Test func keychainStore_setNil_isRefused_withTheFix() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            let nothing: Profile? = nil
            let error = #expect(throws: KeychainError.self) { try store.set(nothing, for: "profile") }
            #expect(error?.code == .invalidParameters)
            #expect(error?.recoverySuggestion?.contains("remove(_:)") == true)
        }
    }

    @Test func keychainStore_asyncGenericSet() async throws {
        try await withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try await store.set(sampleProfile, for: "profile")
            #expect(try await store.value(Profile.self, for: "profile") == sampleProfile)
        }
    }

    @Test func secureStore_takesTheSameArgumentOrder() throws {
        try withTemporaryKeychain {
            let secure = try makeStore()
            try secure.set(sampleProfile, for: "profile", in: .account("42"))
            #expect(try secure.value(Profile.self, for: "profile", in: .account("42")) == sampleProfile)
            try secure.set("token-value", for: "token")
            #expect(try secure.string(for: "token") == "token-value")
            #expect(try secure.value(String.self, for: "token") == "token-value")
            #expect(try secure.contains("token"))
            try secure.remove("token")
            #expect(try secure.string(for: "token") == nil)
        }
    }

    @Test func secureStore_oldSpellings_stillWork() throws {
        try withTemporaryKeychain {
            let secure = try makeStore()
            try secure.set("k", "v", in: "ns")
            #expect(try secure.get("k", as: String.self, in: "ns") == "v")
            #expect(try secure.string(for: "k", in: "ns") == "v")
        }
    }
}
