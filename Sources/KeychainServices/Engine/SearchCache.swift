#if !canImport(Security)
import Foundation
import Synchronization

/// Which rows a read connection's recent searches found, so that the same search, asked
/// again while the database has not changed, skips SQLite.
///
/// A search is keyed by everything its SQL depends on: the shape of the query, the class,
/// the bytes of the compared name values (the service, account and label, which SQLite
/// sees only as keyed hashes), the synchronizable filter, the persistent reference and the
/// access groups searched. What is kept for it is each candidate row as stored (id, class,
/// primary-key hash, sync flag, protection label, reference, nonce and ciphertext): never
/// a decrypted attribute or secret. A call answered from here still decrypts every
/// candidate, authenticating it against its associated data, and compares every attribute
/// of the query, exactly as for rows read from SQLite; the cache only says which rows
/// exist.
///
/// The whole cache is valid for one *stamp*: SQLite's WAL-index header (both copies, read
/// as SQLite reads it), the write epoch of this process's connections
/// (``RollbackAnchor/writeEpoch``), and the data version of the read transaction the rows
/// were read in (the anchor check of that read vouches for the state). A commit by any
/// connection in any process changes the header, a write of this process also the epoch;
/// on a different stamp the cache is emptied before anything in it is used. Rows are
/// added only from a search whose read transaction started after the stamp was taken and
/// after which the stamp was the same again, so they are the rows of the stamped state.
///
/// Used by one thread at a time (its connection's).
final class SearchCache {
    /// The key of one search: the bytes described above, length-prefixed, hashed and
    /// compared as one block of bytes (not byte by byte).
    struct Key: Hashable {
        var bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        /// The memory the key takes in the cache: its bytes as allocated, and the search's
        /// slot in the cache (the dictionary entry, the headers of the key and its rows).
        var byteCount: Int { bytes.capacity + 128 }

        static func == (a: Key, b: Key) -> Bool {
            a.bytes.count == b.bytes.count
                && a.bytes.withUnsafeBytes { x in b.bytes.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
        }
    }

    /// One candidate row as stored (the columns ``KeychainEngine`` opens a row from).
    struct Row {
        var id: Int64
        var itemClass: String
        var primaryKey: Data
        var synchronizable: Int64
        var protection: String
        var reference: Data
        var nonce: Data
        var ciphertext: Data
        /// The associated data the row is opened with, computed from the fields above
        /// when it was cached.
        var associatedData: [UInt8]

        /// The memory the row takes in the cache (what its byte limits count): the bytes it
        /// holds, and about 500 bytes of overhead measured with `mallinfo2` (its slot in
        /// its search's array, and the heap object and allocation of each byte buffer).
        var byteCount: Int {
            primaryKey.count + reference.count + nonce.count + ciphertext.count + associatedData.count
                + itemClass.utf8.count + protection.utf8.count + 512
        }
    }

    /// What the cached rows are valid for.
    struct Stamp: Equatable {
        var header: WALIndexHeader
        var epoch: UInt64
    }

    static let maximumRowsPerSearch = 16
    /// A connection keeps at most this many searches and rows: enough for an app's working
    /// set of a thousand items, each found by its own query.
    static let maximumSearches = 1024
    static let maximumRows = 2048
    /// A search that takes more memory (large secrets: an item may hold 64 MiB) is not
    /// cached, and the searches of one connection take at most ``maximumBytes``, keys and
    /// rows with their overheads (``Key/byteCount``, ``Row/byteCount``): the limits on rows
    /// alone would let a connection keep gigabytes of copies. An engine keeps at most four
    /// idle read connections, so an open keychain's caches take at most 8 MiB.
    static let maximumBytesPerSearch = 64 << 10
    static let maximumBytes = 2 << 20
    /// A search whose key is longer (long names) is not cached.
    static let maximumKeyLength = 1024

    /// How many searches, in this process, were answered from a search cache (for tests).
    static let searchesAnsweredFromCache = Atomic<Int>(0)

    private var stamp: Stamp?
    /// The data version of the read transaction the cached rows were read in.
    private(set) var dataVersion: UInt32 = 0
    private var searches: [Key: [Row]] = [:]
    private var rowCount = 0
    private var byteCount = 0

