#if !canImport(Security)
import Foundation

/// The keychain passphrase as the "device passcode": it asks for the passphrase of the
/// keychain in use (`KeychainEnvironment.current`), checks it, and releases a key derived
/// from it.
///
/// It serves `.devicePasscode` and is the fallback of `.userPresence`. Items of those kinds
/// stored in a keychain with a passphrase are encrypted under a key that only this
/// passphrase opens (not the unlock state that `keysmith unlock` leaves in the kernel
/// keyring), so reading one needs the passphrase typed again, whoever asks.
///
/// Unavailable (``AuthenticationFailure/passcodeNotSet``) when the keychain has no
/// passphrase. A wrong passphrase may be retried twice at the prompt; the third is
/// ``AuthenticationFailure/authenticationFailed``.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public struct KeychainPassphraseAuthenticator: KeychainAuthenticator, KeyReleasingAuthenticator {
    /// "keychain passphrase".
    public let name = "keychain passphrase"
    /// ``AuthenticationFactor/passcode``.
    public var factor: AuthenticationFactor { .passcode }

    private let reader: PassphraseReader
    private let directory: URL?
    /// How many times a wrong passphrase may be typed in one evaluation.
    static let attempts = 3

    /// The authenticator that asks on the controlling terminal without echo (or through the
    /// `KEYSMITH_ASKPASS` program) for the passphrase of the keychain in use.
    public init() {
        self.init(reader: PassphraseReader.standard, directory: nil)
    }

    /// An authenticator that asks for the passphrase with an app's own prompt (a dialog, a
    /// command-line prompt).
    /// - Parameter prompt: Shows the text it is given and returns what the user typed;
    ///   throws ``AuthenticationFailure/notInteractive`` when it cannot ask (or its second
    ///   argument, whether interaction is allowed, is `false`) and
    ///   ``AuthenticationFailure/userCancel`` when the user cancels.
    public init(prompt: @escaping @Sendable (_ text: String, _ interactionAllowed: Bool) throws(AuthenticationFailure) -> String) {
        self.init(reader: PassphraseReader(prompt), directory: nil)
    }

    /// An authenticator that reads the passphrase with `reader` (tests script it), for the
    /// keychain in `directory` (`nil`: the one in use at each call).
    init(reader: PassphraseReader, directory: URL? = nil) {
        self.reader = reader
        self.directory = directory
    }

    private var keychainDirectory: URL { directory ?? KeychainEnvironment.current.directory }

    private func keys() -> KeyHierarchy? {
        guard FileManager.default.fileExists(atPath: keychainDirectory.appendingPathComponent(KeychainEngine.databaseName).path)
        else { return nil }
        return try? KeychainEngine.engine(for: keychainDirectory, creating: false).keys
    }

    /// ``AuthenticationFailure/passcodeNotSet`` when the keychain has no passphrase (or
    /// does not exist), else `nil`.
    public func unavailability() -> AuthenticationFailure? {
        guard let keys = keys(), keys.hasPassphrase else { return .passcodeNotSet }
        return nil
    }

    /// Always `nil`: a passphrase has no enrolled set.
    public func enrolledSetIdentity() throws(AuthenticationFailure) -> Data? { nil }

    /// Asks for the passphrase (up to three times when it is wrong) and releases the key
    /// derived from it.
    public func authenticate(_ request: AuthenticationRequest) throws(AuthenticationFailure) -> AuthenticationEvidence {
        guard let keys = keys(), keys.hasPassphrase else { throw .passcodeNotSet }
        for attempt in 1...Self.attempts {
            // What to type, after the program's reason: the passphrase of which keychain.
            let question = "keychain passphrase for \(keychainDirectory.path)"
            var prompt = request.reason.isEmpty ? question : request.reason + "\n" + question
            if attempt > 1 { prompt = "Wrong passphrase; try again.\n" + prompt }
            let passphrase = try reader.read(prompt + ": ", request.interactionAllowed)
            let key: SecretKey?
            do {
                key = try keys.passcodeKey(passphrase: passphrase)
            } catch {
                throw .authenticationFailed
            }
            if let key {
                return AuthenticationEvidence(
                    factor: .passcode, authenticatorName: name, enrolledSetIdentity: nil, releasedKey: key)
            }
        }
        throw .authenticationFailed
    }
}
#endif
