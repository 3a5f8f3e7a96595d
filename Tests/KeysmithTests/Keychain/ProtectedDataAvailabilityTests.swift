import Foundation
import Keysmith
import KeychainServices
import Testing

struct ProtectedDataAvailabilityTests {
    let fast = ProtectedDataAvailability.RetryPolicy(
        timeout: .seconds(60), initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))

    @Test func test_retrying_succeedsOnceProtectedDataIsAvailable() async throws {
        try await withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            try await store.set("refresh", for: "refresh_token")
            faults.failNext(.copyMatching, with: errSecInteractionNotAllowed, count: 3)

            let value = try await store.retryingWhileLocked(policy: fast) { try $0.string(for: "refresh_token") }
            #expect(value == "refresh")
            #expect(faults.injectedFailures.count == 3)
        }
    }

    @Test func test_retrying_alsoCoversNotAvailable() async throws {
        try await withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            faults.failNext(with: errSecNotAvailable)
            try await ProtectedDataAvailability.retrying(policy: fast) { try store.set("v", for: "k") }
            #expect(try await store.string(for: "k") == "v")
        }
    }

    @Test func test_retrying_throwsOtherErrorsAtOnce() async throws {
        try await withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            faults.failNext(with: errSecMissingEntitlement)
            faults.failNext(with: errSecInteractionNotAllowed)
            let clock = ContinuousClock()
            let start = clock.now
            await #expect(throws: KeychainError.self) {
                try await store.retryingWhileLocked(policy: fast) { try $0.data(for: "k") }
            }
            #expect(clock.now - start < .seconds(30))
            #expect(faults.injectedFailures.count == 1)
        }
    }

    @Test func test_retrying_givesUpAfterTheTimeout() async throws {
        try await withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            faults.failNext(with: errSecInteractionNotAllowed, count: .max)
            let policy = ProtectedDataAvailability.RetryPolicy(
                timeout: .milliseconds(200), initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
            let error = await #expect(throws: KeychainError.self) {
                try await store.retryingWhileLocked(policy: policy) { try $0.data(for: "k") }
            }
            #expect(error?.code == .interactionNotAllowed)
            #expect(faults.injectedFailures.count >= 2)
        }
    }

    @Test func test_notification_endsTheWaitEarly() async {
        let clock = ContinuousClock()
        let start = clock.now
        async let waited: Void = ProtectedDataAvailability.waitForAvailability(atMost: .seconds(300))
        try? await Task.sleep(for: .milliseconds(100))
        NotificationCenter.default.post(name: ProtectedDataAvailability.didBecomeAvailableNotification, object: nil)
        await waited
        #expect(clock.now - start < .seconds(120))
    }
}
