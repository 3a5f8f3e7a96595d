import Foundation
import Keysmith

/// Keys for a whole fleet, in etcd: a ``KeySource`` for `KeyRetriever` (kind `.remote`).
///
/// Each version of a key is one etcd key, `PREFIX` + `ID/VERSION`, whose value is a
/// ``SealedValue`` envelope (XChaCha20-Poly1305 under the fleet key, identifier and version
/// bound as associated data): etcd never holds a key in the clear, and a value changed or
/// moved in etcd is refused with ``EtcdError/tampered(identifier:version:key:reason:)``,
/// never served.
///
/// ```swift
/// let fleet = try EtcdKeySource(
///     configuration: try EtcdConfiguration(endpoints: ["http://10.0.0.1:2379"], prefix: "/keysmith/prod/"),
///     keychain: FleetKeychain())
/// let retriever = KeyRetriever(sources: [KeychainKeySource(service: "com.example.keys"), fleet])
/// fleet.startWatching(updating: [retriever])   // rotations reach the retriever as they land
/// let key = try retriever.retrieve("api_key")
/// ```
///
/// - **Reads.** Without a watch, each lookup reads the name's versions from etcd (failover
///   across the endpoints). With a watch in step with etcd, lookups are answered from memory.
/// - **Rotation.** ``startWatching(updating:onChange:)`` watches the prefix from the last
///   revision seen + 1 (after a compaction it reads the prefix again and resumes),
///   reconnects with backoff, and clears the attached retrievers' caches when a version
///   lands or is retired, so the next `retrieve` serves it. The watch runs on its own thread
///   and never blocks a lookup.
/// - **Writes.** ``publish(_:for:version:)`` creates a version with an etcd transaction that
///   fails if the key exists: a version is never overwritten, and two publishers never
///   interleave.
/// - **Offline.** Every value read is kept, still sealed, as a last-known-good copy in the
///   local keychain (``FleetKeychain``). When no endpoint answers, lookups serve it and its
///   location says "offline copy" and when etcd last confirmed it; past the configuration's
///   maximum staleness the lookup fails instead. A confirmation is recorded only when etcd
///   answered: a watch frame (an event, the stream's creation, a progress notification), a
///   read, or the watching source's periodic read of the prefix's keys and revisions that
///   matches its memory. A watch whose connection stays open while etcd answers nothing is
///   no confirmation: past the maximum staleness its memory is no longer served either.
public final class EtcdKeySource: KeySource, @unchecked Sendable, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable
{
    /// Always ``KeySourceKind/remote``.
    public var kind: KeySourceKind { .remote }
    /// `Fleet(etcd)`.
    public var sourceDescription: String { "Fleet(etcd)" }
    /// Where the keys live.
    public let configuration: EtcdConfiguration
    /// The fingerprint of this source's fleet key (never the key).
    public var fleetKeyFingerprint: String { fleetKey.fingerprint }

    let client: EtcdClient
    let fleetKey: FleetKey
    let keychain: FleetKeychain
    private let condition = NSCondition()
    private var state = State()
    private var watchThread: Thread?
    private var refresher: (any DispatchSourceTimer)?

    /// What the watch and the lookups share (guarded by `condition`).
    private struct State {
        /// etcd key → value, the whole prefix, while the watch is in step.
        var mirror: [String: EtcdKeyValue] = [:]
        /// Whether `mirror` is complete and the watch is live.
        var synced = false
        /// The last revision applied to `mirror`.
        var revision: Int64 = 0
        var watching = false
        var stopped = false
        var connection: EtcdWatchConnection?
        var retrievers: [WeakRetriever] = []
        var handlers: [@Sendable (Change) -> Void] = []
        /// Times the watch connected (the first time included).
        var connections = 0
        /// Times the watch read the whole prefix (the first time, and after each compaction).
        var fullReads = 0
        /// Until when lookups go straight to the offline copies (no endpoint answered).
        var unreachableUntil: Date?
        var lastUnreachable = ""
        /// When this process last refreshed each offline copy (`ID/VERSION`).
        var refreshed: [String: Date] = [:]
        /// When etcd last answered in a way that confirms the mirror (a watch frame, or a
        /// read of the prefix's keys and revisions that matched it).
        var lastAnswer: Date?
        /// Confirmation reads in a row that did not match the mirror.
        var mismatchedConfirmations = 0
        /// Whether this source checked that the prefix's values are sealed under its fleet key
        /// (once, before its first publish).
        var fleetKeyChecked = false
        /// Why the watch's last attempt to get in step failed (cleared when it is in step).
        var watchProblem: String?
        /// Envelopes of the mirror already parsed, by etcd key (with their revision).
        var parsed: [String: (revision: Int64, value: SealedValue.Parsed)] = [:]
    }

