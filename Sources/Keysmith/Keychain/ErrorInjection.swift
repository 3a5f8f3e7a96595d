import Foundation
import KeychainServices

/// A test hook that makes the next keychain calls of a store fail with a chosen status,
/// so an app can test its error paths (a locked device, a missing entitlement, a canceled
/// prompt) against the real keychain, without a device and without a fake.
///
/// Pass one to the stores under test; calls that are not told to fail go to the real
/// keychain unchanged:
/// ```swift
/// let faults = ErrorInjection()
/// let store = try KeychainStore(service: "com.example.tests", errorInjection: faults)
/// faults.failNext(.copyMatching, with: errSecInteractionNotAllowed)
/// #expect(throws: KeychainError.self) { try store.string(for: "token") }
/// ```
///
/// Thread-safe: rules can be added from any thread while the store is in use. Each store
/// (or ``SecureStore``) only sees the injection it was given, so parallel tests do not
/// disturb each other.
///
/// - Note: Production code should not create stores with an injection; nothing fails
///   unless a rule was added.
public final class ErrorInjection: @unchecked Sendable {
    private struct Rule {
        var operation: KeychainError.Operation?
        var status: OSStatus
        var remaining: Int
    }

    private let lock = NSLock()
    private var rules: [Rule] = []
    private var injected: [(KeychainError.Operation, OSStatus)] = []

    /// Creates an injection with no rules.
    public init() {}

    /// Makes the next `count` calls of `operation` (or of any SecItem function when `nil`)
    /// return `status` instead of reaching the keychain.
    /// - Parameters:
    ///   - operation: The SecItem function to fail (`.add`, `.copyMatching`, `.update`,
    ///     `.delete`), or `nil` for whichever comes next.
    ///   - status: The non-zero status to return, for example `errSecInteractionNotAllowed`.
    ///   - count: How many calls fail (default 1; `Int.max` for "until ``reset()``").
    /// - Note: Rules are used in the order they were added. A `status` of `errSecSuccess` or
    ///   a `count` below 1 adds nothing.
    public func failNext(_ operation: KeychainError.Operation? = nil, with status: OSStatus, count: Int = 1) {
        guard status != errSecSuccess, count > 0 else { return }
        lock.lock()
        defer { lock.unlock() }
        rules.append(Rule(operation: operation, status: status, remaining: count))
    }

    /// Removes every pending rule (calls reach the keychain again) and forgets the record
    /// of injected failures.
    public func reset() {
        lock.lock()
        defer { lock.unlock() }
        rules.removeAll()
        injected.removeAll()
    }

    /// Whether some rule is still waiting to fire.
    public var hasPendingFailures: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !rules.isEmpty
    }

    /// The failures injected so far, in order: the SecItem function and the status.
    public var injectedFailures: [(operation: KeychainError.Operation, status: OSStatus)] {
        lock.lock()
        defer { lock.unlock() }
        return injected.map { (operation: $0.0, status: $0.1) }
    }

    /// The status to return instead of calling the keychain, if a rule applies to `operation`.
    func consume(_ operation: KeychainError.Operation) -> OSStatus? {
        lock.lock()
        defer { lock.unlock() }
        guard let index = rules.firstIndex(where: { $0.operation == nil || $0.operation == operation }) else {
            return nil
        }
        let status = rules[index].status
        if rules[index].remaining != Int.max { rules[index].remaining -= 1 }
        if rules[index].remaining <= 0 { rules.remove(at: index) }
        injected.append((operation, status))
        return status
    }
}
