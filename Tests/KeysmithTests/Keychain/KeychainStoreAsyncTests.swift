import Foundation
import Keysmith
import KeychainServices
import Testing

struct KeychainStoreAsyncTests {
    @Test func test_asyncVariants_roundTrip() async throws {
        try await withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try await store.set(Data([1, 2, 3]), for: "blob")
            try await store.set("token-value", for: "token")
            try await store.setValue(sampleProfile, for: "profile")

            #expect(try await store.data(for: "blob") == Data([1, 2, 3]))
            #expect(try await store.string(for: "token") == "token-value")
            #expect(try await store.value(Profile.self, for: "profile") == sampleProfile)
            #expect(try await store.contains("token"))
            #expect(try await store.attributes(for: "token")?.key == "token")
            #expect(try await store.allKeys() == ["blob", "profile", "token"])
            try await store.remove("blob")
            #expect(try await store.data(for: "blob") == nil)
            try await store.removeAll()
            #expect(try await store.allKeys() == [])
        }
    }

    @Test func test_asyncVariant_canBeAwaitedFromTheMainActor() async throws {
        try await withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try await Self.roundTripOnMainActor(store)
        }
    }

    /// The keychain call hops off the main actor (the variants are `@concurrent`) and the
    /// caller resumes on it.
    @MainActor
    static func roundTripOnMainActor(_ store: KeychainStore) async throws {
        try await store.set("value", for: "token")
        #expect(try await store.string(for: "token") == "value")
        MainActor.assertIsolated()
    }

    @Test func test_manyConcurrentReadersAndWriters() async throws {
        try await withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await store.set("value-\(index)", for: "key-\(index % 5)")
                        _ = try await store.string(for: "key-\(index % 5)")
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await store.allKeys() == ["key-0", "key-1", "key-2", "key-3", "key-4"])
        }
    }
}