    /// A weak reference to an attached retriever.
    private struct WeakRetriever {
        weak var retriever: KeyRetriever?
    }

    /// Creates a fleet source.
    /// - Parameters:
    ///   - configuration: Where the keys live.
    ///   - fleetKey: The fleet key.
    ///   - keychain: Where the offline copies are kept.
    public init(configuration: EtcdConfiguration, fleetKey: FleetKey, keychain: FleetKeychain = FleetKeychain()) {
        self.configuration = configuration
        self.fleetKey = fleetKey
        self.keychain = keychain
        client = EtcdClient(configuration: configuration)
    }

    /// Creates a fleet source with the fleet key stored in `keychain`.
    /// - Parameters:
    ///   - configuration: Where the keys live.
    ///   - keychain: The keychain holding the fleet key, and where offline copies are kept.
    /// - Throws: ``EtcdError/noFleetKey(service:)`` when the keychain has no fleet key;
    ///   ``EtcdError/keychain(operation:status:)`` when it cannot be read.
    public convenience init(configuration: EtcdConfiguration, keychain: FleetKeychain) throws {
        guard let key = try keychain.fleetKey() else { throw EtcdError.noFleetKey(service: keychain.service) }
        self.init(configuration: configuration, fleetKey: key, keychain: keychain)
    }

    deinit {
        stopWatching()
    }

    // MARK: KeySource

    /// Every version of `name` in etcd (or, when etcd is unreachable, in the offline copies).
    /// - Parameter name: The exact identifier.
    /// - Returns: One record per version; empty when the fleet has none.
    /// - Throws: ``EtcdError/tampered(identifier:version:key:reason:)`` for a value that
    ///   fails authentication; ``EtcdError/offlineCopyTooOld(identifier:confirmed:maximum:unreachable:)``
    ///   when etcd is unreachable and the copy is too old; ``EtcdError/unreachable(reasons:)``
    ///   when etcd is unreachable and there is no copy; other ``EtcdError``s from etcd.
    public func lookup(_ name: String) throws -> [KeyInfo] {
        guard (try? EtcdConfiguration.validate(name, what: "identifier")) != nil else { return [] }
        let namePrefix = configuration.prefix + name + "/"
        let (mirrored, skipNetwork) = condition.locked { () -> ([EtcdKeyValue]?, Bool) in
            if mirrorIsTrusted {
                return (state.mirror.values.filter { EtcdKeySource.isVersionKey($0.key, of: namePrefix) }, false)
            }
            return (nil, state.unreachableUntil.map { $0 > Date() } ?? false)
        }
        if let mirrored { return try records(mirrored, name: name, offline: nil, mirrored: true) }
        if !skipNetwork {
            do {
                let values = try client.range(prefix: namePrefix).kvs.filter {
                    EtcdKeySource.isVersionKey($0.key, of: namePrefix)
                }
                let found = try records(values, name: name, offline: nil)
                refreshOfflineCopies(values, name: name)
                return found
            } catch EtcdError.unreachable(let reasons) {
                condition.locked {
                    state.unreachableUntil = Date().addingTimeInterval(1)
                    state.lastUnreachable = reasons.joined(separator: "; ")
                }
            }
        }
        return try offlineRecords(name)
    }

    /// Every identifier in the fleet, sorted (from the watch's memory while it is in step,
    /// else from etcd).
    /// - Returns: The identifiers.
    /// - Throws: ``EtcdError`` when etcd is unreachable or answers with an error (the
    ///   offline copies answer lookups, not listings).
    public func identifiers() throws -> [String] {
        try entries().reduce(into: Set<String>()) { $0.insert($1.identifier) }.sorted()
    }

    // MARK: Managing keys

    /// One version in etcd, as ``entries()`` lists it (never its bytes).
    public struct Entry: Sendable, Equatable {
        /// The identifier.
        public let identifier: String
        /// The version.
        public let version: String
        /// The etcd key.
        public let key: String
        /// The etcd revision of its creation.
        public let revision: Int64
        /// The fingerprint of the fleet key the value names (`nil` for a value in the older
        /// format, or one that is not a sealed fleet value).
        public let sealedWith: String?
    }

    /// Every version in the fleet, by identifier then version (oldest first).
    /// - Returns: The entries.
    /// - Throws: ``EtcdError`` when etcd cannot be read (the offline copies are used only by
    ///   lookups).
    public func entries() throws -> [Entry] {
        let values: [EtcdKeyValue] = try condition.locked { mirrorIsTrusted ? Array(state.mirror.values) : nil }
            ?? client.range(prefix: configuration.prefix).kvs
        return values.compactMap { value -> Entry? in
            guard let (identifier, version) = split(value.key) else { return nil }
            let parsed = try? SealedValue.parse(value.value, key: value.key, identifier: identifier, version: version)
            return Entry(
                identifier: identifier, version: version, key: value.key, revision: value.modRevision,
                sealedWith: parsed?.sealedWith)
        }.sorted { ($0.identifier, KeyVersion($0.version)) < ($1.identifier, KeyVersion($1.version)) }
    }

