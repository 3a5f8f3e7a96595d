// The search cache seen from an attacker's side: what it holds is bounded in bytes (not
// only in rows), a keychain locked after a search was cached still refuses its items, and
// no connection can take the database out of WAL mode (out of the WAL-index the cache is
// stamped with) while the keychain is open.
import CSQLite
import Foundation
@testable import KeychainServices
import Testing

struct SearchCacheBoundsTests {
    private let service = "com.keysmith.search-cache-bounds"

    private func read(_ account: String) -> (OSStatus, String?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(genp(service, account).with(kSecReturnData, true) as CFDictionary, &result)
        return (status, (result as? Data).map { String(decoding: $0, as: UTF8.self) })
    }

    private func row(_ id: Int64, ciphertextBytes: Int) -> SearchCache.Row {
        SearchCache.Row(
            id: id, itemClass: "genp", primaryKey: Data(count: 32), synchronizable: 0, protection: "ak",
            reference: Data(count: 16), nonce: Data(count: 24), ciphertext: Data(count: ciphertextBytes),
            associatedData: [])
    }

    private func bytes(of rows: [SearchCache.Row]) -> Int { rows.reduce(0) { $0 + $1.ciphertext.count } }

    /// A secret may be 64 MiB: a search of large items is not copied into the cache (a read
    /// connection would otherwise keep up to 16 of them per search, 2,048 in all).
    @Test func aSearchOfLargeRowsIsNotCached() {
        let cache = SearchCache()
        let stamp = SearchCache.Stamp(header: WALIndexHeader(), epoch: 1)
        let key = SearchCache.Key(bytes: [1, 2, 3])
        cache.store([row(1, ciphertextBytes: 1 << 20)], for: key, taken: stamp, dataVersion: 1)
        #expect(cache.rows(for: key, at: stamp) == nil)
        let small = SearchCache.Key(bytes: [4, 5, 6])
        cache.store([row(2, ciphertextBytes: 100)], for: small, taken: stamp, dataVersion: 1)
        #expect(cache.rows(for: small, at: stamp)?.count == 1)
    }

    /// However the searches are spread, the rows a connection keeps stay within its budget
    /// of bytes.
    @Test func theCacheKeepsABoundedNumberOfBytes() {
        let cache = SearchCache()
        let stamp = SearchCache.Stamp(header: WALIndexHeader(), epoch: 1)
        let keys = (0..<1000).map { SearchCache.Key(bytes: withUnsafeBytes(of: UInt32($0)) { Array($0) }) }
        for (index, key) in keys.enumerated() {
            // 2 rows of 3 KiB each: within every per-search limit.
            cache.store([row(Int64(2 * index), ciphertextBytes: 3 << 10), row(Int64(2 * index + 1), ciphertextBytes: 3 << 10)],
                        for: key, taken: stamp, dataVersion: 1)
        }
        let kept = keys.compactMap { cache.rows(for: $0, at: stamp) }.reduce(0) { $0 + bytes(of: $1) }
        #expect(kept > 0)
        #expect(kept <= SearchCache.maximumBytes, "\(kept) bytes of ciphertext kept by one connection")
        #expect(cache.occupancy == cache.recountedOccupancy)
    }

    /// The keys count against the budget too: searches for long names cannot make a
    /// connection keep megabytes of keys beside its budget of rows.
    @Test func theKeysOfSearchesCountAgainstTheBudget() {
        let cache = SearchCache()
        let stamp = SearchCache.Stamp(header: WALIndexHeader(), epoch: 1)
        let small = row(0, ciphertextBytes: 64)
        for index in 0..<4096 {
            var bytes = [UInt8](repeating: 0, count: SearchCache.maximumKeyLength)
            withUnsafeBytes(of: UInt32(index)) { bytes.replaceSubrange(0..<4, with: $0) }
            cache.store([small], for: SearchCache.Key(bytes: bytes), taken: stamp, dataVersion: 1)
        }
        let kept = cache.occupancy
        #expect(kept.searches > 0)
        #expect(kept.bytes <= SearchCache.maximumBytes, "\(kept.bytes) bytes kept by one connection")
        // The searches kept, each a key and a row as the budget counts them.
        let held = kept.searches * (SearchCache.maximumKeyLength + small.byteCount)
        #expect(held <= SearchCache.maximumBytes, "\(held) bytes of keys and rows kept by one connection")
        #expect(cache.occupancy == cache.recountedOccupancy)
    }

