import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §3.4 (SecItemUpdate).
struct UpdateTests {
    private func svc(_ service: String = "svc") -> Query { item(kSecClassGenericPassword, [kSecAttrService: service]) }

    private func accounts(_ query: Query) -> [String] {
        allAttributes(of: query).compactMap { asString($0["acct"]) }
    }

    // §3.4: applies to all matching items.
    @Test func updatesEveryMatch() {
        TemporaryKeychain.with { _ in
            for account in ["a", "b", "c"] { #expect(secAdd(genp("svc", account)) == errSecSuccess) }
            #expect(secAdd(genp("other", "d")) == errSecSuccess)
            #expect(secUpdate(svc(), [kSecAttrLabel as String: "updated"]) == errSecSuccess)
            let labels = allAttributes(of: svc()).map { asString($0["labl"]) }
            #expect(labels == ["updated", "updated", "updated"])
            #expect(attrsOf(genp("other", "d"))?["labl"] == nil)
        }
    }

    // §3.4 [T si-10, testMoveGenericPassword]: no match → errSecItemNotFound.
    @Test func noMatchIsItemNotFound() {
        TemporaryKeychain.with { _ in
            #expect(secUpdate(genp(), [kSecAttrLabel as String: "x"]) == errSecItemNotFound)
            #expect(secAdd(genp("svc", "a")) == errSecSuccess)
            #expect(secUpdate(genp("svc", "b"), [kSecAttrLabel as String: "x"]) == errSecItemNotFound)
            #expect(secUpdate(genp("svc", "b"), [:]) == errSecItemNotFound)
        }
    }

    // §3.4: secret replaced through kSecValueData.
    @Test func updatesSecret() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret("old"))) == errSecSuccess)
            #expect(secUpdate(genp(), [kSecValueData as String: testSecret("new")]) == errSecSuccess)
            #expect(secret(of: genp()) == testSecret("new"))
            #expect(secUpdate(genp(), [kSecValueData as String: testSecret("newer"), kSecAttrLabel as String: "both"]) == errSecSuccess)
            #expect(secret(of: genp()) == testSecret("newer"))
            #expect(asString(attrsOf(genp())?["labl"]) == "both")
        }
    }

    // §3.4 [T si-10, secd-04]: PK change colliding with another item → errSecDuplicateItem, nothing changed.
    @Test func primaryKeyCollisionIsDuplicate() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "alice").with(kSecValueData, testSecret("alice"))) == errSecSuccess)
            #expect(secAdd(genp("svc", "bob").with(kSecValueData, testSecret("bob"))) == errSecSuccess)
            #expect(secUpdate(genp("svc", "bob"), [kSecAttrAccount as String: "alice"]) == errSecDuplicateItem)
            #expect(accounts(svc()) == ["alice", "bob"])
            #expect(secret(of: genp("svc", "alice")) == testSecret("alice"))
            #expect(secret(of: genp("svc", "bob")) == testSecret("bob"))
            // Non-colliding PK change succeeds (move).
            #expect(secUpdate(genp("svc", "bob"), [kSecAttrAccount as String: "carol"]) == errSecSuccess)
            #expect(secret(of: genp("svc", "carol")) == testSecret("bob"))
            #expect(secCopy(genp("svc", "bob")).status == errSecItemNotFound)
        }
    }

    // §3.4 [T si-10]: inet update causing a duplicate.
    @Test func internetPasswordUpdateCausingDuplicate() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(inet("example.com", "a").with(kSecAttrPort, 443)) == errSecSuccess)
            #expect(secAdd(inet("example.com", "a").with(kSecAttrPort, 8443)) == errSecSuccess)
            #expect(secUpdate(inet("example.com", "a").with(kSecAttrPort, 8443), [kSecAttrPort as String: 443]) == errSecDuplicateItem)
            #expect(matchCount(inet("example.com", "a").with(kSecAttrPort, 8443)) == 1)
        }
    }

    // §3.4 [C]: if any item fails, the whole update is rolled back.
    @Test func failedUpdateIsRolledBackEntirely() {
        TemporaryKeychain.with { _ in
            for account in ["a", "b", "c"] {
                #expect(secAdd(genp("svc", account).with([kSecValueData as String: testSecret(account), kSecAttrLabel as String: "orig-\(account)"])) == errSecSuccess)
            }
            // Renaming all three to the same account: the second one collides.
            #expect(secUpdate(svc(), [kSecAttrAccount as String: "same", kSecAttrLabel as String: "new"]) == errSecDuplicateItem)
            #expect(accounts(svc()) == ["a", "b", "c"])
            #expect(allAttributes(of: svc()).map { asString($0["labl"]) } == ["orig-a", "orig-b", "orig-c"])
            #expect(secCopy(genp("svc", "same")).status == errSecItemNotFound)
            // Also when only the last item collides with a pre-existing one.
            #expect(secAdd(genp("svc2", "x")) == errSecSuccess)
            #expect(secUpdate(genp("svc", "c"), [kSecAttrService as String: "svc2", kSecAttrAccount as String: "x"]) == errSecDuplicateItem)
            #expect(accounts(svc()) == ["a", "b", "c"])
        }
    }

    // §3.4 [T testReturnValuesInSecItemUpdate]: return keys in the query → errSecParam (iOS).
    @Test func returnKeysInQueryAreParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            for key in [kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef] {
                #expect(secUpdate(genp().with(key, true), [kSecAttrLabel as String: "x"]) == errSecParam, "\(key)")
            }
            #expect(attrsOf(genp())?["labl"] == nil)
        }
    }

    // §3.4 [C; keybase PR #16526]: kSecMatchLimit or any m_* key in the query → errSecParam.
    @Test func matchKeysInQueryAreParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secUpdate(genp().with(kSecMatchLimit, kSecMatchLimitOne), [kSecAttrLabel as String: "x"]) == errSecParam)
            #expect(secUpdate(genp().with(kSecMatchLimit, kSecMatchLimitAll), [kSecAttrLabel as String: "x"]) == errSecParam)
            #expect(secUpdate(genp().with(kSecMatchCaseInsensitive, true), [kSecAttrLabel as String: "x"]) == errSecParam)
            #expect(secUpdate(genp().with(kSecMatchSubjectContains, "x"), [kSecAttrLabel as String: "x"]) == errSecParam)
            #expect(secUpdate(genp().with(["m_Whatever": 1]), [kSecAttrLabel as String: "x"]) == errSecParam)
            #expect(attrsOf(genp())?["labl"] == nil)
        }
    }

    // §3.4 [T testMoveGenericPassword]: kSecValueData (and pdmn) in the query are accepted; v_Data is not a filter.
    @Test func valueDataInQueryIsIgnored() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret("real"))) == errSecSuccess)
            let query = genp().with([kSecValueData as String: testSecret("other"), kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked])
            #expect(secUpdate(query, [kSecAttrAccount as String: "moved"]) == errSecSuccess)
            #expect(secret(of: genp("com.example.service", "moved")) == testSecret("real"))
        }
    }

    // §3.4 [T secd-81, si-10]: non-attribute keys in attributesToUpdate → errSecNoSuchAttr.
    @Test func nonAttributeKeysInChangesAreNoSuchAttr() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let bad: [Query] = [
                [kSecClass as String: kSecClassGenericPassword],
                [kSecMatchLimit as String: kSecMatchLimitAll],
                [kSecReturnData as String: true],
                [kSecReturnAttributes as String: true],
                [kSecUseOperationPrompt as String: "why"],
                [kSecValuePersistentRef as String: Data([1, 2, 3])],
                ["u_CredRef": Data([1])],
                ["zzzz": "x"],
                [kSecAttrServer as String: "example.com"],
            ]
            for changes in bad {
                #expect(secUpdate(genp(), changes.with(kSecAttrLabel, "x")) == errSecNoSuchAttr, "changes \(changes.keys.sorted())")
            }
            #expect(attrsOf(genp())?["labl"] == nil)
        }
    }

    // §3.4: musr in attributesToUpdate is silently ignored.
    @Test func multiUserInChangesIsIgnored() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secUpdate(genp(), ["musr": Data([1, 2, 3]), kSecAttrLabel as String: "x"]) == errSecSuccess)
            let attributes = attrsOf(genp())
            #expect(asString(attributes?["labl"]) == "x")
            #expect(asData(attributes?["musr"]) == Data())
        }
    }

    // §3.4 [C]: mdat is set to now on every update; cdat stays.
    @Test func modificationDateAdvancesOnUpdate() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let before = try #require(attrsOf(genp()))
            let created = try #require(asDate(before["cdat"]))
            let modified = try #require(asDate(before["mdat"]))
            Thread.sleep(forTimeInterval: 1.1)
            #expect(secUpdate(genp(), [kSecAttrLabel as String: "x"]) == errSecSuccess)
            let after = try #require(attrsOf(genp()))
            #expect(asDate(after["cdat"]) == created)
            let newModified = try #require(asDate(after["mdat"]))
            #expect(newModified.timeIntervalSince(modified) >= 1.0)
            #expect(abs(newModified.timeIntervalSinceNow) < 60)
        }
    }

    // §3.4 [C]: an empty attributesToUpdate still succeeds and touches mdat.
    @Test func emptyChangesTouchModificationDate() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let modified = try #require(asDate(attrsOf(genp())?["mdat"]))
            Thread.sleep(forTimeInterval: 1.1)
            #expect(secUpdate(genp(), [:]) == errSecSuccess)
            let newModified = try #require(asDate(attrsOf(genp())?["mdat"]))
            #expect(newModified.timeIntervalSince(modified) >= 1.0)
        }
    }

    // §3.4 [C]: cdat is technically updatable.
    @Test func creationDateIsUpdatable() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let date = Date(timeIntervalSinceReferenceDate: 123_456_789)
            #expect(secUpdate(genp(), [kSecAttrCreationDate as String: date]) == errSecSuccess)
            #expect(asDate(attrsOf(genp())?["cdat"]) == date)
        }
    }

    // §3.4: kSecAttrSynchronizable in attributesToUpdate changes the sync flag; SyncAny is ignored.
    @Test func synchronizableInChanges() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "a")) == errSecSuccess)
            #expect(secUpdate(genp("svc", "a"), [kSecAttrSynchronizable as String: true]) == errSecSuccess)
            #expect(secCopy(genp("svc", "a")).status == errSecItemNotFound)
            #expect(asNumber(attrsOf(genp("svc", "a").with(kSecAttrSynchronizable, true))?["sync"]) == 1)

            #expect(secAdd(genp("svc", "b")) == errSecSuccess)
            #expect(secUpdate(genp("svc", "b"), [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny, kSecAttrLabel as String: "l"]) == errSecSuccess)
            let attributes = attrsOf(genp("svc", "b"))
            #expect(asNumber(attributes?["sync"]) == 0)
            #expect(asString(attributes?["labl"]) == "l")
        }
    }

    // §3.4: updating sync to collide with an existing sync copy → duplicate.
    @Test func synchronizableChangeCanCollide() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrSynchronizable, true)) == errSecSuccess)
            #expect(secUpdate(genp(), [kSecAttrSynchronizable as String: true]) == errSecDuplicateItem)
            #expect(matchCount(genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == 2)
        }
    }

    // §3.4: the implicit sync=0 filter applies to Update's query too.
    @Test func updateQueryHasImplicitSyncFilter() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrSynchronizable, true)) == errSecSuccess)
            #expect(secUpdate(genp(), [kSecAttrLabel as String: "x"]) == errSecItemNotFound)
            #expect(secUpdate(genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny), [kSecAttrLabel as String: "x"]) == errSecSuccess)
            #expect(asString(attrsOf(genp().with(kSecAttrSynchronizable, true))?["labl"]) == "x")
        }
    }

    // §3.4 / §2.4: accessibility can be changed; invalid values rejected.
    @Test func accessibilityCanBeChanged() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret())) == errSecSuccess)
            #expect(secUpdate(genp(), [kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]) == errSecSuccess)
            #expect(asString(attrsOf(genp())?["pdmn"]) == "cku")
            #expect(secret(of: genp()) == testSecret())
        }
    }

    // §3.4: update in the other classes.
    @Test func updateWorksForEveryClass() {
        TemporaryKeychain.with { _ in
            let items = [genp(), inet(), certItem(), keyItem()]
            for query in items {
                #expect(secAdd(query.with(kSecValueData, Data([1]))) == errSecSuccess)
                #expect(secUpdate(query, [kSecAttrLabel as String: "new label", kSecValueData as String: Data([2])]) == errSecSuccess)
                #expect(asString(attrsOf(query)?["labl"]) == "new label")
                #expect(secret(of: query) == Data([2]))
            }
        }
    }

    // §3.4: attribute of another class in attributesToUpdate → errSecNoSuchAttr; query parsing rules apply.
    @Test func queryValidationInUpdate() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(inet()) == errSecSuccess)
            #expect(secUpdate(inet(), [kSecAttrService as String: "svc"]) == errSecNoSuchAttr)
            #expect(secUpdate(inet().with(kSecAttrService, "svc"), [kSecAttrLabel as String: "x"]) == errSecNoSuchAttr)
            #expect(secUpdate(inet(), [kSecAttrCreationDate as String: "not a date"]) == errSecParam)
        }
    }

    // §3.4 / §2.1: setting a key attribute to its current value is not a collision.
    @Test func unchangedPrimaryKeyIsNotADuplicate() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "alice")) == errSecSuccess)
            #expect(secUpdate(genp("svc", "alice"), [kSecAttrAccount as String: "alice", kSecAttrService as String: "svc"]) == errSecSuccess)
            #expect(matchCount(genp("svc", "alice")) == 1)
        }
    }

    // §1.7 / §3.4: 'nleg' (kSecUseDataProtectionKeychain) goes through the attribute path and is ignored there too.
    @Test func dataProtectionKeychainKeyInChangesIsIgnored() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secUpdate(genp(), [kSecUseDataProtectionKeychain as String: true, kSecAttrLabel as String: "x"]) == errSecSuccess)
            #expect(asString(attrsOf(genp())?["labl"]) == "x")
        }
    }

    // §3.7: an entitled explicit agrp in the update query restricts the update to that group.
    @Test func explicitGroupInQueryRestrictsUpdate() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, "com.example.app")) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrAccessGroup, "com.example.shared")) == errSecSuccess)
            #expect(secUpdate(genp().with(kSecAttrAccessGroup, "com.example.shared"), [kSecAttrLabel as String: "shared-only"]) == errSecSuccess)
            #expect(attrsOf(genp().with(kSecAttrAccessGroup, "com.example.app"))?["labl"] == nil)
            #expect(asString(attrsOf(genp().with(kSecAttrAccessGroup, "com.example.shared"))?["labl"]) == "shared-only")
            #expect(secDelete(genp().with(kSecAttrAccessGroup, "com.example.app")) == errSecSuccess)
            #expect(asString(attrsOf(genp())?["agrp"]) == "com.example.shared")
        }
    }

    // §2.4 applies to attributesToUpdate too: numbers coerced, blobs keep their type.
    @Test func coercionInChanges() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(inet()) == errSecSuccess)
            #expect(secUpdate(inet(), [kSecAttrPort as String: "8443", kSecAttrIsInvisible as String: true, kSecAttrLabel as String: Data("bin".utf8)]) == errSecSuccess)
            let attributes = try #require(attrsOf(inet()))
            #expect(attributes["port"] is NSNumber)
            #expect(asNumber(attributes["port"]) == 8443)
            #expect(asNumber(attributes["invi"]) == 1)
            #expect(asData(attributes["labl"]) == Data("bin".utf8))
            #expect(secCopy(inet().with(kSecAttrPort, 8443)).status == errSecSuccess)
            #expect(secUpdate(inet(), [kSecAttrAccount as String: Data("alice".utf8)]) == errSecSuccess)
            #expect(secCopy(inet()).status == errSecSuccess)
        }
    }
}
}
