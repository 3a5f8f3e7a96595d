#if !canImport(Security)
import Foundation

/// Something that can confirm that the user is present: the keychain passphrase typed at a
/// prompt, the account's login password checked by PAM, an enrolled fingerprint, or a
/// scripted outcome in tests.
///
/// `LAContext` and the keychain ask authenticators when an item's access control
/// (`kSecAttrAccessControl`) requires the user: an item created with `.biometryAny` needs
/// an authenticator whose ``factor`` is ``AuthenticationFactor/biometry``, one created with
/// `.devicePasscode` needs ``AuthenticationFactor/passcode``, and `.userPresence` accepts
/// either (biometry first, then the passcode as its fallback).
///
/// An app can bring its own: conform a type and install it with
/// `KeychainAuthenticators`. An authenticator is called from the thread that made the
/// keychain call and may block while the user answers.
///
/// - Note: This protocol exists only where KeychainServices implements the API itself; on
///   Apple platforms LocalAuthentication talks to the Secure Enclave.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public protocol KeychainAuthenticator: Sendable {
    /// What this authenticator checks, in a few words ("keychain passphrase",
    /// "login password (PAM)", "fingerprint (fprintd)"). Shown in diagnostics; never a secret.
    var name: String { get }

    /// The kind of proof this authenticator gives.
    var factor: AuthenticationFactor { get }

    /// Why this authenticator cannot evaluate now, or `nil` when it can.
    ///
    /// Typical answers: ``AuthenticationFailure/passcodeNotSet`` (no passphrase to check),
    /// ``AuthenticationFailure/biometryNotAvailable`` (no reader, no fprintd),
    /// ``AuthenticationFailure/biometryNotEnrolled`` (a reader without enrolled fingers),
    /// ``AuthenticationFailure/biometryLockout``. Called without user interaction.
    func unavailability() -> AuthenticationFailure?

    /// The identity of the enrolled set (which fingers, on which device) for biometric
    /// authenticators; `nil` for passcode authenticators.
    ///
    /// It must stay the same while enrollment is unchanged and change when a finger is
    /// added or removed: items created with `.biometryCurrentSet` bind it into their key and
    /// become unreadable when it changes. It is what `LAContext.evaluatedPolicyDomainState`
    /// returns. Called without user interaction.
    /// - Throws: ``AuthenticationFailure`` when the enrolled set cannot be read.
    func enrolledSetIdentity() throws(AuthenticationFailure) -> Data?

    /// Asks the user, and returns only when the user has answered (or the request cannot be
    /// shown).
    /// - Parameter request: What is asked, why, and whether a prompt may be shown at all.
    /// - Returns: The proof of a successful evaluation.
    /// - Throws: ``AuthenticationFailure``: ``AuthenticationFailure/userCancel``,
    ///   ``AuthenticationFailure/authenticationFailed``,
    ///   ``AuthenticationFailure/notInteractive`` when `request.interactionAllowed` is
    ///   `false` and the authenticator would have to prompt, and so on.
    func authenticate(_ request: AuthenticationRequest) throws(AuthenticationFailure) -> AuthenticationEvidence
}

/// The kind of proof an authenticator gives.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public enum AuthenticationFactor: String, Sendable, Hashable, CaseIterable {
    /// Something the user knows: the keychain passphrase or the login password (what
    /// Apple calls the device passcode).
    case passcode
    /// Something the user is: an enrolled fingerprint.
    case biometry
}

/// One request to confirm the user's presence.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public struct AuthenticationRequest: Sendable, Hashable {
    /// The factor asked for.
    public var factor: AuthenticationFactor
    /// Why the app asks, shown with the prompt (`LAContext.localizedReason` or
    /// `kSecUseOperationPrompt`).
    public var reason: String
    /// Whether a prompt may be shown. When `false` an authenticator that would have to ask
    /// the user throws ``AuthenticationFailure/notInteractive``.
    public var interactionAllowed: Bool
    /// The title of the cancel choice, when the prompt has one.
    public var cancelTitle: String?
    /// The title of the fallback choice (for example "Enter passphrase"), when it has one.
    public var fallbackTitle: String?

    /// Creates a request.
    public init(
        factor: AuthenticationFactor, reason: String, interactionAllowed: Bool = true,
        cancelTitle: String? = nil, fallbackTitle: String? = nil
    ) {
        self.factor = factor
        self.reason = reason
        self.interactionAllowed = interactionAllowed
        self.cancelTitle = cancelTitle
        self.fallbackTitle = fallbackTitle
    }
}

