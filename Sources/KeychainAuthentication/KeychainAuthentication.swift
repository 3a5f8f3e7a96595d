// KeychainAuthentication: LocalAuthentication's LAContext on every platform.
//
// On Apple platforms this module re-exports LocalAuthentication. Elsewhere it provides the
// same names (LAContext, LAPolicy, LAError, LABiometryType) so that app code which checks
// for biometry and passes an authentication context to the keychain compiles unchanged.
// Elsewhere the context asks Keysmith's authenticators (KeychainServices'
// KeychainAuthenticators): fingerprint readers, the keychain passphrase and the login
// password where the machine has them, scripted ones in tests. When none can serve a
// policy it reports the error iOS gives on a device without biometry or passcode.
#if canImport(LocalAuthentication)
@_exported import LocalAuthentication
#else
@_exported import Foundation
#endif
