#if !canImport(Security)
import Foundation
import Synchronization

/// What an authentication context (`LAContext`) holds: the prompt texts, whether it may
/// prompt, the application password set on it, and the evaluations it made, with when.
///
/// `LAContext` keeps one, and the keychain finds it through
/// ``KeychainAuthenticationContext`` when the context is passed as
/// `kSecUseAuthenticationContext`: an evaluation made by the context (with
/// `evaluatePolicy`, or by an earlier keychain call given the same context) is reused
/// instead of prompting again, for as long as the context is valid, or, when
/// ``reuseDuration`` is set, for that many seconds after it was made (measured with
/// ``KeychainAuthenticators/now``).
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public final class AuthenticationSession: Sendable {
    /// What a policy asks for.
    public enum Requirement: Sendable, Hashable {
        /// Biometry only (`.deviceOwnerAuthenticationWithBiometrics`).
        case biometry
        /// Biometry, or the passcode as its fallback (`.deviceOwnerAuthentication`).
        case biometryOrPasscode
    }

    private struct State {
        var reason = ""
        var cancelTitle: String?
        var fallbackTitle: String?
        var interactionNotAllowed = false
        var reuseDuration: TimeInterval = 0
        var applicationPassword: Data?
        var invalidated = false
        var evaluations: [AuthenticationFactor: (evidence: AuthenticationEvidence, at: Date)] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty session.
    public init() {}

    /// The reason shown with prompts (`LAContext.localizedReason`).
    public var localizedReason: String {
        get { state.withLock { $0.reason } }
        set { state.withLock { $0.reason = newValue } }
    }

    /// The title of the cancel choice.
    public var cancelTitle: String? {
        get { state.withLock { $0.cancelTitle } }
        set { state.withLock { $0.cancelTitle = newValue } }
    }

    /// The title of the fallback choice.
    public var fallbackTitle: String? {
        get { state.withLock { $0.fallbackTitle } }
        set { state.withLock { $0.fallbackTitle = newValue } }
    }

    /// When `true`, nothing prompts: what would need a prompt fails with
    /// ``AuthenticationFailure/notInteractive`` (`errSecInteractionNotAllowed`).
    public var interactionNotAllowed: Bool {
        get { state.withLock { $0.interactionNotAllowed } }
        set { state.withLock { $0.interactionNotAllowed = newValue } }
    }

    /// How long, in seconds, an evaluation is reused (0: as long as the session is valid).
    public var reuseDuration: TimeInterval {
        get { state.withLock { $0.reuseDuration } }
        set { state.withLock { $0.reuseDuration = max(0, newValue) } }
    }

    /// Sets (or with `nil` clears) the application password for items created with
    /// `.applicationPassword`: part of the key that encrypts them. Ignored after
    /// ``invalidate()``.
    /// - Parameter password: The password's bytes.
    public func setApplicationPassword(_ password: Data?) {
        state.withLock { state in
            // An invalidated session keeps no credential.
            if !state.invalidated { state.applicationPassword = password }
        }
    }

    /// Whether an application password is set.
    public var hasApplicationPassword: Bool { state.withLock { $0.applicationPassword != nil } }

    /// The application password (for the keychain).
    var applicationPassword: Data? { state.withLock { $0.applicationPassword } }

    /// Ends the session: its evaluations are forgotten and later ones fail with
    /// ``AuthenticationFailure/invalidContext``.
    public func invalidate() {
        state.withLock { state in
            state.invalidated = true
            state.evaluations.removeAll()
            state.applicationPassword = nil
        }
    }

    /// Whether ``invalidate()`` was called.
    public var isInvalidated: Bool { state.withLock { $0.invalidated } }

    // MARK: Evaluations

    /// The evaluation of `factor` this session made, if it may still be reused at `now`.
    func reusableEvidence(_ factor: AuthenticationFactor, now: Date) -> AuthenticationEvidence? {
        state.withLock { state in
            guard !state.invalidated, let made = state.evaluations[factor] else { return nil }
            if state.reuseDuration > 0 && now.timeIntervalSince(made.at) > state.reuseDuration { return nil }
            if now < made.at { return nil }  // the clock went back: do not trust the old one
            return made.evidence
        }
    }

    /// Records a successful evaluation made at `now`.
    func record(_ evidence: AuthenticationEvidence, now: Date) {
        state.withLock { state in
            guard !state.invalidated else { return }
            state.evaluations[evidence.factor] = (evidence, now)
        }
    }

    /// Why `requirement` cannot be evaluated now with the authenticators in force, or `nil`
    /// when it can. Shows no prompt.
    public func unavailability(_ requirement: Requirement) -> AuthenticationFailure? {
        if isInvalidated { return .invalidContext }
        let authenticators = KeychainAuthenticators.current
        switch authenticators.available(.biometry) {
        case .success: return nil
        case .failure(let reason):
            if requirement == .biometry { return reason }
        }
        switch authenticators.available(.passcode) {
        case .success: return nil
        case .failure(let reason): return reason
        }
    }

    /// The enrolled set of the first available biometric authenticator (what
    /// `LAContext.evaluatedPolicyDomainState` returns), or `nil` when there is none.
    public var enrolledSetIdentity: Data? {
        guard case .success(let authenticator) = KeychainAuthenticators.current.available(.biometry) else { return nil }
        return try? authenticator.enrolledSetIdentity()
    }

    /// Evaluates `requirement`: biometry first when available; for
    /// ``Requirement/biometryOrPasscode`` the passcode when biometry is not available,
    /// fails, is locked out or the user chooses the fallback (not when the user cancels).
    /// A successful evaluation is kept for reuse.
    /// - Parameters:
    ///   - requirement: What is asked.
    ///   - reason: Shown with the prompt.
    /// - Returns: The evidence.
    /// - Throws: ``AuthenticationFailure``.
    @discardableResult
    public func evaluate(_ requirement: Requirement, reason: String) throws(AuthenticationFailure) -> AuthenticationEvidence {
        if isInvalidated { throw .invalidContext }
        let authenticators = KeychainAuthenticators.current
        let interactive = !interactionNotAllowed
        var biometryFailure: AuthenticationFailure?
        do {
            let evidence = try authenticators.authenticate(request(.biometry, reason: reason, interactive: interactive))
            record(evidence, now: authenticators.now())
            return evidence
        } catch {
            if requirement == .biometry || Self.stops(error) { throw error }
            biometryFailure = error
        }
        do {
            let evidence = try authenticators.authenticate(request(.passcode, reason: reason, interactive: interactive))
            record(evidence, now: authenticators.now())
            return evidence
        } catch {
            // Nothing could serve the policy: say why biometry failed when it was tried.
            if error == .passcodeNotSet, let biometryFailure, biometryFailure != .biometryNotAvailable,
                biometryFailure != .biometryNotEnrolled
            {
                throw biometryFailure
            }
            throw error
        }
    }

    func request(_ factor: AuthenticationFactor, reason: String, interactive: Bool) -> AuthenticationRequest {
        let titles = state.withLock { ($0.cancelTitle, $0.fallbackTitle) }
        return AuthenticationRequest(
            factor: factor, reason: reason, interactionAllowed: interactive, cancelTitle: titles.0, fallbackTitle: titles.1)
    }

    /// Failures after which no other factor is tried: the user or the app said no, or no
    /// prompt may be shown.
    static func stops(_ failure: AuthenticationFailure) -> Bool {
        switch failure {
        case .userCancel, .appCancel, .systemCancel, .notInteractive, .invalidContext: return true
        default: return false
        }
    }
}

#endif
