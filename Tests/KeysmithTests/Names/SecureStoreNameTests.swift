import Foundation
import Keysmith
import KeychainServices
import Testing

/// Namespaces and keys of a ``SecureStore`` are compared byte for byte: Unicode twins are
/// two namespaces (two services) and two keys, in every listing, migration and cleanup.
struct SecureStoreNameTests {
    @Test func test_twinNamespaces_areDifferentNamespaces() {
        #expect(Namespace(precomposed) != Namespace(decomposed))
        #expect(Set([Namespace(precomposed), Namespace(decomposed)]).count == 2)
        #expect(Namespace(decomposed) < Namespace(precomposed))
    }

    @Test func test_keysIn_listsBothTwinKeys() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("one", for: precomposed, in: "auth")
            try store.set("two", for: decomposed, in: "auth")
            #expect(sortedUTF8(try store.keys(in: "auth")) == sortedUTF8([precomposed, decomposed]))
        }
    }

    @Test func test_namespaces_listsBothTwinNamespaces() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("a", for: "token", in: .account(precomposed))
            try store.set("b", for: "token", in: .account(decomposed))
            let names = try store.namespaces().map(\.name)
            #expect(sortedUTF8(names) == sortedUTF8(["account_\(precomposed)", "account_\(decomposed)"]))
        }
    }

    @Test func test_namespaceStartingWithACombiningMark_isListed() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("a", for: "token", in: Namespace("\u{301}mark"))
            #expect(utf8(try store.namespaces().map(\.name)) == utf8(["\u{301}mark"]))
        }
    }

    @Test func test_resetNamespace_ofOneTwin_keepsTheOther() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("ALICE", for: "token", in: .account(decomposed))
            try store.set("BOB", for: "token", in: .account(precomposed))
            try store.resetNamespace(.account(precomposed))
            #expect(try store.string(for: "token", in: .account(decomposed)) == "ALICE")
            #expect(try store.string(for: "token", in: .account(precomposed)) == nil)
        }
    }

    @Test func test_migrateService_movesBothTwinKeys_andIsCompleteOnlyThen() throws {
        try withTemporaryKeychain {
            let oldService = uniqueService("old")
            let old = try KeychainStore(service: oldService)
            try old.set("one", for: precomposed)
            try old.set("two", for: decomposed)
            let store = try makeStore()
            let report = try store.migrateService(from: oldService, to: "auth")
            #expect(sortedUTF8(report.migrated) == sortedUTF8([precomposed, decomposed]))
            #expect(report.isComplete)
            #expect(try old.allKeys() == [])
            #expect(try store.string(for: precomposed, in: "auth") == "one")
            #expect(try store.string(for: decomposed, in: "auth") == "two")
        }
    }

    @Test func test_migrateService_fromATwinServiceInTheSameGroup_movesTheItems() throws {
        try withTemporaryKeychain {
            let store = try SecureStore(
                configuration: SecureStore.Configuration(servicePrefix: uniquePrefix(), accessGroup: testAccessGroups[0]))
            // The old service is the namespace's service in the other Unicode form.
            let newService = store.service(for: Namespace(precomposed))
            let old = try KeychainStore(service: store.service(for: Namespace(decomposed)), accessGroup: testAccessGroups[0])
            try old.set("value", for: "token")
            let report = try store.migrateService(from: old.service, to: Namespace(precomposed))
            #expect(report.migrated == ["token"])
            #expect(try KeychainStore(service: newService).string(for: "token") == "value")
            #expect(try old.allKeys() == [])
        }
    }

    @Test func test_migrateService_conflictOnOneTwin_isReportedForThatTwinOnly() throws {
        try withTemporaryKeychain {
            let oldService = uniqueService("old")
            let old = try KeychainStore(service: oldService)
            try old.set("old", for: precomposed)
            try old.set("old", for: decomposed)
            let store = try makeStore()
            try store.set("new", for: precomposed, in: "auth")
            let report = try store.migrateService(from: oldService, to: "auth")
            #expect(utf8(report.conflicts) == utf8([precomposed]))
            #expect(utf8(report.migrated) == utf8([decomposed]))
            #expect(!report.isComplete)
            #expect(utf8(try old.allKeys()) == utf8([precomposed]))
        }
    }

    @Test func test_reinstallCleanup_removesBothTwinNamespaces() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let store = try makeStore()
                try ranCleanupInAnEarlierInstall(store)
                try store.set("ALICE", for: "token", in: .account(decomposed))
                try store.set("BOB", for: "token", in: .account(precomposed))
                let outcome = try store.removeLeftoversAfterReinstall(defaults: defaults)
                guard case .cleaned(let namespaces) = outcome else {
                    Issue.record("expected a cleanup, got \(outcome)")
                    return
                }
                #expect(sortedUTF8(namespaces.map(\.name)) == sortedUTF8(["account_\(decomposed)", "account_\(precomposed)"]))
                #expect(try store.contains("token", in: .account(decomposed)) == false)
                #expect(try store.contains("token", in: .account(precomposed)) == false)
            }
        }
    }
}
