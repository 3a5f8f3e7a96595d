import Foundation
@testable import KeychainServices
import Keysmith
import Testing

/// ProtectedDataAvailability against the keychain's real lock state (no injected errors).
struct ProtectedDataLockStateTests {
    init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

    static var item: [String: Any] {
        [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.example.lockstate",
        kSecAttrAccount as String: "token",
        ]
    }

    static func readToken() throws -> String {
        var result: CFTypeRef?
        var query = item
        query[kSecReturnData as String] = true
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess, let data = result as? Data else { throw KeychainError(status: status) }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func retryingSucceedsWhenTheKeychainIsUnlocked() async throws {
        try await withTemporaryKeychain {
            try KeychainEnvironment.setPassphrase("pw", old: nil)
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            var add = Self.item
            add[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
            add[kSecValueData as String] = Data("secret".utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            try KeychainEnvironment.lock()
            #expect(!ProtectedDataAvailability.isProtectedDataAvailable)
            #expect(throws: KeychainError.self) { try Self.readToken() }

            var states = ProtectedDataAvailability.lockStates(checkingEvery: .milliseconds(10)).makeAsyncIterator()
            #expect(await states.next() == .locked)
            try KeychainEnvironment.unlock(passphrase: "pw")
            #expect(await states.next() == .unlocked)
            #expect(ProtectedDataAvailability.isProtectedDataAvailable)
            let policy = ProtectedDataAvailability.RetryPolicy(timeout: .seconds(60), initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))
            #expect(try await ProtectedDataAvailability.retrying(policy: policy) { try Self.readToken() } == "secret")
        }
    }

    /// A retry that waits a long time (300 s) is woken by an unlock in this process, long
    /// before its wait would end: the unlock posts the availability notification. (What is
    /// checked is when the second attempt came; the keychain's lock state is shared by every
    /// process of the user, so the attempt's outcome is checked only when it returned.) The
    /// wait is long so that a busy machine, where the woken task may wait tens of seconds for
    /// a thread of the test run's shared pool, cannot pass for a wait that ran out.
    @Test func retryingWakesUpWhenThisProcessUnlocks() async throws {
        try await withTemporaryKeychain {
            try KeychainEnvironment.setPassphrase("pw", old: nil)
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            var add = Self.item
            add[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
            add[kSecValueData as String] = Data("secret".utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            try KeychainEnvironment.lock()
            try #require(!ProtectedDataAvailability.isProtectedDataAvailable, "locked")

            let attempts = AttemptCounter()
            let longWait = Duration.seconds(300)
            let policy = ProtectedDataAvailability.RetryPolicy(timeout: .seconds(600), initialDelay: longWait, maximumDelay: longWait)
            let clock = ContinuousClock()
            let start = clock.now
            // A task of its own (it inherits the temporary keychain), canceled once seen.
            let retry = Task {
                try await ProtectedDataAvailability.retrying(policy: policy) {
                    // Recorded when the read is over: the unlocks below must not come before
                    // the first read, which would then succeed and never wait.
                    defer { attempts.record(start.duration(to: clock.now)) }
                    return try Self.readToken()
                }
            }
            while attempts.times.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            // The first attempt failed (locked); the retry now waits. Unlock; and again while
            // no retry ran, in case the first unlock came before the wait began.
            while attempts.times.count < 2, start.duration(to: clock.now) < longWait {
                try KeychainEnvironment.unlock(passphrase: "pw")
                try await Task.sleep(for: .milliseconds(200))
            }
            let times = attempts.times
            retry.cancel()
            let outcome = await retry.result
            #expect(times.count >= 2, "no second attempt within \(longWait)")
            if times.count >= 2 {
                #expect(times[1] < longWait, "the second attempt came after \(times[1]), when its wait ended, not at the unlock")
            }
            if case .success(let value) = outcome { #expect(value == "secret") }
        }
    }

    final class AttemptCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var recorded: [Duration] = []
        func record(_ time: Duration) { lock.withLock { recorded.append(time) } }
        var times: [Duration] { lock.withLock { recorded } }
    }
}
