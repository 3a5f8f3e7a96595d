import Foundation
import Keysmith
import KeychainServices
import Testing

struct ReinstallCleanupTests {
    @Test func test_firstLaunchAfterReinstall_removesLeftovers_andSetsTheMarker() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let store = try makeStore()
                // The previous install ran the cleanup (sentinel in the keychain) and left items;
                // the preferences were deleted with the app.
                try ranCleanupInAnEarlierInstall(store)
                try store.set("access_token", "old", in: "auth")
                try store.set("user_info", "old", in: .account("42"))
                let unrelated = try KeychainStore(service: uniqueService("unrelated"))
                try unrelated.set("keep", for: "k")

                let outcome = try store.removeLeftoversAfterReinstall(defaults: defaults)
                #expect(outcome == .cleaned(namespaces: [.account("42"), "auth"]))
                #expect(try store.namespaces() == [])
                #expect(try unrelated.string(for: "k") == "keep")
                #expect(defaults.bool(forKey: "\(store.configuration.servicePrefix).installed"))
            }
        }
    }

    @Test func test_laterLaunches_removeNothing() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let store = try makeStore()
                #expect(try store.removeLeftoversAfterReinstall(defaults: defaults) == .firstRun)
                try store.set("access_token", "new", in: "auth")
                #expect(try store.removeLeftoversAfterReinstall(defaults: defaults) == .notFirstLaunch)
                #expect(try store.get("access_token", as: String.self, in: "auth") == "new")
            }
        }
    }

    @Test func test_updateFromAVersionWithoutTheMarker_keepsData() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let store = try makeStore()
                try store.set("access_token", "existing-user", in: "auth")
                defaults.set(true, forKey: "onboarding_done")
                let cleanup = ReinstallCleanup(markerKey: "launched_before", upgradeIndicatorKeys: ["onboarding_done"])
                #expect(try store.removeLeftoversAfterReinstall(defaults: defaults, cleanup: cleanup) == .markedExistingInstall)
                #expect(try store.get("access_token", as: String.self, in: "auth") == "existing-user")
                #expect(defaults.bool(forKey: "launched_before"))
            }
        }
    }

    @Test func test_failedCleanup_leavesTheMarkerUnset_soItRetries() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let faults = ErrorInjection()
                let store = try makeStore(errorInjection: faults)
                try ranCleanupInAnEarlierInstall(store)
                try store.set("access_token", "old", in: "auth")
                faults.failNext(.delete, with: errSecIO)
                #expect(throws: SecureStoreError.self) { try store.removeLeftoversAfterReinstall(defaults: defaults) }
                #expect(defaults.object(forKey: "\(store.configuration.servicePrefix).installed") == nil)
                #expect(try store.removeLeftoversAfterReinstall(defaults: defaults) == .cleaned(namespaces: ["auth"]))
                #expect(try store.keys(in: "auth") == [])
            }
        }
    }

    @Test func test_biometricLeftovers_areRemovedToo() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let store = try makeStore(biometry: .fixed(.available))
                try ranCleanupInAnEarlierInstall(store)
                try store.setBiometricProtected("pin", "1234", in: "local_pin")
                try store.removeLeftoversAfterReinstall(defaults: defaults)
                #expect(try store.contains("pin", in: "local_pin") == false)
            }
        }
    }
}

/// Simulates an earlier install that ran the cleanup: its preferences (with the marker) are
/// gone, its keychain sentinel is not.
func ranCleanupInAnEarlierInstall(_ store: SecureStore) throws {
    try withTemporaryDefaults { defaults throws in
        #expect(try store.removeLeftoversAfterReinstall(defaults: defaults) == .firstRun)
    }
}
