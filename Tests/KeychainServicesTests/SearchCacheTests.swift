// The read connections' search cache: a search asked again while nothing was committed is
// answered from the rows it found before, and every write, by this thread, another thread,
// another engine or another process, is seen by the next read; rows changed on disk are
// still opened and checked.
import CSQLite
import Foundation
@_spi(Keysmith) @testable import KeychainServices
import Testing

struct SearchCacheTests {
    /// The workload process's service (Tests/Support/keychain-workload).
    private let service = "com.keysmith.workload"

    private func add(_ account: String, _ secret: String) -> OSStatus {
        SecItemAdd(genp(service, account).with(kSecValueData, Data(secret.utf8)) as CFDictionary, nil)
    }

    private func update(_ account: String, _ secret: String) -> OSStatus {
        SecItemUpdate(genp(service, account) as CFDictionary, [kSecValueData as String: Data(secret.utf8)] as CFDictionary)
    }

    private func read(_ account: String) -> (OSStatus, String?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(genp(service, account).with(kSecReturnData, true) as CFDictionary, &result)
        return (status, (result as? Data).map { String(decoding: $0, as: UTF8.self) })
    }

    private var answeredFromCache: Int { SearchCache.searchesAnsweredFromCache.load(ordering: .sequentiallyConsistent) }

    /// Reads `account` twice, so that the search is cached (a search is cached the second
    /// time it is read from SQLite) and the next read is answered from the cache unless
    /// something invalidated it, and expects `expected` both times.
    private func readTwice(_ account: String, _ expected: (OSStatus, String?), _ comment: Comment) {
        #expect(read(account) == expected, comment)
        #expect(read(account) == expected, comment)
    }

    /// Runs the workload executable on `keychain` and waits for it.
    private func runWorkload(_ arguments: [String], _ keychain: TemporaryKeychain) throws {
        let (process, errors) = try startWorkload(arguments, keychain: keychain)
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(message)")
    }