    /// Which fleet keys sealed the values under the prefix.
    public struct FleetKeyCensus: Sendable, Equatable {
        /// Values under the prefix (`ID/VERSION` keys).
        public let values: Int
        /// Values that open with this source's fleet key.
        public let openHere: Int
        /// Values that name another fleet key: its fingerprint and how many, most first.
        public let otherKeys: [FleetKeyCount]
        /// Values in the older format that do not open here (changed, or another key's).
        public let unopenedOlderFormat: Int

        /// A fleet key's fingerprint and how many values name it.
        public struct FleetKeyCount: Sendable, Equatable {
            /// The fingerprint.
            public let fingerprint: String
            /// How many values.
            public let count: Int
        }

        /// Whether the prefix's values belong to another fleet key than this source's: more
        /// of them name another key than open here, or none opens here and some in the older
        /// format do not.
        public var isAnotherFleet: Bool {
            (otherKeys.first?.count ?? 0) > openHere || (openHere == 0 && unopenedOlderFormat > 0)
        }
    }

    /// Reads the prefix and counts which fleet keys sealed its values.
    /// - Returns: The census.
    /// - Throws: ``EtcdError`` when etcd cannot be read.
    public func fleetKeyCensus() throws -> FleetKeyCensus {
        let values: [EtcdKeyValue] = try condition.locked { mirrorIsTrusted ? Array(state.mirror.values) : nil }
            ?? client.range(prefix: configuration.prefix).kvs
        var count = 0
        var openHere = 0
        var olderFormat = 0
        var others: [FleetKeyCensus.FleetKeyCount] = []
        for value in values {
            guard let (identifier, version) = split(value.key) else { continue }
            count += 1
            guard let parsed = try? SealedValue.parse(value.value, key: value.key, identifier: identifier, version: version)
            else { continue }
            if let sealedWith = parsed.sealedWith, sealedWith != fleetKey.fingerprint {
                if let index = others.firstIndex(where: { $0.fingerprint == sealedWith }) {
                    others[index] = .init(fingerprint: sealedWith, count: others[index].count + 1)
                } else {
                    others.append(.init(fingerprint: sealedWith, count: 1))
                }
                continue
            }
            if var opened = try? parsed.open(fleetKey) {
                FleetCipher.wipe(&opened)
                openHere += 1
            } else if parsed.sealedWith == nil {
                olderFormat += 1
            }
        }
        others.sort { ($0.count, $1.fingerprint) > ($1.count, $0.fingerprint) }
        return FleetKeyCensus(values: count, openHere: openHere, otherKeys: others, unopenedOlderFormat: olderFormat)
    }

    /// What ``publish(_:for:version:)`` did.
    public enum PublishOutcome: Sendable, Equatable {
        /// The version was created.
        case created
        /// The version already held exactly these bytes: nothing changed (a repeated put).
        case unchanged
    }

    /// Publishes a new version of a key: sealed under the fleet key and created with an etcd
    /// transaction, so an existing version is never overwritten. Publishing the same bytes
    /// again under the same version changes nothing and succeeds.
    /// - Parameters:
    ///   - data: The key bytes.
    ///   - identifier: The identifier (no `/`).
    ///   - version: The version, such as `2024.07.01` (no `/`).
    /// - Returns: ``PublishOutcome/created``, or ``PublishOutcome/unchanged`` when the version
    ///   already holds these bytes.
    /// - Throws: ``EtcdError/fleetKeyMismatch(prefix:thisMachine:prefixKeys:)`` when the
    ///   prefix's values are sealed under another fleet key (checked once per source);
    ///   ``EtcdError/versionExists(identifier:version:)`` when etcd holds that version
    ///   with other bytes; ``EtcdError/outcomeUnknown(operation:reasons:)`` when etcd may
    ///   have received the write but did not answer; ``EtcdError/invalidName(_:reason:)``;
    ///   other ``EtcdError``s from etcd.
    @discardableResult
    public func publish(_ data: Data, for identifier: String, version: String) throws -> PublishOutcome {
        try EtcdConfiguration.validate(identifier, what: "identifier")
        try EtcdConfiguration.validate(version, what: "version")
        guard !data.isEmpty else { throw EtcdError.invalidName(identifier, reason: "the key data is empty") }
        if !condition.locked({ state.fleetKeyChecked }) {
            let census = try fleetKeyCensus()
            if census.isAnotherFleet {
                throw EtcdError.fleetKeyMismatch(
                    prefix: configuration.prefix, thisMachine: fleetKey.fingerprint,
                    prefixKeys: census.otherKeys.map(\.fingerprint))
            }
            condition.locked { state.fleetKeyChecked = true }
        }
        let sealed = try SealedValue.seal(data, identifier: identifier, version: version, fleetKey: fleetKey)
        let key = configuration.key(identifier, version)
        switch try client.create(key, value: sealed.encoded(), operation: "publishing version \(version) of \"\(identifier)\"") {
        case .created:
            return .created
        case .exists(let existing):
            // The same bytes again (a put repeated after an unknown outcome): nothing to do.
            if var stored = try? SealedValue.open(
                existing.value, key: key, identifier: identifier, version: version, fleetKey: fleetKey)
            {
                defer { FleetCipher.wipe(&stored) }
                if FleetCipher.constantTimeEqual(stored, data) { return .unchanged }
            }
            throw EtcdError.versionExists(identifier: identifier, version: version)
        }
    }

