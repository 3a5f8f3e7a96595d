// The label index: a label lookup gives exactly the items whose label equals the query's,
// on keychains whose rows carry a label hash, on rows written before the label was indexed
// (no hash), and on a mix of both; an update moves the hash; an edited hash never returns
// the wrong item and is caught by the rollback check.
import CSQLite
import Foundation
@testable import KeychainServices
import Testing

struct LabelIndexTests {
    private let service = "com.example.labels"

    /// The label hashes of the keychain's rows, by id (`nil`: the row has none).
    private func labelHashes(_ keychain: TemporaryKeychain) -> [Int64: Data?] {
        let path = keychain.directory.appendingPathComponent("keychain.db").path
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK else { return [:] }
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "SELECT id, h3 FROM items ORDER BY id", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        var hashes: [Int64: Data?] = [:]
        while sqlite3_step(statement) == SQLITE_ROW {
            let id = sqlite3_column_int64(statement, 0)
            if sqlite3_column_type(statement, 1) == SQLITE_NULL {
                hashes[id] = .some(nil)
            } else {
                let count = Int(sqlite3_column_bytes(statement, 1))
                hashes[id] = Data(bytes: sqlite3_column_blob(statement, 1), count: count)
            }
        }
        return hashes
    }

    /// Every item's account, label and data (matched without the label).
    private func everything() -> [[String: Any]] {
        var result: CFTypeRef?
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
            kSecReturnAttributes as String: true, kSecReturnData as String: true,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
        ]
        _ = SecItemCopyMatching(query as CFDictionary, &result)
        return (result as? [[String: Any]]) ?? []
    }

    /// The accounts (service/account) a query answers, sorted; the status when it fails.
    private func accounts(_ query: [String: Any]) -> (OSStatus, [String]) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(
            query.with([kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
                        kSecReturnData as String: true]) as CFDictionary, &result)
        let items = (result as? [[String: Any]]) ?? []
        for item in items {
            // The data is the one stored with the account (no item answers for another).
            let account = item[kSecAttrAccount as String] as? String ?? ""
            #expect(item[kSecValueData as String] as? Data == Data("data-\(account)".utf8))
        }
        return (status, items.map { "\($0[kSecAttrService as String] as? String ?? "")/\($0[kSecAttrAccount as String] as? String ?? "")" }.sorted())
    }

    /// The label lookups checked against the items every item's label is compared with.
    private func expectLabelLookupsMatchAFullScan(_ comment: Comment) {
        let all = everything()
        func expected(label: Any, service: String?, account: String?, filter: [String: Any]) -> [String] {
            all.filter { item in
                guard let stored = item[kSecAttrLabel as String] else { return false }
                let same: Bool
                switch (stored, label) {
                case (let stored as String, let label as String): same = Array(stored.utf8) == Array(label.utf8)
                case (let stored as Data, let label as Data): same = stored == label
                case (let stored as String, let label as Data): same = Data(stored.utf8) == label
                case (let stored as Data, let label as String): same = stored == Data(label.utf8)
                default: same = false
                }
                let synchronizable = (item[kSecAttrSynchronizable as String] as? NSNumber)?.boolValue ?? false
                let syncMatches: Bool
                switch filter[kSecAttrSynchronizable as String] {
                case nil: syncMatches = !synchronizable
                case let flag as Bool: syncMatches = synchronizable == flag
                default: syncMatches = true  // kSecAttrSynchronizableAny
                }
                let group = filter[kSecAttrAccessGroup as String] as? String
                return same && (service == nil || item[kSecAttrService as String] as? String == service)
                    && (account == nil || item[kSecAttrAccount as String] as? String == account)
                    && syncMatches && (group == nil || item[kSecAttrAccessGroup as String] as? String == group)
            }.map { "\($0[kSecAttrService as String] as? String ?? "")/\($0[kSecAttrAccount as String] as? String ?? "")" }.sorted()
        }
        let filters: [[String: Any]] = [
            [:], [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny],
            [kSecAttrSynchronizable as String: true], [kSecAttrAccessGroup as String: "com.example.shared"],
            [kSecAttrSynchronizable as String: false, kSecAttrAccessGroup as String: "com.example.app"],
        ]
        let labels: [Any] = ["shared", "unique-1", "unique-4", "", "missing", Data("as-data".utf8), "as-data", "Ünïcode"]
        for label in labels {
            for service in [nil, self.service, "com.example.other"] {
                for account in [nil, "k1", "k4"] {
                    for filter in filters {
                        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: label]
                        if let service { query[kSecAttrService as String] = service }
                        if let account { query[kSecAttrAccount as String] = account }
                        query.merge(filter) { _, new in new }
                        let want = expected(label: label, service: service, account: account, filter: filter)
                        let (status, got) = accounts(query)
                        #expect(got == want, "\(label) \(service ?? "-") \(account ?? "-") \(filter): \(comment)")
                        #expect(status == (want.isEmpty ? errSecItemNotFound : errSecSuccess), "\(label): \(comment)")
                    }
                }
            }
        }
    }

    private func add(_ service: String, _ account: String, label: Any?) {
        var attributes = genp(service, account).with(kSecValueData, Data("data-\(account)".utf8))
        if let label { attributes[kSecAttrLabel as String] = label }
        #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
    }

    private func fill() {
        add(service, "k1", label: "unique-1")
        add(service, "k2", label: "shared")
        add(service, "k3", label: "shared")
        add(service, "k4", label: "unique-4")
        add(service, "k5", label: nil)
        add(service, "k6", label: "")
        add(service, "k7", label: Data("as-data".utf8))
        add(service, "k8", label: "as-data")
        add(service, "k9", label: "Ünïcode")
        add(service, "k10", label: "Ünïcode".decomposedStringWithCanonicalMapping)
        add("com.example.other", "k1", label: "shared")
        add("com.example.other", "k4", label: "unique-4")
        // The same label and account, synchronizable, and in the shared group.
        #expect(SecItemAdd(genp(service, "k2").with([
            kSecValueData as String: Data("data-k2".utf8), kSecAttrLabel as String: "shared",
            kSecAttrSynchronizable as String: true,
        ]) as CFDictionary, nil) == errSecSuccess)
        #expect(SecItemAdd(genp(service, "k3").with([
            kSecValueData as String: Data("data-k3".utf8), kSecAttrLabel as String: "shared",
            kSecAttrAccessGroup as String: "com.example.shared",
        ]) as CFDictionary, nil) == errSecSuccess)
    }

    /// Makes the rows with the given ids look as if written before the label was indexed,
    /// and has the owner accept the edited file (the rollback check would refuse it).
    private func forgetLabelHashes(_ keychain: TemporaryKeychain, where condition: String) {
        KeychainEngine.close(directory: keychain.directory)
        RawKeychainFile(keychain).execute("UPDATE items SET h3 = NULL WHERE \(condition)")
        #expect(FileManager.default.createFile(
            atPath: keychain.directory.appendingPathComponent("keychain.anchor.reset").path, contents: Data()))
    }

    @Test func labelLookupsGiveTheSameItemsWithAndWithoutLabelHashes() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { fill() }
        #expect(labelHashes(keychain).values.allSatisfy { $0 != nil })
        keychain.run { expectLabelLookupsMatchAFullScan("every row hashed") }
        forgetLabelHashes(keychain, where: "id % 2 = 1")
        #expect(labelHashes(keychain).values.contains { $0 == nil })
        keychain.run { expectLabelLookupsMatchAFullScan("odd rows without a hash") }
        forgetLabelHashes(keychain, where: "1")
        #expect(labelHashes(keychain).values.allSatisfy { $0 == nil })
        keychain.run { expectLabelLookupsMatchAFullScan("no row hashed") }
        // A write seals a row again, with its hash; the others stay candidates.
        keychain.run {
            #expect(SecItemUpdate(genp(service, "k2") as CFDictionary, [kSecValueData as String: Data("data-k2".utf8)] as CFDictionary) == errSecSuccess)
        }
        #expect(labelHashes(keychain).values.filter { $0 != nil }.count == 1)
        keychain.run { expectLabelLookupsMatchAFullScan("one row hashed again") }
    }

    @Test func updatingTheLabelMovesItsHash() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { fill() }
        let before = labelHashes(keychain)
        keychain.run {
            #expect(SecItemUpdate(genp(service, "k1") as CFDictionary, [kSecAttrLabel as String: "renamed"] as CFDictionary) == errSecSuccess)
            #expect(accounts([kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "unique-1"]).1.isEmpty)
            #expect(accounts([kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "renamed"]).1 == ["\(service)/k1"])
            expectLabelLookupsMatchAFullScan("after a rename")
        }
        let after = labelHashes(keychain)
        let changed = after.keys.filter { after[$0]! != before[$0]! }
        #expect(changed.count == 1)
        #expect(changed.allSatisfy { after[$0]! != nil })
        // A row without a hash gets one when its label changes.
        forgetLabelHashes(keychain, where: "1")
        keychain.run {
            #expect(SecItemUpdate(genp(service, "k4") as CFDictionary, [kSecAttrLabel as String: "moved"] as CFDictionary) == errSecSuccess)
            #expect(accounts([kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "moved"]).1 == ["\(service)/k4"])
            #expect(accounts([kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "unique-4"]).1 == ["com.example.other/k4"])
            expectLabelLookupsMatchAFullScan("after a rename of a row without a hash")
        }
        #expect(labelHashes(keychain).values.filter { $0 != nil }.count == 1)
    }

    @Test func swappedLabelHashesNeverReturnTheWrongItemAndAreCaughtOnOpen() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            add(service, "a", label: "label-a")
            add(service, "b", label: "label-b")
        }
        let file = RawKeychainFile(keychain)
        let ids = file.rowIDs()
        file.execute(
            """
            CREATE TEMP TABLE saved AS SELECT id, h3 FROM items;
            UPDATE items SET h3 = (SELECT h3 FROM saved WHERE id = \(ids[1])) WHERE id = \(ids[0]);
            UPDATE items SET h3 = (SELECT h3 FROM saved WHERE id = \(ids[0])) WHERE id = \(ids[1]);
            """)
        keychain.run {
            let (status, found) = accounts([kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "label-a"])
            #expect(status == errSecItemNotFound)
            #expect(found.isEmpty)
        }
        // The label hash is part of each row's value: the edited file is refused on open.
        KeychainEngine.close(directory: keychain.directory)
        keychain.run {
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(genp(service, "a").with(kSecReturnData, true) as CFDictionary, &result) == errSecDecode)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("rolled back") == true)
        }
    }

    @Test func anUpgradedKeychainAnswersLabelLookups() throws {
        let directory = try KeychainUpgradeTests.copyOfFixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainUpgradeTests.environment(directory)
        KeychainUpgradeTests.expectFixtureItems(environment)
        KeychainEnvironment.withEnvironment(environment) {
            for pdmn in ["ak", "ck", "dk", "aku", "cku", "dku"] {
                var result: CFTypeRef?
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.fixture",
                    kSecAttrLabel as String: "Fixture item \(pdmn)", kSecReturnAttributes as String: true,
                    kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
                ]
                #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, "\(pdmn)")
                let items = (result as? [[String: Any]]) ?? []
                #expect(items.map { $0[kSecAttrAccount as String] as? String } == ["account-\(pdmn)"])
                #expect(items.first?[kSecValueData as String] as? Data == Data("secret-\(pdmn)".utf8))
            }
            var result: CFTypeRef?
            let unknown: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "Fixture item"]
            #expect(SecItemCopyMatching(unknown as CFDictionary, &result) == errSecItemNotFound)
            // Renaming an upgraded item moves it to its new label.
            let item: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.fixture",
                kSecAttrAccount as String: "account-ak",
            ]
            #expect(SecItemUpdate(item as CFDictionary, [kSecAttrLabel as String: "Renamed"] as CFDictionary) == errSecSuccess)
            let renamed: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "Renamed", kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(renamed as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("secret-ak".utf8))
            let old: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "Fixture item ak"]
            #expect(SecItemCopyMatching(old as CFDictionary, &result) == errSecItemNotFound)
        }
        // The schema was upgraded, and the rows written before it have no label hash.
        var handle: OpaquePointer?
        #expect(sqlite3_open(directory.appendingPathComponent("keychain.db").path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "SELECT (SELECT user_version FROM pragma_user_version), count(*), count(h3) FROM items", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        // Schema 3: the anchor also covers the protection records.
        #expect(sqlite3_column_int64(statement, 0) == 3)
        #expect(sqlite3_column_int64(statement, 1) == 8)
        #expect(sqlite3_column_int64(statement, 2) == 1)  // only the renamed one
    }
}
