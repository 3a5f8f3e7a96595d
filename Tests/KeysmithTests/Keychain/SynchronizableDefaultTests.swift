// Asking for a synchronizable store without naming an accessibility picks one that can
// leave the device (ThisDeviceOnly items never sync), instead of failing.
import Foundation
import Keysmith
import KeychainServices
import Testing

struct SynchronizableDefaultTests {
    @Test func synchronizableStore_withoutAnAccessibility_usesAfterFirstUnlock() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService(), synchronizable: true)
            #expect(store.accessibility == .afterFirstUnlock)
            try store.set("synced", for: "token")
            #expect(try store.attributes(for: "token")?.accessibility == .afterFirstUnlock)
            #expect(try store.string(for: "token") == "synced")
        }
    }

    @Test func synchronizableInternetPasswords_withoutAnAccessibility_useAfterFirstUnlock() throws {
        let store = try KeychainStore(server: InternetServer(host: "example.com"), synchronizable: true)
        #expect(store.accessibility == .afterFirstUnlock)
    }

    @Test func localStore_keepsTheDeviceOnlyDefault() throws {
        #expect(try KeychainStore(service: "com.example.local").accessibility == .afterFirstUnlockThisDeviceOnly)
    }

    @Test func anExplicitDeviceOnlyAccessibility_isStillRefused() {
        #expect(throws: KeychainError.self) {
            try KeychainStore(service: "com.example.sync", accessibility: .whenUnlockedThisDeviceOnly, synchronizable: true)
        }
    }
}
