import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §3.3 (SecItemCopyMatching).
struct CopyMatchingTests {
    private func addThree(service: String = "svc") {
        for account in ["carol", "alice", "bob"] {
            #expect(secAdd(genp(service, account).with(kSecValueData, testSecret(account))) == errSecSuccess)
        }
    }

    private func svc(_ service: String = "svc") -> Query { item(kSecClassGenericPassword, [kSecAttrService: service]) }

    // §3.3 [T si-00]: nothing found → errSecItemNotFound, result untouched (nil).
    @Test func emptyKeychainFindsNothing() {
        TemporaryKeychain.with { _ in
            let (status, result) = secCopy(genp().with(kSecReturnData, true))
            #expect(status == errSecItemNotFound)
            #expect(result == nil)
            let all = secCopy(genp().with([kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]))
            #expect(all.status == errSecItemNotFound)
            #expect(all.result == nil)
        }
    }

    // §3.3 [T si-43]: no match in a non-empty keychain → errSecItemNotFound; result stays nil.
    @Test func noMatchLeavesResultNil() {
        TemporaryKeychain.with { _ in
            addThree()
            for returnKey in [kSecReturnData, kSecReturnAttributes, kSecReturnPersistentRef] {
                let (status, result) = secCopy(genp("svc", "dave").with(returnKey, true))
                #expect(status == errSecItemNotFound)
                #expect(result == nil)
            }
        }
    }

    // §3.3: default limit is 1 → a single object, not an array.
    @Test func defaultLimitIsOne() throws {
        try TemporaryKeychain.with { _ in
            addThree()
            let (status, result) = secCopy(svc().with(kSecReturnAttributes, true))
            #expect(status == errSecSuccess)
            #expect(asArray(result) == nil)
            let attributes = try #require(asDictionary(result))
            #expect(asString(attributes["acct"]) == "carol")
            let data = secCopy(svc().with(kSecReturnData, true))
            #expect(asData(data.result) == testSecret("carol"))
        }
    }

    // §3.3: kSecMatchLimitOne and numeric 1 → single object.
    @Test func limitOneGivesSingleObject() {
        TemporaryKeychain.with { _ in
            addThree()
            for limit: Any in [kSecMatchLimitOne, 1, NSNumber(value: 1)] {
                let (status, result) = secCopy(svc().with([kSecReturnAttributes as String: true, kSecMatchLimit as String: limit]))
                #expect(status == errSecSuccess)
                #expect(asArray(result) == nil)
                #expect(asString(asDictionary(result)?["acct"]) == "carol")
            }
        }
    }

