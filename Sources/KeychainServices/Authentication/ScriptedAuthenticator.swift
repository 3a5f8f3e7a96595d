#if !canImport(Security)
import Foundation
import Synchronization

/// An authenticator that answers from a script, for tests (Keysmith's and an app's): each
/// prompt takes the next ``Outcome`` from a queue, the enrolled set is a value the test
/// sets, and it counts the prompts it showed.
///
/// ```swift
/// let finger = ScriptedAuthenticator(factor: .biometry, outcomes: [.success, .cancel])
/// try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) {
///     // first read of a .biometryAny item: success; second: errSecUserCanceled
/// }
/// #expect(finger.promptCount == 2)
/// ```
///
/// A request that does not allow interaction (`kSecUseAuthenticationUIFail`, an
/// `LAContext` with `interactionNotAllowed`) fails with
/// ``AuthenticationFailure/notInteractive`` without taking an outcome or counting a prompt.
/// A prompt with an empty queue fails with ``AuthenticationFailure/authenticationFailed``.
///
/// Its evidence releases no key material, as PAM's and fprintd's: on a keychain with a
/// passphrase, `.devicePasscode` items open only with ``KeychainPassphraseAuthenticator``.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public final class ScriptedAuthenticator: KeychainAuthenticator {
    /// What one prompt answers.
    public enum Outcome: Sendable, Hashable {
        /// The user is verified.
        case success
        /// The user cancels (``AuthenticationFailure/userCancel``).
        case cancel
        /// The user is not recognized (``AuthenticationFailure/authenticationFailed``).
        case failure
        /// Too many attempts (``AuthenticationFailure/biometryLockout``).
        case lockout
        /// No prompt can be shown (``AuthenticationFailure/notInteractive``).
        case notInteractive
        /// Any other failure.
        case failing(AuthenticationFailure)
    }

    private struct State {
        var outcomes: [Outcome]
        var enrolledSet: Data?
        var unavailable: AuthenticationFailure?
        var requests: [AuthenticationRequest] = []
    }

    /// For example "scripted fingerprint".
    public let name: String
    /// The factor it proves.
    public let factor: AuthenticationFactor
    private let state: Mutex<State>

    /// Creates a scripted authenticator.
    /// - Parameters:
    ///   - factor: The factor it proves (default biometry).
    ///   - name: Its name (default "scripted fingerprint" or "scripted passcode").
    ///   - enrolledSet: For biometry, the enrolled set's identity (default a fixed one);
    ///     `nil` means nothing is enrolled.
    ///   - outcomes: The answers of the next prompts, in order.
    public init(
        factor: AuthenticationFactor = .biometry, name: String? = nil,
        enrolledSet: Data? = Data("scripted-enrolled-set-1".utf8), outcomes: [Outcome] = []
    ) {
        self.factor = factor
        self.name = name ?? (factor == .biometry ? "scripted fingerprint" : "scripted passcode")
        state = Mutex(State(outcomes: outcomes, enrolledSet: factor == .biometry ? enrolledSet : nil))
    }

    /// Adds answers for later prompts.
    /// - Parameter outcomes: The answers, in order.
    public func enqueue(_ outcomes: Outcome...) {
        state.withLock { $0.outcomes.append(contentsOf: outcomes) }
    }

    /// The identity of the enrolled set (biometry): change it to simulate enrolling or
    /// removing a finger; `nil` means nothing is enrolled.
    public var enrolledSet: Data? {
        get { state.withLock { $0.enrolledSet } }
        set { state.withLock { $0.enrolledSet = newValue } }
    }

    /// Forces ``unavailability()`` to answer this (for example
    /// ``AuthenticationFailure/biometryNotAvailable``); `nil` to stop.
    public var forcedUnavailability: AuthenticationFailure? {
        get { state.withLock { $0.unavailable } }
        set { state.withLock { $0.unavailable = newValue } }
    }

    /// How many prompts were shown.
    public var promptCount: Int { state.withLock { $0.requests.count } }

    /// The prompts shown, in order (their reasons, titles and factor).
    public var requests: [AuthenticationRequest] { state.withLock { $0.requests } }

    /// How many scripted answers are left.
    public var remainingOutcomes: Int { state.withLock { $0.outcomes.count } }

    /// ``forcedUnavailability``, else ``AuthenticationFailure/biometryNotEnrolled`` for
    /// biometry without an enrolled set, else `nil`.
    public func unavailability() -> AuthenticationFailure? {
        state.withLock { state in
            if let forced = state.unavailable { return forced }
            if factor == .biometry && state.enrolledSet == nil { return .biometryNotEnrolled }
            return nil
        }
    }

    /// ``enrolledSet`` for biometry; `nil` for a passcode.
    public func enrolledSetIdentity() throws(AuthenticationFailure) -> Data? {
        factor == .biometry ? enrolledSet : nil
    }

    /// Takes the next outcome.
    public func authenticate(_ request: AuthenticationRequest) throws(AuthenticationFailure) -> AuthenticationEvidence {
        let next: Result<Data?, AuthenticationFailure> = state.withLock { state in
            if !request.interactionAllowed { return .failure(.notInteractive) }
            state.requests.append(request)
            guard !state.outcomes.isEmpty else { return .failure(.authenticationFailed) }
            switch state.outcomes.removeFirst() {
            case .success: return .success(state.enrolledSet)
            case .cancel: return .failure(.userCancel)
            case .failure: return .failure(.authenticationFailed)
            case .lockout: return .failure(.biometryLockout)
            case .notInteractive: return .failure(.notInteractive)
            case .failing(let failure): return .failure(failure)
            }
        }
        switch next {
        case .success(let enrolled):
            return AuthenticationEvidence(
                factor: factor, authenticatorName: name, enrolledSetIdentity: factor == .biometry ? enrolled : nil)
        case .failure(let failure):
            throw failure
        }
    }
}
#endif
