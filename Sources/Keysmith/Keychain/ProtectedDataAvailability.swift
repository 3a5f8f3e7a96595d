import Foundation
import KeychainServices

/// Waiting for protected data: retry a keychain call that failed because the device is
/// locked.
///
/// Items with ``Accessibility/whenUnlocked`` classes cannot be read while the device is
/// locked, and until the first unlock after a restart no item but the deprecated `Always`
/// ones can; the call fails with ``KeychainError/Code/interactionNotAllowed`` (or
/// ``KeychainError/Code/keychainUnavailable``). Background work that must have the item
/// can wait:
///
/// ```swift
/// let token = try await ProtectedDataAvailability.retrying {
///     try store.string(for: "refresh_token")
/// }
/// ```
///
/// The call is retried with a growing delay until it succeeds, fails with another error,
/// or ``RetryPolicy/timeout`` passes. A delay ends early when
/// ``didBecomeAvailableNotification`` is posted (on iOS the system posts
/// `UIApplication.protectedDataDidBecomeAvailableNotification`, which has this name; on
/// other platforms post it yourself after unlocking the keychain).
///
/// - Note: Choosing ``Accessibility/afterFirstUnlockThisDeviceOnly`` for data that
///   background work reads is better than waiting; waiting is for the first minutes after a
///   restart and for data that must stay ``Accessibility/whenUnlocked``.
public enum ProtectedDataAvailability {
    /// The notification that protected data became available: iOS's
    /// `UIApplicationProtectedDataDidBecomeAvailable` (the raw name of
    /// `UIApplication.protectedDataDidBecomeAvailableNotification`).
    public static let didBecomeAvailableNotification = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")

    /// How long and how often to retry.
    public struct RetryPolicy: Sendable, Hashable {
        /// The longest time to keep retrying, from the first failure.
        public var timeout: Duration
        /// The delay before the first retry.
        public var initialDelay: Duration
        /// The longest delay between two retries (the delay doubles up to this).
        public var maximumDelay: Duration

        /// Creates a policy.
        /// - Parameters:
        ///   - timeout: The longest time to keep retrying (default 30 seconds).
        ///   - initialDelay: The first delay (default 0.1 seconds).
        ///   - maximumDelay: The largest delay (default 2 seconds).
        public init(timeout: Duration = .seconds(30), initialDelay: Duration = .milliseconds(100), maximumDelay: Duration = .seconds(2)) {
            self.timeout = timeout
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
        }

        /// 30 seconds, starting at 0.1 seconds, at most 2 seconds apart.
        public static let `default` = RetryPolicy()
    }

    /// Runs `operation`, and while it fails because protected data is unavailable (a
    /// ``KeychainError`` that ``KeychainError/isTransient``, or a ``SecureStoreError`` with
    /// code ``SecureStoreError/Code/interactionNotAllowed``), waits and runs it again.
    ///
    /// - Parameters:
    ///   - policy: How long and how often to retry (default ``RetryPolicy/default``).
    ///   - operation: The keychain work, for example a read; it runs once per attempt.
    /// - Returns: What `operation` returns once it succeeds.
    /// - Throws: What `operation` throws: any other error at once, or the last transient
    ///   error when the timeout passes or the task is canceled.
    public static func retrying<Result>(
        policy: RetryPolicy = .default, _ operation: () throws -> Result
    ) async throws -> Result {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: policy.timeout)
        var delay = policy.initialDelay
        while true {
            do {
                return try operation()
            } catch where isTransient(error) {
                let now = clock.now
                if now >= deadline || Task.isCancelled { throw error }
                let remaining = now.duration(to: deadline)
                await waitForAvailability(atMost: min(delay, remaining))
                delay = min(delay * 2, policy.maximumDelay)
            }
        }
    }

    /// Whether `error` says that protected data is unavailable for now.
    /// - Parameter error: An error thrown by a keychain call.
    /// - Returns: `true` for a transient ``KeychainError`` or a ``SecureStoreError`` with code
    ///   ``SecureStoreError/Code/interactionNotAllowed``.
    public static func isTransient(_ error: any Error) -> Bool {
        if let error = error as? KeychainError { return error.isTransient }
        if let error = error as? SecureStoreError { return error.code == .interactionNotAllowed }
        return false
    }

    /// Waits for `duration`, or less when ``didBecomeAvailableNotification`` is posted or
    /// the task is canceled.
    /// - Parameter duration: The longest wait.
    public static func waitForAvailability(atMost duration: Duration) async {
        let signal = Signal()
        let observer = NotificationCenter.default.addObserver(
            forName: didBecomeAvailableNotification, object: nil, queue: nil
        ) { _ in signal.fire() }
        defer { NotificationCenter.default.removeObserver(observer) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask { await signal.wait() }
            await group.next()
            group.cancelAll()
            signal.fire()
        }
    }
}

/// A one-shot wake-up that can be awaited once and fired from any thread.
private final class Signal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var continuation: CheckedContinuation<Void, Never>?

    func fire() {
        lock.lock()
        fired = true
        let waiting = continuation
        continuation = nil
        lock.unlock()
        waiting?.resume()
    }

    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if fired {
                    lock.unlock()
                    continuation.resume()
                } else {
                    self.continuation = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            fire()
        }
    }
}

extension KeychainStore {
    /// Runs `operation` with this store, retrying while protected data is unavailable; see
    /// ``ProtectedDataAvailability/retrying(policy:_:)``.
    ///
    /// ```swift
    /// let token = try await store.retryingWhileLocked { try $0.string(for: "refresh_token") }
    /// ```
    /// - Parameters:
    ///   - policy: How long and how often to retry.
    ///   - operation: The keychain work.
    /// - Returns: What `operation` returns once it succeeds.
    /// - Throws: What `operation` throws: a non-transient error at once, or the last
    ///   transient error after the timeout.
    public func retryingWhileLocked<Result>(
        policy: ProtectedDataAvailability.RetryPolicy = .default,
        _ operation: (KeychainStore) throws -> Result
    ) async throws -> Result {
        try await ProtectedDataAvailability.retrying(policy: policy) { try operation(self) }
    }
}

#if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
extension ProtectedDataAvailability {
    /// Whether the current keychain's `WhenUnlocked` items can be used now: its real lock
    /// state, shared by the user's processes (always `true` without a passphrase).
    public static var isProtectedDataAvailable: Bool { KeychainEnvironment.lockState == .unlocked }

    /// The lock state of the current keychain (`KeychainEnvironment.current`, captured when
    /// called): the state now, then each change, checked every `interval`. The state lives
    /// in the kernel keyring, which notifies no one, so another process's unlock is seen at
    /// the next check; an unlock in this process also posts ``didBecomeAvailableNotification``.
    ///
    /// ```swift
    /// for await state in ProtectedDataAvailability.lockStates() where state == .unlocked {
    ///     try refreshToken()
    ///     break
    /// }
    /// ```
    /// - Parameter interval: How often to check (default 1 second).
    /// - Returns: A stream that ends when the consuming task is canceled.
    public static func lockStates(checkingEvery interval: Duration = .seconds(1)) -> AsyncStream<KeychainLockState> {
        let environment = KeychainEnvironment.current
        return AsyncStream { continuation in
            let task = Task {
                var last: KeychainLockState?
                while !Task.isCancelled {
                    let state = KeychainEnvironment.withEnvironment(environment) { KeychainEnvironment.lockState }
                    if state != last {
                        continuation.yield(state)
                        last = state
                    }
                    await waitForAvailability(atMost: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
#endif
