import Foundation
import KeychainServices

/// What a migration did, key by key.
public struct MigrationReport: Sendable, Hashable, CustomStringConvertible {
    /// Keys copied to the destination (and then removed from the source).
    public var migrated: [String] = []
    /// Keys the destination already had with the same value; the source copy was removed
    /// (an earlier run was interrupted after writing).
    public var alreadyPresent: [String] = []
    /// Keys the destination already had with a different value: both copies were kept, so
    /// nothing is lost; decide which one is right, then remove the other.
    public var conflicts: [String] = []
    /// Keys that could not be migrated, with the reason; their source copy is left in place.
    public var skipped: [String: String] = [:]

    /// Creates an empty report.
    public init() {}

    /// Whether nothing was left behind (no conflict, nothing skipped).
    public var isComplete: Bool { skipped.isEmpty && conflicts.isEmpty }

    /// Whether `keys` holds `name`, byte for byte.
    static func lists(_ name: ExactName, in keys: [String]) -> Bool {
        keys.contains { ExactName($0) == name }
    }

    /// For example `migrated 2, already present 1, conflicts 0, skipped 0`, with the keys
    /// of conflicts and skipped values in parentheses.
    public var description: String {
        "migrated \(migrated.count), already present \(alreadyPresent.count), conflicts \(conflicts.count)"
            + (conflicts.isEmpty ? "" : " (\(ExactName.distinctSorted(conflicts).joined(separator: ", ")))")
            + ", skipped \(skipped.count)"
            + (skipped.isEmpty ? "" : " (\(ExactName.distinctSorted(skipped.keys).joined(separator: ", ")))")
    }
}

/// Moves the items of one keychain store to another: a renamed service, another access
/// group, another accessibility (after a service rename, values left under the old name
/// look lost to the new version).
///
/// For each key: if the destination has it with the same value, the source copy is
/// removed; if the destination has a different value, that is a conflict: both copies are
/// kept and the key is listed in ``MigrationReport/conflicts``. Otherwise the source value
/// is written to the destination, read back and compared, and only then removed from the
/// source. So the migration is idempotent (run it at every launch), crash-safe
/// (interrupted anywhere, the value exists in the source, the destination, or both, and the
/// next run finishes the job), and never deletes the only copy of a value.
///
/// ```swift
/// let old = try KeychainStore(service: "com.example.old")
/// let new = try KeychainStore(service: "com.example.app.auth")
/// let report = try ServiceMigration(from: old, to: new).run()
/// ```
public struct ServiceMigration: Sendable {
    /// Where items come from.
    public let source: KeychainStore
    /// Where items go.
    public let destination: KeychainStore

    /// Creates a migration.
    /// - Parameters:
    ///   - source: The old store.
    ///   - destination: The new store.
    public init(from source: KeychainStore, to destination: KeychainStore) {
        self.source = source
        self.destination = destination
    }