/// The proof of a successful evaluation.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public struct AuthenticationEvidence: Sendable {
    /// The factor that was proven.
    public let factor: AuthenticationFactor
    /// The ``KeychainAuthenticator/name`` of the authenticator that gave it.
    public let authenticatorName: String
    /// For biometry: the enrolled set the user matched (see
    /// ``KeychainAuthenticator/enrolledSetIdentity()``).
    public let enrolledSetIdentity: Data?
    /// Key material the authenticator released (the keychain passphrase authenticator
    /// releases a key derived from the passphrase); `nil` for authenticators that only check.
    let releasedKey: SecretKey?

    /// Creates the evidence an authenticator that only checks (PAM, fprintd, an app's own)
    /// returns.
    /// - Parameters:
    ///   - factor: The factor proven.
    ///   - authenticatorName: The authenticator's name.
    ///   - enrolledSetIdentity: For biometry, the enrolled set matched.
    public init(factor: AuthenticationFactor, authenticatorName: String, enrolledSetIdentity: Data? = nil) {
        self.init(factor: factor, authenticatorName: authenticatorName, enrolledSetIdentity: enrolledSetIdentity, releasedKey: nil)
    }

    init(factor: AuthenticationFactor, authenticatorName: String, enrolledSetIdentity: Data?, releasedKey: SecretKey?) {
        self.factor = factor
        self.authenticatorName = authenticatorName
        self.enrolledSetIdentity = enrolledSetIdentity
        self.releasedKey = releasedKey
    }
}

/// Why an evaluation did not succeed. The raw values are LocalAuthentication's `LAError`
/// codes, so `LAContext` reports them unchanged.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public enum AuthenticationFailure: Int, Error, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The user did not prove their identity (wrong passphrase, finger not recognized).
    case authenticationFailed = -1
    /// The user canceled.
    case userCancel = -2
    /// The user chose the fallback (for example, to type the passphrase instead).
    case userFallback = -3
    /// The system canceled (another prompt, the session ended).
    case systemCancel = -4
    /// No passcode is set: the keychain has no passphrase and no login password can be checked.
    case passcodeNotSet = -5
    /// No biometric reader, or fprintd is not running.
    case biometryNotAvailable = -6
    /// A reader without enrolled fingers.
    case biometryNotEnrolled = -7
    /// Too many failed attempts; biometry is locked until the passcode is entered.
    case biometryLockout = -8
    /// The app canceled.
    case appCancel = -9
    /// The context was invalidated.
    case invalidContext = -10
    /// A prompt would be needed but interaction is not allowed.
    case notInteractive = -1004

    /// What happened, in words.
    public var description: String {
        switch self {
        case .authenticationFailed: return "Authentication failed: the user could not be verified."
        case .userCancel: return "The user canceled authentication."
        case .userFallback: return "The user chose the fallback."
        case .systemCancel: return "The system canceled authentication."
        case .passcodeNotSet: return "No passcode is set: the keychain has no passphrase (set one with `keysmith passwd`) and no login password can be checked."
        case .biometryNotAvailable: return "Biometry is not available: no fingerprint reader is reachable through fprintd."
        case .biometryNotEnrolled: return "No fingers are enrolled (enroll one with `fprintd-enroll`)."
        case .biometryLockout: return "Biometry is locked after too many failed attempts."
        case .appCancel: return "The app canceled authentication."
        case .invalidContext: return "The authentication context was invalidated."
        case .notInteractive:
            return "Authentication needs a prompt, but none could be shown: the caller allows no interaction, "
                + "or there is no terminal and KEYSMITH_ASKPASS is not set (run from a terminal, or set "
                + "KEYSMITH_ASKPASS to a program that prints the secret)."
        }
    }
}
#endif
