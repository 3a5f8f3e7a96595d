import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §3.2 (SecItemAdd) rules not covered by the other families.
struct AddTests {
    // §3.2 [T si-05 case 1b]: result pointer given but no return key → result stays nil.
    @Test func noReturnKeyLeavesResultNil() {
        TemporaryKeychain.with { _ in
            let (status, result) = secAddReturning(genp().with(kSecValueData, testSecret()))
            #expect(status == errSecSuccess)
            #expect(result == nil)
        }
    }

    // §3.2: a failed add (duplicate) leaves the result nil.
    @Test func duplicateAddLeavesResultNil() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let (status, result) = secAddReturning(genp().with(kSecReturnAttributes, true))
            #expect(status == errSecDuplicateItem)
            #expect(result == nil)
        }
    }

    // §3.2 [H]: kSecValueRef for passwords → errSecParam.
    @Test func valueRefForPasswordsIsParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueRef, Data([1, 2, 3]) as NSData)) == errSecParam)
            #expect(secAdd(inet().with(kSecValueRef, "ref" as NSString)) == errSecParam)
            #expect(matchCount(genp()) == 0)
            #expect(matchCount(inet()) == 0)
        }
    }

    // §3.2: the secret stored on add is returned unchanged, byte for byte.
    @Test func secretRoundTripsByteForByte() {
        TemporaryKeychain.with { _ in
            let secrets: [Data] = [Data([0]), Data([0xFF, 0x00, 0x7F]), Data((0..<256).map { UInt8($0) }), Data("päss wörd ✓".utf8)]
            for (index, value) in secrets.enumerated() {
                #expect(secAdd(genp("svc", "a\(index)").with(kSecValueData, value)) == errSecSuccess)
            }
            for (index, value) in secrets.enumerated() {
                #expect(secret(of: genp("svc", "a\(index)")) == value)
            }
        }
    }

    // §3.2: add in each class with return attributes gives the class's attributes.
    @Test func addReturnsAttributesForEveryClass() {
        TemporaryKeychain.with { _ in
            let items: [(Query, String, String)] = [
                (genp("svc", "acct"), "acct", "acct"),
                (inet("host.example", "acct"), "srvr", "host.example"),
                (keyItem(tag: "tag").with(kSecAttrLabel, "key-label"), "labl", "key-label"),
                (certItem().with(kSecAttrLabel, "cert-label"), "labl", "cert-label"),
            ]
            for (query, key, value) in items {
                let (status, result) = secAddReturning(query.with(kSecReturnAttributes, true))
                #expect(status == errSecSuccess)
                #expect(asString(asDictionary(result)?[key]) == value)
            }
        }
    }
}
}
