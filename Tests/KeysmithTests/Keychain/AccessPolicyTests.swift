import Foundation
import Keysmith
import KeychainServices
import Testing

struct AccessPolicyTests {
    @Test func test_singleFactors_mapToApplesFlags() {
        #expect(AccessPolicy.userPresence.flags == .userPresence)
        #expect(AccessPolicy.biometryAny.flags == .biometryAny)
        #expect(AccessPolicy.biometryCurrentSet.flags == .biometryCurrentSet)
        #expect(AccessPolicy.devicePasscode.flags == .devicePasscode)
    }

    @Test func test_combinations_addOrAndAnd() {
        let either = AccessPolicy.anyOf([.biometryAny, .devicePasscode])
        #expect(either.flags == [.biometryAny, .devicePasscode, .or])
        let both = AccessPolicy.allOf([.biometryCurrentSet, .devicePasscode])
        #expect(both.flags == [.biometryCurrentSet, .devicePasscode, .and])
        #expect(AccessPolicy.anyOf([.biometryAny, .biometryAny]).factors == [.biometryAny])
        #expect(either.description == "anyOf(biometryAny, devicePasscode)")
    }

    @Test func test_requiresBiometry() {
        #expect(AccessPolicy.biometryCurrentSet.requiresBiometry)
        #expect(AccessPolicy.biometryAny.requiresBiometry)
        #expect(!AccessPolicy.userPresence.requiresBiometry)
        #expect(!AccessPolicy.anyOf([.biometryAny, .devicePasscode]).requiresBiometry)
        #expect(AccessPolicy.allOf([.biometryAny, .devicePasscode]).requiresBiometry)
    }

    @Test func test_storeWithPolicy_writesAnAccessControlledItem() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(
                service: uniqueService(), accessibility: .whenUnlockedThisDeviceOnly, accessPolicy: .biometryCurrentSet)
            try store.set("pin-1234", for: "pin")
            let attributes = try #require(try store.attributes(for: "pin"))
            #expect(attributes.hasAccessControl)
            #expect(attributes.accessibility == .whenUnlockedThisDeviceOnly)
            #expect(try store.contains("pin"))
        }
    }

    @Test func test_addingAPolicy_reachesTheExistingItem() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let plain = try KeychainStore(service: service, accessibility: .whenUnlockedThisDeviceOnly)
            try plain.set("pin-1234", for: "pin")
            #expect(try plain.attributes(for: "pin")?.hasAccessControl == false)
            let protected = try plain.with(accessibility: .whenUnlockedThisDeviceOnly, accessPolicy: .userPresence)
            try protected.set("pin-1234", for: "pin")
            #expect(try plain.attributes(for: "pin")?.hasAccessControl == true)
            #expect(try plain.allKeys() == ["pin"])
        }
    }
}
