import Foundation

/// Finds a key by identifier across prioritized sources: one entry point, and the caller
/// never needs to know where the key lives.
///
/// ```swift
/// let retriever = KeyRetriever(sources: [
///     KeychainKeySource(service: "com.example.keys"),
///     try ConfigFileKeySource(bundleResource: "Keys"),
///     EnvironmentKeySource(prefix: "XY"),
/// ])
/// if let key = try retriever.retrieve("api_key") {
///     print(key)  // KeyInfo(api_key, version=2024.06.01, source=Keychain)
/// }
/// ```
///
/// How a lookup runs (docs/RETRIEVAL.md has the details):
///
/// 1. **Cache.** A key found before, for the same environment tag and identifier, is
///    returned at once without touching any source.
/// 2. **Sources in priority order** (``sourcePriority``; default Keychain → ConfigFile →
///    Environment → Compiled → Remote): the most secure source first, so a plaintext copy
///    never wins over a keychain copy. The environment source is skipped in release builds
///    unless allowed.
/// 3. **Candidates** inside each source (``candidates(for:)``): `apiKey`, `apikey`,
///    `APIKEY`, `api_key`. Source outer, candidate inner: a keychain copy under any
///    spelling beats a config-file copy under the exact one.
/// 4. **Versions.** The first candidate that hits gives the answer: its newest version, or
///    the newest at or above a minimum, or an exact version.
/// 5. **Policy.** A sensitive key (``KeyPolicy``) is never served from a plaintext source
///    in release builds; a failing source stops the lookup of a sensitive key.
///
/// `KeyRetriever` is thread-safe; concurrent first lookups of one identifier consult the
/// sources once and share the answer. The cache is cleared by ``clearCache()``, when the
/// app enters the background or receives a memory warning, after a time-to-live, and
/// whenever the sources, priority, policy or environment change.
///
/// Use ``explain(_:minVersion:version:)`` to see every step of a lookup, and ``audit()``
/// to see where every key lives, how many copies exist and which one wins.
public final class KeyRetriever: Sendable {
    /// The build environment a retriever resolves keys for: a tag that separates cache
    /// entries (`debug`, `release`, or your own such as `staging`) and whether the build is
    /// a release build (which drives the plaintext policy and the environment source).
    public struct BuildEnvironment: Sendable, Hashable, CustomStringConvertible {
        /// The tag that is part of every cache key.
        public var tag: String
        /// Whether this is a release build.
        public var isRelease: Bool

        /// Creates a build environment.
        /// - Parameters:
        ///   - tag: The environment tag (for example `staging`).
        ///   - isRelease: Whether the build is a release build.
        public init(tag: String, isRelease: Bool) {
            self.tag = tag
            self.isRelease = isRelease
        }

        /// Debug builds: tag `debug`.
        public static let debug = BuildEnvironment(tag: "debug", isRelease: false)
        /// Release builds: tag `release`.
        public static let release = BuildEnvironment(tag: "release", isRelease: true)

        /// ``debug`` when Keysmith was compiled with `DEBUG` defined, else ``release``.
        ///
        /// - Note: This reflects how the Keysmith package was built, which matches the app's
        ///   configuration when both are built together by SwiftPM or Xcode. Pass the
        ///   environment explicitly when in doubt.
        public static var current: BuildEnvironment {
            #if DEBUG
                return .debug
            #else
                return .release
            #endif
        }

        /// `debug (debug build)`.
        public var description: String { "\(tag) (\(isRelease ? "release" : "debug") build)" }
    }

    // MARK: State

    /// Everything a lookup needs, copied out of the lock so sources run unlocked.
    struct Snapshot: Sendable {
        let ordered: [any KeySource]
        let unconsulted: [any KeySource]
        let priority: [KeySourceKind]
        let environment: BuildEnvironment
        let tagID: Int
        let policy: KeyPolicy
        let allowsEnvironmentInRelease: Bool
        let generation: UInt64
    }

    struct State: Sendable {
        var sources: [any KeySource] { didSet { consultation = nil } }
        var priority: [KeySourceKind] { didSet { consultation = nil } }
        /// The sources in consultation order and those not consulted, worked out from
        /// ``sources`` and ``priority`` when a lookup first needs them after a change.
        var consultation: (ordered: [any KeySource], unconsulted: [any KeySource])?
        var environment: BuildEnvironment
        var tagID: Int
        /// The interned environment tags, byte for byte (cache entries are kept per tag).
        var tagIDs: [ExactName: Int]
        var policy: KeyPolicy
        var allowsEnvironmentInRelease: Bool
        var cache = KeyRetrieverCache()
        var generation: UInt64 = 0
        var inFlight: [FlightKey: Flight] = [:]