    /// Migrates `keys`, or every key of the source.
    ///
    /// Each source item is resolved to the access group it actually lives in, and only that
    /// item is deleted, and only after the destination holds a different item with the same
    /// bytes. A destination that already holds a different value is a conflict: both are
    /// kept, and `progress` reports the key as skipped. When source and destination share
    /// the class and service, the source's own item is never taken for the destination's
    /// copy.
    ///
    /// - Parameters:
    ///   - keys: The keys to migrate, or `nil` for all of the source's keys.
    ///   - progress: Called after each key with the key and what happened (for logging).
    /// - Returns: What happened to each key.
    /// - Throws: ``KeychainError`` from the first key that fails; that key's source copy is
    ///   left in place, and keys before it are fully migrated. ``KeychainError/Code/invalidParameters``
    ///   when the stores overlap in a way that cannot be migrated safely: the same class and
    ///   service, and a destination without an access group (it would read, and update, the
    ///   source's own items in the app's other groups; give the destination its explicit
    ///   group instead).
    /// - Note: A source and destination that select the same items (same class, service,
    ///   group and synchronizable setting) make this a no-op.
    @discardableResult
    public func run(
        keys: [String]? = nil, progress: (String, SecureStoreEvent.Outcome) -> Void = { _, _ in }
    ) throws(KeychainError) -> MigrationReport {
        var report = MigrationReport()
        guard !sameItems else { return report }
        if sharesScope && destination.accessGroup == nil {
            throw .invalidConfiguration(
                "Cannot migrate \(source.itemClass) from access group '\(source.accessGroup ?? "any")' to the same "
                    + "service without an access group: a destination without a group reads and updates the items "
                    + "of every group the app can use, including the source's own, so the only copy could be deleted.",
                fix: "Give the destination its explicit access group (for example the app's default group).",
                service: destination.service)
        }
        let sourceItems = try source.allAttributes()
        // Keys are compared byte for byte: "jos\u{E9}" and "jose\u{301}" are two items, both moved.
        let selected = keys ?? ExactName.distinctSorted(sourceItems.map(\.key))
        for key in selected {
            let name = ExactName(key)
            do throws(KeychainError) {
                // The groups the key's source items really live in; with a shared service, an
                // item already in the destination's group is the destination's, not a source copy.
                var groups = sourceItems.filter { ExactName($0.key) == name }.map(\.accessGroup)
                if sharesScope { groups.removeAll { ExactName.same($0, destination.accessGroup) } }
                if groups.isEmpty {
                    progress(key, .skipped)
                    continue
                }
                var conflict = false
                for group in groups {
                    let item = try source.pinned(toAccessGroup: group)
                    guard let data = try item.data(for: key) else { continue }
                    if try destination.contains(key) {
                        // Only the same value lets the old copy go; a different one is kept.
                        guard let present = try destination.data(for: key), KeyInfo.constantTimeEqual(present, data)
                        else {
                            conflict = true
                            if !MigrationReport.lists(name, in: report.conflicts) { report.conflicts.append(key) }
                            continue
                        }
                        try item.remove(key)
                        if !MigrationReport.lists(name, in: report.alreadyPresent) { report.alreadyPresent.append(key) }
                        continue
                    }
                    try destination.set(data, for: key)
                    guard try destination.data(for: key) == data else {
                        throw KeychainError(
                            status: errSecDecode, operation: .copyMatching, service: destination.service, key: key,
                            detail: "The migrated copy did not read back identical; the old item was kept.",
                            fix: "Run the migration again; if this persists, the destination cannot hold the value "
                                + "(check its access group and accessibility).")
                    }
                    try item.remove(key)
                    if !MigrationReport.lists(name, in: report.migrated) { report.migrated.append(key) }
                }
                progress(key, conflict ? .skipped : .success)
            } catch {
                progress(key, .failure(SecureStoreError.Code(error.code)))
                throw error
            }
        }
        return report
    }

    private var sameItems: Bool {
        sharesScope && ExactName.same(source.accessGroup, destination.accessGroup)
    }

    /// Whether both stores select items of the same class, service and synchronizable
    /// setting, so that only the access group can tell their items apart.
    private var sharesScope: Bool {
        source.itemClass == destination.itemClass && source.synchronizable == destination.synchronizable
    }
}

extension SecureStore {
    /// Moves the values an older version stored under another service into `namespace`:
    /// read new; if missing, read old, write new, verify, then delete old. When the
    /// namespace already holds a different value, both are kept and the key is reported in
    /// ``MigrationReport/conflicts``.
    ///
    /// Idempotent and crash-safe: run it at every launch; see ``ServiceMigration``.
    ///
    /// - Parameters:
    ///   - oldService: The service the old version used, for example `com.app.old`.
    ///   - oldAccessGroup: The access group of the old items, or `nil` for any of the app's.
    ///   - namespace: The namespace the values move to.
    ///   - keys: The keys to move, or `nil` for all.
    /// - Returns: What happened to each key.
    /// - Throws: ``SecureStoreError`` from the first key that fails; its old copy stays.
    @discardableResult
    public func migrateService(
        from oldService: String, oldAccessGroup: String? = nil, to namespace: Namespace = .default, keys: [String]? = nil
    ) throws(SecureStoreError) -> MigrationReport {
        if let problem = namespace.problem {
            throw SecureStoreError(.invalidValue, message: problem, namespace: namespace.name)
        }
        do {
            let provider = KeychainStoreProvider(
                accessGroup: configuration.accessGroup, accessibility: configuration.accessibility,
                errorInjection: configuration.errorInjection)
            let source = try KeychainStore(
                service: oldService, accessGroup: oldAccessGroup, accessibility: configuration.accessibility,
                errorInjection: configuration.errorInjection)
            let destination = try provider.store(for: service(for: namespace))
            let report = try ServiceMigration(from: source, to: destination).run(keys: keys) { key, outcome in
                log(.migrateService, key: key, namespace: namespace, outcome: outcome)
            }
            if !report.migrated.isEmpty || !report.alreadyPresent.isEmpty { recordNamespace(namespace) }
            return report
        } catch {
            throw SecureStoreError(error, key: error.key, namespace: namespace.name)
        }
    }
}
