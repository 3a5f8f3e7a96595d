import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §2.1 (uniqueness = per-class primary key) and §3.2 (duplicate → errSecDuplicateItem).
struct PrimaryKeyTests {
    // §2.1 / §3.2 [T si-05, si-10, SecItemTests]
    @Test func duplicateGenericPasswordIsRejected() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret("1"))) == errSecSuccess)
            #expect(secAdd(genp().with(kSecValueData, testSecret("2"))) == errSecDuplicateItem)
            #expect(matchCount(genp()) == 1)
            #expect(secret(of: genp()) == testSecret("1"))
        }
    }

    // §2.1 [T testAddCollidingGenericPassword]: label, accessibility and other non-PK attributes don't make items distinct.
    @Test func nonKeyAttributesDoNotMakeGenericPasswordsDistinct() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with([
                kSecAttrLabel as String: "one", kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked,
            ])) == errSecSuccess)
            let variants: [Query] = [
                [kSecAttrLabel as String: "two"],
                [kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock],
                [kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly],
                [kSecAttrComment as String: "comment"],
                [kSecAttrDescription as String: "description"],
                [kSecAttrGeneric as String: Data("generic".utf8)],
                [kSecAttrCreator as String: 1234],
                [kSecAttrType as String: 5678],
                [kSecAttrIsInvisible as String: true],
                [kSecAttrIsNegative as String: true],
                [kSecAttrAlias as String: "alias"],
                [kSecValueData as String: testSecret("other")],
            ]
            for variant in variants {
                #expect(secAdd(genp().with(variant)) == errSecDuplicateItem, "variant \(variant.keys.sorted())")
            }
            #expect(matchCount(genp()) == 1)
        }
    }

    // §2.1: acct and svce are each part of the genp key.
    @Test func accountAndServiceMakeGenericPasswordsDistinct() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "alice")) == errSecSuccess)
            #expect(secAdd(genp("svc", "bob")) == errSecSuccess)
            #expect(secAdd(genp("svc2", "alice")) == errSecSuccess)
            #expect(matchCount(item(kSecClassGenericPassword)) == 3)
        }
    }

    // §2.1: sync is part of the key: a sync and a non-sync copy can coexist.
    @Test func synchronizableIsPartOfTheKey() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret("local"))) == errSecSuccess)
            #expect(secAdd(genp().with([kSecAttrSynchronizable as String: true, kSecValueData as String: testSecret("sync")])) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrSynchronizable, true)) == errSecDuplicateItem)
            #expect(secAdd(genp().with(kSecAttrSynchronizable, false)) == errSecDuplicateItem)
            #expect(matchCount(genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == 2)
        }
    }

    // §2.1: agrp is part of the key: identical items in two access groups coexist.
    @Test func accessGroupIsPartOfTheKey() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, "com.example.app")) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrAccessGroup, "com.example.shared")) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrAccessGroup, "com.example.shared")) == errSecDuplicateItem)
            // The default group is the first one: collides with the explicit com.example.app copy.
            #expect(secAdd(genp()) == errSecDuplicateItem)
            #expect(matchCount(genp()) == 2)
        }
    }

    // §2.1: missing PK attributes get their defaults, so two genp items with no acct/svce collide,
    // and an item without acct collides with one whose acct is "".
    @Test func missingKeyAttributesTakeDefaultsAndCollide() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(item(kSecClassGenericPassword)) == errSecSuccess)
            #expect(secAdd(item(kSecClassGenericPassword)) == errSecDuplicateItem)
            #expect(secAdd(item(kSecClassGenericPassword, [kSecAttrAccount: "", kSecAttrService: ""])) == errSecDuplicateItem)
            #expect(secAdd(item(kSecClassGenericPassword, [kSecAttrService: "svc"])) == errSecSuccess)
            #expect(secAdd(item(kSecClassGenericPassword, [kSecAttrService: "svc", kSecAttrAccount: ""])) == errSecDuplicateItem)
        }
    }

    // §2.1 [T si-10]: inet key = acct, sdmn, srvr, ptcl, atyp, port, path (+ common).
    @Test func internetPasswordKey() {
        TemporaryKeychain.with { _ in
            let base = inet().with([
                kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443,
                kSecAttrPath as String: "/login", kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTMLForm,
                kSecAttrSecurityDomain as String: "realm",
            ])
            #expect(secAdd(base.with(kSecAttrLabel, "one")) == errSecSuccess)
            // Not in the key:
            #expect(secAdd(base.with(kSecAttrLabel, "two")) == errSecDuplicateItem)
            #expect(secAdd(base.with(kSecAttrComment, "c")) == errSecDuplicateItem)
            #expect(secAdd(base.with(kSecAttrAccessible, kSecAttrAccessibleAfterFirstUnlock)) == errSecDuplicateItem)
            #expect(secAdd(base.with(kSecValueData, testSecret())) == errSecDuplicateItem)
            // Each key attribute makes a distinct item:
            let distinct: [Query] = [
                [kSecAttrAccount as String: "bob"],
                [kSecAttrSecurityDomain as String: "other-realm"],
                [kSecAttrServer as String: "example.org"],
                [kSecAttrProtocol as String: kSecAttrProtocolHTTP],
                [kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTTPBasic],
                [kSecAttrPort as String: 8443],
                [kSecAttrPath as String: "/other"],
            ]
            for change in distinct {
                #expect(secAdd(base.with(change)) == errSecSuccess, "changing \(change.keys.sorted())")
            }
            #expect(matchCount(item(kSecClassInternetPassword)) == 1 + distinct.count)
        }
    }

    // §2.1 [T si-12]: PK-only items of every class; adding the same one twice collides.
    @Test func keyOnlyItemsOfEveryClassCollide() {
        TemporaryKeychain.with { _ in
            for itemClass in [kSecClassGenericPassword, kSecClassInternetPassword, kSecClassCertificate, kSecClassKey] {
                #expect(secAdd(item(itemClass)) == errSecSuccess, "\(itemClass)")
                #expect(secAdd(item(itemClass)) == errSecDuplicateItem, "\(itemClass)")
                #expect(matchCount(item(itemClass)) == 1, "\(itemClass)")
            }
            for (builder, name) in [(certItem(serial: "7"), "cert"), (keyItem(tag: "t7"), "keys"), (inet("h7", "a7"), "inet")] {
                #expect(secAdd(builder) == errSecSuccess, "\(name)")
                #expect(secAdd(builder) == errSecDuplicateItem, "\(name)")
            }
        }
    }

    // §2.1: different classes never collide with each other.
    @Test func classesHaveSeparateKeySpaces() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(item(kSecClassGenericPassword, [kSecAttrAccount: "alice"])) == errSecSuccess)
            #expect(secAdd(item(kSecClassInternetPassword, [kSecAttrAccount: "alice"])) == errSecSuccess)
            #expect(secAdd(item(kSecClassCertificate, [kSecAttrLabel: "alice"])) == errSecSuccess)
            #expect(secAdd(item(kSecClassKey, [kSecAttrLabel: "alice"])) == errSecSuccess)
        }
    }

    // §2.1: cert key = ctyp, issr, slnr (+ common); subject/label are not part of it.
    @Test func certificateKey() {
        TemporaryKeychain.with { _ in
            let base = certItem(serial: "01", issuer: "CN=CA")
            #expect(secAdd(base.with(kSecAttrSubject, Data("CN=leaf".utf8))) == errSecSuccess)
            #expect(secAdd(base.with(kSecAttrSubject, Data("CN=other".utf8))) == errSecDuplicateItem)
            #expect(secAdd(base.with(kSecAttrLabel, "label")) == errSecDuplicateItem)
            #expect(secAdd(base.with(kSecAttrPublicKeyHash, Data([1, 2, 3]))) == errSecDuplicateItem)
            #expect(secAdd(base.with(kSecValueData, Data([0x30, 0x00]))) == errSecDuplicateItem)
            #expect(secAdd(certItem(serial: "02", issuer: "CN=CA")) == errSecSuccess)
            #expect(secAdd(certItem(serial: "01", issuer: "CN=Other CA")) == errSecSuccess)
            #expect(secAdd(base.with(kSecAttrCertificateType, 2)) == errSecSuccess)
            #expect(matchCount(item(kSecClassCertificate)) == 4)
        }
    }

    // §2.1: keys key = kcls, klbl, atag, crtr, type, bsiz, esiz, sdat, edat (+ common).
    @Test func keyKey() {
        TemporaryKeychain.with { _ in
            let base = keyItem()
            #expect(secAdd(base.with(kSecAttrLabel, "one")) == errSecSuccess)
            #expect(secAdd(base.with(kSecAttrLabel, "two")) == errSecDuplicateItem)
            #expect(secAdd(base.with(kSecAttrCanSign, true)) == errSecDuplicateItem)
            #expect(secAdd(base.with(kSecAttrIsPermanent, true)) == errSecDuplicateItem)
            let distinct: [Query] = [
                [kSecAttrKeyClass as String: kSecAttrKeyClassPublic],
                [kSecAttrApplicationLabel as String: Data("label-2".utf8)],
                [kSecAttrApplicationTag as String: Data("other.tag".utf8)],
                [kSecAttrKeyCreator as String: 99],
                [kSecAttrKeyType as String: kSecAttrKeyTypeRSA],
                [kSecAttrKeySizeInBits as String: 384],
                [kSecAttrEffectiveKeySize as String: 128],
                [kSecAttrStartDate as String: Date(timeIntervalSinceReferenceDate: 1000)],
                [kSecAttrEndDate as String: Date(timeIntervalSinceReferenceDate: 2000)],
            ]
            for change in distinct {
                #expect(secAdd(base.with(change)) == errSecSuccess, "changing \(change.keys.sorted())")
            }
            #expect(matchCount(item(kSecClassKey)) == 1 + distinct.count)
        }
    }

    // §2.1 + §2.4: key class "1" and number 1 are the same stored value → collide.
    @Test func coercedKeyValuesCollide() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(item(kSecClassKey, [kSecAttrKeyClass: kSecAttrKeyClassPrivate, kSecAttrKeySizeInBits: "256"])) == errSecSuccess)
            #expect(secAdd(item(kSecClassKey, [kSecAttrKeyClass: 1, kSecAttrKeySizeInBits: 256])) == errSecDuplicateItem)
            // acct "bob" as string and as UTF-8 data are the same bytes.
            #expect(secAdd(genp("svc", "bob")) == errSecSuccess)
            #expect(secAdd(genp().with([kSecAttrService as String: "svc", kSecAttrAccount as String: Data("bob".utf8)])) == errSecDuplicateItem)
        }
    }

    // §2.1 [T si-05, si-12]: sync is part of the key for every class.
    @Test func synchronizableIsPartOfTheKeyForEveryClass() {
        TemporaryKeychain.with { _ in
            for query in [inet(), certItem(), keyItem()] {
                #expect(secAdd(query) == errSecSuccess)
                #expect(secAdd(query.with(kSecAttrSynchronizable, true)) == errSecSuccess)
                #expect(secAdd(query.with(kSecAttrSynchronizable, true)) == errSecDuplicateItem)
                #expect(matchCount(query.with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == 2)
            }
        }
    }
}
}
