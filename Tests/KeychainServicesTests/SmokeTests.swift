import Foundation
import KeychainServices
import Testing

struct SmokeTests {
    @Test func addFindUpdateDelete() throws {
        try TemporaryKeychain.with { _ in
            let secret = Data("s3cret".utf8)
            #expect(SecItemAdd(genp().with(kSecValueData, secret) as CFDictionary, nil) == errSecSuccess)
            var result: CFTypeRef?
            let status = SecItemCopyMatching(genp().with(kSecReturnData, true) as CFDictionary, &result)
            #expect(status == errSecSuccess)
            #expect(result as? Data == secret)
            #expect(SecItemUpdate(genp() as CFDictionary, [kSecValueData as String: Data("new".utf8)] as CFDictionary) == errSecSuccess)
            result = nil
            #expect(SecItemCopyMatching(genp().with(kSecReturnData, true) as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("new".utf8))
            #expect(SecItemDelete(genp() as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(genp() as CFDictionary, nil) == errSecItemNotFound)
        }
    }
}
