// Regressions for defects an independent review of the engine found; each test failed
// before its fix.
import CSQLite
import Foundation
import KeychainServices
import Testing

struct ReviewRegressionTests {
    /// A returned secret of 14 bytes or fewer used to point into freed stack memory: fed
    /// back into SecItemAdd it stored garbage.
    @Test func shortSecretReturnedByTheKeychainCanBeStoredAgain() {
        TemporaryKeychain.with { _ in
            #expect(SecItemAdd(genp("s", "a").with(kSecValueData, Data("hunter2".utf8)) as CFDictionary, nil) == errSecSuccess)
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(genp("s", "a").with(kSecReturnData, true) as CFDictionary, &result) == errSecSuccess)
            guard let returned = result as? NSData else {
                Issue.record("no data returned")
                return
            }
            #expect(returned.isEqual(to: Data("hunter2".utf8)))
            #expect(SecItemAdd(genp("s", "b").with([kSecValueData as String: returned]) as CFDictionary, nil) == errSecSuccess)
            var copy: CFTypeRef?
            #expect(SecItemCopyMatching(genp("s", "b").with(kSecReturnData, true) as CFDictionary, &copy) == errSecSuccess)
            let matches = (copy as? Data) == Data("hunter2".utf8)
            #expect(matches, "the re-stored secret equals the original")
        }
    }

    /// Access groups and attributes are compared byte for byte, never by Swift's
    /// canonical equivalence (é precomposed vs e + combining accent).
    @Test func canonicallyEquivalentGroupNamesAreDifferentGroups() {
        let composed = "team.caf\u{E9}"
        let decomposed = "team.cafe\u{301}"
        let owner = TemporaryKeychain(accessGroups: [decomposed])
        defer { owner.remove() }
        owner.run {
            #expect(SecItemAdd(genp().with(kSecValueData, Data("theirs".utf8)) as CFDictionary, nil) == errSecSuccess)
        }
        owner.withGroups([composed]).run {
            #expect(SecItemCopyMatching(genp().with(kSecReturnData, true) as CFDictionary, nil) == errSecItemNotFound)
            let explicit = genp().with(kSecAttrAccessGroup, decomposed)
            #expect(SecItemCopyMatching(explicit as CFDictionary, nil) == errSecMissingEntitlement)
            #expect(SecItemDelete(explicit as CFDictionary) == errSecMissingEntitlement)
            #expect(SecItemUpdate(explicit as CFDictionary, [kSecAttrLabel as String: "x"] as CFDictionary) == errSecMissingEntitlement)
        }
        owner.run {
            #expect(SecItemCopyMatching(genp() as CFDictionary, nil) == errSecSuccess, "still there")
            #expect(SecItemUpdate(genp() as CFDictionary, [kSecAttrLabel as String: "caf\u{E9}"] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(genp().with(kSecAttrLabel, "cafe\u{301}") as CFDictionary, nil) == errSecItemNotFound)
            #expect(SecItemCopyMatching(genp().with(kSecAttrLabel, "caf\u{E9}") as CFDictionary, nil) == errSecSuccess)
        }
    }

    /// com.apple.token is read-only: a process with no other group cannot add at all.
    @Test func tokenOnlyProcessCannotAddIntoTheTokenGroup() {
        TemporaryKeychain.with(accessGroups: ["com.apple.token"]) { _ in
            #expect(SecItemAdd(genp().with(kSecValueData, Data("x".utf8)) as CFDictionary, nil) == errSecMissingEntitlement)
        }
    }

    /// kSecValueRef used to be ignored in queries, widening a delete to the whole class.
    @Test func valueRefIsRefusedInEveryOperation() {
        TemporaryKeychain.with { _ in
            let key: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: "k1",
                                      kSecValueData as String: Data([1, 2, 3])]
            #expect(SecItemAdd(key as CFDictionary, nil) == errSecSuccess)
            let byRef: [String: Any] = [kSecClass as String: kSecClassKey, kSecValueRef as String: NSObject()]
            #expect(SecItemDelete(byRef as CFDictionary) == errSecParam)
            #expect(SecItemCopyMatching(byRef as CFDictionary, nil) == errSecParam)
            #expect(SecItemUpdate(byRef as CFDictionary, [kSecAttrLabel as String: "x"] as CFDictionary) == errSecParam)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey] as CFDictionary, nil) == errSecSuccess, "nothing was deleted")
        }
    }

    /// Bytes moved between the reference and primary-key columns used to still decrypt
    /// (the associated data had no field lengths) and let a duplicate in.
    @Test func bytesMovedBetweenColumnsFailAuthentication() {
        TemporaryKeychain.with { keychain in
            #expect(SecItemAdd(genp("s", "a").with(kSecValueData, Data("secret".utf8)) as CFDictionary, nil) == errSecSuccess)
            RawKeychainFile(keychain).execute(
                "UPDATE items SET ref = ref || substr(pk, 1, 1), pk = substr(pk, 2)")
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(genp("s", "a").with(kSecReturnData, true) as CFDictionary, &result) == errSecDecode)
            #expect(result == nil)
        }
    }

    /// Numbers that do not fit in 64 bits are refused, never wrapped.
    @Test func outOfRangeNumbersAreRefused() {
        TemporaryKeychain.with { _ in
            let inet: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "h"]
            #expect(SecItemAdd(inet.with(kSecAttrPort, UInt64.max) as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd(inet.with(kSecAttrPort, 1e300) as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd(inet.with(kSecAttrPort, Double.infinity) as CFDictionary, nil) == errSecParam)
            #expect(SecItemCopyMatching(inet.with(kSecMatchLimit, 1e300) as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd(inet.with(kSecAttrPort, 8443) as CFDictionary, nil) == errSecSuccess)
        }
    }

    /// kSecAttrAccessibleUntilReboot ("f") is a valid protection class; keys are
    /// classified by their UTF-16 length, as CFString counts.
    @Test func untilRebootIsValidAndKeysCountInUTF16() {
        TemporaryKeychain.with { _ in
            #expect(SecItemAdd(genp().with([kSecAttrAccessible as String: "f", kSecValueData as String: Data()]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemCopyMatching(genp().with("ac\u{E7}t", "x") as CFDictionary, nil) == errSecNoSuchAttr)
        }
    }
}

extension Dictionary where Key == String, Value == Any {
    func with(_ key: String, _ value: Any) -> [String: Any] { with([key: value]) }
}