    /// The rows cached for `key`, when the cache is valid for `current`; a different stamp
    /// empties the cache.
    func rows(for key: Key, at current: Stamp) -> [Row]? {
        guard let stamp else { return nil }
        guard stamp == current else {
            removeAll()
            return nil
        }
        return searches[key]
    }

    /// Records the candidates of one search read at `dataVersion`, found in the state of
    /// `taken` (taken before the search; the caller checked that it still held after it).
    ///
    /// When the cache is full, searches are forgotten one at a time, in the dictionary's
    /// order (the order of the process's seeded hashes: unrelated to the order they were
    /// used in), until the new one fits. A working set a little larger than the cache then
    /// keeps most of its searches cached, where emptying the whole cache would leave none.
    func store(_ rows: [Row], for key: Key, taken: Stamp, dataVersion: UInt32) {
        if stamp != taken || self.dataVersion != dataVersion {
            removeAll()
            stamp = taken
            self.dataVersion = dataVersion
        }
        let bytes = rows.reduce(key.byteCount) { $0 + $1.byteCount }
        guard rows.count <= Self.maximumRowsPerSearch, bytes <= Self.maximumBytesPerSearch, searches[key] == nil
        else { return }
        while !searches.isEmpty
            && (searches.count >= Self.maximumSearches || rowCount + rows.count > Self.maximumRows
                || byteCount + bytes > Self.maximumBytes)
        {
            let (evicted, evictedRows) = searches.remove(at: searches.startIndex)
            rowCount -= evictedRows.count
            byteCount -= evictedRows.reduce(evicted.byteCount) { $0 + $1.byteCount }
        }
        searches[key] = rows
        rowCount += rows.count
        byteCount += bytes
    }

    /// The searches, rows and bytes (keys and rows, as the limits count them) kept now.
    var occupancy: (searches: Int, rows: Int, bytes: Int) { (searches.count, rowCount, byteCount) }

    /// ``occupancy`` counted afresh from the searches kept (for tests: the running counts
    /// must never drift from it).
    var recountedOccupancy: (searches: Int, rows: Int, bytes: Int) {
        searches.reduce(into: (searches.count, 0, 0)) { total, search in
            total.1 += search.value.count
            total.2 += search.value.reduce(search.key.byteCount) { $0 + $1.byteCount }
        }
    }

    /// Hashes of the keys of recent searches read from SQLite, two candidate slots each
    /// (an admission filter only: a collision costs a search being cached later).
    private var seen = [Int](repeating: 0, count: 2048)
    private var nextSeenSlot = false

    /// Whether `key` was read from SQLite recently (this call is its second, or it is
    /// worth caching); otherwise it is noted, and its rows are not cached this time.
    func admits(_ key: Key) -> Bool {
        let hash = key.hashValue | 1
        let bits = UInt(bitPattern: hash)
        let first = Int(bits % 2048), second = Int((bits >> 32) % 2048)
        if seen[first] == hash || seen[second] == hash { return true }
        // Noted in an empty slot of the two, else in each of them in turn.
        if seen[first] == 0 {
            seen[first] = hash
        } else if seen[second] == 0 {
            seen[second] = hash
        } else {
            seen[nextSeenSlot ? second : first] = hash
            nextSeenSlot.toggle()
        }
        return false
    }

    /// Forgets every search.
    func removeAll() {
        stamp = nil
        searches.removeAll()
        rowCount = 0
        byteCount = 0
    }

    /// A search read from SQLite whose rows are to be cached once the read is judged
    /// current: the key, the stamp taken before its read transaction, the rows (`nil`
    /// once they exceed ``maximumRowsPerSearch`` or the search ``maximumBytesPerSearch``).
    struct PendingFill {
        var key: Key
        var taken: Stamp
        var rows: [Row]? = []
        /// The bytes of the search so far, as ``store(_:for:taken:dataVersion:)`` counts
        /// them: the key's, then each row's (``Key/byteCount``, ``Row/byteCount``).
        var bytes: Int
        var dataVersion: UInt32?

        init(key: Key, taken: Stamp) {
            self.key = key
            self.taken = taken
            bytes = key.byteCount
        }
    }
}
#endif
