import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §2.5 (persistent references) and the pref parts of §3.2–3.5.
struct PersistentReferenceTests {
    private func pref(_ reference: Data) -> Query { [kSecValuePersistentRef as String: reference] }

    // §2.5: 12 bytes (class + big-endian rowid) or 20 bytes (class + UUID); starts with the class.
    @Test func formatStartsWithClass() throws {
        try TemporaryKeychain.with { _ in
            let items: [(Query, String)] = [(genp(), "genp"), (inet(), "inet"), (certItem(), "cert"), (keyItem(), "keys")]
            for (query, name) in items {
                #expect(secAdd(query) == errSecSuccess)
                let reference = try #require(persistentRef(of: query))
                #expect(reference.count == 12 || reference.count == 20, "\(name): \(reference.count) bytes")
                #expect(reference.prefix(4) == Data(name.utf8), "\(name)")
            }
        }
    }

    // §2.5 [T si-05, si-43]: a query of only kSecValuePersistentRef (no class) finds the item.
    @Test func prefOnlyQueryFindsTheItem() throws {
        try TemporaryKeychain.with { _ in
            let items = [genp("svc", "alice"), inet("host", "bob"), certItem(serial: "99"), keyItem(tag: "t99")]
            for query in items {
                #expect(secAdd(query.with(kSecValueData, Data([4, 2]))) == errSecSuccess)
            }
            // Decoys of every class.
            for query in [genp("svc", "x"), inet("host", "x"), certItem(serial: "98"), keyItem(tag: "t98")] {
                #expect(secAdd(query) == errSecSuccess)
            }
            for query in items {
                let reference = try #require(persistentRef(of: query))
                #expect(secCopy(pref(reference)).status == errSecSuccess)
                let found = try #require(asDictionary(secCopy(pref(reference).with([
                    kSecReturnAttributes as String: true, kSecReturnData as String: true,
                ])).result))
                #expect(asData(found["v_Data"]) == Data([4, 2]))
                let expected = try #require(attrsOf(query))
                #expect(asDate(found["cdat"]) == asDate(expected["cdat"]))
                for key in ["acct", "svce", "srvr", "slnr", "atag"] where expected[key] != nil {
                    #expect(String(describing: found[key] as Any) == String(describing: expected[key] as Any), "\(key)")
                }
            }
        }
    }

    // §2.5: pref + class + return/match keys is fine.
    @Test func prefWithClassReturnAndMatchKeys() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret())) == errSecSuccess)
            let reference = try #require(persistentRef(of: genp()))
            let one = secCopy(pref(reference).with([
                kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitOne,
            ]))
            #expect(one.status == errSecSuccess)
            #expect(asData(one.result) == testSecret())
            let all = secCopy(pref(reference).with([kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]))
            #expect(all.status == errSecSuccess)
            #expect(asArray(all.result)?.count == 1)
        }
    }

    // §2.5 [C]: pref + any other attribute → errSecParam (copy, update, delete).
    @Test func prefWithOtherAttributesIsParam() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let reference = try #require(persistentRef(of: genp()))
            let withAccount = pref(reference).with(kSecAttrAccount, "alice")
            #expect(secCopy(withAccount).status == errSecParam)
            #expect(secCopy(withAccount.with(kSecClass, kSecClassGenericPassword)).status == errSecParam)
            #expect(secCopy(pref(reference).with(kSecAttrSynchronizable, false)).status == errSecParam)
            #expect(secCopy(pref(reference).with(kSecAttrLabel, "x")).status == errSecParam)
            #expect(secUpdate(withAccount, [kSecAttrLabel as String: "x"]) == errSecParam)
            #expect(secDelete(withAccount) == errSecParam)
            #expect(matchCount(genp()) == 1)
        }
    }

    // §2.5 [C]: the implicit sync=0 filter is not added for pref queries.
    @Test func prefFindsSynchronizableItems() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrSynchronizable, true)) == errSecSuccess)
            let reference = try #require(persistentRef(of: genp().with(kSecAttrSynchronizable, true)))
            #expect(secCopy(pref(reference)).status == errSecSuccess)
            #expect(asNumber(asDictionary(secCopy(pref(reference).with(kSecReturnAttributes, true)).result)?["sync"]) == 1)
            #expect(secUpdate(pref(reference), [kSecAttrLabel as String: "x"]) == errSecSuccess)
            #expect(secDelete(pref(reference)) == errSecSuccess)
            #expect(matchCount(genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == 0)
        }
    }

    // §3.4 [T si-43]: updating via pref updates only that item.
    @Test func updateViaPrefTouchesOnlyThatItem() throws {
        try TemporaryKeychain.with { _ in
            for account in ["a", "b", "c"] { #expect(secAdd(genp("svc", account)) == errSecSuccess) }
            let reference = try #require(persistentRef(of: genp("svc", "b")))
            #expect(secUpdate(pref(reference), [kSecAttrLabel as String: "only-b"]) == errSecSuccess)
            let labels = allAttributes(of: item(kSecClassGenericPassword, [kSecAttrService: "svc"])).map { asString($0["labl"]) }
            #expect(labels == [nil, "only-b", nil])
            // The reference stays valid after an update, including a PK change.
            #expect(secUpdate(pref(reference), [kSecAttrAccount as String: "bee"]) == errSecSuccess)
            #expect(asString(asDictionary(secCopy(pref(reference).with(kSecReturnAttributes, true)).result)?["acct"]) == "bee")
            #expect(persistentRef(of: genp("svc", "bee")) == reference)
        }
    }

    // §3.5 [T si-43]: deleting via pref deletes only that item; afterwards the pref finds nothing.
    @Test func deleteViaPrefTouchesOnlyThatItem() throws {
        try TemporaryKeychain.with { _ in
            for account in ["a", "b", "c"] { #expect(secAdd(genp("svc", account)) == errSecSuccess) }
            let reference = try #require(persistentRef(of: genp("svc", "b")))
            #expect(secDelete(pref(reference)) == errSecSuccess)
            #expect(allAttributes(of: item(kSecClassGenericPassword, [kSecAttrService: "svc"])).compactMap { asString($0["acct"]) } == ["a", "c"])
            let after = secCopy(pref(reference).with(kSecReturnAttributes, true))
            #expect(after.status == errSecItemNotFound)
            #expect(after.result == nil)
            #expect(secDelete(pref(reference)) == errSecItemNotFound)
            #expect(secUpdate(pref(reference), [kSecAttrLabel as String: "x"]) == errSecItemNotFound)
        }
    }

    // §2.5: references are distinct per item and stable across calls.
    @Test func referencesAreDistinctAndStable() throws {
        try TemporaryKeychain.with { _ in
            for account in ["a", "b"] { #expect(secAdd(genp("svc", account)) == errSecSuccess) }
            let a = try #require(persistentRef(of: genp("svc", "a")))
            let b = try #require(persistentRef(of: genp("svc", "b")))
            #expect(a != b)
            #expect(persistentRef(of: genp("svc", "a")) == a)
            // §3.6 [T si-78]: LimitAll + r_PersistentRef → array of data.
            let all = asArray(secCopy(item(kSecClassGenericPassword, [kSecReturnPersistentRef: true, kSecMatchLimit: kSecMatchLimitAll])).result)
            #expect(all?.compactMap { asData($0) } == [a, b])
        }
    }

    // §3.2 [C]: a classic (rowid) persistent reference in SecItemAdd → errSecParam.
    @Test func classicPrefInAddIsParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "a")) == errSecSuccess)
            var classic = Data("genp".utf8)
            classic.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 1])
            #expect(secAdd(genp("svc", "b").with(kSecValuePersistentRef, classic)) == errSecParam)
            #expect(secAdd(pref(classic).with(kSecClass, kSecClassGenericPassword)) == errSecParam)
            #expect(matchCount(genp("svc", "b")) == 0)
        }
    }

    // §2.5: well-formed references to items that do not exist find nothing.
    @Test func unknownReferencesFindNothing() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            var uuidStyle = Data("genp".utf8)
            uuidStyle.append(contentsOf: (0..<16).map { _ in UInt8.random(in: 0...255) })
            #expect(secCopy(pref(uuidStyle)).status == errSecItemNotFound)
            var classic = Data("genp".utf8)
            classic.append(contentsOf: [0, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF])
            #expect(secCopy(pref(classic)).status == errSecItemNotFound)
            #expect(secDelete(pref(uuidStyle)) == errSecItemNotFound)
            #expect(matchCount(genp()) == 1)
        }
    }
}
}
