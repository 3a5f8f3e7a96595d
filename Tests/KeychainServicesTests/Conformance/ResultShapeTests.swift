import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §3.6 (result shapes for SecItemAdd and SecItemCopyMatching).
struct ResultShapeTests {
    private struct Keys: CustomStringConvertible {
        var data = false, attributes = false, ref = false, persistentRef = false
        var count: Int { [data, attributes, ref, persistentRef].filter { $0 }.count }
        var query: Query {
            var query: Query = [:]
            if data { query[kSecReturnData as String] = true }
            if attributes { query[kSecReturnAttributes as String] = true }
            if ref { query[kSecReturnRef as String] = true }
            if persistentRef { query[kSecReturnPersistentRef as String] = true }
            return query
        }
        var description: String {
            [data ? "r_Data" : nil, attributes ? "r_Attributes" : nil, ref ? "r_Ref" : nil, persistentRef ? "r_PersistentRef" : nil]
                .compactMap { $0 }.joined(separator: "+")
        }
        static var all: [Keys] {
            (0..<16).map { bits in
                Keys(data: bits & 1 != 0, attributes: bits & 2 != 0, ref: bits & 4 != 0, persistentRef: bits & 8 != 0)
            }
        }
    }

    /// Checks one result (single object or array element) of a genp item that has a secret.
    private func checkShape(
        _ value: Any?, _ keys: Keys, expectedSecret: Data, expectedAccount: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        switch keys.count {
        case 0:
            #expect(value == nil, "\(keys)", sourceLocation: sourceLocation)
        case 1 where keys.data:
            #expect(asData(value) == expectedSecret, "\(keys)", sourceLocation: sourceLocation)
        case 1 where keys.attributes:
            let dictionary = asDictionary(value)
            #expect(dictionary != nil, "\(keys)", sourceLocation: sourceLocation)
            #expect(asString(dictionary?["acct"]) == expectedAccount, "\(keys)", sourceLocation: sourceLocation)
            for key in valueKeys + ["class", "sha1", "persistref", "UUID"] {
                #expect(dictionary?[key] == nil, "\(keys): unexpected \(key)", sourceLocation: sourceLocation)
            }
        case 1 where keys.ref:
            // Passwords have no ref object on iOS.
            #expect(value == nil, "\(keys)", sourceLocation: sourceLocation)
        case 1:
            let reference = asData(value)
            #expect(reference != nil, "\(keys)", sourceLocation: sourceLocation)
            #expect(reference.map { $0.prefix(4) == Data("genp".utf8) } == true, "\(keys)", sourceLocation: sourceLocation)
        default:
            let dictionary = asDictionary(value)
            #expect(dictionary != nil, "\(keys) must give a dictionary", sourceLocation: sourceLocation)
            guard let dictionary else { return }
            if keys.data {
                #expect(asData(dictionary["v_Data"]) == expectedSecret, "\(keys)", sourceLocation: sourceLocation)
            } else {
                #expect(dictionary["v_Data"] == nil, "\(keys)", sourceLocation: sourceLocation)
            }
            if keys.persistentRef {
                #expect(asData(dictionary["v_PersistentRef"]).map { $0.prefix(4) == Data("genp".utf8) } == true, "\(keys)", sourceLocation: sourceLocation)
            } else {
                #expect(dictionary["v_PersistentRef"] == nil, "\(keys)", sourceLocation: sourceLocation)
            }
            if keys.attributes || keys.ref {
                #expect(asString(dictionary["acct"]) == expectedAccount, "\(keys): attributes expected", sourceLocation: sourceLocation)
                #expect(asString(dictionary["svce"]) == "svc", "\(keys): attributes expected", sourceLocation: sourceLocation)
            }
            if keys.ref {
                #expect(asString(dictionary["class"]) == "genp", "\(keys): class key expected with r_Ref", sourceLocation: sourceLocation)
            } else {
                #expect(dictionary["class"] == nil, "\(keys): no class key without r_Ref", sourceLocation: sourceLocation)
            }
            #expect(dictionary["v_Ref"] == nil, "\(keys): passwords have no ref", sourceLocation: sourceLocation)
            #expect(dictionary["persistref"] == nil && dictionary["UUID"] == nil, "\(keys)", sourceLocation: sourceLocation)
        }
    }