    // §3.3 [T si-78, si-80]: kSecMatchLimitAll → array, even for a single hit.
    @Test func limitAllAlwaysGivesArray() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret())) == errSecSuccess)
            for returnKey in [kSecReturnData, kSecReturnAttributes, kSecReturnPersistentRef] {
                let (status, result) = secCopy(genp().with([returnKey as String: true, kSecMatchLimit as String: kSecMatchLimitAll]))
                #expect(status == errSecSuccess)
                let array = try #require(asArray(result), "\(returnKey) with LimitAll must return an array")
                #expect(array.count == 1)
            }
        }
    }

    // §3.3 [T si-68]: numeric limits ≠ 1 → array with at most that many elements.
    @Test func numericLimits() throws {
        try TemporaryKeychain.with { _ in
            addThree()
            let two = secCopy(svc().with([kSecReturnAttributes as String: true, kSecMatchLimit as String: 2]))
            #expect(two.status == errSecSuccess)
            let twoArray = try #require(asArray(two.result))
            #expect(twoArray.count == 2)
            #expect(twoArray.compactMap { asString(asDictionary($0)?["acct"]) } == ["carol", "alice"])

            let many = secCopy(svc().with([kSecReturnAttributes as String: true, kSecMatchLimit as String: 0x7fff]))
            #expect(try #require(asArray(many.result)).count == 3)

            let single = secCopy(genp("svc", "bob").with([kSecReturnData as String: true, kSecMatchLimit as String: 5]))
            let singleArray = try #require(asArray(single.result))
            #expect(singleArray.count == 1)
            #expect(asData(singleArray.first) == testSecret("bob"))
        }
    }

    // §3.3: any other limit value → errSecParam.
    @Test func invalidLimitIsParam() {
        TemporaryKeychain.with { _ in
            addThree()
            for limit: Any in ["m_LimitSome", "all", "2", "1", Data([1]), kCFBooleanTrue as Any, true] {
                #expect(secCopy(svc().with([kSecReturnAttributes as String: true, kSecMatchLimit as String: limit])).status == errSecParam)
            }
        }
    }

    // §3.3 [H]: no return key → status 0, result nil (LimitOne).
    @Test func noReturnKeyGivesNilResult() {
        TemporaryKeychain.with { _ in
            addThree()
            let (status, result) = secCopy(svc())
            #expect(status == errSecSuccess)
            #expect(result == nil)
            #expect(SecItemCopyMatching(svc() as CFDictionary, nil) == errSecSuccess)
        }
    }

    // §3.3 [C]: result == NULL with return keys → status 0.
    @Test func nilResultPointerWithReturnKeys() {
        TemporaryKeychain.with { _ in
            addThree()
            #expect(SecItemCopyMatching(svc().with(kSecReturnData, true) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemCopyMatching(svc().with([kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemCopyMatching(genp("none").with(kSecReturnData, true) as CFDictionary, nil) == errSecItemNotFound)
        }
    }

    // §3.3 [C]: rowid order = insertion order; LimitOne returns the first row.
    @Test func resultsComeInInsertionOrder() {
        TemporaryKeychain.with { _ in
            let accounts = ["mike", "zulu", "alpha", "kilo", "bravo"]
            for account in accounts {
                #expect(secAdd(genp("svc", account)) == errSecSuccess)
            }
            #expect(allAttributes(of: svc()).compactMap { asString($0["acct"]) } == accounts)
            #expect(asString(attrsOf(svc())?["acct"]) == "mike")
            // An update does not change the order.
            #expect(secUpdate(genp("svc", "mike"), [kSecAttrLabel as String: "changed"]) == errSecSuccess)
            #expect(allAttributes(of: svc()).compactMap { asString($0["acct"]) } == accounts)
        }
    }

    // §3.3 [H; T si-72, si-34]: implicit sync = 0; true / false / Any filters.
    @Test func synchronizableFilter() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "local")) == errSecSuccess)
            #expect(secAdd(genp("svc", "synced").with(kSecAttrSynchronizable, true)) == errSecSuccess)
            #expect(secAdd(genp("svc", "both")) == errSecSuccess)
            #expect(secAdd(genp("svc", "both").with(kSecAttrSynchronizable, kCFBooleanTrue as Any)) == errSecSuccess)

            let implicit = allAttributes(of: svc()).compactMap { asString($0["acct"]) }
            #expect(implicit == ["local", "both"])
            let explicitFalse = allAttributes(of: svc().with(kSecAttrSynchronizable, false)).compactMap { asString($0["acct"]) }
            #expect(explicitFalse == ["local", "both"])
            let synced = allAttributes(of: svc().with(kSecAttrSynchronizable, true))
            #expect(synced.compactMap { asString($0["acct"]) } == ["synced", "both"])
            #expect(synced.allSatisfy { asNumber($0["sync"]) == 1 })
            #expect(matchCount(svc().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == 4)
            #expect(secCopy(genp("svc", "synced")).status == errSecItemNotFound)
            #expect(secCopy(genp("svc", "synced").with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)).status == errSecSuccess)
            // sync is a number attribute: 1/0 work like true/false.
            #expect(matchCount(svc().with(kSecAttrSynchronizable, 1)) == 2)
            #expect(matchCount(svc().with(kSecAttrSynchronizable, 0)) == 2)
        }
    }

    // §3.3 [C]: kSecValueData in a query is not a filter.
    @Test func valueDataInQueryIsIgnored() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret("right"))) == errSecSuccess)
            let (status, result) = secCopy(genp().with([kSecValueData as String: testSecret("wrong"), kSecReturnData as String: true]))
            #expect(status == errSecSuccess)
            #expect(asData(result) == testSecret("right"))
        }
    }

    // §3.3: matching on non-key attributes works as a filter.
    @Test func matchingOnNonKeyAttributes() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "a").with(kSecAttrLabel, "red")) == errSecSuccess)
            #expect(secAdd(genp("svc", "b").with(kSecAttrLabel, "blue")) == errSecSuccess)
            #expect(secAdd(genp("svc", "c").with(kSecAttrLabel, "red")) == errSecSuccess)
            #expect(allAttributes(of: svc().with(kSecAttrLabel, "red")).compactMap { asString($0["acct"]) } == ["a", "c"])
            #expect(matchCount(item(kSecClassGenericPassword, [kSecAttrLabel: "blue"])) == 1)
            #expect(matchCount(item(kSecClassGenericPassword, [kSecAttrLabel: "green"])) == 0)
            #expect(matchCount(svc().with(kSecAttrAccessible, kSecAttrAccessibleWhenUnlocked)) == 3)
            #expect(matchCount(svc().with(kSecAttrAccessible, kSecAttrAccessibleAfterFirstUnlock)) == 0)
        }
    }

    // §3.3 [T testSecItemCopyMatchingHostorSubdomain]: host or subdomain.
    @Test func hostOrSubdomainOfHost() throws {
        try TemporaryKeychain.with { _ in
            for server in ["example.com", "www.example.com", "notexample.com", "example.org", "a.b.example.com", "example.com.evil.net", "*.example.com"] {
                #expect(secAdd(inet(server, "u")) == errSecSuccess)
            }
            let (status, result) = secCopy(item(kSecClassInternetPassword, [
                kSecMatchHostOrSubdomainOfHost: "example.com", kSecReturnAttributes: true, kSecMatchLimit: kSecMatchLimitAll,
            ]))
            #expect(status == errSecSuccess)
            let servers = try #require(asArray(result)).compactMap { asString(asDictionary($0)?["srvr"]) }
            #expect(Set(servers) == ["example.com", "www.example.com", "a.b.example.com", "*.example.com"])
            #expect(servers.count == 4)
            #expect(secCopy(item(kSecClassInternetPassword, [kSecMatchHostOrSubdomainOfHost: "nothing.test"])).status == errSecItemNotFound)
            // Combined with other attributes, both must hold.
            #expect(secCopy(item(kSecClassInternetPassword, [kSecMatchHostOrSubdomainOfHost: "example.com", kSecAttrAccount: "v"])).status == errSecItemNotFound)
        }
    }

    // §3.3 [C]: HostOrSubdomainOfHost on non-inet → errSecUnimplemented.
    @Test func hostOrSubdomainOnOtherClassesIsUnimplemented() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            for itemClass in [kSecClassGenericPassword, kSecClassCertificate, kSecClassKey] {
                #expect(secCopy(item(itemClass, [kSecMatchHostOrSubdomainOfHost: "example.com"])).status == errSecUnimplemented, "\(itemClass)")
            }
        }
    }

    // §3.3 [C]: kSecMatchIssuers on a non-cert/identity class → errSecUnimplemented.
    @Test func issuersOnPasswordsIsUnimplemented() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secCopy(genp().with(kSecMatchIssuers, [Data("CN=CA".utf8)])).status == errSecUnimplemented)
            #expect(secCopy(inet().with(kSecMatchIssuers, [Data("CN=CA".utf8)])).status == errSecUnimplemented)
            #expect(secCopy(keyItem().with(kSecMatchIssuers, [Data("CN=CA".utf8)])).status == errSecUnimplemented)
        }
    }

    // §3.3 / §2.1: queries are per class.
    @Test func queriesOnlySeeTheirClass() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "alice")) == errSecSuccess)
            #expect(secCopy(item(kSecClassInternetPassword, [kSecAttrAccount: "alice"])).status == errSecItemNotFound)
            #expect(matchCount(item(kSecClassInternetPassword)) == 0)
            #expect(matchCount(item(kSecClassGenericPassword)) == 1)
        }
    }

    // §3.3: a class-only query finds every item of the class in the caller's groups.
    @Test func classOnlyQueryFindsEverything() {
        TemporaryKeychain.with { _ in
            addThree(service: "a")
            addThree(service: "b")
            #expect(secAdd(genp("c", "x").with(kSecAttrAccessGroup, "com.example.shared")) == errSecSuccess)
            #expect(matchCount(item(kSecClassGenericPassword)) == 7)
        }
    }

    // §3.3 [C]: rowid order: a deleted and re-added item goes to the end.
    @Test func reAddedItemComesLast() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "a")) == errSecSuccess)
            #expect(secAdd(genp("svc", "b")) == errSecSuccess)
            #expect(secDelete(genp("svc", "a")) == errSecSuccess)
            #expect(secAdd(genp("svc", "a")) == errSecSuccess)
            #expect(allAttributes(of: svc()).compactMap { asString($0["acct"]) } == ["b", "a"])
            #expect(asString(attrsOf(svc())?["acct"]) == "b")
        }
    }

    // §3.3 [T si-72, secd-82]: SyncAny + LimitAll + r_PersistentRef gives both copies; update/delete follow the filter.
    @Test func synchronizableAnyAcrossOperations() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret("local"))) == errSecSuccess)
            #expect(secAdd(genp().with([kSecAttrSynchronizable as String: true, kSecValueData as String: testSecret("sync")])) == errSecSuccess)
            let any = genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)
            let refs = try #require(asArray(secCopy(any.with([kSecReturnPersistentRef as String: true, kSecMatchLimit as String: kSecMatchLimitAll])).result))
            #expect(refs.compactMap { asData($0) }.count == 2)
            #expect(secret(of: genp().with(kSecAttrSynchronizable, true)) == testSecret("sync"))
            #expect(secret(of: genp()) == testSecret("local"))
            #expect(secUpdate(any, [kSecAttrLabel as String: "both"]) == errSecSuccess)
            #expect(allAttributes(of: any).map { asString($0["labl"]) } == ["both", "both"])
            #expect(secDelete(genp().with(kSecAttrSynchronizable, true)) == errSecSuccess)
            #expect(matchCount(any) == 1)
            #expect(secret(of: genp()) == testSecret("local"))
        }
    }
}
}
