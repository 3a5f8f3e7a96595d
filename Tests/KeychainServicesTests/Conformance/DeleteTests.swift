import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §3.5 (SecItemDelete).
struct DeleteTests {
    private func svc(_ service: String = "svc") -> Query { item(kSecClassGenericPassword, [kSecAttrService: service]) }

    // §3.5 [T si-10, si-12]: deletes all matches; then nothing is found.
    @Test func deletesEveryMatch() {
        TemporaryKeychain.with { _ in
            for account in ["a", "b", "c"] { #expect(secAdd(genp("svc", account)) == errSecSuccess) }
            #expect(secAdd(genp("keep", "d")) == errSecSuccess)
            #expect(secDelete(svc()) == errSecSuccess)
            #expect(matchCount(svc()) == 0)
            #expect(secCopy(svc()).status == errSecItemNotFound)
            #expect(matchCount(genp("keep", "d")) == 1)
        }
    }

    // §3.5: no match → errSecItemNotFound (also when repeated).
    @Test func noMatchIsItemNotFound() {
        TemporaryKeychain.with { _ in
            #expect(secDelete(genp()) == errSecItemNotFound)
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secDelete(genp()) == errSecSuccess)
            #expect(secDelete(genp()) == errSecItemNotFound)
        }
    }

    // §3.5 [C]: m_* keys → errSecParam on iOS; nothing deleted. kSecMatchLimitAll is the
    // exception (macOS's meaning, see the next test).
    @Test func matchKeysAreParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secDelete(genp().with(kSecMatchLimit, kSecMatchLimitOne)) == errSecParam)
            #expect(secDelete(genp().with(kSecMatchLimit, 5)) == errSecParam)
            #expect(secDelete(genp().with(kSecMatchLimit, 1)) == errSecParam)
            #expect(secDelete(genp().with(kSecMatchLimit, "m_LimitSome")) == errSecParam)
            #expect(secDelete(genp().with(kSecMatchCaseInsensitive, true)) == errSecParam)
            #expect(secDelete(genp().with(["m_Whatever": 1])) == errSecParam)
            #expect(matchCount(genp()) == 1)
        }
    }

    // macOS accepts kSecMatchLimitAll in SecItemDelete and deletes every match; portable
    // wrappers send it from their macOS branch (`removeAll()`), which Linux compiles.
    @Test func matchLimitAllDeletesEveryMatchAsOnMacOS() {
        TemporaryKeychain.with { _ in
            for account in ["a", "b", "c"] { #expect(secAdd(genp("svc", account)) == errSecSuccess) }
            #expect(secAdd(genp("keep", "d")) == errSecSuccess)
            let removeAll = item(kSecClassGenericPassword, [kSecAttrService: "svc"]).with(kSecMatchLimit, kSecMatchLimitAll)
            #expect(secDelete(removeAll) == errSecSuccess)
            #expect(matchCount(item(kSecClassGenericPassword, [kSecAttrService: "svc"])) == 0)
            #expect(matchCount(genp("keep", "d")) == 1)
            // Same answers as without the key: nothing left is errSecItemNotFound, and the
            // value may be the constant's string spelled out (String(kSecMatchLimitAll)).
            #expect(secDelete(removeAll) == errSecItemNotFound)
            #expect(secDelete(genp("keep", "d").with([kSecMatchLimit as String: String(kSecMatchLimitAll)])) == errSecSuccess)
            // Together with another match key it is still errSecParam (iOS's rule for those).
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secDelete(genp().with([kSecMatchLimit as String: kSecMatchLimitAll, kSecMatchCaseInsensitive as String: true])) == errSecParam)
            #expect(matchCount(genp()) == 1)
        }
    }

    // §3.5 [T si-43, testGenpReturnRef]: return keys are ignored.
    @Test func returnKeysAreIgnored() {
        TemporaryKeychain.with { _ in
            for (index, key) in [kSecReturnAttributes, kSecReturnRef, kSecReturnData, kSecReturnPersistentRef].enumerated() {
                #expect(secAdd(genp("svc", "a\(index)")) == errSecSuccess)
                #expect(secDelete(genp("svc", "a\(index)").with(key, true)) == errSecSuccess, "\(key)")
                #expect(matchCount(genp("svc", "a\(index)")) == 0)
            }
        }
    }

    // §3.5 [C]: kSecValueData is ignored (not a filter).
    @Test func valueDataIsIgnored() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret("real"))) == errSecSuccess)
            #expect(secDelete(genp().with(kSecValueData, testSecret("other"))) == errSecSuccess)
            #expect(matchCount(genp()) == 0)
        }
    }

    // §3.5 [T si-05]: unknown attribute → errSecNoSuchAttr.
    @Test func unknownAttributeIsNoSuchAttr() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(certItem()) == errSecSuccess)
            #expect(secDelete(certItem().with(["bogu": "x"])) == errSecNoSuchAttr)
            #expect(secDelete(certItem().with(kSecAttrApplicationTag, Data([1]))) == errSecNoSuchAttr)
            #expect(matchCount(item(kSecClassCertificate)) == 1)
        }
    }

    // §3.5 / §3.3: the implicit sync=0 filter applies; SyncAny deletes both.
    @Test func synchronizableFilterApplies() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrSynchronizable, true)) == errSecSuccess)
            #expect(secDelete(genp()) == errSecSuccess)
            #expect(matchCount(genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == 1)
            #expect(secDelete(genp()) == errSecItemNotFound)
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secDelete(genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == errSecSuccess)
            #expect(matchCount(genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == 0)
        }
    }

    // §3.5: delete is per class.
    @Test func deleteIsPerClass() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(item(kSecClassGenericPassword, [kSecAttrAccount: "alice"])) == errSecSuccess)
            #expect(secAdd(item(kSecClassInternetPassword, [kSecAttrAccount: "alice"])) == errSecSuccess)
            #expect(secDelete(item(kSecClassInternetPassword, [kSecAttrAccount: "alice"])) == errSecSuccess)
            #expect(matchCount(item(kSecClassGenericPassword, [kSecAttrAccount: "alice"])) == 1)
            #expect(secDelete(item(kSecClassGenericPassword)) == errSecSuccess)
            #expect(matchCount(item(kSecClassGenericPassword)) == 0)
        }
    }

    // §3.5: delete for every class; a deleted item can be added again.
    @Test func deleteEveryClassAndReAdd() {
        TemporaryKeychain.with { _ in
            for query in [genp(), inet(), certItem(), keyItem()] {
                #expect(secAdd(query) == errSecSuccess)
                #expect(secDelete(query) == errSecSuccess)
                #expect(secCopy(query).status == errSecItemNotFound)
                #expect(secAdd(query) == errSecSuccess)
            }
        }
    }
}
}