    /// Retires one version: deletes it from etcd (a transaction on its revision, so a value
    /// written meanwhile is not deleted by mistake). Watching machines drop it and its
    /// offline copy. A version this machine cannot open is retired only with `force`: it may
    /// be good for machines with another fleet key.
    /// - Parameters:
    ///   - identifier: The identifier.
    ///   - version: The version.
    ///   - force: Whether to retire a version that does not open with this fleet key.
    /// - Throws: ``EtcdError/versionNotFound(identifier:version:)`` when etcd does not hold
    ///   it; ``EtcdError/retireRefused(identifier:version:reason:)`` when it does not open
    ///   here and `force` is false; other ``EtcdError``s from etcd.
    public func retire(_ identifier: String, version: String, force: Bool = false) throws {
        try EtcdConfiguration.validate(identifier, what: "identifier")
        try EtcdConfiguration.validate(version, what: "version")
        let key = configuration.key(identifier, version)
        let response = try client.call("/kv/range", ["key": client.base64(key)])
        guard let existing = try EtcdClient.keyValues(response["kvs"]).first(where: { $0.key == key }) else {
            throw EtcdError.versionNotFound(identifier: identifier, version: version)
        }
        if !force {
            do {
                var opened = try SealedValue.open(
                    existing.value, key: key, identifier: identifier, version: version, fleetKey: fleetKey)
                FleetCipher.wipe(&opened)
            } catch let error as EtcdError {
                throw EtcdError.retireRefused(identifier: identifier, version: version, reason: EtcdKeySource.why(error))
            }
        }
        guard try client.delete(
            key, modRevision: existing.modRevision, operation: "retiring version \(version) of \"\(identifier)\"")
        else {
            throw EtcdError.versionNotFound(identifier: identifier, version: version)
        }
        try? keychain.removeOfflineCopy(prefix: configuration.prefix, account: identifier + "/" + version)
    }

    // MARK: Watching

    /// A change the watch saw.
    public struct Change: Sendable, Equatable, CustomStringConvertible {
        /// What happened to the version.
        public enum Kind: String, Sendable {
            /// A new version landed.
            case published
            /// The version was retired.
            case retired
            /// A value landed that fails authentication; it is not served.
            case refused
        }
        /// The identifier.
        public let identifier: String
        /// The version.
        public let version: String
        /// What happened.
        public let kind: Kind
        /// The etcd revision of the change.
        public let revision: Int64

        /// `api_key 2024.07.01`, with ` retired` or ` refused` for those kinds.
        public var description: String {
            kind == .published ? "\(identifier) \(version)" : "\(identifier) \(version) \(kind.rawValue)"
        }
    }

    /// Starts watching the prefix on a thread of its own (once; later calls only attach).
    /// The watch runs until ``stopWatching()``, and keeps the source alive until then.
    /// - Parameters:
    ///   - retrievers: Retrievers whose caches are cleared when a version lands or is
    ///     retired (held weakly).
    ///   - onChange: Called on the watch's thread for each change (after the caches are
    ///     cleared, so a `retrieve` made from it sees the change).
    public func startWatching(
        updating retrievers: [KeyRetriever] = [], onChange: (@Sendable (Change) -> Void)? = nil
    ) {
        let start = condition.locked { () -> Bool in
            state.retrievers += retrievers.map { WeakRetriever(retriever: $0) }
            if let onChange { state.handlers.append(onChange) }
            guard !state.watching else { return false }
            state.watching = true
            state.stopped = false
            return true
        }
        guard start else { return }
        let thread = Thread { [weak self] in self?.watchLoop() }
        thread.name = "keysmith.fleet.watch"
        watchThread = thread
        thread.start()
        startRefresher()
    }

