import Foundation
import Keysmith
import KeychainServices
import Testing

struct ServiceMigrationTests {
    @Test func test_migrateService_movesValuesAndDeletesTheOldOnes() throws {
        try withTemporaryKeychain {
            let oldService = uniqueService("old")
            let old = try KeychainStore(service: oldService, accessibility: .whenUnlocked)
            try old.set("old-access", for: "access_token")
            try old.set("old-refresh", for: "refresh_token")
            let store = try makeStore()

            let report = try store.migrateService(from: oldService, to: "auth")
            #expect(report.migrated.sorted() == ["access_token", "refresh_token"])
            #expect(report.isComplete)
            #expect(try store.get("access_token", as: String.self, in: "auth") == "old-access")
            #expect(try old.allKeys() == [])
            // The new copy gets the store's accessibility.
            let keychain = try KeychainStore(service: store.service(for: "auth"))
            #expect(try keychain.attributes(for: "access_token")?.accessibility == .afterFirstUnlockThisDeviceOnly)
        }
    }

    @Test func test_migrateService_runTwice_isIdempotent() throws {
        try withTemporaryKeychain {
            let oldService = uniqueService("old")
            let old = try KeychainStore(service: oldService)
            try old.set("value", for: "token")
            let store = try makeStore()
            try store.migrateService(from: oldService, to: "auth")
            let second = try store.migrateService(from: oldService, to: "auth")
            #expect(second.migrated.isEmpty)
            #expect(second.alreadyPresent.isEmpty)
            #expect(try store.get("token", as: String.self, in: "auth") == "value")
        }
    }

    @Test func test_migrateService_differentValueInTheNewService_isAConflict_bothKept() throws {
        try withTemporaryKeychain {
            let oldService = uniqueService("old")
            let old = try KeychainStore(service: oldService)
            try old.set("stale", for: "token")
            let store = try makeStore()
            try store.set("fresh", for: "token", in: "auth")
            let report = try store.migrateService(from: oldService, to: "auth")
            #expect(report.conflicts == ["token"])
            #expect(try store.string(for: "token", in: "auth") == "fresh")
            #expect(try old.string(for: "token") == "stale")
        }
    }

    @Test func test_migrateService_interruptedBetweenWriteAndDelete_finishesNextRun() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let oldService = uniqueService("old")
            let old = try KeychainStore(service: oldService)
            try old.set("value", for: "token")
            let store = try makeStore(errorInjection: faults)

            // The delete of the old item fails: both copies exist afterwards.
            faults.failNext(.delete, with: errSecIO)
            #expect(throws: SecureStoreError.self) { try store.migrateService(from: oldService, to: "auth") }
            #expect(try old.string(for: "token") == "value")
            #expect(try store.get("token", as: String.self, in: "auth") == "value")

            let report = try store.migrateService(from: oldService, to: "auth")
            #expect(report.alreadyPresent == ["token"])
            #expect(try old.contains("token") == false)
            #expect(try store.get("token", as: String.self, in: "auth") == "value")
        }
    }

    @Test func test_migrateService_failedWrite_leavesTheOldDataInPlace() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let oldService = uniqueService("old")
            let old = try KeychainStore(service: oldService)
            try old.set("value", for: "token")
            let store = try makeStore(errorInjection: faults)

            faults.failNext(.add, with: errSecInteractionNotAllowed)
            let error = #expect(throws: SecureStoreError.self) { try store.migrateService(from: oldService, to: "auth") }
            #expect(error?.code == .interactionNotAllowed)
            #expect(try old.string(for: "token") == "value")
            #expect(try store.contains("token", in: "auth") == false)

            try store.migrateService(from: oldService, to: "auth")
            #expect(try store.get("token", as: String.self, in: "auth") == "value")
            #expect(try old.allKeys() == [])
        }
    }

    @Test func test_serviceMigration_betweenKeychainStores_selectedKeysOnly() throws {
        try withTemporaryKeychain {
            let source = try KeychainStore(service: uniqueService("source"))
            let destination = try KeychainStore(service: uniqueService("destination"), accessGroup: testAccessGroups[1])
            try source.set("a", for: "a")
            try source.set("b", for: "b")
            let report = try ServiceMigration(from: source, to: destination).run(keys: ["a", "missing"])
            #expect(report.migrated == ["a"])
            #expect(try destination.string(for: "a") == "a")
            #expect(try source.allKeys() == ["b"])
            #expect(try ServiceMigration(from: source, to: source).run().migrated.isEmpty)
        }
    }
}
