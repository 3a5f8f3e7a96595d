import Foundation
import KeychainServices
import Testing

extension Conformance {
/// SecAccessControlCreateWithFlags and kSecAttrAccessControl (reference §2.3 pdmn, §2.4 accc, §3.2).
struct AccessControlTests {
    private func accessControl(_ protection: CFString, _ flags: SecAccessControlCreateFlags = []) -> SecAccessControl? {
        SecAccessControlCreateWithFlags(nil, protection, flags, nil)
    }

    // Apple's SecAccessControlCreateFlags raw values (SecAccessControl.h).
    @Test func flagRawValues() {
        #expect(SecAccessControlCreateFlags.userPresence.rawValue == 1 << 0)
        #expect(SecAccessControlCreateFlags.biometryAny.rawValue == 1 << 1)
        #expect(SecAccessControlCreateFlags.touchIDAny.rawValue == 1 << 1)
        #expect(SecAccessControlCreateFlags.biometryCurrentSet.rawValue == 1 << 3)
        #expect(SecAccessControlCreateFlags.touchIDCurrentSet.rawValue == 1 << 3)
        #expect(SecAccessControlCreateFlags.devicePasscode.rawValue == 1 << 4)
        #expect(SecAccessControlCreateFlags.watch.rawValue == 1 << 5)
        #expect(SecAccessControlCreateFlags.companion.rawValue == 1 << 5)
        #expect(SecAccessControlCreateFlags.or.rawValue == 1 << 14)
        #expect(SecAccessControlCreateFlags.and.rawValue == 1 << 15)
        #expect(SecAccessControlCreateFlags.privateKeyUsage.rawValue == 1 << 30)
        #expect(SecAccessControlCreateFlags.applicationPassword.rawValue == 1 << 31)
    }

    // Every kSecAttrAccessible value is a valid protection.
    @Test func createWithEveryProtection() {
        for protection in [
            kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAlways,
            kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            kSecAttrAccessibleAlwaysThisDeviceOnly, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
        ] {
            var error: Unmanaged<CFError>?
            let access = SecAccessControlCreateWithFlags(nil, protection, .userPresence, &error)
            #expect(access != nil, "\(protection)")
            #expect(error == nil, "\(protection)")
        }
        #expect(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, [.biometryAny, .or, .devicePasscode], nil) != nil)
        #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.biometryCurrentSet, .and, .applicationPassword], nil) != nil)
    }

    // Invalid protection → nil plus an errSecParam error.
    @Test func invalidProtectionIsRejected() {
        for protection: CFTypeRef in ["zz" as NSString, "" as NSString, NSNumber(value: 1), NSData()] {
            var error: Unmanaged<CFError>?
            let access = SecAccessControlCreateWithFlags(nil, protection, [], &error)
            #expect(access == nil)
            let nsError = error?.takeRetainedValue()
            #expect(nsError != nil)
            #expect(nsError?.code == Int(errSecParam))
        }
    }

    // .or together with .and → nil.
    @Test func orAndAndTogetherAreRejected() {
        var error: Unmanaged<CFError>?
        let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.userPresence, .or, .and], &error)
        #expect(access == nil)
        #expect(error?.takeRetainedValue() != nil)
    }

    // §2.3: pdmn is set from the access control's protection.
    @Test func accessibilityComesFromAccessControl() throws {
        try TemporaryKeychain.with { _ in
            let access = try #require(accessControl(kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly))
            #expect(secAdd(genp().with(kSecAttrAccessControl, access)) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            #expect(asString(attributes["pdmn"]) == "cku")
        }
    }

    // §3.6: accc is returned in the attributes as an access-control object.
    @Test func accessControlIsReturnedInAttributes() throws {
        try TemporaryKeychain.with { _ in
            let access = try #require(accessControl(kSecAttrAccessibleWhenUnlockedThisDeviceOnly))
            #expect(secAdd(genp().with(kSecAttrAccessControl, access)) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            let returned = try #require(attributes["accc"] as? SecAccessControl)
            #expect(returned == access)
            #expect(returned.protection == "aku")
            // Items without accc have none.
            #expect(secAdd(genp("plain")) == errSecSuccess)
            #expect(attrsOf(genp("plain"))?["accc"] == nil)
        }
    }

    // §3.6: the returned attribute dictionary (with accc) works as a query.
    @Test func returnedAccessControlAttributesWorkAsQuery() throws {
        try TemporaryKeychain.with { _ in
            let access = try #require(accessControl(kSecAttrAccessibleAfterFirstUnlock))
            #expect(secAdd(genp().with(kSecAttrAccessControl, access)) == errSecSuccess)
            var attributes = try #require(attrsOf(genp()))
            attributes["sha1"] = nil
            #expect(secCopy(attributes.with(kSecClass, kSecClassGenericPassword)).status == errSecSuccess)
        }
    }

    // §3.2 [C]: kSecAttrAccessible that differs from the access control's protection → errSecParam.
    @Test func conflictingAccessibilityIsParam() throws {
        try TemporaryKeychain.with { _ in
            let access = try #require(accessControl(kSecAttrAccessibleWhenUnlocked))
            #expect(secAdd(genp().with([
                kSecAttrAccessControl as String: access, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
            ])) == errSecParam)
            #expect(matchCount(genp()) == 0)
            #expect(secAdd(genp().with([
                kSecAttrAccessControl as String: access, kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked,
            ])) == errSecSuccess)
            #expect(asString(attrsOf(genp())?["pdmn"]) == "ak")
        }
    }

    // §3.2 [C; T secd-81-item-acl-stress]: accc with constraints + sync=true → errSecParam.
    @Test func constrainedAccessControlIsNotSynchronizable() throws {
        try TemporaryKeychain.with { _ in
            let access = try #require(accessControl(kSecAttrAccessibleWhenUnlocked, .userPresence))
            #expect(secAdd(genp().with([kSecAttrAccessControl as String: access, kSecAttrSynchronizable as String: true])) == errSecParam)
            let passcode = try #require(accessControl(kSecAttrAccessibleAfterFirstUnlock, .devicePasscode))
            #expect(secAdd(genp().with([kSecAttrAccessControl as String: passcode, kSecAttrSynchronizable as String: kCFBooleanTrue as Any])) == errSecParam)
            #expect(matchCount(genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == 0)
        }
    }

    // §2.4 [T testBadTypeInParams]: accc must be an access-control object.
    @Test func accessControlMustBeAnAccessControlObject() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrAccessControl, "ak")) == errSecParam)
            #expect(secAdd(genp().with(kSecAttrAccessControl, Data([1, 2]))) == errSecParam)
            #expect(secAdd(genp().with(kSecAttrAccessControl, 1)) == errSecParam)
            #expect(matchCount(genp()) == 0)
        }
    }
}
}
