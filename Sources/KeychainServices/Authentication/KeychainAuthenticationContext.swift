#if !canImport(Security)
/// An authentication context the keychain recognises in `kSecUseAuthenticationContext`:
/// `LAContext` conforms, and so can an app's own context type.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public protocol KeychainAuthenticationContext: AnyObject {
    /// The session the context keeps its prompt texts, credential and evaluations in.
    var authenticationSession: AuthenticationSession { get }
}
#endif
