import Foundation
import KeychainServices
import Testing

extension Conformance {
/// KeychainDiagnostics (public API of this module, not part of Apple's API): a failed call
/// records a cause, a successful one clears it, and the cause never contains secrets.
struct DiagnosticsTests {
    @Test func failureIsRecordedWithoutSecretsAndClearedOnSuccess() {
        TemporaryKeychain.with { _ in
            let secretText = "correct-horse-battery-staple"
            #expect(secAdd(genp().with(kSecValueData, Data(secretText.utf8))) == errSecSuccess)
            #expect(KeychainDiagnostics.lastFailureDescription == nil)
            #expect(secAdd(genp().with(kSecValueData, Data(secretText.utf8))) == errSecDuplicateItem)
            let description = KeychainDiagnostics.lastFailureDescription
            #expect(description != nil)
            let leaksSecret = description?.contains(secretText) ?? false
            #expect(!leaksSecret, "the failure description must not contain the secret")
            #expect(secUpdate(genp(), [kSecValueData as String: secretText]) == errSecParam)
            let leaksSecretOnParam = KeychainDiagnostics.lastFailureDescription?.contains(secretText) ?? false
            #expect(!leaksSecretOnParam, "the failure description must not contain the secret")
            #expect(secCopy(genp()).status == errSecSuccess)
            #expect(KeychainDiagnostics.lastFailureDescription == nil)
        }
    }
}
}
