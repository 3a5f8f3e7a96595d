import Foundation
import Keysmith
import KeychainServices
import Testing

/// Keys, services and groups are compared byte for byte by the typed keychain layer: two
/// names that differ only in Unicode form are two names in every listing and comparison.
struct KeychainStoreNameTests {
    @Test func test_allKeys_listsBothUnicodeTwins_eachReadingItsOwnValue() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set("one", for: precomposed)
            try store.set("two", for: decomposed)
            #expect(sortedUTF8(try store.allKeys()) == sortedUTF8([precomposed, decomposed]))
            #expect(try store.allAttributes().count == 2)
            #expect(try store.string(for: precomposed) == "one")
            #expect(try store.string(for: decomposed) == "two")
        }
    }

    @Test func test_allKeys_areInByteOrder() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            for key in ["b", decomposed, precomposed, "a"] { try store.set("v", for: key) }
            // UTF-8 byte order: "a" < "b" < "jose\u{301}" < "jos\u{E9}" (0x65 < 0xC3).
            #expect(utf8(try store.allKeys()) == utf8(["a", "b", decomposed, precomposed]))
        }
    }

    @Test func test_keyInTwoAccessGroups_isListedOnceAsAKey_andTwiceAsAnItem() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            try KeychainStore(service: service, accessGroup: testAccessGroups[0]).set("first", for: "k")
            try KeychainStore(service: service, accessGroup: testAccessGroups[1]).set("second", for: "k")
            let everyGroup = try KeychainStore(service: service)
            #expect(try everyGroup.allKeys() == ["k"])
            let items = try everyGroup.allAttributes()
            #expect(items.count == 2)
            #expect(Set(items.compactMap(\.accessGroup).map { Array($0.utf8) }) == Set(testAccessGroups.map { Array($0.utf8) }))
            #expect(try KeychainStore(service: service, accessGroup: testAccessGroups[1]).allKeys() == ["k"])
        }
    }

    @Test func test_genericPasswordServices_listsBothTwinServices() throws {
        try withTemporaryKeychain {
            let base = uniqueService()
            try KeychainStore(service: "\(base).\(precomposed)").set("v", for: "k")
            try KeychainStore(service: "\(base).\(decomposed)").set("v", for: "k")
            let services = try KeychainStore.genericPasswordServices().filter { $0.utf8.starts(with: base.utf8) }
            #expect(sortedUTF8(services) == sortedUTF8(["\(base).\(precomposed)", "\(base).\(decomposed)"]))
        }
    }

    @Test func test_providerServices_matchThePrefixByteForByte() throws {
        try withTemporaryKeychain {
            let base = uniqueService()
            let provider = KeychainStoreProvider(accessGroup: nil, accessibility: .afterFirstUnlockThisDeviceOnly)
            try provider.setItem(Data("v".utf8), key: "k", service: "\(base).\(decomposed)", protection: .standard)
            // A last component that starts with a combining mark: still under the prefix's bytes.
            try provider.setItem(Data("v".utf8), key: "k", service: "\(base).\u{301}mark", protection: .standard)
            #expect(
                sortedUTF8(try provider.services(withPrefix: "\(base).")) == sortedUTF8(["\(base).\(decomposed)", "\(base).\u{301}mark"]))
            // The other spelling is another prefix.
            #expect(try provider.services(withPrefix: "\(base).\(precomposed)") == [])
        }
    }

    @Test func test_itemClassesOfTwinServices_areDifferent() throws {
        let first = KeychainItemClass.genericPassword(service: "com.example.\(precomposed)")
        let second = KeychainItemClass.genericPassword(service: "com.example.\(decomposed)")
        #expect(first != second)
        #expect(Set([first, second]).count == 2)
        let hostA = try InternetServer(host: "\(precomposed).example.com")
        let hostB = try InternetServer(host: "\(decomposed).example.com")
        #expect(hostA != hostB)
    }
}

/// The attributes of twin items are different values.
struct KeychainItemAttributesNameTests {
    @Test func test_attributesOfTwinKeys_areDifferent() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set("same", for: precomposed)
            try store.set("same", for: decomposed)
            let items = try store.allAttributes()
            #expect(items.count == 2)
            guard items.count == 2 else { return }
            // Same dates may come back for both; the keys alone tell them apart.
            #expect(items[0] != items[1])
            #expect(Set(items).count == 2)
        }
    }
}