        var snapshot: Snapshot {
            mutating get {
                let consultation: (ordered: [any KeySource], unconsulted: [any KeySource])
                if let known = self.consultation {
                    consultation = known
                } else {
                    var ordered: [any KeySource] = []
                    for kind in priority { ordered += sources.filter { $0.kind == kind } }
                    consultation = (ordered, sources.filter { !priority.contains($0.kind) })
                    self.consultation = consultation
                }
                return snapshot(ordered: consultation.ordered, unconsulted: consultation.unconsulted)
            }
        }

        private func snapshot(ordered: [any KeySource], unconsulted: [any KeySource]) -> Snapshot {
            Snapshot(
                ordered: ordered, unconsulted: unconsulted, priority: priority,
                environment: environment, tagID: tagID, policy: policy,
                allowsEnvironmentInRelease: allowsEnvironmentInRelease, generation: generation)
        }

        /// Drops every cached key and makes in-flight lookups' answers stale.
        mutating func invalidate() {
            cache.removeAll()
            generation &+= 1
        }

        mutating func internTag(_ tag: String) -> Int {
            if let id = tagIDs[ExactName(tag)] { return id }
            let id = tagIDs.count
            tagIDs[ExactName(tag)] = id
            return id
        }
    }

    /// Which version a lookup asks for.
    enum Selector: Hashable, Sendable {
        case newest
        case minimum(KeyVersion)
        case exact(KeyVersion)

        var request: KeyLookupTrace.Request {
            switch self {
            case .newest: return .newest
            case .minimum(let version): return .minimum(version.rawValue)
            case .exact(let version): return .exact(version.rawValue)
            }
        }
    }

    /// One lookup in progress: the identifier byte for byte, so a lookup of a name never
    /// waits for, and takes, the answer for another name that differs only in Unicode form.
    struct FlightKey: Hashable, Sendable {
        let tag: Int
        let identifier: ExactName
        let selector: Selector

        init(tag: Int, identifier: String, selector: Selector) {
            self.tag = tag
            self.identifier = ExactName(identifier)
            self.selector = selector
        }
    }

    /// One lookup in progress; later callers for the same key wait for its answer.
    final class Flight: @unchecked Sendable {
        private let condition = NSCondition()
        private var result: Result<KeyInfo?, any Error>?

        func finish(_ result: Result<KeyInfo?, any Error>) {
            condition.lock()
            self.result = result
            condition.broadcast()
            condition.unlock()
        }

        func wait() -> Result<KeyInfo?, any Error> {
            condition.lock()
            defer { condition.unlock() }
            while result == nil { condition.wait() }
            return result!
        }
    }

    private let state: RetrieverLock<State>
    /// Cache time-to-live in nanoseconds; `nil` when entries do not expire.
    private let timeToLive: UInt64?
    private let logging: RetrieverLogging
    private let observers: RetrieverObservers
    /// Removes expired entries at their deadline (`nil` without a time-to-live).
    private let sweeper: RetrieverSweeper?

    // MARK: Creating a retriever

    /// The process-wide retriever with the default sources (``defaultSources(service:bundle:environmentPrefix:)``),
    /// the default priority and an empty policy. Configure it once at launch with
    /// ``setSources(_:)``, ``setSourcePriority(_:)`` and ``setPolicy(_:)``, or create your own.
    public static let shared = KeyRetriever(sources: KeyRetriever.defaultSources())

    /// Creates a retriever.
    /// - Parameters:
    ///   - sources: The sources to consult (their order within one kind is kept).
    ///   - priority: The order of source kinds (default Keychain → ConfigFile → Environment
    ///     → Compiled → Remote). Kinds not listed are not consulted; an empty list means the
    ///     default.
    ///   - environment: The build environment (default ``BuildEnvironment/current``).
    ///   - policy: Which keys are sensitive (default: none).
    ///   - allowsEnvironmentInRelease: Whether the environment source is consulted in
    ///     release builds (default `false`).
    ///   - cacheTimeToLive: How long a found key stays cached (default 5 minutes; `nil`
    ///     keeps it until the cache is cleared).
    ///   - logging: Whether and where to log each resolved lookup (default: in debug builds,
    ///     to standard error).
    ///   - notificationCenter: Where to listen for the app entering the background and for
    ///     memory warnings, which clear the cache (default `.default`; `nil` to not listen).
    public init(
        sources: [any KeySource],
        priority: [KeySourceKind] = KeySourceKind.defaultPriority,
        environment: BuildEnvironment = .current,
        policy: KeyPolicy = .none,
        allowsEnvironmentInRelease: Bool = false,
        cacheTimeToLive: Duration? = .seconds(300),
        logging: RetrieverLogging = .automatic,
        notificationCenter: NotificationCenter? = .default
    ) {
        var tagIDs: [ExactName: Int] = [:]
        tagIDs[ExactName(environment.tag)] = 0
        state = RetrieverLock(
            State(
                sources: sources, priority: KeyRetriever.normalized(priority) ?? KeySourceKind.defaultPriority,
                environment: environment, tagID: 0, tagIDs: tagIDs, policy: policy,
                allowsEnvironmentInRelease: allowsEnvironmentInRelease))
        timeToLive = cacheTimeToLive.map { duration in
            let components = duration.components
            guard components.seconds >= 0 else { return 0 }
            let (seconds, overflow) = UInt64(components.seconds).multipliedReportingOverflow(by: 1_000_000_000)
            return overflow ? UInt64.max : seconds &+ UInt64(components.attoseconds / 1_000_000_000)
        }
        self.logging = logging
        observers = RetrieverObservers(center: notificationCenter)
        if let ttl = timeToLive {
            // Late by at most a tenth of the time-to-live (and never more than a second).
            let leeway = DispatchTimeInterval.nanoseconds(Int(min(ttl / 10, 1_000_000_000)))
            let state = self.state
            sweeper = RetrieverSweeper(leeway: leeway) {
                state.withLock { $0.cache.removeExpired(now: KeyRetrieverCache.now()) }
            }
        } else {
            sweeper = nil
        }
        observers.start { [weak self] in self?.clearCache() }
    }

