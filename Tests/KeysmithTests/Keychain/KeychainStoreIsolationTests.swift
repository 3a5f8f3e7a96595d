import Foundation
import Keysmith
import KeychainServices
import Testing

struct KeychainStoreIsolationTests {
    @Test func test_twoServices_neverSeeEachOthersKeys() throws {
        try withTemporaryKeychain {
            let first = try KeychainStore(service: uniqueService("first"))
            let second = try KeychainStore(service: uniqueService("second"))
            try first.set("one", for: "token")
            try second.set("two", for: "token")
            try second.set("only-second", for: "extra")

            #expect(try first.string(for: "token") == "one")
            #expect(try second.string(for: "token") == "two")
            #expect(try first.allKeys() == ["token"])
            #expect(try second.allKeys() == ["extra", "token"])
            #expect(try first.contains("extra") == false)

            try first.remove("token")
            #expect(try second.string(for: "token") == "two")
        }
    }

    @Test func test_removeAll_leavesOtherServicesAlone() throws {
        try withTemporaryKeychain {
            let mine = try KeychainStore(service: uniqueService("mine"))
            let other = try KeychainStore(service: uniqueService("other"))
            for key in ["a", "b", "c"] { try mine.set("v", for: key) }
            try other.set("keep", for: "a")

            try mine.removeAll()
            #expect(try mine.allKeys() == [])
            #expect(try other.string(for: "a") == "keep")
            // Removing all of an empty store succeeds.
            try mine.removeAll()
        }
    }

    @Test func test_removeAll_withExplicitGroup_leavesOtherGroupsAlone() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let privateStore = try KeychainStore(service: service, accessGroup: testAccessGroups[0])
            let sharedStore = try KeychainStore(service: service, accessGroup: testAccessGroups[1])
            try privateStore.set("private", for: "token")
            try sharedStore.set("shared", for: "token")

            try privateStore.removeAll()
            #expect(try privateStore.contains("token") == false)
            #expect(try sharedStore.string(for: "token") == "shared")
        }
    }

    @Test func test_accessGroup_sharedItemsAreVisibleToAStoreOfTheSameGroup() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let app = try KeychainStore(service: service, accessGroup: testAccessGroups[1])
            let extensionStore = try KeychainStore(service: service, accessGroup: testAccessGroups[1])
            try app.set("shared-session", for: "session")
            #expect(try extensionStore.string(for: "session") == "shared-session")
            #expect(try app.attributes(for: "session")?.accessGroup == testAccessGroups[1])
        }
    }

    @Test func test_accessGroup_notEntitled_isMissingEntitlementWithFix() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService(), accessGroup: "com.example.not-entitled")
            let error = try #require(#expect(throws: KeychainError.self) { try store.set("v", for: "token") })
            #expect(error.code == .missingEntitlement)
            #expect(error.status == errSecMissingEntitlement)
            #expect(error.recoverySuggestion?.contains("keychain-access-groups") == true
                || error.recoverySuggestion?.contains("Keychain Sharing") == true)
        }
    }

    @Test func test_synchronizableAndLocalStores_keepSeparateItems() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let local = try KeychainStore(service: service, accessibility: .afterFirstUnlock)
            let synced = try KeychainStore(service: service, accessibility: .afterFirstUnlock, synchronizable: true)
            try local.set("local", for: "token")
            try synced.set("synced", for: "token")
            #expect(try local.string(for: "token") == "local")
            #expect(try synced.string(for: "token") == "synced")
            #expect(try synced.attributes(for: "token")?.isSynchronizable == true)
            #expect(try local.attributes(for: "token")?.isSynchronizable == false)

            try synced.removeAll()
            #expect(try local.string(for: "token") == "local")
        }
    }

    @Test func test_synchronizable_withThisDeviceOnlyOrPolicy_isRejected() {
        let deviceOnly = #expect(throws: KeychainError.self) {
            try KeychainStore(service: "com.example.sync", accessibility: .whenUnlockedThisDeviceOnly, synchronizable: true)
        }
        #expect(deviceOnly?.code == .invalidParameters)
        #expect(deviceOnly?.description.contains("ThisDeviceOnly") == true)
        #expect(throws: KeychainError.self) {
            try KeychainStore(
                service: "com.example.sync", accessibility: .afterFirstUnlock, synchronizable: true,
                accessPolicy: .biometryAny)
        }
    }
}
