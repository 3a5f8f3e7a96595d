import Dispatch

/// What identifies a cached key: the environment tag (interned to a small number by the
/// retriever) and the requested identifier, byte for byte (``ExactName``: a key cached for
/// `"jos\u{E9}"` is never served for `"jose\u{301}"`, another name, another item). Only the
/// identifier is hashed (its bytes, the cost of a plain dictionary lookup); the tag takes
/// part in equality, and a retriever rarely holds keys for more than one tag at a time.
struct RetrieverCacheKey: Hashable, Sendable {
    let tag: Int
    let identifier: ExactName

    init(tag: Int, identifier: String) {
        self.tag = tag
        self.identifier = ExactName(identifier)
    }

    @inline(__always)
    func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
    }

    @inline(__always)
    static func == (lhs: RetrieverCacheKey, rhs: RetrieverCacheKey) -> Bool {
        lhs.tag == rhs.tag && lhs.identifier == rhs.identifier
    }
}

/// A cached exact-version lookup (`retrieve(_:version:)`, used to decrypt old data); the
/// identifier byte for byte, as in ``RetrieverCacheKey``.
struct RetrieverExactCacheKey: Hashable, Sendable {
    let tag: Int
    let identifier: ExactName
    let version: KeyVersion

    init(tag: Int, identifier: String, version: KeyVersion) {
        self.tag = tag
        self.identifier = ExactName(identifier)
        self.version = version
    }
}

/// The retriever's in-memory cache of resolved keys.
///
/// Entries are keyed by environment tag and identifier, so a key resolved for `debug` is
/// never served for `release`. They expire after a time-to-live: a timer
/// (``RetrieverSweeper``) removes them at their deadline, so an expired key does not stay
/// in memory waiting for its next lookup, and a cache hit never reads the clock. The
/// retriever also drops every entry when it is told to (``KeyRetriever/clearCache()``),
/// when the app goes to the background or receives a memory warning, and when its
/// sources, priority, policy or environment change. Only found keys are cached; a miss is
/// looked up again next time.
///
/// Not thread-safe by itself: the retriever keeps it inside its lock.
struct KeyRetrieverCache: Sendable {
    struct Entry: Sendable {
        let info: KeyInfo
        /// Monotonic deadline in nanoseconds; `UInt64.max` when entries do not expire.
        let expiry: UInt64
    }

    private(set) var newest: [RetrieverCacheKey: Entry] = [:]
    private(set) var exact: [RetrieverExactCacheKey: Entry] = [:]

    /// The number of cached records.
    var count: Int { newest.count + exact.count }

    /// The newest-version entry for `key`, if present.
    @inline(__always)
    func newest(_ key: RetrieverCacheKey) -> KeyInfo? {
        newest[key]?.info
    }

    /// The exact-version entry for `key`, if present.
    func exact(_ key: RetrieverExactCacheKey) -> KeyInfo? {
        exact[key]?.info
    }

    mutating func storeNewest(_ info: KeyInfo, for key: RetrieverCacheKey, expiry: UInt64) {
        newest[key] = Entry(info: info, expiry: expiry)
    }

    mutating func storeExact(_ info: KeyInfo, for key: RetrieverExactCacheKey, expiry: UInt64) {
        exact[key] = Entry(info: info, expiry: expiry)
    }

    /// Removes the entries whose deadline is at or before `now`.
    /// - Returns: The earliest deadline among the entries that remain, if any expire.
    mutating func removeExpired(now: UInt64) -> UInt64? {
        newest = newest.filter { $0.value.expiry > now }
        exact = exact.filter { $0.value.expiry > now }
        let next = min(newest.values.map(\.expiry).min() ?? .max, exact.values.map(\.expiry).min() ?? .max)
        return next == .max ? nil : next
    }

    /// Drops every entry (and the dictionaries' storage, so no key bytes stay reachable).
    mutating func removeAll() {
        newest = [:]
        exact = [:]
    }

    /// The current monotonic time in nanoseconds.
    @inline(__always)
    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}

/// Removes expired cache entries at their deadline, so the cached path never reads the
/// clock and expired keys leave memory on time. One one-shot timer, re-armed for the
/// earliest deadline; idle when nothing can expire.
final class RetrieverSweeper: @unchecked Sendable {
    private let queue = DispatchQueue(label: "keysmith.retriever.cache-sweeper")
    private let timer: any DispatchSourceTimer
    /// The deadline the timer is armed for (`UInt64.max`: not armed). Guarded by `queue`.
    private var armed: UInt64 = .max
    private let leeway: DispatchTimeInterval

    /// - Parameters:
    ///   - leeway: How late the timer may fire (lets the system batch wake-ups).
    ///   - sweep: Removes expired entries; returns the next deadline, if any.
    init(leeway: DispatchTimeInterval, sweep: @escaping @Sendable () -> UInt64?) {
        self.leeway = leeway
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.armed = .max
            if let next = sweep() { self.armLocked(next) }
        }
        timer.schedule(deadline: .distantFuture, repeating: .never, leeway: leeway)
        timer.activate()
    }

    /// Makes sure the timer fires at or before `deadline` (monotonic nanoseconds).
    func arm(at deadline: UInt64) {
        queue.async { self.armLocked(deadline) }
    }

    private func armLocked(_ deadline: UInt64) {
        guard deadline < armed else { return }
        armed = deadline
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), repeating: .never, leeway: leeway)
    }

    deinit {
        timer.cancel()
    }
}
