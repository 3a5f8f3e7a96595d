import Foundation
import Keysmith
import KeychainServices
import Testing

struct SecureStoreErrorTests {
    /// The seed 004 table (6.4) and the rest of the mapping from keychain statuses.
    static let mapping: [(OSStatus, SecureStoreError.Code)] = [
        (errSecInteractionNotAllowed, .interactionNotAllowed),
        (errSecNotAvailable, .interactionNotAllowed),
        (errSecAuthFailed, .authFailed),
        (errSecUserCanceled, .userCanceled),
        (errSecMissingEntitlement, .missingEntitlement),
        (errSecDuplicateItem, .unknown),
        (errSecIO, .unknown),
        (errSecParam, .invalidValue),
        (errSecDecode, .decodingFailed),
    ]

    @Test(arguments: mapping.map { $0.0 })
    func test_keychainStatus_mapsToTheSeedsCode(_ status: OSStatus) throws {
        let expected = Self.mapping.first { $0.0 == status }!.1
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try makeStore(errorInjection: faults)
            faults.failNext(.copyMatching, with: status)
            let error = try #require(#expect(throws: SecureStoreError.self) { try store.get("pin", as: String.self, in: "local_pin") })
            #expect(error.code == expected)
            #expect(error.keychainError?.status == status)
            #expect(error.key == "pin")
            #expect(error.namespace == "local_pin")
            #expect(error.recoverySuggestion?.isEmpty == false)
        }
    }

    @Test func test_codeStrings_areTheSeeds() {
        #expect(SecureStoreError.Code.itemNotFound.rawValue == "ITEM_NOT_FOUND")
        #expect(SecureStoreError.Code.authFailed.rawValue == "AUTH_FAILED")
        #expect(SecureStoreError.Code.userCanceled.rawValue == "USER_CANCELED")
        #expect(SecureStoreError.Code.interactionNotAllowed.rawValue == "INTERACTION_NOT_ALLOWED")
        #expect(SecureStoreError.Code.limitExceeded.rawValue == "LIMIT_EXCEEDED")
        #expect(SecureStoreError.Code.unknown.rawValue == "UNKNOWN")
    }

    @Test(arguments: KeychainError.Code.allCases)
    func test_everyKeychainCode_hasAStoreCode(_ code: KeychainError.Code) {
        let mapped = SecureStoreError.Code(code)
        if code == .itemNotFound { #expect(mapped == .itemNotFound) }
        if code == .unexpected { #expect(mapped == .unknown) }
    }

    @Test func test_itemNotFound_isANormalBranch_notAFailure() throws {
        try withTemporaryKeychain {
            let recorder = EventRecorder()
            let store = try makeStore(logger: recorder.logger)
            #expect(try store.get("missing", as: String.self, in: "auth") == nil)
            #expect(recorder.events.allSatisfy { !$0.outcome.isFailure })
            #expect(recorder.events.last?.outcome == .notFound)
        }
    }

    @Test func test_description_saysWhatWhereAndWhatToDo() throws {
        try withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try makeStore(errorInjection: faults)
            faults.failNext(with: errSecInteractionNotAllowed)
            let error = try #require(#expect(throws: SecureStoreError.self) { try store.set("token", "SECRET-VALUE", in: "auth") })
            #expect(error.description.contains("INTERACTION_NOT_ALLOWED"))
            #expect(error.description.contains("'token'"))
            #expect(error.description.contains("'auth'"))
            #expect(error.description.contains("-25308"))
            #expect(!error.description.contains("SECRET"))
            #expect(error.localizedDescription.contains("INTERACTION_NOT_ALLOWED"))
        }
    }

    @Test func test_transientStoreErrors_areRetried() async throws {
        try await withTemporaryKeychain {
            let faults = ErrorInjection()
            let store = try makeStore(errorInjection: faults)
            try store.set("token", "value", in: "auth")
            faults.failNext(.copyMatching, with: errSecInteractionNotAllowed, count: 2)
            let policy = ProtectedDataAvailability.RetryPolicy(
                timeout: .seconds(300), initialDelay: .milliseconds(5), maximumDelay: .milliseconds(10))
            let token = try await ProtectedDataAvailability.retrying(policy: policy) {
                try store.get("token", as: String.self, in: "auth")
            }
            #expect(token == "value")
        }
    }
}
