#if !canImport(LocalAuthentication)
import Foundation
@_spi(LinuxKeychain) import KeychainServices

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
    /// No biometry (no fingerprint authenticator with an enrolled finger).
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
        case watchNotAvailable = -11
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
    public static var watchNotAvailable: Code { .watchNotAvailable }

    /// The error as an `NSError` in ``errorDomain``.
    public var nsError: NSError {
        NSError(domain: Self.errorDomain, code: code.rawValue, userInfo: [NSLocalizedDescriptionKey: description])
    }

    /// What happened, in words.
    public var description: String {
        switch code {
        case .watchNotAvailable: return "No paired watch is available on this device."
        case .biometryNotPaired, .biometryDisconnected, .invalidDimensions:
            return "Biometry is not available on this device (LAError \(code.rawValue))."
        default:
            if let failure = AuthenticationFailure(rawValue: code.rawValue) { return failure.description }
            return "Authentication failed (LAError \(code.rawValue))."
        }
    }
}

/// The kinds of credential an app can set on a context.
public enum LACredentialType: Int, Sendable {
    /// The password of items created with `.applicationPassword`.
    case applicationPassword = 0
}

/// An authentication context, as LocalAuthentication's, backed by Keysmith's
/// authenticators (`KeychainAuthenticators`): the keychain passphrase, the login password
/// and fingerprint readers where the machine has them, or scripted ones in tests.
///
/// ``canEvaluatePolicy(_:error:)`` says whether an authenticator can serve a policy (with
/// the `LAError` iOS gives when none can: ``LAError/Code/biometryNotAvailable``,
/// ``LAError/Code/biometryNotEnrolled``, ``LAError/Code/passcodeNotSet``);
/// ``evaluatePolicy(_:localizedReason:reply:)`` asks the user. Passed as
/// `kSecUseAuthenticationContext`, the context gives the keychain its reason, whether it may
/// prompt, its application password, and its evaluations: a successful one is reused
/// instead of prompting again while the context is valid (or, when
/// ``touchIDAuthenticationAllowableReuseDuration`` is set, for that many seconds).
open class LAContext: NSObject, KeychainAuthenticationContext, @unchecked Sendable {
    /// Where the keychain finds this context's reason, credential and evaluations.
    public let authenticationSession = AuthenticationSession()

    /// The reason shown with the prompt (used by keychain calls given this context).
    open var localizedReason: String {
        get { authenticationSession.localizedReason }
        set { authenticationSession.localizedReason = newValue }
    }
    /// The title of the fallback choice.
    open var localizedFallbackTitle: String? {
        get { authenticationSession.fallbackTitle }
        set { authenticationSession.fallbackTitle = newValue }
    }
    /// The title of the cancel choice.
    open var localizedCancelTitle: String? {
        get { authenticationSession.cancelTitle }
        set { authenticationSession.cancelTitle = newValue }
    }
    /// When `true`, nothing prompts: evaluations and keychain calls that would need a prompt
    /// fail (``LAError/Code/notInteractive``, `errSecInteractionNotAllowed`).
    open var interactionNotAllowed: Bool {
        get { authenticationSession.interactionNotAllowed }
        set { authenticationSession.interactionNotAllowed = newValue }
    }
    /// How long, in seconds, a successful evaluation of this context is reused by keychain
    /// calls (0, the default: as long as the context is valid).
    open var touchIDAuthenticationAllowableReuseDuration: TimeInterval {
        get { authenticationSession.reuseDuration }
        set { authenticationSession.reuseDuration = min(max(0, newValue), LATouchIDAuthenticationMaximumAllowableReuseDuration) }
    }
    /// ``LABiometryType/touchID`` when a fingerprint authenticator is available with an
    /// enrolled finger, else ``LABiometryType/none``.
    open var biometryType: LABiometryType {
        authenticationSession.unavailability(.biometry) == nil ? .touchID : .none
    }
    /// The identity of the enrolled fingers (changes when one is added or removed), or `nil`
    /// when no biometric authenticator is available.
    open var evaluatedPolicyDomainState: Data? {
        authenticationSession.isInvalidated ? nil : authenticationSession.enrolledSetIdentity
    }

