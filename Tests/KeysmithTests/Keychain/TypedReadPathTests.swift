#if os(Linux)
// KeychainStore's generic-password reads and KeychainKeySource's lookups go to the keychain
// without query dictionaries on Linux. They answer as the SecItemCopyMatching calls they
// stand for: the same data, the same misses, the same errors with the same detail.
import Foundation
import KeychainServices
import Keysmith
import Testing

struct TypedReadPathTests {
    /// The data `SecItemCopyMatching` gives for the query `KeychainStore.data(for:)` stands for.
    private func dictionaryRead(service: String, key: String, group: String?, synchronizable: Bool) -> (OSStatus, Data?, String?) {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: key, kSecAttrSynchronizable as String: synchronizable,
            kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        if let group { query[kSecAttrAccessGroup as String] = group }
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result as? Data, KeychainDiagnostics.lastFailureDescription)
    }

    @Test func storeReadsAnswerAsTheDictionaryCall() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let plain = try KeychainStore(service: service)
            let synced = try KeychainStore(service: service, synchronizable: true)
            let shared = try KeychainStore(service: service, accessGroup: "com.example.shared")
            let foreign = try KeychainStore(service: service, accessGroup: "com.other.team")
            try plain.set("plain value", for: "k")
            try synced.set("synced value", for: "s")
            try shared.set("shared value", for: "g")
            try plain.set(Data(), for: "empty")
            for (store, group, synchronizable) in [
                (plain, nil, false), (synced, nil, true), (shared, "com.example.shared", false),
                (foreign, "com.other.team", false),
            ] as [(KeychainStore, String?, Bool)] {
                for key in ["k", "s", "g", "empty", "missing"] {
                    let (status, expected, detail) = dictionaryRead(
                        service: service, key: key, group: group, synchronizable: synchronizable)
                    do throws(KeychainError) {
                        let data = try store.data(for: key)
                        #expect(status == (data == nil ? errSecItemNotFound : errSecSuccess), "\(key)")
                        #expect(data == expected ?? (status == errSecSuccess ? Data() : nil), "\(key)")
                    } catch {
                        #expect(error.status == status, "\(key)")
                        #expect(error.detail == detail, "\(key)")
                    }
                }
            }
            #expect(try plain.string(for: "k") == "plain value")
            #expect(try shared.string(for: "g") == "shared value")
            #expect(try plain.string(for: "g") == "shared value")  // every readable group
            #expect(try synced.string(for: "k") == nil)
            #expect(throws: KeychainError.self) { try foreign.data(for: "k") }
        }
    }

    @Test func keySourceLookupsFindBothLayoutsAndNothingElse() throws {
        try withTemporaryKeychain {
            let service = uniqueService()
            let source = KeychainKeySource(service: service)
            try source.store(Data("v1".utf8), for: "api_key", version: "1")
            try source.store(Data("v2".utf8), for: "api_key", version: "2")
            func add(_ account: String, label: String?, comment: String?, data: String) {
                var attributes: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                    kSecAttrAccount as String: account, kSecValueData as String: Data(data.utf8),
                ]
                if let label { attributes[kSecAttrLabel as String] = label }
                if let comment { attributes[kSecAttrComment as String] = comment }
                #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
            }
            add("api_key", label: nil, comment: "0", data: "one-item layout")  // the older layout
            add("unrelated", label: "api_key", comment: nil, data: "someone else's")  // label only
            add("api_key@", label: "api_key", comment: nil, data: "no version")
            let records = try source.lookup("api_key")
            #expect(Set(records.map(\.version)) == ["0", "1", "2"])
            #expect(Set(records.map { String(decoding: $0.data, as: UTF8.self) }) == ["v1", "v2", "one-item layout"])
            #expect(try source.versions(of: "api_key") == ["0", "1", "2"])
            #expect(try source.lookup("unrelated").map(\.version) == [KeyVersion.unknown.rawValue])
            #expect(try source.lookup("missing").isEmpty)
            let retriever = KeyRetriever(
                sources: [source], environment: .release, cacheTimeToLive: nil, logging: .disabled,
                notificationCenter: nil)
            #expect(try retriever.retrieve("api_key")?.string() == "v2")
            #expect(try retriever.retrieve("api_key", version: "0")?.string() == "one-item layout")
            // An access group the process is not entitled to fails the lookup as before.
            let foreign = KeychainKeySource(service: service, accessGroup: "com.other.team")
            do {
                _ = try foreign.lookup("api_key")
                Issue.record("expected an error")
            } catch let error as KeyRetrievalError {
                #expect(error.status == errSecMissingEntitlement)
            }
        }
    }
}
#endif