    /// Attaches a retriever whose cache is cleared on every change (held weakly).
    /// - Parameter retriever: The retriever.
    public func attach(_ retriever: KeyRetriever) {
        condition.locked { state.retrievers.append(WeakRetriever(retriever: retriever)) }
    }

    /// Stops the watch (lookups then read etcd again).
    public func stopWatching() {
        let connection = condition.locked { () -> EtcdWatchConnection? in
            state.stopped = true
            state.watching = false
            state.synced = false
            condition.broadcast()
            return state.connection
        }
        connection?.cancel()
        refresher?.cancel()
        refresher = nil
    }

    /// Whether the watch is connected and in step with etcd (lookups are then answered
    /// from memory).
    public var isInStep: Bool { condition.locked { state.synced } }

    /// Why the watch is not in step, when its last attempt failed: etcd's answer or the
    /// connection's failure in words ("TLS connection to etcd at … refused: …"), never a
    /// secret. `nil` while in step, and before the first attempt ends. The watch keeps
    /// trying (a CA file or certificate fixed on disk is read again on the next attempt).
    public var watchProblem: String? { condition.locked { state.synced ? nil : state.watchProblem } }

    /// How many times the watch has connected (1 after the first connection).
    public var watchConnections: Int { condition.locked { state.connections } }

    /// How many times the watch has read the whole prefix: once at the start, and again
    /// each time etcd had compacted away the history it would have resumed from.
    public var watchFullReads: Int { condition.locked { state.fullReads } }

    /// Waits until the watch is in step with etcd.
    /// - Parameter timeout: The longest wait.
    /// - Returns: Whether it is in step.
    @discardableResult
    public func waitUntilInStep(timeout: Duration) -> Bool {
        let deadline = Date().addingTimeInterval(EtcdKeySource.seconds(timeout))
        condition.lock()
        defer { condition.unlock() }
        while !state.synced && !state.stopped {
            if !condition.wait(until: deadline) { return state.synced }
        }
        return state.synced
    }

    /// The watch: read the prefix, watch from the next revision, apply events; reconnect
    /// with backoff; read again after a compaction.
    private func watchLoop() {
        var delay = EtcdKeySource.seconds(configuration.initialReconnectDelay)
        let maximum = EtcdKeySource.seconds(configuration.maximumReconnectDelay)
        var needsFullRead = true
        var firstRead = true
        while !condition.locked({ state.stopped }) {
            if needsFullRead {
                do {
                    let (revision, values) = try client.range(prefix: configuration.prefix)
                    applyFullRead(revision: revision, values: values, report: !firstRead)
                    firstRead = false
                    needsFullRead = false
                } catch {
                    condition.locked { state.watchProblem = "\(error)" }
                    if !backoff(&delay, maximum) { return }
                    continue
                }
            }
            let endpoints = configuration.endpoints
            let index = client.preferredEndpoint % endpoints.count
            let startRevision = condition.locked { state.revision } + 1
            let body: [String: Any] = [
                "create_request": [
                    "key": client.base64(configuration.prefix),
                    "range_end": client.base64Data(EtcdClient.rangeEnd(of: Data(configuration.prefix.utf8))),
                    "start_revision": String(startRevision), "progress_notify": true,
                ]
            ]
            let request: EtcdHTTPRequest
            do {
                request = try client.watchRequest(endpoints[index], body: body)
            } catch {
                condition.locked { state.watchProblem = "\(error)" }
                client.prefer(index + 1)
                if !backoff(&delay, maximum) { return }
                continue
            }
            let outcome = WatchOutcome()
            let connection = EtcdWatchConnection(request: request, transport: client.transport) { [weak self] frame in
                self?.handle(frame, outcome: outcome, endpoint: index) ?? false
            }
            let proceed = condition.locked { () -> Bool in
                guard !state.stopped else { return false }
                state.connection = connection
                return true
            }
            guard proceed else { return }
            let reason = connection.run()
            condition.locked {
                state.synced = false
                state.connection = nil
                condition.broadcast()
            }
            if outcome.compacted {
                needsFullRead = true
                continue
            }
            if outcome.connected { delay = EtcdKeySource.seconds(configuration.initialReconnectDelay) }
            if let reason {
                let endpoint = EtcdClient.name(endpoints[index])
                let problem =
                    reason.kind == .tls
                    ? EtcdError.tlsFailed(endpoint: endpoint, reason: reason.reason).description
                    : "the watch on etcd at \(endpoint) ended: \(reason.reason)"
                condition.locked { state.watchProblem = problem }
                // Another member next time (failover); the preferred one answers reads.
                client.prefer(index + 1)
                if outcome.unauthenticated { client.dropToken() }
            }
            if !backoff(&delay, maximum) { return }
        }
    }

