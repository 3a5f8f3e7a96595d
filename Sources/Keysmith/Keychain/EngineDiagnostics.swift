import Foundation
import KeychainServices

// The platform seam for the keychain's own diagnosis of a failed call.
//
// Apple's Security framework returns only an OSStatus. The Linux keychain also records the
// precise cause (which attribute was rejected, which file has the wrong permissions) for
// the calling thread; KeychainError carries it as its `detail`. Never contains secrets.

#if canImport(Security) || KEYSMITH_APPLE_SURFACE
/// The keychain's own diagnosis of the last failed call on this thread (none on Apple platforms).
func lastEngineDiagnosis() -> String? { nil }
/// The keychain's own fix for the last failed call on this thread (none on Apple platforms).
func lastEngineRecovery() -> String? { nil }
#else
/// The keychain's own diagnosis of the last failed call on this thread.
func lastEngineDiagnosis() -> String? { KeychainDiagnostics.lastFailureDescription }
/// The keychain's own fix for the last failed call on this thread (for a locked keychain:
/// `keysmith unlock`).
func lastEngineRecovery() -> String? { KeychainDiagnostics.lastFailureRecovery }
#endif

/// Whether the last keychain call a store made on this thread was failed by an
/// ``ErrorInjection`` instead of reaching the keychain. An injected status has no engine
/// diagnosis: the engine's record on this thread belongs to an earlier, real call, and
/// must not be attached to the injected failure.
enum InjectedCallMarker {
    /// A thread-specific slot: set (any non-null value) after an injected call, null after
    /// a real one. Recorded on every keychain call a store makes, so it is a plain
    /// thread-specific value rather than an entry of the thread's dictionary (which costs
    /// a dictionary update with a boxed value per call).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key is left for the injection marker")
        return key
    }()

    /// Records whether the call about to be reported was injected.
    static func record(injected: Bool) {
        pthread_setspecific(key, injected ? UnsafeRawPointer(bitPattern: 1) : nil)
    }

    /// Whether the last recorded call on this thread was injected.
    static var lastCallWasInjected: Bool {
        pthread_getspecific(key) != nil
    }
}

/// The engine diagnosis for a failure of the call just made on this thread, or `nil` when
/// that call was injected.
func diagnosisOfLastCall() -> String? {
    InjectedCallMarker.lastCallWasInjected ? nil : lastEngineDiagnosis()
}

/// The engine's fix for a failure of the call just made on this thread, or `nil` when that
/// call was injected or the engine knows none.
func recoveryOfLastCall() -> String? {
    InjectedCallMarker.lastCallWasInjected ? nil : lastEngineRecovery()
}