    @Test func repeatedSearchIsAnsweredFromTheCache() {
        TemporaryKeychain.with { _ in
            #expect(add("a", "one") == errSecSuccess)
            // The second read of a search from SQLite caches it.
            #expect(read("a") == (errSecSuccess, "one"))
            #expect(read("a") == (errSecSuccess, "one"))
            let before = answeredFromCache
            for _ in 0..<10 { #expect(read("a") == (errSecSuccess, "one")) }
            // Other tests may be answered from their caches meanwhile: at least these.
            #expect(answeredFromCache - before >= 10)
            // A search for another item is a search of its own.
            #expect(read("b") == (errSecItemNotFound, nil))
            #expect(read("a") == (errSecSuccess, "one"))
        }
    }

    /// A search that finds nothing is cached too, and an add (here or in another thread)
    /// is still seen by the next read.
    @Test func searchThatFindsNothingIsCachedUntilAWrite() {
        TemporaryKeychain.with { _ in
            #expect(add("other", "x") == errSecSuccess)
            readTwice("missing", (errSecItemNotFound, nil), "caching the empty search")
            let before = answeredFromCache
            for _ in 0..<10 { #expect(read("missing") == (errSecItemNotFound, nil)) }
            #expect(answeredFromCache - before >= 10)
            #expect(add("missing", "here") == errSecSuccess)
            #expect(read("missing") == (errSecSuccess, "here"), "after this thread's add")
            #expect(SecItemDelete(genp(service, "missing") as CFDictionary) == errSecSuccess)
            readTwice("missing", (errSecItemNotFound, nil), "after the delete")
            readTwice("missing", (errSecItemNotFound, nil), "cached again")
            let environment = KeychainEnvironment.current
            let written = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                KeychainEnvironment.withEnvironment(environment) { _ = add("missing", "there") }
                written.signal()
            }
            written.wait()
            #expect(read("missing") == (errSecSuccess, "there"), "after another thread's add")
        }
    }

    /// The several searches of one typed lookup (as `KeyRetriever` makes: by account, and
    /// one that finds nothing) are answered from the cache too, and every write is still
    /// seen by the next lookup.
    @Test func severalSearchesOfOneLookupAreCachedUntilAWrite() {
        TemporaryKeychain.with { _ in
            #expect(add("a", "one") == errSecSuccess)
            let searches = [
                GenericPasswordSearch(service: service, account: "a", matchesAll: false, returnsData: true),
                GenericPasswordSearch(service: service, account: "b", matchesAll: false, returnsData: true),
            ]
            func lookup() -> [String?] {
                var results: [[GenericPasswordItem]] = []
                var failed: Int?
                #expect(KeychainCopyGenericPasswords(searches, &results, failedSearch: &failed) == errSecSuccess)
                return results.map { $0.first?.data.map { String(decoding: $0, as: UTF8.self) } }
            }
            #expect(lookup() == ["one", nil])
            #expect(lookup() == ["one", nil])
            let before = answeredFromCache
            for _ in 0..<5 { #expect(lookup() == ["one", nil]) }
            #expect(answeredFromCache - before >= 10)
            #expect(update("a", "two") == errSecSuccess)
            #expect(lookup() == ["two", nil], "after this thread's update")
            #expect(lookup() == ["two", nil])
            #expect(lookup() == ["two", nil])
            let environment = KeychainEnvironment.current
            let written = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                KeychainEnvironment.withEnvironment(environment) { _ = add("b", "three") }
                written.signal()
            }
            written.wait()
            #expect(lookup() == ["two", "three"], "after another thread's add")
            #expect(SecItemDelete(genp(service, "a") as CFDictionary) == errSecSuccess)
            #expect(lookup() == [nil, "three"], "after the delete")
        }
    }

    @Test func writesOfThisThreadAreSeenByTheNextRead() {
        TemporaryKeychain.with { _ in
            readTwice("a", (errSecItemNotFound, nil), "before the add")
            #expect(add("a", "one") == errSecSuccess)
            readTwice("a", (errSecSuccess, "one"), "after the add")
            #expect(update("a", "two") == errSecSuccess)
            readTwice("a", (errSecSuccess, "two"), "after the update")
            #expect(SecItemDelete(genp(service, "a") as CFDictionary) == errSecSuccess)
            readTwice("a", (errSecItemNotFound, nil), "after the delete")
            #expect(add("a", "three") == errSecSuccess)
            readTwice("a", (errSecSuccess, "three"), "after adding it again")
        }
    }

    /// Reads on several pooled connections (threads), a write on another thread between them.
    @Test func writesOfAnotherThreadAreSeenByTheNextRead() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { #expect(add("a", "round 0") == errSecSuccess) }
        let environment = keychain.environment
        for round in 1...5 {
            // Several threads read at once, so that several read connections cache the search.
            let failures = ThreadFailures()
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                KeychainEnvironment.withEnvironment(environment) {
                    for _ in 0..<5 where read("a") != (errSecSuccess, "round \(round - 1)") {
                        failures.record("stale read before round \(round)")
                    }
                }
            }
            let written = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                KeychainEnvironment.withEnvironment(environment) {
                    if update("a", "round \(round)") != errSecSuccess { failures.record("update \(round)") }
                }
                written.signal()
            }
            written.wait()
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                KeychainEnvironment.withEnvironment(environment) {
                    for _ in 0..<5 where read("a") != (errSecSuccess, "round \(round)") {
                        failures.record("stale read after round \(round)")
                    }
                }
            }
            #expect(failures.messages.isEmpty, "\(failures.messages)")
        }
    }

    /// Another process's writes: an add (of an item this process looked for and did not
    /// find: a cached search with no candidates), an update (the other process also checkpoints and restarts the WAL), seen by the next read.
    @Test func writesOfAnotherProcessAreSeenByTheNextRead() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { readTwice("p-0", (errSecItemNotFound, nil), "before the other process adds") }
        try runWorkload(["upsert", "p", "1"], keychain)
        keychain.run { readTwice("p-0", (errSecSuccess, "value-p-0"), "after the other process added") }
        try runWorkload(["shared", "p-0", "1"], keychain)
        keychain.run { readTwice("p-0", (errSecSuccess, "round-0"), "after the other process updated") }
        keychain.run { #expect(update("p-0", "mine") == errSecSuccess) }
        keychain.run { readTwice("p-0", (errSecSuccess, "mine"), "after this process updated") }
        try runWorkload(["shared", "p-0", "1"], keychain)
        keychain.run { #expect(read("p-0") == (errSecSuccess, "round-0"), "after the other process updated again") }
    }

    /// A second engine of the same keychain in this process shares nothing with the first
    /// (its own connections, anchor and write epoch): only SQLite's WAL-index tells.
    @Test func writesOfAnotherEngineAreSeenByTheNextRead() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "one") == errSecSuccess)
            readTwice("a", (errSecSuccess, "one"), "before")
        }
        // A write transaction of the other engine commits (the anchor's state record).
        let other = try KeychainEngine(directory: keychain.directory)
        let before = answeredFromCache
        try other.writeTransaction { _ in }
        keychain.run { readTwice("a", (errSecSuccess, "one"), "after another engine's write") }
        #expect(answeredFromCache - before >= 1)
        // A deletion through the other engine's connection.
        try other.writeTransaction { database in try database.database.execute("DELETE FROM items") }
        keychain.run { #expect(read("a") == (errSecItemNotFound, nil), "after another engine deleted the item") }
    }

    /// A checkpoint that empties the WAL, then a write by another process that starts it
    /// again from its first frame (the same frame count as before): seen by the next read.
    @Test func checkpointAndWALResetAreSeen() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("p-0", "aaaaaaa") == errSecSuccess)
            readTwice("p-0", (errSecSuccess, "aaaaaaa"), "before the checkpoint")
        }
        RawKeychainFile(keychain).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        keychain.run { readTwice("p-0", (errSecSuccess, "aaaaaaa"), "after the checkpoint") }
        try runWorkload(["shared", "p-0", "1"], keychain)
        keychain.run { readTwice("p-0", (errSecSuccess, "round-0"), "after the WAL restarted") }
        RawKeychainFile(keychain).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try runWorkload(["shared", "p-0", "1"], keychain)
        keychain.run { #expect(read("p-0") == (errSecSuccess, "round-0"), "after the WAL restarted again") }
    }

    /// A row whose ciphertext is changed in the file after its search was cached is read
    /// again and fails authentication: errSecDecode, never data.
    @Test func rowChangedOnDiskAfterCachingIsDetected() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "secret") == errSecSuccess)
            readTwice("a", (errSecSuccess, "secret"), "before")
        }
        RawKeychainFile(keychain).execute(
            "UPDATE items SET ciphertext = randomblob(length(ciphertext))")
        keychain.run {
            #expect(read("a") == (errSecDecode, nil))
            #expect(read("a") == (errSecDecode, nil))
        }
    }

    /// A row deleted in the file behind Keysmith's back (no anchor write, only SQLite's
    /// WAL-index changes) after its search was cached: the next read does not find it.
    @Test func rowDeletedOnDiskAfterCachingIsNotFound() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            #expect(add("a", "secret") == errSecSuccess)
            readTwice("a", (errSecSuccess, "secret"), "before")
        }
        RawKeychainFile(keychain).execute("DELETE FROM items")
        keychain.run { #expect(read("a") == (errSecItemNotFound, nil)) }
    }
}