    /// The name of the environment variable that points the default sources at a key file:
    /// a `.plist` or `.json` file, or a directory holding `Keys.plist` or `Keys.json`.
    public static let configEnvironmentVariable = "KEYSMITH_CONFIG"

    /// The sources `shared` starts with, in this order:
    ///
    /// 1. the keychain (service `<bundle id>.keys`, or `keysmith.keys` without a bundle
    ///    identifier, as for a command-line program on Linux);
    /// 2. the key file named by `KEYSMITH_CONFIG`, when set: a `.plist` or `.json` file, or a
    ///    directory holding `Keys.plist` or `Keys.json` (a path that holds neither becomes a
    ///    source that reports the problem on every lookup, never a silent miss);
    /// 3. `Keys.plist` or `Keys.json` in `bundle`, when it has one: the app bundle by default;
    ///    a SwiftPM package passes its resource bundle (`Bundle.module`);
    /// 4. the environment (prefix `KEYSMITH`);
    /// 5. `compiledKeys`, when given (keys generated by `keysmith generate`: the library
    ///    cannot find generated code by itself).
    ///
    /// ```swift
    /// // A SwiftPM executable whose Keys.json is a resource, plus its generated keys:
    /// KeyRetriever.shared.setSources(
    ///     KeyRetriever.defaultSources(bundle: .module, compiledKeys: CompiledKeys.source(for: "release")))
    /// ```
    /// - Parameters:
    ///   - service: The keychain service (default `<bundle identifier>.keys`).
    ///   - bundle: The bundle to look for `Keys.plist`/`Keys.json` in (default `.main`).
    ///   - environmentPrefix: The environment-variable prefix (default `KEYSMITH`).
    ///   - environment: The process environment, where `KEYSMITH_CONFIG` is read (default
    ///     the process's own).
    ///   - compiledKeys: Generated keys to consult last, or `nil`.
    /// - Returns: The sources. A key file that is malformed or missing becomes a source that
    ///   reports the problem on every lookup (and in traces and audits).
    public static func defaultSources(
        service: String? = nil, bundle: Bundle = .main, environmentPrefix: String? = "KEYSMITH",
        environment: [String: String] = ProcessInfo.processInfo.environment,
        compiledKeys: (any KeySource)? = nil
    ) -> [any KeySource] {
        let service = service ?? "\(bundle.bundleIdentifier ?? "keysmith").keys"
        var sources: [any KeySource] = [KeychainKeySource(service: service)]
        if let configured = environment[configEnvironmentVariable], !configured.isEmpty {
            sources.append(configuredSource(configured))
        }
        if let url = ConfigFileKeySource.bundledURL("Keys", bundle: bundle) {
            sources.append(fileSource(url))
        }
        sources.append(EnvironmentKeySource(prefix: environmentPrefix))
        if let compiledKeys { sources.append(compiledKeys) }
        return sources
    }

