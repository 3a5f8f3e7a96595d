import Foundation
import Keysmith
import KeychainServices
import Testing

struct ProtectedDataAvailabilityTests {
    /// Short delays; a timeout long enough for a loaded machine, where the test runner's few
    /// threads can be busy with other tests for a minute (a retry that never succeeds still
    /// fails, after the timeout).
    let fast = ProtectedDataAvailability.RetryPolicy(
        timeout: .seconds(300), initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))

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
        // The waiter registers for the notification when it starts, which this task cannot
        // see; so the notification is posted again and again (yielding in between, no sleep)
        // until the wait is over. A lost race costs one more post, never the whole wait.
        let clock = ContinuousClock()
        let start = clock.now
        let finished = Flag()
        let poster = Task {
            var posts = 0
            while !finished.isSet, !Task.isCancelled {
                NotificationCenter.default.post(name: ProtectedDataAvailability.didBecomeAvailableNotification, object: nil)
                posts += 1
                await Task.yield()
            }
            return posts
        }
        // The bound is generous: on a loaded machine the test runner's few threads may be busy
        // with other tests for a while (over 100 s was seen with two full test runs at once on
        // two cores); a notification that never ends the wait runs the full 600 s and fails.
        await ProtectedDataAvailability.waitForAvailability(atMost: .seconds(600))
        finished.set()
        let posts = await poster.value
        let waited = clock.now - start
        #expect(waited < .seconds(500), "the wait ran \(waited): the notification did not end it")
        #expect(posts >= 1)
    }
}

/// A thread-safe flag.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}
