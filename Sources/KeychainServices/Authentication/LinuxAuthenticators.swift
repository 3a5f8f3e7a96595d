#if !canImport(Security)
import Foundation

/// The authenticators Linux itself offers, beyond the keychain's own passphrase: the login
/// password checked by PAM, then a fingerprint through fprintd.
///
/// The default set of authenticators puts these after the keychain passphrase, in this
/// order. Each one says through ``KeychainAuthenticator/unavailability()`` whether it can serve
/// on this machine (no PAM service, no fprintd, no enrolled finger), so listing them costs
/// nothing where they do not apply.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public enum LinuxAuthenticators {
    /// The system's authenticators, in the order they are tried: ``PAMLoginAuthenticator``
    /// (the user's login password, PAM service `keysmith`, else `other`), then
    /// ``FprintdAuthenticator`` (an enrolled fingerprint, on the system bus).
    public static var systemAuthenticators: [any KeychainAuthenticator] {
        loginPassword + fingerprint
    }

    /// The passcode authenticators of the system: ``PAMLoginAuthenticator`` for the user
    /// running the process.
    public static var loginPassword: [any KeychainAuthenticator] { [PAMLoginAuthenticator()] }

    /// The biometric authenticators of the system: ``FprintdAuthenticator`` on the system bus.
    public static var fingerprint: [any KeychainAuthenticator] { [FprintdAuthenticator()] }
}
#endif
