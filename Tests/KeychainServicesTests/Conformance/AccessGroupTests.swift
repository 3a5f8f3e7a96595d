import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §3.7 (access groups) and §3.1 steps 2, 3 and 5 (entitlement checks and their order).
struct AccessGroupTests {
    private let app = "com.example.app"
    private let shared = "com.example.shared"
    private let other = "com.example.other"

    // §3.7 / §2.3: add without agrp → first group; explicit entitled agrp is kept.
    @Test func addUsesFirstGroupOrTheExplicitOne() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "a")) == errSecSuccess)
            #expect(secAdd(genp("svc", "b").with(kSecAttrAccessGroup, shared)) == errSecSuccess)
            #expect(asString(attrsOf(genp("svc", "a"))?["agrp"]) == app)
            #expect(asString(attrsOf(genp("svc", "b"))?["agrp"]) == shared)
            let added = secAddReturning(genp("svc", "c").with(kSecReturnAttributes, true))
            #expect(asString(asDictionary(added.result)?["agrp"]) == app)
        }
    }

    // §3.7 [T]: add with a non-entitled agrp → -34018.
    @Test func addToNonEntitledGroupIsMissingEntitlement() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, other)) == errSecMissingEntitlement)
            #expect(secAdd(genp().with(kSecAttrAccessGroup, "com.example")) == errSecMissingEntitlement)
            #expect(secAdd(genp().with(kSecAttrAccessGroup, "COM.EXAMPLE.APP")) == errSecMissingEntitlement)
            #expect(matchCount(genp()) == 0)
        }
    }

    // §3.7: explicit read of a non-entitled group → -34018; entitled group restricts the search.
    @Test func explicitReadGroup() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, app)) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrAccessGroup, shared)) == errSecSuccess)
            #expect(secCopy(genp().with(kSecAttrAccessGroup, other)).status == errSecMissingEntitlement)
            let onlyShared = allAttributes(of: genp().with(kSecAttrAccessGroup, shared))
            #expect(onlyShared.count == 1)
            #expect(asString(onlyShared.first?["agrp"]) == shared)
            #expect(matchCount(genp()) == 2)
        }
    }

    // §3.7 [T testEntitlementForImplicitAccessGroupLacking]: items in groups the caller lacks are invisible;
    // explicit agrp → -34018.
    @Test func itemsInOtherGroupsAreInvisible() {
        TemporaryKeychain.with { keychain in
            #expect(secAdd(genp().with([kSecAttrAccessGroup as String: app, kSecValueData as String: testSecret()])) == errSecSuccess)
            keychain.withGroups([other]).run {
                #expect(secCopy(genp()).status == errSecItemNotFound)
                #expect(secCopy(genp().with(kSecReturnData, true)).result == nil)
                #expect(matchCount(item(kSecClassGenericPassword)) == 0)
                #expect(secCopy(genp().with(kSecAttrAccessGroup, app)).status == errSecMissingEntitlement)
                // Its own item with the same acct/svce can coexist (agrp is in the key).
                #expect(secAdd(genp()) == errSecSuccess)
                #expect(matchCount(genp()) == 1)
            }
            #expect(matchCount(genp()) == 1)
            #expect(secret(of: genp()) == testSecret())
        }
    }

    // §3.7: a process with a subset of groups sees exactly the items in those groups.
    @Test func visibilityFollowsTheGroupList() {
        TemporaryKeychain.with { keychain in
            #expect(secAdd(genp("svc", "in-app").with(kSecAttrAccessGroup, app)) == errSecSuccess)
            #expect(secAdd(genp("svc", "in-shared").with(kSecAttrAccessGroup, shared)) == errSecSuccess)
            keychain.withGroups([shared]).run {
                let accounts = allAttributes(of: item(kSecClassGenericPassword)).compactMap { asString($0["acct"]) }
                #expect(accounts == ["in-shared"])
            }
            keychain.withGroups([other, shared, app]).run {
                #expect(matchCount(item(kSecClassGenericPassword)) == 2)
            }
        }
    }

    // §3.7: Update/Delete without agrp touch only the caller's writable groups.
    @Test func implicitWritesTouchOnlyOwnGroups() {
        TemporaryKeychain.with { keychain in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, app)) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrAccessGroup, shared)) == errSecSuccess)
            keychain.withGroups([shared]).run {
                #expect(secUpdate(genp(), [kSecAttrLabel as String: "from-shared"]) == errSecSuccess)
            }
            #expect(asString(attrsOf(genp().with(kSecAttrAccessGroup, app))?["labl"]) == nil)
            #expect(asString(attrsOf(genp().with(kSecAttrAccessGroup, shared))?["labl"]) == "from-shared")
            keychain.withGroups([shared]).run {
                #expect(secDelete(genp()) == errSecSuccess)
                #expect(secDelete(genp()) == errSecItemNotFound)
            }
            #expect(matchCount(genp().with(kSecAttrAccessGroup, app)) == 1)
            #expect(matchCount(genp().with(kSecAttrAccessGroup, shared)) == 0)
            keychain.withGroups([other]).run {
                #expect(secUpdate(genp(), [kSecAttrLabel as String: "x"]) == errSecItemNotFound)
                #expect(secDelete(genp()) == errSecItemNotFound)
            }
            #expect(matchCount(genp()) == 1)
        }
    }

    // §3.7 [T testEntitlementForExplicitAccessGroupLacking]: update setting agrp to a non-entitled group → -34018.
    @Test func updateIntoNonEntitledGroup() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secUpdate(genp(), [kSecAttrAccessGroup as String: other]) == errSecMissingEntitlement)
            #expect(asString(attrsOf(genp())?["agrp"]) == app)
            // Moving into an entitled group works.
            #expect(secUpdate(genp(), [kSecAttrAccessGroup as String: shared]) == errSecSuccess)
            #expect(asString(attrsOf(genp())?["agrp"]) == shared)
        }
    }

    // §3.1 step 3: Update/Delete with an explicit non-entitled agrp → -34018.
    @Test func updateAndDeleteWithNonEntitledGroup() {
        TemporaryKeychain.with { keychain in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, app)) == errSecSuccess)
            keychain.withGroups([other]).run {
                #expect(secUpdate(genp().with(kSecAttrAccessGroup, app), [kSecAttrLabel as String: "x"]) == errSecMissingEntitlement)
                #expect(secDelete(genp().with(kSecAttrAccessGroup, app)) == errSecMissingEntitlement)
            }
            #expect(matchCount(genp()) == 1)
            #expect(attrsOf(genp())?["labl"] == nil)
        }
    }

    // §3.1 step 3 is before parsing (step 4); step 5 (Add/CopyMatching) is after it.
    @Test func orderOfEntitlementAndParseChecks() {
        TemporaryKeychain.with { _ in
            let bogus = genp().with(["zzzz": 1, kSecAttrAccessGroup as String: other])
            #expect(secUpdate(bogus, [kSecAttrLabel as String: "x"]) == errSecMissingEntitlement)
            #expect(secDelete(bogus) == errSecMissingEntitlement)
            #expect(secAdd(bogus) == errSecNoSuchAttr)
            #expect(secCopy(bogus).status == errSecNoSuchAttr)
            // Missing class: still -34018 for Update/Delete, errSecParam for Add/CopyMatching.
            let noClass: Query = [kSecAttrAccessGroup as String: other, kSecAttrAccount as String: "a"]
            #expect(secUpdate(noClass, [kSecAttrLabel as String: "x"]) == errSecMissingEntitlement)
            #expect(secDelete(noClass) == errSecMissingEntitlement)
            #expect(secAdd(noClass) == errSecParam)
            #expect(secCopy(noClass).status == errSecParam)
        }
    }

    // §3.1 step 2 [T testNoEntitlements]: empty group list → -34018 for every op.
    @Test func noGroupsIsMissingEntitlementForEveryOperation() {
        TemporaryKeychain.with { keychain in
            #expect(secAdd(genp()) == errSecSuccess)
            keychain.withGroups([]).run {
                #expect(secAdd(genp("x")) == errSecMissingEntitlement)
                #expect(secCopy(genp()).status == errSecMissingEntitlement)
                #expect(secCopy(genp().with(kSecReturnData, true)).status == errSecMissingEntitlement)
                #expect(secUpdate(genp(), [kSecAttrLabel as String: "x"]) == errSecMissingEntitlement)
                #expect(secDelete(genp()) == errSecMissingEntitlement)
                // Even for queries that would otherwise be malformed (parse is step 4).
                #expect(secAdd(item(nil, [kSecAttrAccount: "a"])) == errSecMissingEntitlement)
                #expect(secCopy(genp().with(["zzzz": 1])).status == errSecMissingEntitlement)
                #expect(secCopy([kSecClass as String: "zzzz"]).status == errSecMissingEntitlement)
                // ... but 'clip' is checked first (step 1).
                #expect(secAdd(genp().with(["clip": 1])) == errSecParam)
            }
            #expect(matchCount(genp()) == 1)
        }
    }

    // §3.2 / §3.7 [T si-82-token-ag, testDisallowTokenGroupWrite]: com.apple.token is read-only.
    @Test func tokenGroupIsReadOnly() {
        TemporaryKeychain.with(accessGroups: ["com.example.app", "com.apple.token"]) { _ in
            let token = kSecAttrAccessGroupToken as String
            #expect(secAdd(genp().with(kSecAttrAccessGroup, token)) == errSecMissingEntitlement)
            #expect(secAdd(keyItem().with(kSecAttrAccessGroup, token)) == errSecMissingEntitlement)
            // Reading it is allowed (nothing there).
            #expect(secCopy(genp().with(kSecAttrAccessGroup, token)).status == errSecItemNotFound)
            #expect(secUpdate(genp().with(kSecAttrAccessGroup, token), [kSecAttrLabel as String: "x"]) == errSecMissingEntitlement)
            #expect(secDelete(genp().with(kSecAttrAccessGroup, token)) == errSecMissingEntitlement)
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secUpdate(genp(), [kSecAttrAccessGroup as String: token]) == errSecMissingEntitlement)
            #expect(asString(attrsOf(genp())?["agrp"]) == "com.example.app")
        }
    }

    // §3.7: persistent-reference queries are restricted to the caller's groups too.
    @Test func persistentRefsDoNotCrossGroups() throws {
        try TemporaryKeychain.with { keychain in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, app)) == errSecSuccess)
            let reference = try #require(persistentRef(of: genp()))
            keychain.withGroups([other]).run {
                #expect(secCopy([kSecValuePersistentRef as String: reference]).status == errSecItemNotFound)
                #expect(secUpdate([kSecValuePersistentRef as String: reference], [kSecAttrLabel as String: "x"]) == errSecItemNotFound)
                #expect(secDelete([kSecValuePersistentRef as String: reference]) == errSecItemNotFound)
            }
            #expect(matchCount(genp()) == 1)
            #expect(attrsOf(genp())?["labl"] == nil)
        }
    }

    // §3.7: another process with the same group sees and edits the item.
    @Test func sharedGroupIsShared() {
        TemporaryKeychain.with { keychain in
            #expect(secAdd(genp().with([kSecAttrAccessGroup as String: shared, kSecValueData as String: testSecret("v1")])) == errSecSuccess)
            keychain.withGroups([other, shared]).run {
                #expect(secret(of: genp()) == testSecret("v1"))
                #expect(secUpdate(genp(), [kSecValueData as String: testSecret("v2")]) == errSecSuccess)
            }
            #expect(secret(of: genp()) == testSecret("v2"))
        }
    }

    // §2.1 / §3.4: moving an item into a group where the same key exists → duplicate.
    @Test func moveIntoGroupWithSameKeyIsDuplicate() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, app)) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrAccessGroup, shared)) == errSecSuccess)
            #expect(secUpdate(genp().with(kSecAttrAccessGroup, app), [kSecAttrAccessGroup as String: shared]) == errSecDuplicateItem)
            #expect(matchCount(genp()) == 2)
        }
    }

    // §3.1: step 1 (clip) comes before step 3 (explicit write group).
    @Test func clipIsCheckedBeforeWriteGroup() {
        TemporaryKeychain.with { _ in
            let query = genp().with(["clip": 1, kSecAttrAccessGroup as String: other])
            #expect(secUpdate(query, [kSecAttrLabel as String: "x"]) == errSecParam)
            #expect(secDelete(query) == errSecParam)
        }
    }

    // §2.4 + §3.7: agrp given as CFData (UTF-8) is still an access group: a non-entitled one → -34018.
    @Test func nonEntitledGroupAsDataIsMissingEntitlement() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, app)) == errSecSuccess)
            let foreign = Data(other.utf8)
            #expect(secAdd(genp("x").with(kSecAttrAccessGroup, foreign)) == errSecMissingEntitlement)
            #expect(secCopy(genp().with(kSecAttrAccessGroup, foreign)).status == errSecMissingEntitlement)
            #expect(secUpdate(genp(), [kSecAttrAccessGroup as String: foreign]) == errSecMissingEntitlement)
            #expect(asString(attrsOf(genp())?["agrp"]) == app)
        }
    }

    // §3.1 step 3 / §3.7: a process without the group can't update its items by naming the group as data.
    @Test func foreignProcessCannotUpdateThroughGroupGivenAsData() {
        TemporaryKeychain.with { keychain in
            #expect(secAdd(genp().with([kSecAttrAccessGroup as String: app, kSecValueData as String: testSecret("v1")])) == errSecSuccess)
            keychain.withGroups([other]).run {
                let status = secUpdate(genp().with(kSecAttrAccessGroup, Data(app.utf8)), [
                    kSecAttrLabel as String: "hijacked", kSecValueData as String: testSecret("v2"),
                ])
                #expect(status == errSecMissingEntitlement)
                #expect(secCopy(genp().with(kSecAttrAccessGroup, Data(app.utf8))).status == errSecMissingEntitlement)
            }
            #expect(attrsOf(genp())?["labl"] == nil)
            #expect(secret(of: genp()) == testSecret("v1"))
        }
    }

    // §3.1 step 3 / §3.7: a process without the group can't delete its items by naming the group as data.
    @Test func foreignProcessCannotDeleteThroughGroupGivenAsData() {
        TemporaryKeychain.with { keychain in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, app)) == errSecSuccess)
            keychain.withGroups([other]).run {
                #expect(secDelete(genp().with(kSecAttrAccessGroup, Data(app.utf8))) == errSecMissingEntitlement)
                #expect(secDelete(item(kSecClassGenericPassword, [kSecAttrAccessGroup: Data(app.utf8)])) == errSecMissingEntitlement)
            }
            #expect(matchCount(genp()) == 1)
        }
    }

    // §3.7 + §2.4: the read-only token group stays read-only when named as CFData.
    @Test func tokenGroupAsDataIsReadOnly() {
        TemporaryKeychain.with(accessGroups: ["com.example.app", "com.apple.token"]) { _ in
            let token = Data("com.apple.token".utf8)
            #expect(secAdd(genp().with(kSecAttrAccessGroup, token)) == errSecMissingEntitlement)
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secUpdate(genp(), [kSecAttrAccessGroup as String: token]) == errSecMissingEntitlement)
            #expect(secUpdate(genp().with(kSecAttrAccessGroup, token), [kSecAttrLabel as String: "x"]) == errSecMissingEntitlement)
            #expect(secDelete(genp().with(kSecAttrAccessGroup, token)) == errSecMissingEntitlement)
            #expect(asString(attrsOf(genp())?["agrp"]) == "com.example.app")
        }
    }
}
}
