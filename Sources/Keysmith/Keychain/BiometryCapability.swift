import Foundation
import KeychainServices
#if canImport(LocalAuthentication)
import LocalAuthentication
#endif

/// Whether biometry (Face ID, Touch ID, Optic ID, or a later Linux authenticator) can be
/// used for access-controlled items right now, and why not.
///
/// ``SecureStore`` checks this before a biometric-protected write, so that a device
/// without biometry (a simulator, a Mac without Touch ID, Linux today) gets the app's plain
/// accessibility instead of an item that prompts in a loop or can never be read.
///
/// - Note: On Apple platforms the check is `LAContext.canEvaluatePolicy` with
///   `.deviceOwnerAuthenticationWithBiometrics`; the simulator always reports unavailable
///   (biometric items on the simulator fall back to passcode prompts on every
///   read). On Linux it asks the fingerprint authenticators of `KeychainAuthenticators`
///   (fprintd with an enrolled finger; a scripted one in tests): without one it reports
///   unavailable.
public struct BiometryCapability: Sendable {
    /// The result of a check.
    public enum Availability: Sendable, Hashable, CustomStringConvertible {
        /// Biometry is available and enrolled.
        case available
        /// Biometry cannot be used; the reason says why (no hardware, nothing enrolled,
        /// simulator, platform without an authenticator).
        case unavailable(reason: String)
        /// Biometry exists and is enrolled but is locked out after too many failed attempts
        /// (`LAError.biometryLockout`) until the user enters the passcode. Temporary: a
        /// biometric-protected write reports an error instead of falling back to an
        /// unprotected item.
        case lockedOut(reason: String)

        /// Whether biometry can be used.
        public var isAvailable: Bool {
            if case .available = self { return true }
            return false
        }

        /// `available`, or `unavailable: <reason>`.
        public var description: String {
            switch self {
            case .available: return "available"
            case .unavailable(let reason): return "unavailable: \(reason)"
            case .lockedOut(let reason): return "locked out: \(reason)"
            }
        }
    }

    private let check: @Sendable () -> Availability

    /// A capability answered by `check` (for tests, or an app's own rules).
    /// - Parameter check: Called for every biometric-protected write.
    public init(_ check: @escaping @Sendable () -> Availability) {
        self.check = check
    }

    /// A capability that always gives `availability` (for tests).
    /// - Parameter availability: The fixed answer.
    /// - Returns: The capability.
    public static func fixed(_ availability: Availability) -> BiometryCapability {
        BiometryCapability { availability }
    }

    /// The system's answer: `LAContext.canEvaluatePolicy` on Apple platforms (unavailable
    /// on the simulator); on Linux, whether a fingerprint authenticator with an enrolled
    /// finger is available.
    public static let system = BiometryCapability { systemAvailability() }

    /// Asks whether biometry can be used now.
    /// - Returns: The availability.
    public func availability() -> Availability { check() }
}

#if canImport(LocalAuthentication) && (os(iOS) || os(macOS) || os(visionOS))
// `LAPolicy.deviceOwnerAuthenticationWithBiometrics` exists only on these platforms.
private func systemAvailability() -> BiometryCapability.Availability {
    #if targetEnvironment(simulator)
    return .unavailable(reason: "the simulator has no biometric hardware; items would prompt for a passcode on every read")
    #else
    let context = LAContext()
    var error: NSError?
    if context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) {
        return .available
    }
    if let error, error.domain == LAErrorDomain, error.code == LAError.Code.biometryLockout.rawValue {
        return .lockedOut(reason: error.localizedDescription)
    }
    return .unavailable(reason: error?.localizedDescription ?? "biometry cannot be evaluated on this device")
    #endif
}
#elseif canImport(LocalAuthentication)
// watchOS and tvOS: LocalAuthentication exists, biometric evaluation does not.
private func systemAvailability() -> BiometryCapability.Availability {
    .unavailable(reason: "biometric authentication is not available on this platform")
}
#endif

#if canImport(LocalAuthentication)

/// The query attributes that carry an authentication prompt: an `LAContext` whose
/// `localizedReason` is the prompt.
func authenticationAttributes(prompt: String?) -> [String: Any] {
    guard let prompt else { return [:] }
    let context = LAContext()
    context.localizedReason = prompt
    return [kSecUseAuthenticationContext as String: context]
}
#else
#if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
// Linux: the fingerprint authenticators of KeychainAuthenticators (fprintd where it runs,
// a scripted one in tests).
private func systemAvailability() -> BiometryCapability.Availability {
    switch AuthenticationSession().unavailability(.biometry) {
    case nil: return .available
    case .biometryLockout?: return .lockedOut(reason: AuthenticationFailure.biometryLockout.description)
    case let failure?: return .unavailable(reason: failure.description)
    }
}
#else
private func systemAvailability() -> BiometryCapability.Availability {
    .unavailable(reason: "no biometric authenticator is available on this platform")
}
#endif

/// The query attributes that carry an authentication prompt (`kSecUseOperationPrompt`,
/// which the Linux keychain passes to its authenticator).
func authenticationAttributes(prompt: String?) -> [String: Any] {
    guard let prompt else { return [:] }
    return [kSecUseOperationPrompt as String: prompt]
}
#endif