    /// What one watch connection saw.
    private final class WatchOutcome: @unchecked Sendable {
        var connected = false
        var compacted = false
        var unauthenticated = false
    }

    /// Waits `delay` (or until stopped), then doubles it up to `maximum`.
    /// - Returns: `false` when stopped.
    private func backoff(_ delay: inout TimeInterval, _ maximum: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(delay * Double.random(in: 0.8...1.2))
        delay = min(delay * 2, maximum)
        condition.lock()
        defer { condition.unlock() }
        while !state.stopped {
            if !condition.wait(until: deadline) { break }
        }
        return !state.stopped
    }

    /// Handles one watch frame; `false` closes the stream.
    private func handle(_ frame: [String: Any], outcome: WatchOutcome, endpoint: Int) -> Bool {
        guard let result = frame["result"] as? [String: Any] else {
            if (frame["error"] as? [String: Any])?["http_code"] as? Int == 401 { outcome.unauthenticated = true }
            return false
        }
        if result["canceled"] as? Bool == true {
            if EtcdClient.int64(result["compact_revision"]) > 0 { outcome.compacted = true }
            if (result["cancel_reason"] as? String ?? "").contains("auth") { outcome.unauthenticated = true }
            return false
        }
        if result["created"] as? Bool == true {
            outcome.connected = true
            client.prefer(endpoint)
            condition.locked {
                state.synced = true
                state.watchProblem = nil
                state.connections += 1
                state.unreachableUntil = nil
                condition.broadcast()
            }
            confirm()
            return true
        }
        let events = result["events"] as? [[String: Any]] ?? []
        if events.isEmpty {
            // Progress: every change up to the header's revision has been sent.
            let revision = EtcdClient.revision(result)
            condition.locked { state.revision = max(state.revision, revision) }
            confirm()
            return true
        }
        var changes: [(Change, EtcdKeyValue)] = []
        for event in events {
            guard let kvObject = event["kv"] as? [String: Any], let value = EtcdClient.keyValue(kvObject) else {
                continue
            }
            let deleted = event["type"] as? String == "DELETE"
            condition.locked {
                if deleted { state.mirror[value.key] = nil } else { state.mirror[value.key] = value }
                state.parsed[value.key] = nil
                state.revision = max(state.revision, value.modRevision)
            }
            if let change = classify(value, deleted: deleted) { changes.append((change, value)) }
        }
        // Retrievers first (they read the mirror, already updated), the keychain after.
        announce(changes.map(\.0))
        for (change, value) in changes { persist(change, value) }
        confirm()
        return true
    }

    /// Replaces the mirror with a full read; reports what changed since the last mirror
    /// (after a compaction or an outage) and brings the offline copies in step.
    private func applyFullRead(revision: Int64, values: [EtcdKeyValue], report: Bool) {
        let previous = condition.locked { () -> [String: EtcdKeyValue] in
            let old = state.mirror
            state.mirror = Dictionary(values.map { ($0.key, $0) }) { $1 }
            state.parsed = [:]
            state.fullReads += 1
            state.revision = revision
            return old
        }
        var changes: [Change] = []
        let current = Set(values.map(\.key))
        for value in values where previous[value.key]?.modRevision != value.modRevision {
            if let change = offlineUpdate(value, deleted: false) { changes.append(change) }
        }
        for (key, value) in previous where !current.contains(key) {
            if let change = offlineUpdate(value, deleted: true) { changes.append(change) }
        }
        // Copies of versions retired while this machine was away.
        if let index = try? keychain.offlineIndex(prefix: configuration.prefix) {
            let present = Set(values.compactMap { split($0.key).map { "\($0.0)/\($0.1)" } })
            for account in index.keys where !present.contains(account) {
                try? keychain.removeOfflineCopy(prefix: configuration.prefix, account: account)
            }
            for value in values {
                guard let (identifier, version) = split(value.key), index["\(identifier)/\(version)"] != value.modRevision
                else { continue }
                _ = offlineUpdate(value, deleted: false)
            }
        }
        if report { announce(changes) } else { clearRetrieverCaches() }
    }

    /// Stores or removes the offline copy for one changed value.
    /// - Returns: The change, or `nil` for a key outside the `ID/VERSION` layout.
    private func offlineUpdate(_ value: EtcdKeyValue, deleted: Bool) -> Change? {
        guard let change = classify(value, deleted: deleted) else { return nil }
        persist(change, value)
        return change
    }