    // §3.6: every combination of return keys, single result.
    @Test func everyCombinationSingleResult() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "alice").with(kSecValueData, testSecret("alice"))) == errSecSuccess)
            for keys in Keys.all {
                let (status, result) = secCopy(genp("svc", "alice").with(keys.query))
                #expect(status == errSecSuccess, "\(keys)")
                checkShape(result, keys, expectedSecret: testSecret("alice"), expectedAccount: "alice")
            }
        }
    }

    // §3.6: every combination with LimitAll → array of the same shapes.
    // (No return key + LimitAll is a [?] quirk and is not checked.)
    @Test func everyCombinationLimitAll() {
        TemporaryKeychain.with { _ in
            for account in ["alice", "bob"] {
                #expect(secAdd(genp("svc", account).with(kSecValueData, testSecret(account))) == errSecSuccess)
            }
            let svc = item(kSecClassGenericPassword, [kSecAttrService: "svc", kSecMatchLimit: kSecMatchLimitAll])
            for keys in Keys.all where keys.count > 0 {
                let (status, result) = secCopy(svc.with(keys.query))
                #expect(status == errSecSuccess, "\(keys)")
                let array = asArray(result)
                #expect(array != nil, "\(keys) with LimitAll must give an array")
                guard let array else { continue }
                if keys.count == 1 && keys.ref {
                    // nil refs (passwords) are dropped.
                    #expect(array.isEmpty, "\(keys)")
                    continue
                }
                #expect(array.count == 2, "\(keys)")
                for (element, account) in zip(array, ["alice", "bob"]) {
                    checkShape(element, keys, expectedSecret: testSecret(account), expectedAccount: account)
                }
            }
        }
    }

    // §3.6: SecItemAdd's result follows the same rules [T si-05 case 1b, 2, 5, 6].
    @Test func addResultShapes() {
        TemporaryKeychain.with { _ in
            for (index, keys) in Keys.all.enumerated() {
                let account = "user\(index)"
                let (status, result) = secAddReturning(genp("svc", account).with(keys.query).with(kSecValueData, testSecret(account)))
                #expect(status == errSecSuccess, "\(keys)")
                checkShape(result, keys, expectedSecret: testSecret(account), expectedAccount: account)
            }
        }
    }

    // §3.6: the add result's persistent ref is the one CopyMatching returns.
    @Test func addPersistentRefMatchesCopyMatching() {
        TemporaryKeychain.with { _ in
            let (status, result) = secAddReturning(genp().with(kSecReturnPersistentRef, true))
            #expect(status == errSecSuccess)
            #expect(asData(result) != nil)
            #expect(asData(result) == persistentRef(of: genp()))
        }
    }

    // §3.6 [T testGenpReturnRef/testInetReturnRef]: r_Ref on passwords → status 0, nil.
    @Test func returnRefOnPasswordsIsNil() {
        TemporaryKeychain.with { _ in
            let added = secAddReturning(genp().with(kSecReturnRef, true))
            #expect(added.status == errSecSuccess)
            #expect(added.result == nil)
            let found = secCopy(genp().with(kSecReturnRef, true))
            #expect(found.status == errSecSuccess)
            #expect(found.result == nil)
            let addedInet = secAddReturning(inet().with(kSecReturnRef, true))
            #expect(addedInet.status == errSecSuccess)
            #expect(addedInet.result == nil)
            let foundInet = secCopy(inet().with(kSecReturnRef, true))
            #expect(foundInet.status == errSecSuccess)
            #expect(foundInet.result == nil)
        }
    }

    // §3.6 [T testSecItemCopyMatchingDoesNotReturnPersistRefs]: UUID/persistref never in attributes, for any class.
    @Test func persistRefAndUUIDAreNeverReturned() {
        TemporaryKeychain.with { _ in
            let items = [genp(), inet(), certItem(), keyItem()]
            for query in items {
                #expect(secAdd(query.with(kSecValueData, Data([1, 2, 3]))) == errSecSuccess)
                for returnKeys in [
                    [kSecReturnAttributes as String: true],
                    [kSecReturnAttributes as String: true, kSecReturnData as String: true],
                    [kSecReturnAttributes as String: true, kSecReturnPersistentRef as String: true],
                ] as [Query] {
                    let dictionary = asDictionary(secCopy(query.with(returnKeys)).result)
                    #expect(dictionary != nil)
                    #expect(dictionary?["persistref"] == nil)
                    #expect(dictionary?["UUID"] == nil)
                }
            }
        }
    }

    // §3.6 [T si-80]: r_Data + r_Attributes for an item without a secret → dictionary without v_Data.
    @Test func dataAndAttributesWithoutSecret() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let dictionary = asDictionary(secCopy(genp().with([kSecReturnData as String: true, kSecReturnAttributes as String: true])).result)
            #expect(dictionary != nil)
            #expect(dictionary?["v_Data"] == nil)
            #expect(asString(dictionary?["acct"]) == "alice")
            let all = asArray(secCopy(genp().with([
                kSecReturnData as String: true, kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
            ])).result)
            #expect(all?.count == 1)
            #expect(asDictionary(all?.first)?["v_Data"] == nil)
        }
    }

    // §3.6 [T testInetBinaryFields]: binn/bini/bin0..3 only with r_Data.
    @Test func internetBinaryFieldsOnlyWithData() throws {
        try TemporaryKeychain.with { _ in
            let fields = ["binn", "bini", "bin0", "bin1", "bin2", "bin3"]
            var query = inet().with(kSecValueData, testSecret())
            for (index, field) in fields.enumerated() { query[field] = Data("field-\(index)".utf8) }
            #expect(secAdd(query) == errSecSuccess)

            let attributesOnly = try #require(attrsOf(inet()))
            for field in fields {
                #expect(attributesOnly[field] == nil, "\(field) must not come back without r_Data")
            }
            let withData = try #require(asDictionary(secCopy(inet().with([
                kSecReturnAttributes as String: true, kSecReturnData as String: true,
            ])).result))
            for (index, field) in fields.enumerated() {
                #expect(asData(withData[field]) == Data("field-\(index)".utf8), "\(field) must come back with r_Data")
            }
            #expect(asData(withData["v_Data"]) == testSecret())
        }
    }

    // §3.6 [T si-10]: the returned attribute dictionary (minus sha1) plus kSecClass finds the same item.
    @Test func returnedAttributesWorkAsQuery() throws {
        try TemporaryKeychain.with { _ in
            let items: [(Query, CFString)] = [
                (genp("svc", "alice").with([kSecAttrLabel as String: "L", kSecAttrComment as String: "C", kSecAttrIsInvisible as String: true]), kSecClassGenericPassword),
                (inet().with([kSecAttrPort as String: 8443, kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPath as String: "/p"]), kSecClassInternetPassword),
                (certItem().with(kSecAttrSubject, Data("CN=leaf".utf8)), kSecClassCertificate),
                (keyItem().with(kSecAttrCanSign, true), kSecClassKey),
            ]
            for (query, itemClass) in items {
                #expect(secAdd(query.with(kSecValueData, Data([9, 9]))) == errSecSuccess)
                // A second item of the same class, so a wrong match would show.
                #expect(secAdd(item(itemClass, [kSecAttrLabel: "decoy"])) == errSecSuccess)
                for returnKeys in [[kSecReturnAttributes as String: true], [kSecReturnAttributes as String: true, kSecReturnData as String: true]] as [Query] {
                    var attributes = try #require(asDictionary(secCopy(query.with(returnKeys)).result))
                    attributes["sha1"] = nil
                    attributes["v_Data"] = nil
                    let reQuery = attributes.with([kSecClass as String: itemClass, kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnPersistentRef as String: true])
                    let (status, result) = secCopy(reQuery)
                    #expect(status == errSecSuccess, "\(itemClass)")
                    let refs = asArray(result)?.compactMap { asData($0) }
                    #expect(refs == [persistentRef(of: query)].compactMap { $0 }, "\(itemClass)")
                }
            }
        }
    }

    // §3.6: sha1 appears only when data is returned as well; class only with r_Ref.
    @Test func attributeOnlyResultHasNoSha1OrClass() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, testSecret())) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            #expect(attributes["sha1"] == nil)
            #expect(attributes["class"] == nil)
            #expect(attributes["v_Data"] == nil)
        }
    }

    // §3.6: attribute dictionary contents: caller's attributes plus defaults.
    @Test func attributeDictionaryContents() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with([
                kSecAttrLabel as String: "label", kSecAttrDescription as String: "desc", kSecAttrComment as String: "comment",
                kSecAttrGeneric as String: Data([7]), kSecAttrCreator as String: 1, kSecAttrType as String: 2,
                kSecValueData as String: testSecret(),
            ])) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            #expect(asString(attributes["labl"]) == "label")
            #expect(asString(attributes["desc"]) == "desc")
            #expect(asString(attributes["icmt"]) == "comment")
            #expect(asData(attributes["gena"]) == Data([7]))
            #expect(asNumber(attributes["crtr"]) == 1)
            #expect(asNumber(attributes["type"]) == 2)
            for key in ["acct", "svce", "cdat", "mdat", "pdmn", "agrp", "sync", "tomb", "musr"] {
                #expect(attributes[key] != nil, "missing \(key)")
            }
        }
    }
}
}
