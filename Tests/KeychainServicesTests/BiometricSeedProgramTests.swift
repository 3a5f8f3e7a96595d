// An app's biometric login token written as on iOS (`import Security` +
// `import LocalAuthentication`), here against KeychainServices + KeychainAuthentication:
// `saveToken` and `loadToken` use only Apple's names and compile unchanged. With a scripted
// fingerprint authenticator installed, the token is read only after a successful
// evaluation.
import Foundation
import KeychainAuthentication
import KeychainServices
import Testing

private let service = "com.myapp.login"
private let account = "user-1"

/// The app's code, unchanged from iOS.
private func saveToken(_ data: Data) -> OSStatus {
    var error: Unmanaged<CFError>?
    guard let accessControl = SecAccessControlCreateWithFlags(
        nil,
        kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
        .biometryCurrentSet,
        &error
    ) else {
        return errSecParam
    }
    let addQuery: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: service,
        kSecAttrAccount as String: account,
        kSecValueData as String: data,
        kSecAttrAccessControl as String: accessControl,
        kSecUseAuthenticationContext as String: LAContext(),
    ]
    return SecItemAdd(addQuery as CFDictionary, nil)
}

/// The app's code, unchanged from iOS.
private func loadToken() -> (OSStatus, Data?) {
    let context = LAContext()
    context.localizedReason = "验证身份以访问您的登录信息"
    let readQuery: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: service,
        kSecAttrAccount as String: account,
        kSecReturnData as String: true,
        kSecUseAuthenticationContext as String: context,
        kSecMatchLimit as String: kSecMatchLimitOne,
    ]
    var result: AnyObject?
    let status = SecItemCopyMatching(readQuery as CFDictionary, &result)
    return (status, result as? Data)
}

struct BiometricSeedProgramTests {
    @Test func seedBiometricItemIsReadOnlyAfterASuccessfulEvaluation() throws {
        let finger = ScriptedAuthenticator(factor: .biometry, outcomes: [.cancel, .failure, .success])
        try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) {
            try TemporaryKeychain.with { _ in
                let data = Data("token".utf8)
                #expect(saveToken(data) == errSecSuccess)
                #expect(finger.promptCount == 0)
                #expect(loadToken() == (errSecUserCanceled, nil))
                #expect(loadToken() == (errSecAuthFailed, nil))
                #expect(loadToken() == (errSecSuccess, data))
                #expect(finger.requests.map(\.reason) == Array(repeating: "验证身份以访问您的登录信息", count: 3))

                // Its attributes read without a prompt, with the access control.
                let attributeQuery: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                    kSecAttrAccount as String: account, kSecReturnAttributes as String: true,
                ]
                var attributes: AnyObject?
                #expect(SecItemCopyMatching(attributeQuery as CFDictionary, &attributes) == errSecSuccess)
                let stored = try #require((attributes as? [String: Any])?[kSecAttrAccessControl as String] as? SecAccessControl)
                #expect(stored.flags == .biometryCurrentSet)
                #expect(finger.promptCount == 3)
            }
        }
    }

    @Test func contextReportsNoBiometryAsADeviceWithoutItWould() async {
        await KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([])) {
            let context = LAContext()
            var error: NSError?
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(error?.domain == LAError.errorDomain)
            #expect(error?.code == LAError.Code.biometryNotAvailable.rawValue)
            #expect(context.biometryType == .none)
            do {
                _ = try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "unlock")
                Issue.record("evaluation cannot succeed without an authenticator")
            } catch let failure as LAError {
                #expect(failure.code == .passcodeNotSet)
            } catch {
                Issue.record("unexpected error \(error)")
            }
            context.invalidate()
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(error?.code == LAError.Code.invalidContext.rawValue)
        }
    }
}
