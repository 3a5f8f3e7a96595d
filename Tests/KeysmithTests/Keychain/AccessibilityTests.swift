import Foundation
import Keysmith
import KeychainServices
import Testing

struct AccessibilityTests {
    @Test(arguments: Accessibility.allCases)
    func test_secValue_roundTripsThroughTheKeychainConstant(_ accessibility: Accessibility) {
        #expect(Accessibility(secValue: accessibility.secValue as String) == accessibility)
    }

    @Test func test_secValues_areApplesConstants() {
        #expect(Accessibility.whenUnlocked.secValue as String == kSecAttrAccessibleWhenUnlocked as String)
        #expect(Accessibility.whenUnlockedThisDeviceOnly.secValue as String == kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String)
        #expect(Accessibility.afterFirstUnlock.secValue as String == kSecAttrAccessibleAfterFirstUnlock as String)
        #expect(
            Accessibility.afterFirstUnlockThisDeviceOnly.secValue as String
                == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String)
        #expect(
            Accessibility.whenPasscodeSetThisDeviceOnly.secValue as String
                == kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly as String)
    }

    @Test func test_deprecatedAlways_isNotOffered() {
        #expect(Accessibility(secValue: kSecAttrAccessibleAlways as String) == nil)
        #expect(Accessibility(secValue: "nonsense") == nil)
    }

    @Test func test_thisDeviceOnlyAndBackgroundFlags() {
        #expect(Accessibility.afterFirstUnlockThisDeviceOnly.isThisDeviceOnly)
        #expect(!Accessibility.afterFirstUnlock.isThisDeviceOnly)
        #expect(Accessibility.afterFirstUnlockThisDeviceOnly.isAvailableWhileLocked)
        #expect(!Accessibility.whenUnlocked.isAvailableWhileLocked)
    }

    @Test(arguments: [Accessibility.whenUnlocked, .whenUnlockedThisDeviceOnly, .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly])
    func test_set_storesTheStoresAccessibility(_ accessibility: Accessibility) throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService(), accessibility: accessibility)
            try store.set("value", for: "token")
            #expect(try store.attributes(for: "token")?.accessibility == accessibility)
        }
    }

    @Test func test_changedAccessibility_reachesTheExistingItem() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let old = try KeychainStore(service: service, accessibility: .whenUnlocked)
            try old.set("v1", for: "refresh_token")
            #expect(try old.attributes(for: "refresh_token")?.accessibility == .whenUnlocked)

            // A new app version changes the setting: the next set re-applies it to the same item.
            let new = try KeychainStore(service: service, accessibility: .afterFirstUnlockThisDeviceOnly)
            #expect(try new.string(for: "refresh_token") == "v1")
            try new.set("v2", for: "refresh_token")
            let attributes = try #require(try new.attributes(for: "refresh_token"))
            #expect(attributes.accessibility == .afterFirstUnlockThisDeviceOnly)
            #expect(try new.allKeys() == ["refresh_token"])
            #expect(try old.string(for: "refresh_token") == "v2")
        }
    }

    @Test func test_withAccessibility_returnsAStoreForTheSameItems() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService(), accessibility: .whenUnlocked)
            try store.set("v", for: "k")
            let stricter = try store.with(accessibility: .whenUnlockedThisDeviceOnly)
            try stricter.set("v", for: "k")
            #expect(try store.attributes(for: "k")?.accessibility == .whenUnlockedThisDeviceOnly)
        }
    }
}
