#if !canImport(LocalAuthentication)
import Foundation

/// Apple's pointer-to-error parameter type (`NSError **`), for `canEvaluatePolicy`.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?

/// The authentication policies of LocalAuthentication, with Apple's raw values.
public enum LAPolicy: Int, Sendable {
    /// Biometry (Touch ID, Face ID) only.
    case deviceOwnerAuthenticationWithBiometrics = 1
    /// Biometry or the device passcode.
    case deviceOwnerAuthentication = 2
    /// A paired watch.
    case deviceOwnerAuthenticationWithWatch = 3
    /// Biometry or a paired watch.
    case deviceOwnerAuthenticationWithBiometricsOrWatch = 4
    /// A watch on the wrist.
    case deviceOwnerAuthenticationWithWristDetection = 5
}

/// The kind of biometry a device has.
public enum LABiometryType: Int, Sendable {
    /// No biometry (always the case here).
    case none = 0
    /// Touch ID.
    case touchID = 1
    /// Face ID.
    case faceID = 2
    /// Optic ID.
    case opticID = 4
}

/// An error of LocalAuthentication, with Apple's codes, in the `com.apple.LocalAuthentication`
/// domain.
public struct LAError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error codes, with Apple's raw values.
    public enum Code: Int, Sendable {
        case authenticationFailed = -1
        case userCancel = -2
        case userFallback = -3
        case systemCancel = -4
        case passcodeNotSet = -5
        case biometryNotAvailable = -6
        case biometryNotEnrolled = -7
        case biometryLockout = -8
        case appCancel = -9
        case invalidContext = -10
        case biometryNotPaired = -12
        case biometryDisconnected = -13
        case invalidDimensions = -14
        case notInteractive = -1004
    }

    /// The domain of these errors as `NSError`s.
    public static let errorDomain = "com.apple.LocalAuthentication"

    /// What went wrong.
    public let code: Code

    /// Creates an error with a code.
    public init(_ code: Code) { self.code = code }

    public static var authenticationFailed: Code { .authenticationFailed }
    public static var userCancel: Code { .userCancel }
    public static var userFallback: Code { .userFallback }
    public static var systemCancel: Code { .systemCancel }
    public static var passcodeNotSet: Code { .passcodeNotSet }
    public static var biometryNotAvailable: Code { .biometryNotAvailable }
    public static var biometryNotEnrolled: Code { .biometryNotEnrolled }
    public static var biometryLockout: Code { .biometryLockout }
    public static var appCancel: Code { .appCancel }
    public static var invalidContext: Code { .invalidContext }
    public static var notInteractive: Code { .notInteractive }

    /// The error as an `NSError` in ``errorDomain``.
    public var nsError: NSError {
        NSError(domain: Self.errorDomain, code: code.rawValue, userInfo: [NSLocalizedDescriptionKey: description])
    }

    /// What happened, in words.
    public var description: String {
        switch code {
        case .biometryNotAvailable: return "Biometry is not available on this device."
        case .passcodeNotSet: return "No passcode (keychain passphrase) is set on this device."
        case .invalidContext: return "The authentication context was invalidated."
        case .userCancel: return "The user canceled authentication."
        default: return "Authentication failed (LAError \(code.rawValue))."
        }
    }
}

/// An authentication context, as LocalAuthentication's.
///
/// On this platform no authenticator is available yet: ``canEvaluatePolicy(_:error:)``
/// returns `false` with ``LAError/Code/biometryNotAvailable`` (biometry policies) or
/// ``LAError/Code/passcodeNotSet`` (passcode policies), as iOS does on a device without
/// them, and ``evaluatePolicy(_:localizedReason:reply:)`` fails the same way. The context
/// can still be passed as `kSecUseAuthenticationContext`.
open class LAContext: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private var invalidated = false

    /// The reason shown with the prompt.
    open var localizedReason: String = ""
    /// The title of the fallback button.
    open var localizedFallbackTitle: String?
    /// The title of the cancel button.
    open var localizedCancelTitle: String?
    /// Whether the context may show UI.
    open var interactionNotAllowed: Bool = false
    /// How long a biometric unlock is reused.
    open var touchIDAuthenticationAllowableReuseDuration: TimeInterval = 0
    /// The biometry this device has: none.
    open private(set) var biometryType: LABiometryType = .none

    /// Creates a context.
    public override init() { super.init() }

    /// Whether `policy` can be evaluated now.
    /// - Parameters:
    ///   - policy: The policy.
    ///   - error: Receives the reason when it cannot.
    /// - Returns: `false` here: no authenticator is available.
    open func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool {
        error?.pointee = unavailable(policy).nsError
        return false
    }

    /// Evaluates `policy`, calling `reply` with the outcome.
    /// - Parameters:
    ///   - policy: The policy.
    ///   - localizedReason: Why the app asks.
    ///   - reply: Called with `false` and the reason here.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String, reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        reply(false, unavailable(policy))
    }

    /// Evaluates `policy`.
    /// - Parameters:
    ///   - policy: The policy.
    ///   - localizedReason: Why the app asks.
    /// - Returns: Never `true` here.
    /// - Throws: ``LAError`` with the reason the policy cannot be evaluated.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        throw unavailable(policy)
    }

    /// Invalidates the context; later evaluations fail with ``LAError/Code/invalidContext``.
    open func invalidate() {
        lock.lock()
        invalidated = true
        lock.unlock()
    }

    private func unavailable(_ policy: LAPolicy) -> LAError {
        lock.lock()
        defer { lock.unlock() }
        if invalidated { return LAError(.invalidContext) }
        switch policy {
        case .deviceOwnerAuthentication: return LAError(.passcodeNotSet)
        default: return LAError(.biometryNotAvailable)
        }
    }
}
#endif
