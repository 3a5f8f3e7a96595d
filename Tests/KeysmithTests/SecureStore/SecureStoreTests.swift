import Foundation
import Keysmith
import KeychainServices
import Testing

struct SecureStoreTests {
    @Test func test_setGetRemove_token() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("access_token", "eyJhbGciOi.token", in: "auth")
            #expect(try store.get("access_token", as: String.self, in: "auth") == "eyJhbGciOi.token")
            #expect(try store.contains("access_token", in: "auth"))
            try store.remove("access_token", in: "auth")
            #expect(try store.get("access_token", as: String.self, in: "auth") == nil)
            #expect(try store.contains("access_token", in: "auth") == false)
            try store.remove("access_token", in: "auth")
        }
    }

    @Test func test_codableProfile_roundTrips() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("user_profile", sampleProfile, in: "profile")
            let profile: Profile? = try store.get("user_profile", in: "profile")
            #expect(profile == sampleProfile)
        }
    }

    @Test func test_scalarsAndCollections_roundTrip() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("count", 42)
            try store.set("enabled", true)
            try store.set("ids", [3, 1, 2])
            try store.set("map", ["b": 2, "a": 1])
            try store.set("blob", Data([9, 8, 7]))
            #expect(try store.get("count", as: Int.self) == 42)
            #expect(try store.get("enabled", as: Bool.self) == true)
            #expect(try store.get("ids", as: [Int].self) == [3, 1, 2])
            #expect(try store.get("map", as: [String: Int].self) == ["a": 1, "b": 2])
            #expect(try store.get("blob", as: Data.self) == Data([9, 8, 7]))
        }
    }

    @Test func test_get_missing_isNil() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            #expect(try store.get("nothing", as: String.self) == nil)
            #expect(try store.get("nothing", as: Profile.self, in: "profile") == nil)
        }
    }

    @Test func test_keys_andResetNamespace() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("access_token", "a", in: "auth")
            try store.set("refresh_token", "r", in: "auth")
            try store.set("pin", "1234", in: "local_pin")
            #expect(try store.keys(in: "auth") == ["access_token", "refresh_token"])
            #expect(try store.namespaces() == ["auth", "local_pin"])

            try store.resetNamespace("auth")
            #expect(try store.keys(in: "auth") == [])
            #expect(try store.get("pin", as: String.self, in: "local_pin") == "1234")
            #expect(try store.namespaces() == ["local_pin"])
        }
    }

    @Test func test_defaultNamespace_isUsedWhenNoneIsGiven() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("device_id", "abc")
            #expect(try store.get("device_id", as: String.self, in: .default) == "abc")
            #expect(try store.keys() == ["device_id"])
        }
    }

    @Test func test_asWellOnTheKeychainStoreLevel_itemsUseTheNamespaceService() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("access_token", "value", in: "auth")
            let keychain = try KeychainStore(service: store.service(for: "auth"))
            #expect(try keychain.string(for: "access_token") == "value")
            #expect(try keychain.attributes(for: "access_token")?.accessibility == .afterFirstUnlockThisDeviceOnly)
        }
    }

    @Test func test_invalidConfiguration_isRejected() {
        #expect(throws: SecureStoreError.self) { try SecureStore(servicePrefix: "") }
        #expect(throws: SecureStoreError.self) { try SecureStore(servicePrefix: "com.example.") }
        #expect(throws: SecureStoreError.self) { try SecureStore(servicePrefix: "com.example", sizeLimit: 0) }
    }

    @Test func test_emptyKeyOrNamespace_isInvalidValue() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            #expect(#expect(throws: SecureStoreError.self) { try store.set("", "v") }?.code == .invalidValue)
            #expect(#expect(throws: SecureStoreError.self) { try store.set("k", "v", in: "") }?.code == .invalidValue)
        }
    }

    @Test func test_sendableStore_usableFromManyTasks() async throws {
        try await withTemporaryKeychain {
            let store = try makeStore()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<10 {
                    group.addTask { try store.set("key-\(index)", index, in: "parallel") }
                }
                try await group.waitForAll()
            }
            #expect(try store.keys(in: "parallel").count == 10)
        }
    }
}
