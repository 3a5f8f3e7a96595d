#if !canImport(Security)
import Foundation

/// The access control of items for one keychain call: asks the authenticators (or reuses
/// the evaluations of the call's `LAContext`), then opens the secrets that the evaluations
/// release, and seals new secrets for their access control.
///
/// One gate per call: an evaluation made for the first item is reused for the others of the
/// same call, and recorded in the call's context (so later calls with the same context do
/// not prompt again while its evaluation may be reused). The engine calls it outside its
/// lock, so a prompt never blocks other threads' keychain calls.
final class AccessControlGate {
    private let keys: KeyHierarchy
    private let authenticators: KeychainAuthenticators
    private let session: AuthenticationSession?
    private let prompt: String
    private let interactionAllowed: Bool
    /// `kSecUseAuthenticationUISkip`: items that would need a prompt are left out.
    let skipping: Bool
    private var evidence: [AuthenticationFactor: AuthenticationEvidence] = [:]

    /// The prompt when neither `kSecUseOperationPrompt` nor the context gives one.
    static let defaultPrompt = "Use a protected keychain item"

    init(query: ItemQuery, keys: KeyHierarchy) {
        self.keys = keys
        authenticators = KeychainAuthenticators.current
        session = query.authenticationSession
        let reason = session?.localizedReason ?? ""
        prompt = query.operationPrompt ?? (reason.isEmpty ? Self.defaultPrompt : reason)
        skipping = query.authenticationUI == .skip
        interactionAllowed = query.authenticationUI == .allow && !(session?.interactionNotAllowed ?? false)
    }

    // MARK: Opening

    /// The secret of `record`, after the evaluation its access control requires.
    /// - Returns: The secret; `nil` for an item left out (``skipping`` and a prompt would
    ///   be needed).
    /// - Throws: ``KeychainFailure``: errSecUserCanceled, errSecInteractionNotAllowed,
    ///   errSecAuthFailed (failed, no authenticator, changed enrolled set, wrong application
    ///   password).
    func open(_ record: ItemRecord) throws -> SecretData? {
        guard let control = record.accessControl, control.requiresAuthentication, let stored = record.secret else {
            return record.secret
        }
        // An invalidated context opens nothing, whatever it holds (an application password
        // set again after `invalidate()` included).
        if let session, session.isInvalidated { throw Self.failure(.invalidContext) }
        // Items stored before access control was enforced keep their secret as it was:
        // they are checked, not sealed, until they are next updated.
        let envelope = record.sealedForAccessControl ? try AccessControlEnvelope(decoding: stored) : nil
        let routes = envelope?.paths.map(\.requirements) ?? AccessControlEnvelope.paths(for: control.flags)
        let classKey = try envelope.map { _ in try keys.itemKey(for: record.protection, binding: record.deviceBinding) }
        var failures: [AuthenticationFailure] = []
        var problem: KeychainFailure?
        for (index, requirements) in routes.enumerated() {
            if requirements.contains(.companion) {
                problem = problem ?? Self.noCompanion
                continue
            }
            if requirements.contains(.applicationPassword) && session?.applicationPassword == nil {
                if skipping { return nil }
                problem = problem ?? AccessControlEnvelope.missingPassword
                continue
            }
            do {
                var secrets = AccessControlEnvelope.PathSecrets(applicationPassword: session?.applicationPassword)
                if requirements.contains(.biometry) {
                    let proof = try obtain(.biometry)
                    if requirements.contains(.currentSet) && !isCurrentlyEnrolled(proof) {
                        problem = problem ?? Self.enrollmentChanged
                        continue
                    }
                    secrets.enrolledSet = proof.enrolledSetIdentity
                    if envelope != nil { secrets.biometrySecret = try keys.accessControlSecret(.biometry, releasedKey: nil) }
                }
                if requirements.contains(.passcode) {
                    let bound = envelope != nil && keys.isPasscodeKeyBound
                    let proof = try obtain(.passcode, keyReleasing: bound)
                    if envelope != nil {
                        secrets.passcodeSecret = try keys.accessControlSecret(.passcode, releasedKey: proof.releasedKey)
                        if secrets.passcodeSecret == nil {
                            problem = problem ?? Self.passphraseNeeded
                            continue
                        }
                    }
                }
                guard let envelope, let classKey else { return stored }
                if let secret = try envelope.open(
                    path: envelope.paths[index], secrets: secrets, reference: record.reference, classKey: classKey)
                {
                    return secret
                }
                if requirements.contains(.currentSet) {
                    problem = problem ?? Self.enrollmentChanged
                } else if requirements.contains(.applicationPassword) {
                    problem = problem ?? Self.wrongPassword
                } else {
                    problem = problem ?? AccessControlEnvelope.damaged
                }
            } catch let failure as AuthenticationFailure {
                if AuthenticationSession.stops(failure) {
                    if skipping && failure == .notInteractive { return nil }
                    throw Self.failure(failure)
                }
                failures.append(failure)
            }
        }
        // A failed evaluation says more than a route that could not be taken; among routes
        // that could not be taken, a missing passcode (the fallback of every policy) first.
        if let failed = failures.first(where: { $0 == .authenticationFailed || $0 == .biometryLockout }) {
            throw Self.failure(failed)
        }
        if let problem { throw problem }
        throw Self.failure(failures.contains(.passcodeNotSet) ? .passcodeNotSet : failures.first ?? .authenticationFailed)
    }