    /// What a changed value is: a new version, a retired one, or one that fails to open.
    private func classify(_ value: EtcdKeyValue, deleted: Bool) -> Change? {
        guard let (identifier, version) = split(value.key) else { return nil }
        if deleted {
            return Change(identifier: identifier, version: version, kind: .retired, revision: value.modRevision)
        }
        let opens =
            (try? SealedValue.open(
                value.value, key: value.key, identifier: identifier, version: version, fleetKey: fleetKey)) != nil
        return Change(
            identifier: identifier, version: version, kind: opens ? .published : .refused, revision: value.modRevision)
    }

    /// Brings the offline copy in step with a change (a refused value is never kept: the
    /// last good copies stay what they were).
    private func persist(_ change: Change, _ value: EtcdKeyValue) {
        let account = "\(change.identifier)/\(change.version)"
        switch change.kind {
        case .retired:
            try? keychain.removeOfflineCopy(prefix: configuration.prefix, account: account)
        case .refused:
            break
        case .published:
            try? keychain.storeOfflineCopy(
                prefix: configuration.prefix, identifier: change.identifier, version: change.version,
                sealed: value.value, modRevision: value.modRevision, confirmed: Date())
            condition.locked { state.refreshed[account] = Date() }
        }
    }

    /// Clears the attached retrievers' caches, then tells the handlers.
    private func announce(_ changes: [Change]) {
        guard !changes.isEmpty else { return }
        clearRetrieverCaches()
        let handlers = condition.locked { state.handlers }
        for change in changes {
            for handler in handlers { handler(change) }
        }
    }

    private func clearRetrieverCaches() {
        let retrievers = condition.locked { () -> [KeyRetriever] in
            state.retrievers.removeAll { $0.retriever == nil }
            return state.retrievers.compactMap(\.retriever)
        }
        for retriever in retrievers { retriever.clearCache() }
    }

    /// Records that etcd answered just now and the mirror (so every offline copy) equals
    /// what it holds: in memory for this process's lookups, in the keychain for others.
    private func confirm() {
        let now = Date()
        condition.locked { state.lastAnswer = now }
        try? keychain.storeConfirmed(prefix: configuration.prefix, now)
    }

    /// Whether lookups may be answered from the watch's memory: the watch is in step, and
    /// etcd answered recently enough (a frozen etcd keeps the watch's connection open, but
    /// answers nothing). Call holding `condition`.
    private var mirrorIsTrusted: Bool {
        guard state.synced else { return false }
        guard let maximum = configuration.maximumStaleness else { return true }
        guard let lastAnswer = state.lastAnswer else { return false }
        let window = max(
            EtcdKeySource.seconds(maximum),
            2 * refreshInterval + EtcdKeySource.seconds(configuration.requestTimeout))
        return Date().timeIntervalSince(lastAnswer) <= window
    }

