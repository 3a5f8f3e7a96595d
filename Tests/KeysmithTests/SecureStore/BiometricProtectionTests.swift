import Foundation
import Keysmith
import KeychainServices
import Testing

struct BiometricProtectionTests {
    @Test func test_systemCapability_onLinux_isUnavailable() {
        #if os(Linux)
        let availability = BiometryCapability.system.availability()
        #expect(!availability.isAvailable)
        #expect(availability.description.contains("unavailable"))
        #endif
    }

    @Test func test_withoutBiometry_fallsBackToPlainAccessibility_andSaysSo() throws {
        try withTemporaryKeychain {
            let recorder = EventRecorder()
            let store = try makeStore(
                biometry: .fixed(.unavailable(reason: "no biometric hardware")), logger: recorder.logger)
            let result = try store.setBiometricProtected("pin", "1234", in: "local_pin")
            #expect(result == .fellBack(accessibility: .afterFirstUnlockThisDeviceOnly, reason: "no biometric hardware"))
            #expect(!result.isProtected)
            // Readable without a prompt, with the app's plain accessibility.
            #expect(try store.get("pin", as: String.self, in: "local_pin") == "1234")
            let keychain = try KeychainStore(service: store.service(for: "local_pin"))
            let attributes = try #require(try keychain.attributes(for: "pin"))
            #expect(attributes.hasAccessControl == false)
            #expect(attributes.accessibility == .afterFirstUnlockThisDeviceOnly)
            let event = recorder.events.first { $0.operation == .setBiometricProtected }
            #expect(event?.outcome == .fellBack(reason: "no biometric hardware"))
        }
    }

    @Test func test_systemCapability_onLinux_fallsBack() throws {
        #if os(Linux)
        // No fingerprint authenticator (the test keychain's scripted reader is replaced by none).
        try withTemporaryKeychain {
            try KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([])) {
                let store = try makeStore()
                let result = try store.setBiometricProtected("pin", "1234", in: "local_pin")
                #expect(!result.isProtected)
                #expect(try store.get("pin", as: String.self, in: "local_pin") == "1234")
            }
        }
        #endif
    }

    @Test func test_withBiometry_writesAnAccessControlledItem() throws {
        try withTemporaryKeychain {
            let store = try makeStore(biometry: .fixed(.available))
            let result = try store.setBiometricProtected("pin", "1234", in: "local_pin", policy: .biometryAny)
            #expect(result == .protected(.biometryAny))
            let keychain = try KeychainStore(service: store.service(for: "local_pin"))
            let attributes = try #require(try keychain.attributes(for: "pin"))
            #expect(attributes.hasAccessControl)
            #expect(attributes.accessibility == .whenUnlockedThisDeviceOnly)
            #expect(try store.contains("pin", in: "local_pin"))
            #expect(try store.keys(in: "local_pin") == ["pin"])
        }
    }

    @Test func test_biometricSet_respectsSizeLimitAndNil() throws {
        try withTemporaryKeychain {
            let store = try makeStore(sizeLimit: 4, biometry: .fixed(.available))
            #expect(#expect(throws: SecureStoreError.self) { try store.setBiometricProtected("pin", "12345") }?.code == .limitExceeded)
            let none: String? = nil
            #expect(#expect(throws: SecureStoreError.self) { try store.setBiometricProtected("pin", none) }?.code == .invalidValue)
        }
    }

    @Test func test_canceledPrompt_isUserCanceled() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try makeStore(errorInjection: faults, biometry: .fixed(.available))
            try store.setBiometricProtected("pin", "1234", in: "local_pin")
            faults.failNext(.copyMatching, with: errSecUserCanceled)
            let error = #expect(throws: SecureStoreError.self) {
                try store.get("pin", as: String.self, in: "local_pin", prompt: "Unlock your PIN")
            }
            #expect(error?.code == .userCanceled)
        }
    }
}
