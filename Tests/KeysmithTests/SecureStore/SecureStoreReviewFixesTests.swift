import Foundation
import Keysmith
import KeychainServices
import Testing

/// Regression tests for the review of SecureStore.
struct SecureStoreReviewFixesTests {
    private let defaultGroup = testAccessGroups[0]
    private let sharedGroup = testAccessGroups[1]

    // MARK: Finding 1: migration with overlapping access groups

    @Test func test_serviceMigration_sameService_noGroupToSharedGroup_keepsTheMigratedCopy() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let source = try KeychainStore(service: service)
            let destination = try KeychainStore(service: service, accessGroup: sharedGroup)
            try source.set("secret", for: "token")

            let report = try ServiceMigration(from: source, to: destination).run()
            #expect(report.migrated == ["token"])
            #expect(try destination.string(for: "token") == "secret")
            let oldCopy = try KeychainStore(service: service, accessGroup: defaultGroup)
            #expect(try oldCopy.contains("token") == false)

            // Idempotent: the item now in the destination's group is not a source copy.
            let second = try ServiceMigration(from: source, to: destination).run()
            #expect(second.migrated.isEmpty && second.alreadyPresent.isEmpty)
            #expect(try destination.string(for: "token") == "secret")
        }
    }

    @Test func test_serviceMigration_sameService_sharedGroupToNoGroup_isRefused_andKeepsTheItem() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let source = try KeychainStore(service: service, accessGroup: sharedGroup)
            let destination = try KeychainStore(service: service)
            try source.set("secret", for: "token")

            let error = #expect(throws: KeychainError.self) { try ServiceMigration(from: source, to: destination).run() }
            #expect(error?.code == .invalidParameters)
            #expect(try source.string(for: "token") == "secret")
        }
    }

    @Test func test_secureStore_sharedGroup_migrateService_fromItsOwnUngroupedService_keepsTheValue() throws {
        try withTemporaryKeychain {
            let store = try SecureStore(
                configuration: SecureStore.Configuration(servicePrefix: uniquePrefix(), accessGroup: sharedGroup))
            let old = try KeychainStore(service: store.service(for: "auth"))
            try old.set("secret", for: "access_token")

            let report = try store.migrateService(from: store.service(for: "auth"), to: "auth")
            #expect(report.migrated == ["access_token"])
            #expect(try store.get("access_token", as: String.self, in: "auth") == "secret")
            let shared = try KeychainStore(service: store.service(for: "auth"), accessGroup: sharedGroup)
            #expect(try shared.string(for: "access_token") == "secret")
            let ungrouped = try KeychainStore(service: store.service(for: "auth"), accessGroup: defaultGroup)
            #expect(try ungrouped.contains("access_token") == false)
        }
    }

    @Test func test_secureStore_migrateService_fromSharedGroupToUngroupedSameService_isRefused() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            let old = try KeychainStore(service: store.service(for: "auth"), accessGroup: sharedGroup)
            try old.set("secret", for: "access_token")
            let error = #expect(throws: SecureStoreError.self) {
                try store.migrateService(from: store.service(for: "auth"), oldAccessGroup: sharedGroup, to: "auth")
            }
            #expect(error?.code == .invalidValue)
            #expect(try old.string(for: "access_token") == "secret")
        }
    }

    // MARK: Finding 2: reinstall cleanup

    @Test func test_reinstallCleanup_firstAdoption_withoutIndicators_keepsExistingData() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults throws in
                let store = try makeStore()
                // Data written by a version that did not run the cleanup.
                try store.set("access_token", "existing-user", in: "auth")
                let outcome = try store.removeLeftoversAfterReinstall(defaults: defaults)
                if case .cleaned = outcome { Issue.record("the first adoption must not clean: \(outcome)") }
                #expect(try store.get("access_token", as: String.self, in: "auth") == "existing-user")
                #expect(try store.removeLeftoversAfterReinstall(defaults: defaults) == .notFirstLaunch)
                #expect(try store.get("access_token", as: String.self, in: "auth") == "existing-user")
            }
        }
    }

    @Test func test_reinstallCleanup_removesOnlyThisStoresNamespaces_notOtherServicesUnderThePrefix() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            let prefix = store.configuration.servicePrefix
            let payments = try SecureStore(servicePrefix: prefix + ".payments")
            let keys = try KeychainStore(service: prefix + ".keys")
            // The previous install ran the cleanup, then wrote data.
            try withTemporaryDefaults { defaults in _ = try store.removeLeftoversAfterReinstall(defaults: defaults) }
            try store.set("access_token", "old", in: "auth")
            try payments.set("card", "4111", in: "cards")
            try keys.set("signing-key", for: "k")
            #expect(try store.namespaces() == ["auth"])

            // Reinstall: the preferences are gone, the keychain is not.
            try withTemporaryDefaults { defaults throws in
                let outcome = try store.removeLeftoversAfterReinstall(defaults: defaults)
                #expect(outcome == .cleaned(namespaces: ["auth"]))
            }
            #expect(try store.get("access_token", as: String.self, in: "auth") == nil)
            #expect(try payments.get("card", as: String.self, in: "cards") == "4111")
            #expect(try keys.string(for: "k") == "signing-key")
        }
    }

    @Test func test_reinstallCleanup_firstRun_setsTheSentinel_thenAReinstallCleans() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try withTemporaryDefaults { defaults throws in
                #expect(try store.removeLeftoversAfterReinstall(defaults: defaults) == .firstRun)
                try store.set("pin", "1234", in: "local_pin")
                #expect(try store.removeLeftoversAfterReinstall(defaults: defaults) == .notFirstLaunch)
            }
            try withTemporaryDefaults { defaults throws in
                #expect(try store.removeLeftoversAfterReinstall(defaults: defaults) == .cleaned(namespaces: ["local_pin"]))
                #expect(try store.removeLeftoversAfterReinstall(defaults: defaults) == .notFirstLaunch)
            }
            #expect(try store.keys(in: "local_pin") == [])
        }
    }

    // MARK: Finding 4: biometric protection

    @Test(arguments: [AccessPolicy.devicePasscode, .userPresence])
    func test_passcodePolicies_areAppliedWithoutBiometry(_ policy: AccessPolicy) throws {
        try withTemporaryKeychain {
            let store = try makeStore(biometry: .fixed(.unavailable(reason: "no biometric hardware")))
            let result = try store.setBiometricProtected("pin", "1234", in: "local_pin", policy: policy)
            #expect(result == .protected(policy))
            let keychain = try KeychainStore(service: store.service(for: "local_pin"))
            #expect(try keychain.attributes(for: "pin")?.hasAccessControl == true)
        }
    }

    @Test func test_biometryLockout_throws_andDoesNotStoreUnprotected() throws {
        try withTemporaryKeychain {
            let store = try makeStore(biometry: .fixed(.lockedOut(reason: "too many attempts")))
            let error = #expect(throws: SecureStoreError.self) { try store.setBiometricProtected("pin", "1234", in: "local_pin") }
            #expect(error?.code == .authFailed)
            #expect(try store.contains("pin", in: "local_pin") == false)
        }
    }

    @Test func test_fallback_overAProtectedItem_storesAPlainItem() throws {
        try withTemporaryKeychain {
            let prefix = uniquePrefix()
            let withBiometry = try SecureStore(
                configuration: SecureStore.Configuration(servicePrefix: prefix, biometry: .fixed(.available)))
            let withoutBiometry = try SecureStore(
                configuration: SecureStore.Configuration(
                    servicePrefix: prefix, biometry: .fixed(.unavailable(reason: "enrollment removed"))))
            #expect(try withBiometry.setBiometricProtected("pin", "1234", in: "local_pin").isProtected)

            let result = try withoutBiometry.setBiometricProtected("pin", "5678", in: "local_pin")
            #expect(!result.isProtected)
            let keychain = try KeychainStore(service: withoutBiometry.service(for: "local_pin"))
            let attributes = try #require(try keychain.attributes(for: "pin"))
            #expect(attributes.hasAccessControl == false)
            #expect(attributes.accessibility == .afterFirstUnlockThisDeviceOnly)
            #expect(try withoutBiometry.get("pin", as: String.self, in: "local_pin") == "5678")
        }
    }
}