    /// The source for the path in `KEYSMITH_CONFIG`.
    private static func configuredSource(_ path: String) -> any KeySource {
        let url = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            return UnavailableKeySource(
                kind: .configFile, sourceDescription: "ConfigFile(\(url.lastPathComponent))",
                error: KeyRetrievalError.unreadableFile(
                    path: url.path,
                    reason: "\(configEnvironmentVariable) names this path, but there is nothing there; fix the path or "
                        + "unset \(configEnvironmentVariable)"))
        }
        guard isDirectory.boolValue else { return fileSource(url) }
        for name in ["Keys.plist", "Keys.json"] {
            let candidate = url.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: candidate.path) { return fileSource(candidate) }
        }
        return UnavailableKeySource(
            kind: .configFile, sourceDescription: "ConfigFile(\(url.lastPathComponent))",
            error: KeyRetrievalError.unreadableFile(
                path: url.path,
                reason: "\(configEnvironmentVariable) names this directory, but it holds neither Keys.plist nor Keys.json"))
    }

    /// A key-file source, or a source that reports why the file cannot be used.
    private static func fileSource(_ url: URL) -> any KeySource {
        do {
            return try ConfigFileKeySource(url: url)
        } catch {
            return UnavailableKeySource(
                kind: .configFile, sourceDescription: "ConfigFile(\(url.lastPathComponent))", error: error)
        }
    }

    // MARK: Retrieving keys

    /// The candidate names tried for `identifier`, in order (``KeyCandidates``).
    /// - Parameter identifier: The identifier.
    /// - Returns: For example `["apiKey", "apikey", "APIKEY", "api_key"]` for `apiKey`.
    public static func candidates(for identifier: String) -> [String] {
        KeyCandidates.names(for: identifier)
    }

    /// Finds the newest version of a key.
    ///
    /// A cached answer is returned without touching any source, allocating, or logging.
    /// - Parameter identifier: The key's identifier, for example `api_key`.
    /// - Returns: The key, or `nil` when no consulted source holds any candidate name.
    /// - Throws: ``KeyRetrievalError``: `invalidIdentifier` for an empty identifier;
    ///   `sensitiveKeyInPlaintextSource` when policy forbids the copy found;
    ///   `sourceFailed` when a source fails during the lookup of a sensitive key.
    /// - Note: A source that fails during the lookup of a non-sensitive key is skipped
    ///   (``explain(_:minVersion:version:)`` shows it).
    public func retrieve(_ identifier: String) throws -> KeyInfo? {
        let cached = state.withLock { state in
            state.cache.newest(RetrieverCacheKey(tag: state.tagID, identifier: identifier))
        }
        if let cached { return cached }
        return try resolve(identifier, selector: .newest)
    }

    /// Finds the newest version of a key at or above `minVersion`: the first source in
    /// priority that holds such a version answers.
    /// - Parameters:
    ///   - identifier: The key's identifier.
    ///   - minVersion: The lowest acceptable version, compared numerically (``KeyVersion``).
    /// - Returns: The key, or `nil` when no source holds a version at or above `minVersion`.
    /// - Throws: ``KeyRetrievalError`` as ``retrieve(_:)`` does.
    public func retrieve(_ identifier: String, minVersion: String) throws -> KeyInfo? {
        let minimum = KeyVersion(minVersion)
        let cached = state.withLock { state in
            state.cache.newest(RetrieverCacheKey(tag: state.tagID, identifier: identifier))
        }
        // The cached newest answer is also the answer to any minimum it satisfies.
        if let cached, cached.keyVersion >= minimum { return cached }
        return try resolve(identifier, selector: .minimum(minimum))
    }

    /// Finds exactly one version of a key, for example the old version needed to decrypt
    /// data written before a rotation.
    /// - Parameters:
    ///   - identifier: The key's identifier.
    ///   - version: The version, compared numerically (`2024.07.01` finds `2024.7.1`).
    /// - Returns: The key, or `nil` when no source holds that version.
    /// - Throws: ``KeyRetrievalError`` as ``retrieve(_:)`` does.
    public func retrieve(_ identifier: String, version: String) throws -> KeyInfo? {
        let exact = KeyVersion(version)
        let cached = state.withLock { state in
            state.cache.exact(RetrieverExactCacheKey(tag: state.tagID, identifier: identifier, version: exact))
        }
        if let cached { return cached }
        return try resolve(identifier, selector: .exact(exact))
    }

    /// Whether `result` is a key from the keychain, and the keychain it came from (the
    /// current one) has a passphrase: its items can be locked away, so it is not cached.
    /// A key behind access control is never cached either, on any platform: each lookup is
    /// an evaluation of its policy.
    static func mayBeLocked(_ result: Result<KeyInfo?, any Error>) -> Bool {
        guard case .success(let info?) = result, info.source == .keychain else { return false }
        if info.storage.needsUserAuthentication { return true }
        #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
            return KeychainEnvironment.hasPassphrase
        #else
            // Apple platforms: the system keychain's lock follows the device; keys are cached
            // for their time to live, as before.
            return false
        #endif
    }

    /// Drops every cached key. Later lookups consult the sources again.
    public func clearCache() {
        state.withLock { $0.invalidate() }
    }

    // MARK: Configuration

    /// The order in which source kinds are consulted.
    public var sourcePriority: [KeySourceKind] {
        state.withLock { $0.priority }
    }

    /// Changes the order in which source kinds are consulted, and clears the cache.
    /// - Parameter priority: The kinds in order; kinds not listed are not consulted;
    ///   duplicates are ignored.
    /// - Throws: ``KeyRetrievalError/emptyPriority`` when the list is empty (nothing would
    ///   ever be found); the priority is then unchanged.
    public func setSourcePriority(_ priority: [KeySourceKind]) throws {
        guard let normalized = KeyRetriever.normalized(priority) else { throw KeyRetrievalError.emptyPriority }
        state.withLock { state in
            state.priority = normalized
            state.invalidate()
        }
    }

    /// The sources, in the order given (``sourcePriority`` decides the lookup order).
    public var sources: [any KeySource] {
        state.withLock { $0.sources }
    }

    /// Replaces the sources, and clears the cache.
    /// - Parameter sources: The new sources.
    public func setSources(_ sources: [any KeySource]) {
        state.withLock { state in
            state.sources = sources
            state.invalidate()
        }
    }

    /// The build environment keys are resolved for.
    public var environment: BuildEnvironment {
        state.withLock { $0.environment }
    }

    /// Changes the build environment (for example from `staging` to `production`), and
    /// clears the cache so no key of the old environment lingers in memory.
    /// - Parameter environment: The new environment.
    public func setEnvironment(_ environment: BuildEnvironment) {
        state.withLock { state in
            state.environment = environment
            state.tagID = state.internTag(environment.tag)
            state.invalidate()
        }
    }

    /// The policy in force.
    public var policy: KeyPolicy {
        state.withLock { $0.policy }
    }

    /// Changes the policy, and clears the cache (a cached key may no longer be allowed).
    /// - Parameter policy: The new policy.
    public func setPolicy(_ policy: KeyPolicy) {
        state.withLock { state in
            state.policy = policy
            state.invalidate()
        }
    }

    /// Whether the environment source is consulted in release builds.
    public var allowsEnvironmentInRelease: Bool {
        state.withLock { $0.allowsEnvironmentInRelease }
    }

    /// Allows or forbids the environment source in release builds, and clears the cache.
    /// - Parameter allowed: Whether to consult it in release builds.
    public func setAllowsEnvironmentInRelease(_ allowed: Bool) {
        state.withLock { state in
            state.allowsEnvironmentInRelease = allowed
            state.invalidate()
        }
    }

    /// The number of keys in the cache (for diagnostics and tests; never the keys).
    public var cachedKeyCount: Int {
        state.withLock { $0.cache.count }
    }

    // MARK: Troubleshooting

    /// Runs a lookup against the sources (not the cache) and records every step: the
    /// priority, each source and candidate with its outcome and timing, the winner and its
    /// version. Never key bytes. The cache does not answer and is not changed (the trace
    /// only notes whether it holds the key).
    /// - Parameters:
    ///   - identifier: The identifier to look up.
    ///   - minVersion: A minimum version, as in ``retrieve(_:minVersion:)``.
    ///   - version: An exact version, as in ``retrieve(_:version:)`` (wins over `minVersion`).
    /// - Returns: The trace; errors are recorded in it, not thrown.
    public func explain(_ identifier: String, minVersion: String? = nil, version: String? = nil) -> KeyLookupTrace {
        let selector: Selector =
            version.map { .exact(KeyVersion($0)) } ?? minVersion.map { .minimum(KeyVersion($0)) } ?? .newest
        let (snapshot, wasCached) = state.withLock { state in
            (state.snapshot, state.cache.newest[RetrieverCacheKey(tag: state.tagID, identifier: identifier)] != nil)
        }
        return KeyRetriever.trace(identifier, selector: selector, snapshot: snapshot, wasCached: wasCached)
    }

    /// Lists every key in every source: the copy that wins, every shadowed copy, and
    /// warnings (sensitive keys in plaintext sources, versions that disagree between
    /// sources, keys only stored under a `_test`/`_prod` suffix, keys this build cannot see).
    /// - Returns: The report. A source that cannot be listed is reported in it.
    /// - Throws: ``KeyRetrievalError/auditFailed(reasons:)`` only when no source at all could
    ///   be listed.
    public func audit() throws -> KeyAudit {
        let snapshot = state.withLock { $0.snapshot }
        return try KeyAudit.build(snapshot: snapshot)
    }

    // MARK: Resolution

    /// Resolves a cache miss: one caller per key consults the sources; concurrent callers
    /// for the same key wait for its answer.
    private func resolve(_ identifier: String, selector: Selector) throws -> KeyInfo? {
        guard !identifier.isEmpty else {
            throw KeyRetrievalError.invalidIdentifier(identifier, reason: "the identifier is empty")
        }
        enum Role: Sendable {
            case leader(Flight, Snapshot)
            case follower(Flight)
        }
        let role = state.withLock { state -> Role in
            let key = FlightKey(tag: state.tagID, identifier: identifier, selector: selector)
            if let flight = state.inFlight[key] { return .follower(flight) }
            let flight = Flight()
            state.inFlight[key] = flight
            return .leader(flight, state.snapshot)
        }
        switch role {
        case .follower(let flight):
            return try flight.wait().get()
        case .leader(let flight, let snapshot):
            let clock = ContinuousClock()
            let start = clock.now
            // An answer found while a higher-priority source failed (keychain locked) is a
            // fallback: serve it, but do not cache it, so the better copy wins once the
            // source recovers.
            var failures: [String] = []
            var refused: [KeyLookupEvent.RefusedCopy] = []
            let result = Result {
                try KeyRetriever.lookup(
                    identifier, selector: selector, snapshot: snapshot, recorder: nil, failures: &failures,
                    refused: &refused)
            }
            // A key from a keychain that can be locked (one with a passphrase) is not cached:
            // a lock, in this process or another, must reach the next lookup, which the
            // keychain answers with its lock state (a cache answers from memory).
            let cacheable = failures.isEmpty && !KeyRetriever.mayBeLocked(result)
            let expiry = timeToLive.map { KeyRetrieverCache.now() &+ $0 } ?? UInt64.max
            let cached = state.withLock { state -> Bool in
                let key = FlightKey(tag: snapshot.tagID, identifier: identifier, selector: selector)
                if state.inFlight[key] === flight { state.inFlight[key] = nil }
                guard cacheable, state.generation == snapshot.generation, case .success(let info?) = result else {
                    return false
                }
                switch selector {
                case .newest:
                    state.cache.storeNewest(
                        info, for: RetrieverCacheKey(tag: snapshot.tagID, identifier: identifier), expiry: expiry)
                case .exact(let version):
                    state.cache.storeExact(
                        info,
                        for: RetrieverExactCacheKey(tag: snapshot.tagID, identifier: identifier, version: version),
                        expiry: expiry)
                case .minimum:
                    return false
                }
                return true
            }
            if cached { sweeper?.arm(at: expiry) }
            flight.finish(result)
            if logging.isActive(isRelease: snapshot.environment.isRelease) {
                logging.handler(
                    KeyRetriever.event(
                        identifier, result, snapshot.environment.tag, clock.now - start, selector: selector,
                        refused: refused, failures: failures))
            }
            return try result.get()
        }
    }

    /// The lookup itself: sources outer, candidates inner, version selection, policy.
    static func lookup(
        _ identifier: String, selector: Selector, snapshot: Snapshot, recorder: KeyLookupRecorder?
    ) throws -> KeyInfo? {
        var failures: [String] = []
        var refused: [KeyLookupEvent.RefusedCopy] = []
        return try lookup(
            identifier, selector: selector, snapshot: snapshot, recorder: recorder, failures: &failures,
            refused: &refused)
    }

    /// The lookup itself; `failures` collects the sources that failed before the answer was
    /// found, with the reason (the answer then came from a lower-priority source and must not
    /// be cached, and a miss must say a source failed); `refused` collects the copies whose
    /// versions did not match the selector.
    static func lookup(
        _ identifier: String, selector: Selector, snapshot: Snapshot, recorder: KeyLookupRecorder?,
        failures: inout [String], refused: inout [KeyLookupEvent.RefusedCopy]
    ) throws -> KeyInfo? {
        // Worked out one at a time: sources usually answer under the identifier itself.
        var candidates = KeyCandidates.LazyNames(identifier)
        let sensitive = snapshot.policy.isSensitive(identifier)
        let enforced = snapshot.policy.isEnforced(isRelease: snapshot.environment.isRelease)
        for source in snapshot.ordered {
            let sourceStart = recorder?.now()
            if source.kind == .environment, snapshot.environment.isRelease, !snapshot.allowsEnvironmentInRelease {
                if let recorder, let sourceStart {
                    recorder.record(
                        source, candidate: nil,
                        outcome: .skipped(reason: "environment variables are not consulted in release builds"),
                        since: sourceStart)
                }
                continue
            }
            var candidateIndex = 0
            candidates: while let candidate = candidates.name(at: candidateIndex) {
                candidateIndex += 1
                let start = recorder?.now()
                let records: [KeyInfo]
                do {
                    records = try source.lookup(candidate)
                } catch {
                    if let recorder, let start {
                        recorder.record(
                            source, candidate: candidate, outcome: .failed(message: "\(error)"), since: start)
                    }
                    if sensitive {
                        throw KeyRetrievalError.sourceFailed(
                            identifier: identifier, source: source.kind, sourceDescription: source.sourceDescription,
                            underlying: error)
                    }
                    failures.append("\(source.sourceDescription): \(error)")
                    break candidates
                }
                if records.isEmpty {
                    if let recorder, let start {
                        recorder.record(source, candidate: candidate, outcome: .miss, since: start)
                    }
                    continue
                }
                guard let chosen = select(records, selector) else {
                    refused.append(
                        KeyLookupEvent.RefusedCopy(
                            sourceDescription: source.sourceDescription, matchedName: records[0].matchedName,
                            versions: sortedVersions(records)))
                    if let recorder, let start {
                        recorder.record(
                            source, candidate: candidate,
                            outcome: .noMatchingVersion(versions: sortedVersions(records)), since: start)
                    }
                    continue
                }
                if source.kind.isPlaintext, enforced,
                    sensitive || snapshot.policy.isSensitive(identifier, matchedName: chosen.matchedName)
                {
                    if let recorder, let start {
                        recorder.record(
                            source, candidate: candidate,
                            outcome: .refused(reason: "sensitive key in a plaintext source"), since: start)
                    }
                    throw KeyRetrievalError.sensitiveKeyInPlaintextSource(
                        identifier: identifier, matchedName: chosen.matchedName, source: source.kind,
                        location: chosen.location)
                }
                if let recorder, let start {
                    recorder.record(
                        source, candidate: candidate,
                        outcome: .hit(selected: chosen.version, versions: sortedVersions(records)), since: start)
                }
                return chosen.withIdentifier(identifier)
            }
        }
        return nil
    }

    /// The record a selector picks among one name's versions (the first of equal versions).
    static func select(_ records: [KeyInfo], _ selector: Selector) -> KeyInfo? {
        switch selector {
        case .newest:
            return records.reduce(nil) { best, next in best.map { $0.keyVersion < next.keyVersion ? next : $0 } ?? next
            }
        case .minimum(let minimum):
            return records.filter { $0.keyVersion >= minimum }
                .reduce(nil) { best, next in best.map { $0.keyVersion < next.keyVersion ? next : $0 } ?? next }
        case .exact(let version):
            return records.first { $0.keyVersion == version }
        }
    }

    static func sortedVersions(_ records: [KeyInfo]) -> [String] {
        records.sorted { $0.keyVersion < $1.keyVersion }.map(\.version)
    }

    /// Runs a recorded lookup and assembles the trace, with hints.
    static func trace(_ identifier: String, selector: Selector, snapshot: Snapshot, wasCached: Bool) -> KeyLookupTrace {
        let recorder = KeyLookupRecorder()
        let start = recorder.now()
        let result: KeyLookupTrace.Result
        do {
            if identifier.isEmpty {
                throw KeyRetrievalError.invalidIdentifier(identifier, reason: "the identifier is empty")
            }
            if let info = try lookup(identifier, selector: selector, snapshot: snapshot, recorder: recorder) {
                result = .found(
                    .init(
                        source: info.source, sourceDescription: info.sourceDescription, matchedName: info.matchedName,
                        version: info.version, location: info.location))
            } else {
                result = .notFound
            }
        } catch {
            result = .failed(error)
        }
        let duration = recorder.now() - start
        return KeyLookupTrace(
            identifier: identifier, request: selector.request, environmentTag: snapshot.environment.tag,
            isRelease: snapshot.environment.isRelease, isSensitive: snapshot.policy.isSensitive(identifier),
            priority: snapshot.priority, sources: snapshot.ordered.map(\.sourceDescription),
            candidates: KeyCandidates.names(for: identifier), steps: recorder.steps, result: result,
            wasCached: wasCached, duration: duration,
            hints: hints(identifier, snapshot: snapshot, steps: recorder.steps, result: result))
    }

    /// Troubleshooting hints for a finished trace.
    static func hints(
        _ identifier: String, snapshot: Snapshot, steps: [KeyLookupTrace.Step], result: KeyLookupTrace.Result
    ) -> [String] {
        var hints: [String] = []
        if let firstKeychain = snapshot.priority.firstIndex(of: .keychain),
            snapshot.priority[..<firstKeychain].contains(where: \.isPlaintext)
        {
            hints.append(
                "Keychain is not consulted first (priority: \(snapshot.priority.map(\.description).joined(separator: " > "))); "
                    + "a plaintext copy can win over the keychain copy.")
        }
        if !snapshot.priority.contains(.keychain) && snapshot.unconsulted.contains(where: { $0.kind == .keychain }) {
            hints.append(
                "A keychain source is configured but .keychain is not in the priority, so it is never consulted.")
        }
        if steps.contains(where: { if case .skipped = $0.outcome { return true } else { return false } }) {
            hints.append(
                "The environment source is skipped in release builds; allow it with setAllowsEnvironmentInRelease(true) "
                    + "only if that is intended.")
        }
        if steps.contains(where: { if case .failed = $0.outcome { return true } else { return false } }) {
            hints.append(
                "A source failed and was skipped; fix it (unlock the keychain, repair the file) and look again.")
        }
        switch result {
        case .found(let winner):
            if winner.source.isPlaintext, snapshot.ordered.contains(where: { $0.kind == .keychain }) {
                hints.append(
                    "Served from a plaintext source (\(winner.sourceDescription)); if the key is sensitive, store it in the "
                        + "keychain and mark it in KeyPolicy.")
            }
        case .notFound:
            if steps.contains(where: { if case .noMatchingVersion = $0.outcome { return true } else { return false } })
            {
                hints.append("Copies exist, but none has the requested version; see the versions listed above.")
            } else {
                hints.append(
                    "No consulted source holds any candidate name; check the spelling, or run audit() to list every "
                        + "stored name. Candidates never add a _test/_prod suffix.")
            }
        case .failed:
            break
        }
        return hints
    }

    /// The log event for a resolved lookup.
    static func event(
        _ identifier: String, _ result: Result<KeyInfo?, any Error>, _ tag: String, _ duration: Duration,
        selector: Selector = .newest, refused: [KeyLookupEvent.RefusedCopy] = [], failures: [String] = []
    ) -> KeyLookupEvent {
        let requested: String?
        switch selector {
        case .newest: requested = nil
        case .minimum(let version): requested = "at or above \(version.rawValue)"
        case .exact(let version): requested = version.rawValue
        }
        switch result {
        case .success(let info?):
            return KeyLookupEvent(
                identifier: identifier, requestedVersion: requested, refusedCopies: [], sourceFailures: failures,
                outcome: .found,
                source: info.source, sourceDescription: info.sourceDescription, matchedName: info.matchedName,
                version: info.version, environmentTag: tag, duration: duration)
        case .success(nil):
            return KeyLookupEvent(
                identifier: identifier, requestedVersion: requested, refusedCopies: refused, sourceFailures: failures,
                outcome: .notFound,
                source: nil, sourceDescription: nil, matchedName: nil, version: nil, environmentTag: tag,
                duration: duration)
        case .failure(let error):
            return KeyLookupEvent(
                identifier: identifier, requestedVersion: requested, refusedCopies: [], sourceFailures: failures,
                outcome: .failed("\(error)"),
                source: nil, sourceDescription: nil, matchedName: nil, version: nil, environmentTag: tag,
                duration: duration)
        }
    }

    /// The priority without duplicates; `nil` when empty.
    static func normalized(_ priority: [KeySourceKind]) -> [KeySourceKind]? {
        var seen: Set<KeySourceKind> = []
        let result = priority.filter { seen.insert($0).inserted }
        return result.isEmpty ? nil : result
    }
}

