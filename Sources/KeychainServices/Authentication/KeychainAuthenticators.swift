#if !canImport(Security)
import Foundation
import Synchronization

/// The authenticators `LAContext` and the keychain ask, in order, and the clock they judge
/// reuse windows by.
///
/// When an item's access control needs the user, the keychain takes the first authenticator
/// of the needed ``AuthenticationFactor`` that is available now
/// (``KeychainAuthenticator/unavailability()`` is `nil`) and asks it. The process-wide list
/// (``processDefault``) starts as ``shipped``: fingerprint readers, then the keychain
/// passphrase, then the login password, each where the machine has it.
///
/// Tests (the project's and an app's) scope their own list to a task, which keeps tests that
/// run in parallel apart:
///
/// ```swift
/// let finger = ScriptedAuthenticator(factor: .biometry, outcomes: [.success])
/// try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) {
///     // SecItemCopyMatching of a .biometryAny item succeeds once, without a real reader.
/// }
/// ```
///
/// - Note: Exists only where KeychainServices implements the keychain itself; on Apple
///   platforms LocalAuthentication and the Secure Enclave do this.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public struct KeychainAuthenticators: Sendable {
    /// The authenticators, in the order they are asked.
    public var authenticators: [any KeychainAuthenticator]
    /// The clock that reuse windows (`touchIDAuthenticationAllowableReuseDuration`) are
    /// measured with. Tests pass a clock they advance by hand.
    public var now: @Sendable () -> Date

    /// Creates a list.
    /// - Parameters:
    ///   - authenticators: The authenticators, in the order they are asked.
    ///   - now: The clock (default: the system clock).
    public init(_ authenticators: [any KeychainAuthenticator], now: @escaping @Sendable () -> Date = { Date() }) {
        self.authenticators = authenticators
        self.now = now
    }

    // MARK: What ships

    /// The authenticators Keysmith provides, in the order they are asked: fingerprint
    /// readers first (biometry), then the keychain passphrase and the login password
    /// (passcode).
    public static var shipped: [any KeychainAuthenticator] {
        biometricAuthenticators + [KeychainPassphraseAuthenticator()] + loginPasswordAuthenticators
    }

    /// Fingerprint readers: ``LinuxAuthenticators/fingerprint`` (fprintd).
    static var biometricAuthenticators: [any KeychainAuthenticator] { LinuxAuthenticators.fingerprint }

    /// The account's login password, after the keychain passphrase:
    /// ``LinuxAuthenticators/loginPassword`` (PAM).
    static var loginPasswordAuthenticators: [any KeychainAuthenticator] { LinuxAuthenticators.loginPassword }

    // MARK: Process-wide and scoped lists

    private static let configured = Mutex<KeychainAuthenticators?>(nil)
    @TaskLocal private static var scoped: KeychainAuthenticators?

    /// The process-wide list, used wherever no ``withAuthenticators(_:_:)`` scope is active.
    /// Starts as ``shipped``; an app that brings its own authenticator sets it once at
    /// launch.
    public static var processDefault: KeychainAuthenticators {
        get {
            configured.withLock { value in
                if let value { return value }
                let made = KeychainAuthenticators(shipped)
                value = made
                return made
            }
        }
        set { configured.withLock { $0 = newValue } }
    }

    /// The list in force for the caller: a task-scoped one if active, else
    /// ``processDefault``.
    public static var current: KeychainAuthenticators { scoped ?? processDefault }

    /// Puts ``processDefault`` back to ``shipped``.
    public static func reset() {
        configured.withLock { $0 = nil }
    }

    /// Runs `body` with `authenticators` in force for the current task (and the child tasks
    /// it creates). Threads started inside `body` do not inherit it.
    /// - Parameters:
    ///   - authenticators: The list to use inside `body`.
    ///   - body: The work to run.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func withAuthenticators<Result>(
        _ authenticators: KeychainAuthenticators, _ body: () throws -> Result
    ) rethrows -> Result {
        try $scoped.withValue(authenticators, operation: body)
    }

    /// Runs the asynchronous `body` with `authenticators` in force for the current task.
    /// - Parameters:
    ///   - authenticators: The list to use inside `body`.
    ///   - body: The work to run.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func withAuthenticators<Result: Sendable>(
        _ authenticators: KeychainAuthenticators, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await $scoped.withValue(authenticators, operation: body)
    }

    // MARK: Choosing and asking

    /// The first authenticator of `factor` that can evaluate now, or why none can (the
    /// first one's reason; with none at all, that biometry is not available or that no
    /// passcode is set).
    /// - Parameter keyReleasing: Only authenticators that release key material (the
    ///   keychain passphrase), for items whose key is bound to the passphrase.
    func available(
        _ factor: AuthenticationFactor, keyReleasing: Bool = false
    ) -> Result<any KeychainAuthenticator, AuthenticationFailure> {
        var firstReason: AuthenticationFailure?
        for authenticator in authenticators where authenticator.factor == factor {
            if keyReleasing && !(authenticator is any KeyReleasingAuthenticator) { continue }
            if let reason = authenticator.unavailability() {
                if firstReason == nil { firstReason = reason }
                continue
            }
            return .success(authenticator)
        }
        return .failure(firstReason ?? (factor == .biometry ? .biometryNotAvailable : .passcodeNotSet))
    }

    /// Asks the first available authenticator of `request.factor`.
    /// - Throws: Why no authenticator can evaluate, or the authenticator's own failure.
    func authenticate(
        _ request: AuthenticationRequest, keyReleasing: Bool = false
    ) throws(AuthenticationFailure) -> AuthenticationEvidence {
        let authenticator: any KeychainAuthenticator
        switch available(request.factor, keyReleasing: keyReleasing) {
        case .success(let found): authenticator = found
        case .failure(let reason): throw reason
        }
        var evidence = try authenticator.authenticate(request)
        if evidence.factor == .biometry && evidence.enrolledSetIdentity == nil {
            // The enrolled set the user matched: the authenticator's, when its evidence
            // does not carry it.
            let identity = try authenticator.enrolledSetIdentity()
            evidence = AuthenticationEvidence(
                factor: evidence.factor, authenticatorName: evidence.authenticatorName,
                enrolledSetIdentity: identity, releasedKey: evidence.releasedKey)
        }
        guard evidence.factor == request.factor else { throw .authenticationFailed }
        return evidence
    }
}

/// An authenticator whose evidence carries key material
/// (``AuthenticationEvidence/releasedKey``), so items whose key is bound to it open only
/// through it: the keychain passphrase.
protocol KeyReleasingAuthenticator: KeychainAuthenticator {}
#endif
