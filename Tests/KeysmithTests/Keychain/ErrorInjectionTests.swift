import Foundation
import Keysmith
import KeychainServices
import Testing

struct ErrorInjectionTests {
    @Test func test_failNext_failsOnlyTheNextCall() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            try store.set("value", for: "token")

            faults.failNext(with: errSecInteractionNotAllowed)
            let error = #expect(throws: KeychainError.self) { try store.string(for: "token") }
            #expect(error?.code == .interactionNotAllowed)
            #expect(error?.status == errSecInteractionNotAllowed)
            // The next call reaches the real keychain again.
            #expect(try store.string(for: "token") == "value")
            #expect(faults.hasPendingFailures == false)
            #expect(faults.injectedFailures.map(\.status) == [errSecInteractionNotAllowed])
        }
    }

    @Test func test_failNext_forOneOperation_letsOthersThrough() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            faults.failNext(.delete, with: errSecMissingEntitlement)
            try store.set("value", for: "token")
            #expect(try store.string(for: "token") == "value")
            let error = #expect(throws: KeychainError.self) { try store.remove("token") }
            #expect(error?.code == .missingEntitlement)
            #expect(try store.contains("token"))
        }
    }

    @Test func test_failedSet_leavesThePreviousValue() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            try store.set("old", for: "token")
            faults.failNext(.update, with: errSecAuthFailed)
            #expect(throws: KeychainError.self) { try store.set("new", for: "token") }
            #expect(try store.string(for: "token") == "old")
        }
    }

    @Test func test_count_andReset() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            faults.failNext(.copyMatching, with: errSecUserCanceled, count: 2)
            #expect(throws: KeychainError.self) { try store.data(for: "a") }
            #expect(throws: KeychainError.self) { try store.data(for: "a") }
            #expect(try store.data(for: "a") == nil)

            faults.failNext(with: errSecIO, count: .max)
            #expect(throws: KeychainError.self) { try store.allKeys() }
            #expect(throws: KeychainError.self) { try store.allKeys() }
            faults.reset()
            #expect(try store.allKeys() == [])
            #expect(faults.injectedFailures.isEmpty)
        }
    }

    @Test func test_successStatusOrZeroCount_addsNothing() {
        let faults = ErrorInjection()
        faults.failNext(with: errSecSuccess)
        faults.failNext(with: errSecIO, count: 0)
        #expect(faults.hasPendingFailures == false)
    }

    @Test func test_storesWithoutTheInjection_areUnaffected() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let service = uniqueService()
            let injected = try KeychainStore(service: service, errorInjection: faults)
            let plain = try KeychainStore(service: service)
            faults.failNext(with: errSecIO, count: .max)
            try plain.set("value", for: "token")
            #expect(try plain.string(for: "token") == "value")
            #expect(throws: KeychainError.self) { try injected.string(for: "token") }
        }
    }
}