/// A source that could not be set up (a malformed bundled key file): every lookup reports
/// the original error, so the problem shows in traces and audits instead of vanishing.
struct UnavailableKeySource: KeySource {
    let kind: KeySourceKind
    let sourceDescription: String
    let error: any Error

    func lookup(_ name: String) throws -> [KeyInfo] { throw error }
    func identifiers() throws -> [String] { throw error }
}

/// The notification observers that clear the cache: the app entering the background,
/// memory warnings and protected data becoming unavailable (UIKit's notification names,
/// posted on iOS, tvOS and visionOS, and the last also by Keysmith's keychain on Linux when
/// this process locks it or changes its passphrase), and on Apple platforms the system's
/// memory-pressure events.
final class RetrieverObservers: @unchecked Sendable {
    /// `UIApplication.didEnterBackgroundNotification` and
    /// `UIApplication.didReceiveMemoryWarningNotification`, by raw name so that Keysmith
    /// does not import UIKit.
    static let clearingNotifications = [
        Notification.Name("UIApplicationDidEnterBackgroundNotification"),
        Notification.Name("UIApplicationDidReceiveMemoryWarningNotification"),
        // Protected data going away: the device locking on iOS; on Linux, a lock or a
        // passphrase change made in this process.
        Notification.Name("UIApplicationProtectedDataWillBecomeUnavailable"),
    ]

    private let center: NotificationCenter?
    private var tokens: [any NSObjectProtocol] = []
    #if canImport(Darwin)
        private var memoryPressure: (any DispatchSourceMemoryPressure)?
    #endif

    init(center: NotificationCenter?) {
        self.center = center
    }

    /// Starts observing; `clear` runs on every event. Called once, from the initializer.
    func start(_ clear: @escaping @Sendable () -> Void) {
        if let center {
            tokens = RetrieverObservers.clearingNotifications.map { name in
                center.addObserver(forName: name, object: nil, queue: nil) { _ in clear() }
            }
        }
        #if canImport(Darwin)
            let source = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: .global())
            source.setEventHandler { clear() }
            source.resume()
            memoryPressure = source
        #endif
    }

    deinit {
        if let center { tokens.forEach(center.removeObserver) }
        #if canImport(Darwin)
            memoryPressure?.cancel()
        #endif
    }
}
