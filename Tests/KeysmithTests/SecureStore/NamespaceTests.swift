import Foundation
import Keysmith
import KeychainServices
import Testing

struct NamespaceTests {
    @Test func test_service_isPrefixDotNamespace() throws {
        let store = try SecureStore(servicePrefix: "com.example.app.store")
        #expect(store.service(for: "auth") == "com.example.app.store.auth")
        #expect(store.service(for: .default) == "com.example.app.store.default")
        #expect(store.service(for: .account("42")) == "com.example.app.store.account_42")
    }

    @Test func test_accountNamespace() {
        #expect(Namespace.account("u-17").name == "account_u-17")
        #expect(Namespace.account("u-17") == "account_u-17")
    }

    @Test func test_accounts_areIsolated() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("user_info", "alice-info", in: .account("alice"))
            try store.set("user_info", "bob-info", in: .account("bob"))
            #expect(try store.get("user_info", as: String.self, in: .account("alice")) == "alice-info")
            #expect(try store.get("user_info", as: String.self, in: .account("bob")) == "bob-info")

            // Signing Alice out clears only her namespace.
            try store.resetNamespace(.account("alice"))
            #expect(try store.get("user_info", as: String.self, in: .account("alice")) == nil)
            #expect(try store.get("user_info", as: String.self, in: .account("bob")) == "bob-info")
        }
    }

    @Test func test_sameKeyInTwoNamespaces_doesNotCollide() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("token", "auth-token", in: "auth")
            try store.set("token", "push-token", in: "push")
            #expect(try store.get("token", as: String.self, in: "auth") == "auth-token")
            #expect(try store.get("token", as: String.self, in: "push") == "push-token")
        }
    }

    @Test func test_twoStoresWithDifferentPrefixes_areIsolated() throws {
        try withTemporaryKeychain {
            let first = try makeStore("first")
            let second = try makeStore("second")
            try first.set("token", "one", in: "auth")
            #expect(try second.get("token", as: String.self, in: "auth") == nil)
            try second.resetNamespace("auth")
            #expect(try first.get("token", as: String.self, in: "auth") == "one")
            #expect(try second.namespaces() == [])
        }
    }

    @Test func test_controlCharacters_areRejected() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            let error = #expect(throws: SecureStoreError.self) { try store.set("k", "v", in: Namespace("bad\nname")) }
            #expect(error?.code == .invalidValue)
        }
    }
}
