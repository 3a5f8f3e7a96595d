import Foundation
import Keysmith
import KeychainServices
import Testing

struct KeychainStoreTests {
    @Test func test_set_thenRead_returnsDataStringAndCodable() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set(Data([0, 1, 2, 255]), for: "blob")
            try store.set("s3cr3t-token", for: "token")
            try store.setValue(sampleProfile, for: "profile")

            #expect(try store.data(for: "blob") == Data([0, 1, 2, 255]))
            #expect(try store.string(for: "token") == "s3cr3t-token")
            #expect(try store.value(Profile.self, for: "profile") == sampleProfile)
        }
    }

    @Test func test_read_missingItem_isNilNotAnError() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            #expect(try store.data(for: "nothing") == nil)
            #expect(try store.string(for: "nothing") == nil)
            #expect(try store.value(Profile.self, for: "nothing") == nil)
            #expect(try store.attributes(for: "nothing") == nil)
            #expect(try store.contains("nothing") == false)
        }
    }

    @Test func test_set_existingKey_updatesInPlace() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set("first", for: "token")
            let created = try #require(try store.attributes(for: "token")).creationDate
            try store.set("second", for: "token")
            #expect(try store.string(for: "token") == "second")
            #expect(try store.allKeys() == ["token"])
            // Updated, not deleted and re-added: the creation date survives.
            #expect(try store.attributes(for: "token")?.creationDate == created)
        }
    }

    @Test func test_remove_deletesItem_andMissingItemIsSuccess() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set("value", for: "token")
            try store.remove("token")
            #expect(try store.contains("token") == false)
            try store.remove("token")
            try store.remove("never-existed")
        }
    }

    @Test func test_contains_reportsPresence() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set("value", for: "token")
            #expect(try store.contains("token"))
            #expect(try store.contains("other") == false)
        }
    }

    @Test func test_allKeys_listsThisStoresKeysSorted() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            #expect(try store.allKeys() == [])
            for key in ["b", "a", "c"] { try store.set("v", for: key) }
            #expect(try store.allKeys() == ["a", "b", "c"])
        }
    }

    @Test func test_attributes_reportLabelCommentDatesAndAccessibility() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let store = try KeychainStore(service: service)
            let before = Date().addingTimeInterval(-5)
            try store.set("value", for: "token", label: "API token", comment: "issued by auth")
            let attributes = try #require(try store.attributes(for: "token"))
            #expect(attributes.key == "token")
            #expect(attributes.service == service)
            #expect(attributes.label == "API token")
            #expect(attributes.comment == "issued by auth")
            #expect(attributes.accessibility == .afterFirstUnlockThisDeviceOnly)
            #expect(attributes.isSynchronizable == false)
            #expect(attributes.hasAccessControl == false)
            #expect(try #require(attributes.creationDate) >= before)
            #expect(try #require(attributes.modificationDate) >= before)
            #expect(attributes.accessGroup == testAccessGroups[0])

            // A later set without label keeps the label, keeps the creation date and moves the
            // modification date forward (dates keep sub-microsecond precision; a write takes longer).
            try store.set("value2", for: "token")
            let after = try #require(try store.attributes(for: "token"))
            #expect(after.label == "API token")
            let firstModified = try #require(attributes.modificationDate)
            #expect(try #require(after.modificationDate) > firstModified)
            #expect(after.creationDate == attributes.creationDate)
        }
    }

    @Test func test_attributes_descriptionNeverContainsData() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set("TOPSECRET-VALUE", for: "token")
            let attributes = try #require(try store.attributes(for: "token"))
            #expect(!attributes.description.contains("TOPSECRET"))
            #expect(attributes.description.contains("token"))
        }
    }

    @Test func test_init_emptyService_isRejectedWithExplanation() {
        #expect(throws: KeychainError.self) { try KeychainStore(service: "") }
        let error = #expect(throws: KeychainError.self) { try KeychainStore(service: "  ") }
        #expect(error?.code == .invalidParameters)
        #expect(error?.description.contains("service") == true)
    }

    @Test func test_emptyKey_isRejected() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            #expect(throws: KeychainError.self) { try store.set("v", for: "") }
            #expect(throws: KeychainError.self) { try store.data(for: "") }
        }
    }

    @Test func test_defaults_areExplicitAndLocal() throws {
        let store = try KeychainStore(service: "com.example.defaults")
        #expect(store.accessibility == .afterFirstUnlockThisDeviceOnly)
        #expect(store.synchronizable == false)
        #expect(store.accessPolicy == nil)
        #expect(store.accessGroup == nil)
        #expect(store.service == "com.example.defaults")
    }

    @Test func test_string_ofNonUTF8Data_isDataCorrupted() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set(Data([0xFF, 0xFE, 0xFD]), for: "blob")
            let error = #expect(throws: KeychainError.self) { try store.string(for: "blob") }
            #expect(error?.code == .dataCorrupted)
            #expect(error?.status == errSecDecode)
        }
    }

    @Test func test_value_ofWrongType_isDataCorruptedWithoutTheData() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set("{\"secret\":\"hunter2\"}", for: "profile")
            let error = try #require(#expect(throws: KeychainError.self) { try store.value(Profile.self, for: "profile") })
            #expect(error.code == .dataCorrupted)
            #expect(error.description.contains("Profile"))
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test func test_set_sameKeyFromManyThreads_leavesOneItem() async throws {
        try await withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<16 {
                    group.addTask { try await store.set("value-\(index)", for: "shared") }
                }
                try await group.waitForAll()
            }
            #expect(try await store.allKeys() == ["shared"])
            let value = try #require(try await store.string(for: "shared"))
            #expect(value.hasPrefix("value-"))
        }
    }
}