    /// While in step, reads the prefix's keys and revisions every so often; when etcd answers
    /// and they match the watch's memory, that is a confirmation. No answer, no confirmation:
    /// the offline copies age, and past the maximum staleness lookups fail. Two reads in a
    /// row that do not match mean the watch is stuck: it reconnects.
    private func startRefresher() {
        let interval = refreshInterval
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(250))
        timer.setEventHandler { [weak self] in
            guard let self, self.condition.locked({ self.state.synced }) else { return }
            guard let (_, values) = try? self.client.range(prefix: self.configuration.prefix, keysOnly: true) else {
                return
            }
            let (matches, stuck) = self.condition.locked { () -> (Bool, EtcdWatchConnection?) in
                let matches =
                    values.count == self.state.mirror.count
                    && values.allSatisfy { self.state.mirror[$0.key]?.modRevision == $0.modRevision }
                self.state.mismatchedConfirmations = matches ? 0 : self.state.mismatchedConfirmations + 1
                return (matches, self.state.mismatchedConfirmations >= 2 ? self.state.connection : nil)
            }
            if matches { self.confirm() }
            stuck?.cancel()
        }
        timer.resume()
        refresher = timer
    }

    /// A tenth of the maximum staleness, between 1 and 60 seconds.
    private var refreshInterval: TimeInterval {
        min(60, max(1, configuration.maximumStaleness.map { EtcdKeySource.seconds($0) / 10 } ?? 60))
    }

    // MARK: Records and offline copies

    /// Opens values into records (envelopes of the mirror are parsed once).
    private func records(_ values: [EtcdKeyValue], name: String, offline: String?, mirrored: Bool = false) throws
        -> [KeyInfo]
    {
        try values.compactMap { value -> KeyInfo? in
            guard let (identifier, version) = split(value.key), identifier == name else { return nil }
            let parsed: SealedValue.Parsed
            if mirrored, let known = condition.locked({ state.parsed[value.key] }), known.revision == value.modRevision {
                parsed = known.value
            } else {
                parsed = try SealedValue.parse(value.value, key: value.key, identifier: identifier, version: version)
                if mirrored {
                    condition.locked { state.parsed[value.key] = (value.modRevision, parsed) }
                }
            }
            let data = try parsed.open(fleetKey)
            return KeyInfo(
                identifier: name, matchedName: name, version: version, data: data, source: .remote,
                sourceDescription: sourceDescription,
                location: offline ?? "etcd key \(value.key), revision \(value.modRevision)")
        }
    }

    /// Keeps the offline copies of `name` in step with a network read (at most once per
    /// refresh interval per copy, and whenever a copy changed).
    private func refreshOfflineCopies(_ values: [EtcdKeyValue], name: String) {
        let now = Date()
        let interval = refreshInterval
        let stale = condition.locked { () -> [EtcdKeyValue] in
            values.filter { value in
                guard let (identifier, version) = split(value.key) else { return false }
                return state.refreshed["\(identifier)/\(version)"].map { now.timeIntervalSince($0) >= interval } ?? true
            }
        }
        guard !stale.isEmpty || values.isEmpty else { return }
        let present = Set(values.compactMap { split($0.key).map { "\($0.0)/\($0.1)" } })
        if let copies = try? keychain.offlineCopies(prefix: configuration.prefix, identifier: name) {
            for copy in copies where !present.contains("\(copy.identifier)/\(copy.version)") {
                try? keychain.removeOfflineCopy(prefix: configuration.prefix, account: "\(copy.identifier)/\(copy.version)")
            }
        }
        for value in stale {
            guard let (identifier, version) = split(value.key) else { continue }
            try? keychain.storeOfflineCopy(
                prefix: configuration.prefix, identifier: identifier, version: version, sealed: value.value,
                modRevision: value.modRevision, confirmed: now)
            condition.locked { state.refreshed["\(identifier)/\(version)"] = now }
        }
    }

    /// The offline copies of `name`, when etcd is unreachable.
    private func offlineRecords(_ name: String) throws -> [KeyInfo] {
        let unreachable = condition.locked { state.lastUnreachable }
        let copies = try keychain.offlineCopies(prefix: configuration.prefix, identifier: name)
        guard !copies.isEmpty else {
            throw EtcdError.unreachable(reasons: unreachable.isEmpty ? ["no endpoint answered"] : [unreachable])
        }
        let fleetConfirmed = (try? keychain.confirmed(prefix: configuration.prefix)) ?? nil
        let copyConfirmed = copies.map(\.confirmed).max() ?? Date(timeIntervalSince1970: 0)
        let confirmed = max(copyConfirmed, fleetConfirmed ?? copyConfirmed)
        if let maximum = configuration.maximumStaleness,
            Date().timeIntervalSince(confirmed) > EtcdKeySource.seconds(maximum)
        {
            throw EtcdError.offlineCopyTooOld(
                identifier: name, confirmed: confirmed, maximum: maximum, unreachable: unreachable)
        }
        let location =
            "offline copy in the keychain, last confirmed by etcd \(EtcdError.timestamp(confirmed)) "
            + "(etcd unreachable: \(unreachable))"
        return try records(
            copies.map { EtcdKeyValue(key: configuration.key($0.identifier, $0.version), value: $0.sealed, modRevision: $0.modRevision) },
            name: name, offline: location)
    }

    // MARK: Helpers

    /// `(ID, VERSION)` of an etcd key under the prefix, or `nil` for another layout.
    func split(_ key: String) -> (String, String)? {
        guard key.hasPrefix(configuration.prefix) else { return nil }
        let rest = key.dropFirst(configuration.prefix.count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    /// Whether `key` is `namePrefix` + one more segment.
    static func isVersionKey(_ key: String, of namePrefix: String) -> Bool {
        key.hasPrefix(namePrefix) && key.count > namePrefix.count && !key.dropFirst(namePrefix.count).contains("/")
    }

    /// Why a value does not open, in a few words (for ``EtcdError/retireRefused(identifier:version:reason:)``).
    static func why(_ error: EtcdError) -> String {
        switch error {
        case .foreignFleetKey(_, _, _, let sealedWith, _): return "it is sealed under fleet key \(sealedWith)"
        case .unopenable: return "it fails authentication, and its older format does not name its fleet key"
        case .tampered(_, _, _, let reason): return "it \(reason)"
        default: return error.description
        }
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    // MARK: Descriptions

    /// `Fleet(etcd http://… prefix /keysmith/prod/)`.
    public var description: String { "Fleet(\(configuration))" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// The configuration and the fleet key's fingerprint only.
    public var customMirror: Mirror {
        Mirror(self, children: ["configuration": configuration.description, "fleetKey": fleetKey.description])
    }
}