    /// Creates a context.
    public override init() { super.init() }

    /// Whether `policy` can be evaluated now (no prompt is shown).
    /// - Parameters:
    ///   - policy: The policy.
    ///   - error: Receives the reason when it cannot, as an `NSError` in ``LAError/errorDomain``.
    /// - Returns: Whether an authenticator can serve the policy.
    open func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool {
        guard let requirement = Self.requirement(policy) else {
            error?.pointee = LAError(.watchNotAvailable).nsError
            return false
        }
        if let reason = authenticationSession.unavailability(requirement) {
            error?.pointee = LAError(Self.code(reason)).nsError
            return false
        }
        error?.pointee = nil
        return true
    }

    /// Evaluates `policy`, calling `reply` (on another thread) with the outcome.
    /// - Parameters:
    ///   - policy: The policy.
    ///   - localizedReason: Why the app asks, shown with the prompt.
    ///   - reply: Called with `true` and `nil`, or `false` and an ``LAError``.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String, reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        let session = authenticationSession
        let authenticators = KeychainAuthenticators.current
        Thread.detachNewThread {
            KeychainAuthenticators.withAuthenticators(authenticators) {
                switch Self.evaluate(policy, reason: localizedReason, session: session) {
                case .success: reply(true, nil)
                case .failure(let error): reply(false, error)
                }
            }
        }
    }

    /// Evaluates `policy`.
    /// - Parameters:
    ///   - policy: The policy.
    ///   - localizedReason: Why the app asks, shown with the prompt.
    /// - Returns: `true` once the user is verified.
    /// - Throws: ``LAError`` with the reason the evaluation did not succeed.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        let session = authenticationSession
        let authenticators = KeychainAuthenticators.current
        let outcome: Result<Void, LAError> = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                KeychainAuthenticators.withAuthenticators(authenticators) {
                    continuation.resume(returning: Self.evaluate(policy, reason: localizedReason, session: session))
                }
            }
        }
        try outcome.get()
        return true
    }

    /// Sets (or with `nil` clears) a credential: the application password of items created
    /// with `.applicationPassword`.
    /// - Parameters:
    ///   - credential: The password's bytes.
    ///   - type: ``LACredentialType/applicationPassword``.
    /// - Returns: `true`; `false` after ``invalidate()``, when the credential is not kept.
    @discardableResult
    open func setCredential(_ credential: Data?, type: LACredentialType) -> Bool {
        if authenticationSession.isInvalidated { return false }
        authenticationSession.setApplicationPassword(credential)
        return true
    }

    /// Whether a credential of `type` is set.
    /// - Parameter type: The credential type.
    /// - Returns: Whether it is set.
    open func isCredentialSet(_ type: LACredentialType) -> Bool {
        authenticationSession.hasApplicationPassword
    }

    /// Invalidates the context; later evaluations fail with ``LAError/Code/invalidContext``
    /// and keychain calls given it fail with `errSecAuthFailed`.
    open func invalidate() {
        authenticationSession.invalidate()
    }

    private static func requirement(_ policy: LAPolicy) -> AuthenticationSession.Requirement? {
        switch policy {
        case .deviceOwnerAuthenticationWithBiometrics, .deviceOwnerAuthenticationWithBiometricsOrWatch: return .biometry
        case .deviceOwnerAuthentication: return .biometryOrPasscode
        case .deviceOwnerAuthenticationWithWatch, .deviceOwnerAuthenticationWithWristDetection: return nil
        }
    }

    private static func code(_ failure: AuthenticationFailure) -> LAError.Code {
        LAError.Code(rawValue: failure.rawValue) ?? .authenticationFailed
    }

    private static func evaluate(_ policy: LAPolicy, reason: String, session: AuthenticationSession) -> Result<Void, LAError> {
        guard let requirement = requirement(policy) else { return .failure(LAError(.watchNotAvailable)) }
        do {
            try session.evaluate(requirement, reason: reason)
            return .success(())
        } catch {
            return .failure(LAError(code(error)))
        }
    }
}

/// The longest reuse duration LocalAuthentication accepts (5 minutes).
public let LATouchIDAuthenticationMaximumAllowableReuseDuration: TimeInterval = 300
#endif
