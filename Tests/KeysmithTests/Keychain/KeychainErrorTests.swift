import Foundation
import Keysmith
import KeychainServices
import Testing

struct KeychainErrorTests {
    /// Every status the seeds' tables list (001 3.5, 002 1.4, 004 6.4), plus the rest of
    /// the mapping, with the code an app handles it as.
    static let mapping: [(OSStatus, KeychainError.Code)] = [
        (errSecItemNotFound, .itemNotFound),
        (errSecDuplicateItem, .duplicateItem),
        (errSecParam, .invalidParameters),
        (errSecMissingEntitlement, .missingEntitlement),
        (errSecAuthFailed, .authenticationFailed),
        (errSecInteractionNotAllowed, .interactionNotAllowed),
        (errSecNotAvailable, .keychainUnavailable),
        (errSecUserCanceled, .userCanceled),
        (errSecInteractionRequired, .interactionNotAllowed),
        (errSecInDarkWake, .interactionNotAllowed),
        (-34019, .interactionNotAllowed),
        (errSecDataNotAvailable, .keychainUnavailable),
        (-34020, .missingEntitlement),
        (errSecNoSuchAttr, .invalidParameters),
        (errSecNoSuchClass, .invalidParameters),
        (errSecBadReq, .invalidParameters),
        (errSecUnimplemented, .invalidParameters),
        (errSecReadOnlyAttr, .invalidParameters),
        (errSecDecode, .dataCorrupted),
        (errSecIO, .unexpected),
        (errSecDiskFull, .unexpected),
        (errSecReadOnly, .unexpected),
        (-99_999, .unexpected),
    ]

    @Test(arguments: mapping.map { $0.0 })
    func test_initStatus_mapsEachStatusAndKeepsIt(_ status: OSStatus) {
        let expected = Self.mapping.first { $0.0 == status }!.1
        let error = KeychainError(status: status)
        #expect(error.code == expected)
        #expect(error.status == status)
        #expect(error.appleMessage == (SecCopyErrorMessageString(status, nil).map { $0 as String } ?? ""))
        #expect(error.recoverySuggestion?.isEmpty == false)
        #expect(error.description.contains("\(status)"))
    }

    @Test func test_initStatus_missingEntitlement_explainsEntitlementAndSigning() {
        let error = KeychainError(status: errSecMissingEntitlement)
        let fix = error.recoverySuggestion ?? ""
        #expect(fix.contains("Keychain Sharing"))
        #expect(fix.contains("signed"))
        #expect(error.appleMessage == "A required entitlement isn't present.")
    }

    @Test func test_initStatus_interactionNotAllowed_explainsBackgroundAccessibility() {
        let error = KeychainError(status: errSecInteractionNotAllowed)
        let fix = error.recoverySuggestion ?? ""
        #expect(fix.contains("locked"))
        #expect(fix.contains("afterFirstUnlockThisDeviceOnly"))
        #expect(error.isTransient)
    }

    @Test func test_initStatus_notAvailable_suggestsAfterFirstUnlockOrRetry() {
        let error = KeychainError(status: errSecNotAvailable)
        #expect(error.recoverySuggestion?.contains("afterFirstUnlockThisDeviceOnly") == true)
        #expect(error.isTransient)
    }

    @Test func test_initStatus_duplicate_suggestsUpdate() {
        #expect(KeychainError(status: errSecDuplicateItem).recoverySuggestion?.contains("SecItemUpdate") == true)
    }

    @Test func test_initStatus_userCanceled_saysNotToLoop() {
        let error = KeychainError(status: errSecUserCanceled)
        #expect(error.recoverySuggestion?.contains("loop") == true)
        #expect(!error.isTransient)
    }

    @Test func test_unknownStatus_keepsRawValueAndAppleText() {
        let error = KeychainError(status: -12_345)
        #expect(error.code == .unexpected)
        #expect(error.status == -12_345)
        #expect(error.appleMessage.contains("-12345"))
    }

    @Test func test_localizedError_conformance() {
        let error = KeychainError(status: errSecAuthFailed, operation: .copyMatching, service: "com.example.s", key: "pin")
        let localized: any LocalizedError = error
        #expect(localized.errorDescription?.contains("SecItemCopyMatching") == true)
        #expect(localized.errorDescription?.contains("'pin'") == true)
        #expect(localized.failureReason == error.appleMessage)
        #expect(localized.recoverySuggestion != nil)
    }

    @Test func test_typedThrows_letCallersSwitchOnTheCode() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            faults.failNext(with: errSecUserCanceled)
            var outcome = "none"
            do {
                _ = try store.data(for: "pin")
            } catch let error as KeychainError where error.code == .userCanceled {
                outcome = "canceled"
            } catch {
                outcome = "other"
            }
            #expect(outcome == "canceled")
        }
    }

    @Test func test_errorsFromTheStore_nameKeyAndService_butNeverTheValue() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let service = uniqueService()
            let store = try KeychainStore(service: service, errorInjection: faults)
            faults.failNext(.update, with: errSecInteractionNotAllowed)
            let error = try #require(#expect(throws: KeychainError.self) { try store.set("TOPSECRET-42", for: "token") })
            #expect(error.operation == .update)
            #expect(error.key == "token")
            #expect(error.service == service)
            for text in [error.description, error.localizedDescription, String(reflecting: error), "\(error)"] {
                #expect(!text.contains("TOPSECRET"))
            }
        }
    }

    @Test func test_realEngineFailure_carriesAppleMessage() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService(), accessGroup: "com.example.nope")
            let error = try #require(#expect(throws: KeychainError.self) { try store.data(for: "token") })
            #expect(error.status == errSecMissingEntitlement)
            #expect(error.appleMessage == "A required entitlement isn't present.")
        }
    }
}