    /// A full cache forgets one search to make room for the next, not all of them: a
    /// working set a little larger than the cache still finds almost all of it cached.
    @Test func aFullCacheForgetsOnlyWhatItMust() {
        let cache = SearchCache()
        let stamp = SearchCache.Stamp(header: WALIndexHeader(), epoch: 1)
        let extra = 16
        let keys = (0..<(SearchCache.maximumSearches + extra)).map { index in
            SearchCache.Key(bytes: withUnsafeBytes(of: UInt32(index)) { Array($0) })
        }
        for round in 0..<3 {
            var hits = 0
            for (index, key) in keys.enumerated() {
                if cache.rows(for: key, at: stamp) != nil {
                    hits += 1
                } else {
                    cache.store([row(Int64(index), ciphertextBytes: 64)], for: key, taken: stamp, dataVersion: 1)
                }
            }
            // Emptying the cache when full would leave about `extra` hits a round.
            if round > 0 { #expect(hits >= keys.count - 4 * extra, "round \(round): \(hits) of \(keys.count) cached") }
            let occupancy = cache.occupancy
            #expect(occupancy.searches == SearchCache.maximumSearches, "round \(round)")
            #expect(occupancy.rows <= SearchCache.maximumRows)
            #expect(occupancy.bytes <= SearchCache.maximumBytes)
        }
        #expect(cache.occupancy == cache.recountedOccupancy)
        let cached = keys.filter { cache.rows(for: $0, at: stamp) != nil }.count
        #expect(cached == SearchCache.maximumSearches)
        // Each search still finds its own row.
        for (index, key) in keys.enumerated() {
            if let rows = cache.rows(for: key, at: stamp) { #expect(rows.map(\.id) == [Int64(index)]) }
        }
    }

    /// Searches of every size, stored, forgotten to make room and emptied by a new stamp:
    /// the running counts stay those of the searches kept, within every limit.
    @Test func theCountsNeverDrift() {
        let cache = SearchCache()
        var generator = SystemRandomNumberGenerator()
        var stamp = SearchCache.Stamp(header: WALIndexHeader(), epoch: 1)
        for index in 0..<6000 {
            if index % 1500 == 1499 { stamp.epoch += 1 }
            let rows = (0..<Int.random(in: 0...SearchCache.maximumRowsPerSearch, using: &generator)).map {
                row(Int64($0), ciphertextBytes: Int.random(in: 16...(8 << 10), using: &generator))
            }
            var bytes = [UInt8](repeating: 0, count: Int.random(in: 4...SearchCache.maximumKeyLength, using: &generator))
            withUnsafeBytes(of: UInt32(index)) { bytes.replaceSubrange(0..<4, with: $0) }
            cache.store(rows, for: SearchCache.Key(bytes: bytes), taken: stamp, dataVersion: 1)
            let occupancy = cache.occupancy
            #expect(occupancy == cache.recountedOccupancy)
            #expect(occupancy.searches <= SearchCache.maximumSearches && occupancy.rows <= SearchCache.maximumRows
                && occupancy.bytes <= SearchCache.maximumBytes)
        }
    }

    /// Locking the keychain writes nothing to the database (the cache's stamp holds): an
    /// item accessible only when unlocked, whose search is cached, is refused all the same.
    @Test func aLockedKeychainRefusesItemsFromTheCache() throws {
        try TemporaryKeychain.with { _ in
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            try KeychainEnvironment.setPassphrase("pw", old: nil)
            let item = genp(service, "a").with(kSecAttrAccessible, kSecAttrAccessibleWhenUnlocked)
                .with(kSecValueData, Data("secret".utf8))
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            for _ in 0..<3 { #expect(read("a") == (errSecSuccess, "secret")) }
            let before = SearchCache.searchesAnsweredFromCache.load(ordering: .sequentiallyConsistent)
            #expect(read("a") == (errSecSuccess, "secret"))
            #expect(SearchCache.searchesAnsweredFromCache.load(ordering: .sequentiallyConsistent) > before)
            try KeychainEnvironment.lock()
            #expect(read("a") == (errSecInteractionNotAllowed, nil))
            #expect(read("a") == (errSecInteractionNotAllowed, nil))
            try KeychainEnvironment.unlock(passphrase: "pw")
            #expect(read("a") == (errSecSuccess, "secret"))
        }
    }

    /// Another connection asking for a rollback journal while the keychain is open is
    /// refused (the keychain's connections hold the database shared, as WAL connections
    /// do), so its commits still go through the WAL-index header and are seen.
    @Test func theDatabaseStaysInWALModeWhileOpen() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            let item = genp(service, "a").with(kSecValueData, Data("secret".utf8))
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            for _ in 0..<3 { #expect(read("a") == (errSecSuccess, "secret")) }
        }
        var handle: OpaquePointer?
        #expect(sqlite3_open(RawKeychainFile(keychain).path, &handle) == SQLITE_OK)
        sqlite3_busy_timeout(handle, 0)
        var mode = ""
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "PRAGMA journal_mode=DELETE", -1, &statement, nil)
        if sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) { mode = String(cString: text) }
        sqlite3_finalize(statement)
        #expect(mode != "delete", "the journal mode left WAL while the keychain was open")
        sqlite3_busy_timeout(handle, 5000)
        #expect(sqlite3_exec(handle, "DELETE FROM items", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        keychain.run { #expect(read("a") == (errSecItemNotFound, nil)) }
    }
}

extension SearchCacheBoundsTests {
    /// An item too large to cache is read from SQLite on every call, and read right.
    @Test func aLargeItemIsReadRightEveryTime() {
        TemporaryKeychain.with { _ in
            let secret = String(repeating: "x", count: 200 << 10)
            let item = genp(service, "large").with(kSecValueData, Data(secret.utf8))
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            for _ in 0..<4 { #expect(read("large") == (errSecSuccess, secret)) }
            let changed = String(repeating: "y", count: 200 << 10)
            #expect(SecItemUpdate(genp(service, "large") as CFDictionary, [kSecValueData as String: Data(changed.utf8)] as CFDictionary) == errSecSuccess)
            #expect(read("large") == (errSecSuccess, changed))
        }
    }
}
