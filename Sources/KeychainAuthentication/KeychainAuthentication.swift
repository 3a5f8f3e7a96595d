// KeychainAuthentication: LocalAuthentication's LAContext on every platform.
//
// On Apple platforms this module re-exports LocalAuthentication. Elsewhere it provides the
// same names (LAContext, LAPolicy, LAError, LABiometryType) so that app code which checks
// for biometry and passes an authentication context to the keychain compiles unchanged.
// There is no biometric hardware or authenticator behind it on Linux yet: every policy
// evaluates as unavailable, with the error iOS gives on a device without biometry or
// passcode, so apps take their documented fallback path.
#if canImport(LocalAuthentication)
@_exported import LocalAuthentication
#else
@_exported import Foundation
#endif
