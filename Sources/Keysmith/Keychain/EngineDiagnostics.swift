import Foundation
import KeychainServices

// The platform seam for the keychain's own diagnosis of a failed call.
//
// Apple's Security framework returns only an OSStatus. The Linux keychain also records the
// precise cause (which attribute was rejected, which file has the wrong permissions) for
// the calling thread; KeychainError carries it as its `detail`. Never contains secrets.

#if canImport(Security)
/// The keychain's own diagnosis of the last failed call on this thread (none on Apple platforms).
func lastEngineDiagnosis() -> String? { nil }
#else
/// The keychain's own diagnosis of the last failed call on this thread.
func lastEngineDiagnosis() -> String? { KeychainDiagnostics.lastFailureDescription }
#endif
