// Each KeychainError's "Fix:" fits its cause: a local mistake (an empty key, an empty
// service, a value that cannot be encoded, contradicting options) gets the fix for that
// mistake, not the generic advice for a malformed keychain request.
import Foundation
import Keysmith
import KeychainServices
import Testing

private struct Unencodable: Encodable {
    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "never"))
    }
}

struct KeychainErrorFixTests {
    private func fix(_ error: KeychainError?) -> String {
        error?.recoverySuggestion ?? ""
    }

    @Test func emptyKey_getsTheFixForAKey() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            let error = #expect(throws: KeychainError.self) { try store.set("x", for: "") }
            #expect(!fix(error).contains("synchronizable"), "\(fix(error))")
            #expect(!fix(error).contains("ThisDeviceOnly"), "\(fix(error))")
            #expect(fix(error).contains("non-empty key"), "\(fix(error))")
            #expect(error?.description.contains("Fix: \(fix(error))") == true)
        }
    }

    @Test func emptyService_getsTheFixForAService() {
        let error = #expect(throws: KeychainError.self) { try KeychainStore(service: " ") }
        #expect(!fix(error).contains("synchronizable"), "\(fix(error))")
        #expect(fix(error).contains("service"), "\(fix(error))")
    }

    @Test func unencodableValue_getsTheFixForEncoding() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            let error = #expect(throws: KeychainError.self) { try store.setValue(Unencodable(), for: "k") }
            #expect(!fix(error).contains("synchronizable"), "\(fix(error))")
            #expect(fix(error).contains("Encodable"), "\(fix(error))")
        }
    }

    @Test func contradictingOptions_getTheFixForThoseOptions() {
        let error = #expect(throws: KeychainError.self) {
            try KeychainStore(service: "com.example.sync", synchronizable: true, accessPolicy: .userPresence)
        }
        #expect(fix(error).contains("access policy"), "\(fix(error))")
        #expect(!fix(error).contains("ThisDeviceOnly"), "\(fix(error))")
    }

    @Test func keychainStatuses_keepTheirOwnFix() {
        // A status from the keychain itself still gets the advice for that status.
        #expect(KeychainError(status: errSecMissingEntitlement).recoverySuggestion?.contains("access group") == true)
        #expect(KeychainError(status: errSecParam).recoverySuggestion?.isEmpty == false)
    }
}