    /// An evaluation of `factor`: this call's, the context's while it may be reused, or a
    /// new one.
    private func obtain(_ factor: AuthenticationFactor, keyReleasing: Bool = false) throws(AuthenticationFailure) -> AuthenticationEvidence {
        if let made = evidence[factor], !keyReleasing || made.releasedKey != nil { return made }
        if let session {
            if session.isInvalidated { throw .invalidContext }
            if let made = session.reusableEvidence(factor, now: authenticators.now()), !keyReleasing || made.releasedKey != nil {
                evidence[factor] = made
                return made
            }
        }
        let request = session?.request(factor, reason: prompt, interactive: interactionAllowed)
            ?? AuthenticationRequest(factor: factor, reason: prompt, interactionAllowed: interactionAllowed)
        let made = try authenticators.authenticate(request, keyReleasing: keyReleasing)
        evidence[factor] = made
        session?.record(made, now: authenticators.now())
        return made
    }

    /// Whether the set `proof` was matched against is still the enrolled one: an evaluation
    /// reused from a context made before a finger was added or removed does not open a
    /// `.biometryCurrentSet` item (asked of the authenticator, without a prompt).
    private func isCurrentlyEnrolled(_ proof: AuthenticationEvidence) -> Bool {
        guard case .success(let authenticator) = authenticators.available(.biometry),
            let current = try? authenticator.enrolledSetIdentity(), let matched = proof.enrolledSetIdentity
        else { return false }
        return current == matched
    }

    // MARK: Sealing

    /// What sealing a secret for an access control needs besides the keychain's public keys.
    struct SealingInputs {
        var enrolledSet: Data?
        var password: AccessControlEnvelope.StretchedPassword?
    }

    /// What sealing a secret for `control` needs: the enrolled set (from this call's
    /// evaluation, else the first available fingerprint authenticator's, asked without a
    /// prompt) and the context's application password, stretched (slow: call it outside
    /// the engine's lock).
    func sealingInputs(for control: SecAccessControl) throws -> SealingInputs {
        let routes = AccessControlEnvelope.paths(for: control.flags)
        var inputs = SealingInputs()
        if routes.contains(where: { $0.contains(.currentSet) }) {
            inputs.enrolledSet = evidence[.biometry]?.enrolledSetIdentity
            if inputs.enrolledSet == nil, case .success(let authenticator) = authenticators.available(.biometry) {
                inputs.enrolledSet = try? authenticator.enrolledSetIdentity()
            }
        }
        if control.flags.contains(.applicationPassword) {
            if let session, session.isInvalidated { throw Self.failure(.invalidContext) }
            guard let password = session?.applicationPassword else { throw AccessControlEnvelope.missingPassword }
            inputs.password = try AccessControlEnvelope.StretchedPassword(password)
        }
        return inputs
    }

    /// Seals `secret` for `control` (see ``AccessControlEnvelope``).
    func seal(
        _ secret: SecretData, control: SecAccessControl, reference: Data, protection: ProtectionClass,
        publicKeys: [AccessControlKeys.Slot: Data], inputs: SealingInputs
    ) throws -> SecretData {
        try AccessControlEnvelope.seal(
            secret, flags: control.flags, reference: reference, publicKeys: publicKeys, enrolledSet: inputs.enrolledSet,
            password: inputs.password)
    }

    // MARK: Failures

    /// The status Apple's client gives for a LocalAuthentication error: a cancel is
    /// errSecUserCanceled, "not interactive" errSecInteractionNotAllowed, anything else
    /// errSecAuthFailed.
    static func failure(_ failure: AuthenticationFailure) -> KeychainFailure {
        switch failure {
        case .userCancel:
            return KeychainFailure(errSecUserCanceled, "The user canceled the authentication the item's access control requires.")
        case .notInteractive:
            return KeychainFailure(
                errSecInteractionNotAllowed, "The item's access control requires the user, and no prompt may be shown (kSecUseAuthenticationUIFail, an LAContext with interactionNotAllowed, or no terminal and no KEYSMITH_ASKPASS program).",
                recovery: "Without a terminal, set KEYSMITH_ASKPASS to a program that asks (it gets the prompt as its argument and prints the passphrase, as SSH_ASKPASS does); or read the item from a terminal, or evaluate an LAContext first and pass it as kSecUseAuthenticationContext.")
        case .passcodeNotSet:
            return KeychainFailure(
                errSecAuthFailed, "The item's access control requires the user, and no authenticator can ask: " + failure.description,
                recovery: "Set a keychain passphrase (keysmith passwd) or install an authenticator (KeychainAuthenticators).")
        case .biometryNotAvailable, .biometryNotEnrolled:
            return KeychainFailure(
                errSecAuthFailed, "The item's access control requires biometry: " + failure.description,
                recovery: "Use a machine with an enrolled fingerprint reader, or store the item with .userPresence or .devicePasscode.")
        default:
            return KeychainFailure(errSecAuthFailed, "The item's access control was not satisfied: " + failure.description)
        }
    }

    static let enrollmentChanged = KeychainFailure(
        errSecAuthFailed,
        "The item was stored with .biometryCurrentSet and the enrolled fingers changed since: it can no longer be read, as on iOS.",
        recovery: "Delete the item and store it again (after the user signs in another way).")

    static let wrongPassword = KeychainFailure(
        errSecAuthFailed, "The application password given with LAContext.setCredential is not the item's.",
        recovery: "Pass the password the item was stored with.")

    static let passphraseNeeded = KeychainFailure(
        errSecAuthFailed,
        "The item's access control requires the keychain passphrase, and the authenticator that answered does not check it.",
        recovery: "Read the item with the keychain passphrase authenticator (KeychainPassphraseAuthenticator) in KeychainAuthenticators.")

    static let noCompanion = KeychainFailure(
        errSecAuthFailed, "The item's access control requires a paired companion device, which Linux does not have.",
        recovery: "Store the item with another access control.")
}
#endif
