import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §1.7 (how dictionary keys are classified) and §3.1 step 1/4 (clip, class).
struct QueryValidationTests {
    /// Runs `query` through all four operations (as query; Update with a harmless change).
    private func statuses(_ query: Query) -> [String: OSStatus] {
        [
            "add": secAdd(query),
            "copy": secCopy(query).status,
            "update": secUpdate(query, [kSecAttrLabel as String: "changed"]),
            "delete": secDelete(query),
        ]
    }

    // §1.7: key length 4 → attribute; not an attribute of the class → errSecNoSuchAttr.
    @Test func unknownFourCharacterAttributeIsNoSuchAttr() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let query = genp().with(["zzzz": "x"])
            #expect(secAdd(query) == errSecNoSuchAttr)
            #expect(secCopy(query).status == errSecNoSuchAttr)
            #expect(secUpdate(query, [kSecAttrLabel as String: "l"]) == errSecNoSuchAttr)
            #expect(secDelete(query) == errSecNoSuchAttr)
            #expect(matchCount(genp()) == 1)
        }
    }

    // §2.2: an attribute of another class is not an attribute of this one.
    @Test func attributeOfAnotherClassIsNoSuchAttr() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrServer, "example.com")) == errSecNoSuchAttr)
            #expect(secAdd(inet().with(kSecAttrService, "svc")) == errSecNoSuchAttr)
            #expect(secAdd(inet().with(kSecAttrGeneric, Data("g".utf8))) == errSecNoSuchAttr)
            // [T si-05 case 7] kSecAttrApplicationTag on a certificate.
            #expect(secAdd(certItem().with(kSecAttrApplicationTag, Data("tag".utf8))) == errSecNoSuchAttr)
            #expect(secAdd(keyItem().with(kSecAttrAccount, "acct")) == errSecNoSuchAttr)
            #expect(secCopy(genp().with(kSecAttrPort, 443)).status == errSecNoSuchAttr)
            #expect(matchCount(genp()) == 0)
        }
    }

    // §1.7: a 4-character key is an attribute even when it starts with r/u/v/m/c.
    @Test func fourCharacterKeysAreAttributesWhateverTheirFirstLetter() {
        TemporaryKeychain.with { _ in
            for key in ["r_Da", "u_Op", "v_Da", "m_Li", "clas"] {
                #expect(secAdd(genp().with([key: true])) == errSecNoSuchAttr, "key \(key)")
                #expect(secCopy(genp().with([key: true])).status == errSecNoSuchAttr, "key \(key)")
            }
        }
    }

    // §1.7: unknown r_* → errSecParam.
    @Test func unknownReturnKeyIsParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            for (name, status) in statuses(genp().with(["r_Whatever": true])) where name != "delete" {
                #expect(status == errSecParam, "\(name)")
            }
        }
    }

    // §1.7: unknown u_* → errSecParam.
    @Test func unknownUseKeyIsParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            for (name, status) in statuses(genp().with(["u_Whatever": true])) {
                #expect(status == errSecParam, "\(name)")
            }
            #expect(matchCount(genp()) == 1)
        }
    }

    // §1.7: unknown v_* → errSecParam.
    @Test func unknownValueKeyIsParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            for (name, status) in statuses(genp().with(["v_Whatever": Data("x".utf8)])) {
                #expect(status == errSecParam, "\(name)")
            }
            #expect(matchCount(genp()) == 1)
        }
    }

    // §1.7: c* other than exactly "class" → errSecParam; other first characters or length 1 → errSecParam.
    @Test func otherMalformedKeysAreParam() {
        TemporaryKeychain.with { _ in
            for key in ["classy", "cl", "xyzzy", "a", "r", "Account", "1234567", "_acct"] {
                #expect(secAdd(genp().with([key: "x"])) == errSecParam, "key \(key)")
                #expect(secCopy(genp().with([key: "x"])).status == errSecParam, "key \(key)")
            }
            #expect(matchCount(genp()) == 0)
        }
    }

    // §1.7: keys starting with "f" (client callbacks) are ignored.
    @Test func fKeysAreIgnored() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(["f_Callback": "x"])) == errSecSuccess)
            #expect(secCopy(genp().with(["f_Callback": "x"])).status == errSecSuccess)
            #expect(secDelete(genp().with(["f_Callback": "x"])) == errSecSuccess)
        }
    }

    // §1.7: r_* values must be CFBoolean.
    @Test func nonBooleanReturnValueIsParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret())) == errSecSuccess)
            #expect(secCopy(genp().with(kSecReturnData, "true")).status == errSecParam)
            #expect(secCopy(genp().with(kSecReturnAttributes, "yes")).status == errSecParam)
            #expect(secCopy(genp().with(kSecReturnPersistentRef, Data([1]))).status == errSecParam)
            #expect(secCopy(genp().with(kSecReturnData, 1)).status == errSecParam)
            #expect(secCopy(genp().with(kSecReturnAttributes, NSNumber(value: 1))).status == errSecParam)
            #expect(secAddReturning(genp("other").with(kSecReturnData, "true")).status == errSecParam)
            #expect(matchCount(genp("other")) == 0)
        }
    }

    // §1.7: CFBoolean values (Swift Bool or kCFBooleanTrue/False) are accepted; false means "don't return".
    @Test func booleanReturnValuesAreAccepted() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret())) == errSecSuccess)
            let viaCF = secCopy(genp().with(kSecReturnData, kCFBooleanTrue as Any))
            #expect(viaCF.status == errSecSuccess)
            #expect(asData(viaCF.result) == testSecret())
            let viaSwift = secCopy(genp().with(kSecReturnData, true))
            #expect(asData(viaSwift.result) == testSecret())
            // r_Data false + r_Attributes true → a single return key → attribute dictionary only.
            let mixed = secCopy(genp().with([kSecReturnData as String: false, kSecReturnAttributes as String: true]))
            #expect(mixed.status == errSecSuccess)
            let attributes = try #require(asDictionary(mixed.result))
            #expect(attributes["v_Data"] == nil)
            #expect(asString(attributes["acct"]) == "alice")
            let none = secCopy(genp().with(kSecReturnData, kCFBooleanFalse as Any))
            #expect(none.status == errSecSuccess)
            #expect(none.result == nil)
        }
    }

    // §1.7: CFNumber keys are attributes → errSecNoSuchAttr; other non-string keys → errSecParam.
    @Test func nonStringKeys() {
        TemporaryKeychain.with { _ in
            let numberKeyed = NSMutableDictionary(dictionary: genp())
            numberKeyed[NSNumber(value: 42)] = "x"
            #expect(SecItemAdd(numberKeyed, nil) == errSecNoSuchAttr)
            #expect(SecItemCopyMatching(numberKeyed, nil) == errSecNoSuchAttr)
            #expect(SecItemDelete(numberKeyed) == errSecNoSuchAttr)

            let dataKeyed = NSMutableDictionary(dictionary: genp())
            dataKeyed[NSData(data: Data("acct".utf8))] = "x"
            #expect(SecItemAdd(dataKeyed, nil) == errSecParam)
            #expect(SecItemCopyMatching(dataKeyed, nil) == errSecParam)
            #expect(matchCount(genp()) == 0)
        }
    }

    // §3.1 step 4: missing kSecClass → errSecParam, in every operation.
    @Test func missingClassIsParam() {
        TemporaryKeychain.with { _ in
            let query = item(nil, [kSecAttrService: "svc", kSecAttrAccount: "alice"])
            #expect(secAdd(query.with(kSecValueData, testSecret())) == errSecParam)
            #expect(secCopy(query).status == errSecParam)
            #expect(secUpdate(query, [kSecAttrLabel as String: "x"]) == errSecParam)
            #expect(secDelete(query) == errSecParam)
        }
    }

    // §3.1 step 4 / §1.1: unknown class string (incl. apls) → errSecNoSuchClass.
    @Test func unknownClassIsNoSuchClass() {
        TemporaryKeychain.with { _ in
            for name in ["zzzz", "apls", "GENP", "genericPassword"] {
                let query: Query = [kSecClass as String: name, kSecAttrAccount as String: "alice"]
                #expect(secAdd(query) == errSecNoSuchClass, "class \(name)")
                #expect(secCopy(query).status == errSecNoSuchClass, "class \(name)")
                #expect(secUpdate(query, [kSecAttrLabel as String: "x"]) == errSecNoSuchClass, "class \(name)")
                #expect(secDelete(query) == errSecNoSuchClass, "class \(name)")
            }
        }
    }

    // §3.1 step 1 [T testNotAllowedToPassInternalAttributes]: 'clip' → errSecParam for all ops.
    @Test func clipAttributeIsParamForEveryOperation() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            for value: Any in [true, false, 0, 1] {
                let query = genp().with(["clip": value])
                #expect(secAdd(query) == errSecParam)
                #expect(secCopy(query).status == errSecParam)
                #expect(secUpdate(query, [kSecAttrLabel as String: "x"]) == errSecParam)
                #expect(secDelete(query) == errSecParam)
            }
            #expect(secUpdate(genp(), ["clip": true]) == errSecParam)
            #expect(matchCount(genp()) == 1)
        }
    }

    // §1.5 / §1.7 / §3.8: kSecUseDataProtectionKeychain ('nleg') is silently ignored.
    @Test func dataProtectionKeychainKeyIsIgnored() {
        TemporaryKeychain.with { _ in
            for flag in [true, false] {
                let query = genp("svc-\(flag)").with(kSecUseDataProtectionKeychain, flag)
                #expect(secAdd(query.with(kSecValueData, testSecret())) == errSecSuccess)
                #expect(secret(of: query) == testSecret())
                #expect(secUpdate(query, [kSecAttrLabel as String: "l"]) == errSecSuccess)
                #expect(secDelete(query) == errSecSuccess)
                #expect(matchCount(genp("svc-\(flag)")) == 0)
            }
        }
    }

    // §1.7 / §2.4: kSecMatchCaseInsensitive is parsed but has no effect; matching stays exact.
    @Test func caseInsensitiveHasNoEffect() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("Service", "Alice")) == errSecSuccess)
            let folded = genp("service", "alice").with(kSecMatchCaseInsensitive, true)
            #expect(secCopy(folded).status == errSecItemNotFound)
            let exact = genp("Service", "Alice").with(kSecMatchCaseInsensitive, true)
            #expect(secCopy(exact).status == errSecSuccess)
        }
    }

    // §1.7: kSecMatchSubjectContains (and any other m_* key) is accepted by CopyMatching and ignored.
    @Test func unusedMatchKeysAreAcceptedInCopyMatching() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secCopy(genp().with(kSecMatchSubjectContains, "nothing like it")).status == errSecSuccess)
            #expect(secCopy(genp().with(["m_SomethingNew": "x"])).status == errSecSuccess)
            #expect(secCopy(genp().with(kSecMatchEmailAddressIfPresent, "a@example.com")).status == errSecSuccess)
            #expect(secCopy(genp("nope").with(kSecMatchSubjectContains, "x")).status == errSecItemNotFound)
        }
    }

    // §1.7 / §2.4: a query is always exact and byte-wise: no prefix / substring matching.
    @Test func matchingIsExactAndBytewise() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "alice")) == errSecSuccess)
            for account in ["alic", "alice ", " alice", "ALICE", "alicé", "alice\u{0}"] {
                #expect(secCopy(genp("svc", account)).status == errSecItemNotFound)
            }
            // Unicode: composed vs decomposed "é" are different byte strings.
            #expect(secAdd(genp("svc", "caf\u{E9}")) == errSecSuccess)
            #expect(secCopy(genp("svc", "cafe\u{301}")).status == errSecItemNotFound)
        }
    }

    // §3.8: kSecUseOperationPrompt and non-Skip kSecUseAuthenticationUI values are always accepted.
    @Test func clientOnlyUseKeysAreAccepted() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecUseOperationPrompt, "Why")) == errSecSuccess)
            #expect(secCopy(genp().with(kSecUseOperationPrompt, "Why")).status == errSecSuccess)
            #expect(secAdd(genp("b").with(kSecUseAuthenticationUI, kSecUseAuthenticationUIFail)) == errSecSuccess)
            #expect(secCopy(genp("b").with(kSecUseAuthenticationUI, kSecUseAuthenticationUIAllow)).status == errSecSuccess)
            #expect(secUpdate(genp("b").with(kSecUseAuthenticationUI, kSecUseAuthenticationUIFail), [kSecAttrLabel as String: "x"]) == errSecSuccess)
            #expect(secDelete(genp("b").with(kSecUseOperationPrompt, "Why")) == errSecSuccess)
        }
    }

    // §3.8 [C]: the client strips every non-Skip kSecUseAuthenticationUI value, whatever its type,
    // so the server's type check (errSecParam for a non-string) never sees it.
    @Test func nonStringAuthenticationUIValueIsStripped() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("c").with(kSecUseAuthenticationUI, true)) == errSecSuccess)
            #expect(secAdd(genp("d")) == errSecSuccess)
            #expect(secCopy(genp("d").with(kSecUseAuthenticationUI, 1)).status == errSecSuccess)
            #expect(secUpdate(genp("d").with(kSecUseAuthenticationUI, false), [kSecAttrLabel as String: "x"]) == errSecSuccess)
            #expect(secDelete(genp("d").with(kSecUseAuthenticationUI, "u_AuthUIX")) == errSecSuccess)
        }
    }

    // §3.8: kSecUseAuthenticationUISkip is for CopyMatching only; else errSecParam.
    @Test func authenticationUISkipOnlyInCopyMatching() {
        TemporaryKeychain.with { _ in
            let skip = genp().with(kSecUseAuthenticationUI, kSecUseAuthenticationUISkip)
            // [T secd-81-item-acl]: add with UISkip → errSecParam.
            #expect(secAdd(skip) == errSecParam)
            #expect(matchCount(genp()) == 0)
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secCopy(skip).status == errSecSuccess)
            #expect(secUpdate(skip, [kSecAttrLabel as String: "x"]) == errSecParam)
        }
    }

    // §3.3: kSecUseItemList → errSecParam.
    @Test func useItemListIsParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secCopy(genp().with(kSecUseItemList, [Data("x".utf8)])).status == errSecParam)
            #expect(secUpdate(genp().with(kSecUseItemList, [Data("x".utf8)]), [kSecAttrLabel as String: "x"]) == errSecParam)
        }
    }
}
}
