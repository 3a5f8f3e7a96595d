import Foundation
import Keysmith
import KeychainServices
import Synchronization
import Testing

/// A `set` succeeds whatever a concurrent `remove` of the same key does: the item it
/// updates may vanish, and the item it adds may appear, any number of times in between.
struct SetRacingRemoveTests {
    @Test func test_set_whenTheItemVanishesAfterALostAddRace_stillSucceeds() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            // update: missing; add: another writer was first; update: a remover was first.
            faults.failNext(.update, with: errSecItemNotFound, count: 2)
            faults.failNext(.add, with: errSecDuplicateItem)
            try store.set("value", for: "contested")
            #expect(try store.string(for: "contested") == "value")
        }
    }

    @Test func test_set_outlastsManyRoundsOfTheRace() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            // Ten rounds of: the item is gone when updated, and back when added.
            for _ in 0..<10 {
                faults.failNext(.update, with: errSecItemNotFound)
                faults.failNext(.add, with: errSecDuplicateItem)
            }
            try store.set("value", for: "contested")
            #expect(try store.string(for: "contested") == "value")
            #expect(!faults.hasPendingFailures)
        }
    }

    @Test func test_set_givesUpOnlyAfterItsBound_withTheKeychainsStatus() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            faults.failNext(.update, with: errSecItemNotFound, count: Int.max)
            faults.failNext(.add, with: errSecDuplicateItem, count: Int.max)
            #expect(throws: KeychainError.self) { try store.set("value", for: "contested") }
            faults.reset()
            try store.set("value", for: "contested")
            #expect(try store.string(for: "contested") == "value")
        }
    }

    @Test func test_set_thatGivesUp_saysOtherWritersKeptRacing_notThatTheItemExists() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            faults.failNext(.update, with: errSecItemNotFound, count: Int.max)
            faults.failNext(.add, with: errSecDuplicateItem, count: Int.max)
            do throws(KeychainError) {
                try store.set("S3CRET-VALUE", for: "contested")
                Issue.record("set succeeded although every round was lost")
            } catch {
                let advice = error.recoverySuggestion ?? ""
                #expect(advice.contains("removed"), "\(advice)")
                #expect(!advice.contains("if you call SecItemAdd yourself"), "\(advice)")
                #expect(!"\(error)".contains("S3CRET"))
            }
        }
    }

    @Test func test_concurrentSetsAndRemovesOfOneKey_neverFailASet() throws {
        try withTemporaryKeychain {
            let environment = KeychainEnvironment.current
            let service = uniqueService()
            let failures = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                KeychainEnvironment.withEnvironment(environment) {
                    guard let store = try? KeychainStore(service: service) else {
                        failures.withLock { $0 += 1 }
                        return
                    }
                    for _ in 0..<60 {
                        do {
                            if worker % 2 == 0 {
                                try store.set("value", for: "contested")
                            } else {
                                try store.remove("contested")
                            }
                        } catch {
                            failures.withLock { $0 += 1 }
                        }
                    }
                }
            }
            #expect(failures.withLock { $0 } == 0)
        }
    }
}
