// Seed 003 §3.4 written as on iOS (`import Security` + `import LocalAuthentication`),
// here against KeychainServices + KeychainAuthentication: it compiles unchanged and runs.
// Access control is stored and returned but not enforced on Linux yet, and LAContext
// reports that no biometry is available, so an app takes its documented fallback.
import Foundation
import KeychainAuthentication
import KeychainServices
import Testing

struct BiometricSeedProgramTests {
    @Test func seedBiometricItemCompilesAndRoundTrips() throws {
        TemporaryKeychain.with { _ in
            let service = "com.myapp.login"
            let account = "user-1"
            let data = Data("token".utf8)

            var error: Unmanaged<CFError>?
            guard let accessControl = SecAccessControlCreateWithFlags(
                nil,
                kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                .biometryCurrentSet,
                &error
            ) else {
                Issue.record("access control could not be created")
                return
            }
            let addQuery: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecValueData as String: data,
                kSecAttrAccessControl as String: accessControl,
                kSecUseAuthenticationContext as String: LAContext(),
            ]
            #expect(SecItemAdd(addQuery as CFDictionary, nil) == errSecSuccess)

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
            #expect(SecItemCopyMatching(readQuery as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == data)

            var attributes: AnyObject?
            var attributeQuery = readQuery
            attributeQuery[kSecReturnData as String] = nil
            attributeQuery[kSecReturnAttributes as String] = true
            #expect(SecItemCopyMatching(attributeQuery as CFDictionary, &attributes) == errSecSuccess)
            let stored = (attributes as? [String: Any])?[kSecAttrAccessControl as String] as? SecAccessControl
            #expect(stored?.flags == .biometryCurrentSet)
        }
    }

    @Test func contextReportsNoBiometryAsADeviceWithoutItWould() async {
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
