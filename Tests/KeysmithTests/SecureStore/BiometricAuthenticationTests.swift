import Foundation
import Keysmith
import KeychainServices
import Testing

#if os(Linux)
/// Biometric protection of the typed stores through the authenticators of the keychain
/// (scripted here): the capability check, the fallback, and reads that ask the user.
struct BiometricAuthenticationTests {
    @Test func protectedValueReadsOnlyAfterTheFingerIsAccepted() throws {
        let finger = ScriptedAuthenticator(factor: .biometry, outcomes: [.cancel, .failure, .success])
        try withTemporaryKeychain {
            try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) {
                let store = try makeStore()  // BiometryCapability.system
                let result = try store.setBiometricProtected("1234", for: "pin", in: "local_pin")
                #expect(result == .protected(.biometryCurrentSet))
                let canceled = #expect(throws: SecureStoreError.self) {
                    try store.string(for: "pin", in: "local_pin", prompt: "Unlock your PIN")
                }
                #expect(canceled?.code == .userCanceled)
                let failed = #expect(throws: SecureStoreError.self) {
                    try store.string(for: "pin", in: "local_pin", prompt: "Unlock your PIN")
                }
                #expect(failed?.code == .authFailed)
                #expect(try store.string(for: "pin", in: "local_pin", prompt: "Unlock your PIN") == "1234")
                #expect(finger.requests.map(\.reason) == Array(repeating: "Unlock your PIN", count: 3))
            }
        }
    }

    @Test func withoutAFingerprintReaderTheValueFallsBackAndReadsWithoutAPrompt() throws {
        try withTemporaryKeychain {
            try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([])) {
                #expect(!BiometryCapability.system.availability().isAvailable)
                let store = try makeStore()
                let result = try store.setBiometricProtected("1234", for: "pin", in: "local_pin")
                #expect(!result.isProtected)
                #expect(try store.string(for: "pin", in: "local_pin") == "1234")
            }
        }
    }

    @Test func lockedOutBiometryIsAnErrorNotAFallback() throws {
        let finger = ScriptedAuthenticator(factor: .biometry)
        finger.forcedUnavailability = .biometryLockout
        try withTemporaryKeychain {
            try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) {
                #expect(!BiometryCapability.system.availability().isAvailable)
                let store = try makeStore()
                let error = #expect(throws: SecureStoreError.self) { try store.setBiometricProtected("1234", for: "pin", in: "local_pin") }
                #expect(error?.code == .authFailed)
            }
        }
    }

    @Test func keychainStoreWithAnAccessPolicyAsksWithItsPrompt() throws {
        let passcode = ScriptedAuthenticator(factor: .passcode, outcomes: [.success])
        try withTemporaryKeychain {
            try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([passcode])) {
                let store = try KeychainStore(
                    service: uniqueService(), accessibility: .whenUnlockedThisDeviceOnly, accessPolicy: .devicePasscode)
                try store.set("token-1", for: "refresh")
                #expect(passcode.promptCount == 0)
                #expect(try store.string(for: "refresh", prompt: "Sign in again") == "token-1")
                #expect(passcode.requests.map(\.reason) == ["Sign in again"])
                let error = #expect(throws: KeychainError.self) { try store.string(for: "refresh") }
                #expect(error?.code == .authenticationFailed)
            }
        }
    }
}
#endif
