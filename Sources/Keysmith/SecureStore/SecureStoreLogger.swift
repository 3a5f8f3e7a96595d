import Foundation

/// One thing a ``SecureStore`` did, as its logging hook sees it: the operation, the
/// namespace, the key name and the outcome. By construction it cannot carry a value.
public struct SecureStoreEvent: Sendable, Hashable, CustomStringConvertible {
    /// What the store was asked to do.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        /// ``SecureStore/set(_:for:in:)``.
        case set
        /// ``SecureStore/setBiometricProtected(_:_:in:policy:)``.
        case setBiometricProtected
        /// ``SecureStore/value(_:for:in:prompt:)``.
        case get
        /// ``SecureStore/contains(_:in:)``.
        case contains
        /// ``SecureStore/remove(_:in:)``.
        case remove
        /// ``SecureStore/keys(in:)``.
        case keys
        /// ``SecureStore/resetNamespace(_:)``.
        case resetNamespace
        /// A service-rename migration of one key.
        case migrateService
        /// A plaintext-preferences or file migration of one key.
        case migratePlaintext
        /// The reinstall cleanup.
        case reinstallCleanup
    }

    /// How it ended.
    public enum Outcome: Sendable, Hashable, CustomStringConvertible {
        /// It worked.
        case success
        /// There was no such item: a normal branch, not a failure.
        case notFound
        /// It worked, with a fallback (for example no biometry, so the plain
        /// accessibility was used); the reason says why.
        case fellBack(reason: String)
        /// Nothing to do (for example a migration whose source was empty).
        case skipped
        /// It failed with this code.
        case failure(SecureStoreError.Code)

        /// Whether this is a failure.
        public var isFailure: Bool {
            if case .failure = self { return true }
            return false
        }

        /// For example `success`, `notFound`, `failure(INTERACTION_NOT_ALLOWED)`.
        public var description: String {
            switch self {
            case .success: return "success"
            case .notFound: return "notFound"
            case .fellBack(let reason): return "fellBack(\(reason))"
            case .skipped: return "skipped"
            case .failure(let code): return "failure(\(code.rawValue))"
            }
        }
    }

    /// The operation.
    public let operation: Operation
    /// The namespace name.
    public let namespace: String
    /// The key name, when the operation has one.
    public let key: String?
    /// The outcome.
    public let outcome: Outcome

    /// Creates an event.
    /// - Parameters:
    ///   - operation: The operation.
    ///   - namespace: The namespace name.
    ///   - key: The key name, if any.
    ///   - outcome: The outcome.
    public init(operation: Operation, namespace: String, key: String?, outcome: Outcome) {
        self.operation = operation
        self.namespace = namespace
        self.key = key
        self.outcome = outcome
    }

    /// For example `set auth/access_token: success`.
    public var description: String {
        "\(operation.rawValue) \(namespace)/\(key ?? "*"): \(outcome)"
    }
}

/// The logging hook of a ``SecureStore``: it receives key names,
/// namespaces and outcomes, never values, so it can be sent to any log.
///
/// ```swift
/// let logger = SecureStoreLogger { event in
///     if event.outcome.isFailure { os_log("%{public}@", event.description) }
/// }
/// ```
///
/// A missing item is reported with the outcome ``SecureStoreEvent/Outcome/notFound``,
/// which is not a failure: log failures only and nothing is logged for it.
public struct SecureStoreLogger: Sendable {
    private let handler: @Sendable (SecureStoreEvent) -> Void

    /// Creates a logger.
    /// - Parameter handler: Called synchronously after each operation, on the caller's thread.
    public init(_ handler: @escaping @Sendable (SecureStoreEvent) -> Void) {
        self.handler = handler
    }

    /// Reports one event.
    /// - Parameter event: The event.
    public func log(_ event: SecureStoreEvent) {
        handler(event)
    }
}
