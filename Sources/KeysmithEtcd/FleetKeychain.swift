import Foundation
import KeychainServices

/// What a machine of a fleet keeps in its own keychain: the fleet key, the fleet settings,
/// and the last-known-good copy of every value it read from etcd.
///
/// Every item is a generic password with `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`
/// (readable by background work after the first unlock, never in a backup or on another
/// device):
///
/// | service | account | value |
/// |---|---|---|
/// | `keysmith.fleet` | `fleet-key` | the 32-byte fleet key |
/// | `keysmith.fleet` | `settings` | ``FleetSettings`` as JSON (no secret) |
/// | `keysmith.fleet` | `etcd-password` | the etcd password, when the settings name a user |
/// | `keysmith.fleet.offline:PREFIX` | `ID/VERSION` | the sealed value read from etcd, and when it was confirmed |
///
/// Offline copies stay sealed: serving one opens it with the fleet key, so a copy edited in
/// the keychain fails as a value edited in etcd does.
///
/// On Linux the keychain in force when the value is created (`KeychainEnvironment.current`,
/// including a task-scoped one) is used for every later call, also from the watch's thread.
public struct FleetKeychain: Sendable, CustomStringConvertible {
    /// The keychain service of the fleet key and settings (default `keysmith.fleet`).
    public let service: String
    /// The access group to read and write, if any.
    public let accessGroup: String?
    #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
        /// The keychain directory and access groups captured at creation.
        let environment: KeychainEnvironment
    #endif

    /// The default service, `keysmith.fleet`.
    public static let defaultService = "keysmith.fleet"

    /// Creates a fleet keychain over the keychain in force.
    /// - Parameters:
    ///   - service: The service of the fleet items.
    ///   - accessGroup: The access group, if any.
    public init(service: String = FleetKeychain.defaultService, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
        #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
            environment = KeychainEnvironment.current
        #endif
    }

    /// `FleetKeychain(service keysmith.fleet)`.
    public var description: String { "FleetKeychain(service \(service))" }

    // MARK: Fleet key and settings

    /// Stores the fleet key.
    /// - Parameters:
    ///   - key: The key.
    ///   - replacing: Whether an existing fleet key may be replaced (values sealed under it
    ///     can then no longer be read here).
    /// - Throws: ``EtcdError/keychain(operation:status:)``; `errSecDuplicateItem` when a key
    ///   exists and `replacing` is false.
    public func storeFleetKey(_ key: FleetKey, replacing: Bool = false) throws {
        var bytes = key.exportedBytes()
        defer { FleetCipher.wipe(&bytes) }
        try store(bytes, service: service, account: "fleet-key", label: "Keysmith fleet key", comment: key.fingerprint,
            replacing: replacing)
    }

    /// The fleet key, or `nil` when this keychain has none.
    /// - Throws: ``EtcdError/keychain(operation:status:)`` when the keychain cannot answer;
    ///   ``EtcdError/invalidFleetKey(reason:)`` for a stored key of the wrong size.
    public func fleetKey() throws -> FleetKey? {
        guard var data = try read(service: service, account: "fleet-key") else { return nil }
        defer { FleetCipher.wipe(&data) }
        return try FleetKey(data)
    }

    /// Stores the fleet settings (replacing earlier ones).
    /// - Parameter settings: The settings.
    /// - Throws: ``EtcdError/keychain(operation:status:)``.
    public func storeSettings(_ settings: FleetSettings) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(settings)) ?? Data()
        try store(data, service: service, account: "settings", label: "Keysmith fleet settings", comment: nil,
            replacing: true)
    }

    /// The fleet settings, or `nil` when none are stored.
    /// - Throws: ``EtcdError/keychain(operation:status:)``.
    public func settings() throws -> FleetSettings? {
        guard let data = try read(service: service, account: "settings") else { return nil }
        return try? JSONDecoder().decode(FleetSettings.self, from: data)
    }

    /// Stores the etcd password (when the settings name a user).
    /// - Parameter password: The password.
    /// - Throws: ``EtcdError/keychain(operation:status:)``.
    public func storeEtcdPassword(_ password: Data) throws {
        try store(password, service: service, account: "etcd-password", label: "Keysmith fleet etcd password",
            comment: nil, replacing: true)
    }

    /// The etcd password, or `nil`.
    /// - Throws: ``EtcdError/keychain(operation:status:)``.
    public func etcdPassword() throws -> Data? {
        try read(service: service, account: "etcd-password")
    }

    /// Removes the fleet key, settings, password and every offline copy of `prefix`.
    /// - Parameter prefix: The fleet's prefix (its offline copies go too), if known.
    /// - Throws: ``EtcdError/keychain(operation:status:)``.
    public func removeFleet(prefix: String?) throws {
        try delete(["service": service])
        if let prefix { try delete(["service": offlineService(prefix)]) }
    }

    // MARK: Offline copies

    /// One last-known-good copy.
    struct OfflineCopy: Sendable {
        let identifier: String
        let version: String
        let sealed: Data
        let modRevision: Int64
        let confirmed: Date
    }

    /// The service of a prefix's offline copies.
    func offlineService(_ prefix: String) -> String { "\(service).offline:\(prefix)" }

    /// Stores (or refreshes) the offline copy of one version.
    func storeOfflineCopy(prefix: String, identifier: String, version: String, sealed: Data, modRevision: Int64,
        confirmed: Date) throws
    {
        let record: [String: Any] = [
            "value": sealed.base64EncodedString(), "confirmed": confirmed.timeIntervalSince1970,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: record)) ?? Data()
        try store(data, service: offlineService(prefix), account: identifier + "/" + version, label: identifier,
            comment: String(modRevision), replacing: true)
    }

    /// The offline copies of `identifier`.
    func offlineCopies(prefix: String, identifier: String) throws -> [OfflineCopy] {
        var query = base(offlineService(prefix))
        query[kSecAttrLabel as String] = identifier
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        query[kSecReturnAttributes as String] = true
        query[kSecReturnData as String] = true
        return try copyAll(query).compactMap { row in
            let account = row[kSecAttrAccount as String] as? String ?? ""
            guard account.hasPrefix(identifier + "/"), let data = row[kSecValueData as String] as? Data,
                let record = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let sealed = (record["value"] as? String).flatMap({ Data(base64Encoded: $0) })
            else { return nil }
            let confirmed = Date(timeIntervalSince1970: (record["confirmed"] as? NSNumber)?.doubleValue ?? 0)
            return OfflineCopy(
                identifier: identifier, version: String(account.dropFirst(identifier.count + 1)), sealed: sealed,
                modRevision: Int64(row[kSecAttrComment as String] as? String ?? "") ?? 0, confirmed: confirmed)
        }
    }

    /// Every offline copy's account (`ID/VERSION`) and revision, without the values.
    func offlineIndex(prefix: String) throws -> [String: Int64] {
        var query = base(offlineService(prefix))
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        query[kSecReturnAttributes as String] = true
        var index: [String: Int64] = [:]
        for row in try copyAll(query) {
            guard let account = row[kSecAttrAccount as String] as? String, account.contains("/") else { continue }
            index[account] = Int64(row[kSecAttrComment as String] as? String ?? "") ?? 0
        }
        return index
    }

    /// Removes the offline copy of one version (retired in etcd).
    func removeOfflineCopy(prefix: String, account: String) throws {
        try delete(["service": offlineService(prefix), "account": account])
    }

    /// Records that etcd confirmed every offline copy of `prefix` at `date` (the watch is in
    /// step with etcd, so the copies equal etcd's values).
    func storeConfirmed(prefix: String, _ date: Date) throws {
        try store(Data(String(date.timeIntervalSince1970).utf8), service: offlineService(prefix), account: "confirmed",
            label: "confirmed", comment: nil, replacing: true)
    }

    /// When etcd last confirmed every offline copy of `prefix`, if ever.
    func confirmed(prefix: String) throws -> Date? {
        guard let data = try read(service: offlineService(prefix), account: "confirmed"),
            let seconds = Double(String(decoding: data, as: UTF8.self))
        else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    // MARK: Keychain calls

    private func scoped<R>(_ body: () throws -> R) rethrows -> R {
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
            return try body()
        #else
            return try KeychainEnvironment.withEnvironment(environment, body)
        #endif
    }

    private func base(_ service: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private func store(_ data: Data, service: String, account: String, label: String, comment: String?,
        replacing: Bool) throws
    {
        try scoped {
            var match = base(service)
            match[kSecAttrAccount as String] = account
            var changes: [String: Any] = [kSecValueData as String: data, kSecAttrLabel as String: label]
            if let comment { changes[kSecAttrComment as String] = comment }
            if replacing {
                let status = SecItemUpdate(match as CFDictionary, changes as CFDictionary)
                if status == errSecSuccess { return }
                guard status == errSecItemNotFound else { throw EtcdError.keychain(operation: "update", status: status) }
            }
            var attributes = match.merging(changes) { $1 }
            attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            var status = SecItemAdd(attributes as CFDictionary, nil)
            if status == errSecDuplicateItem, replacing {
                status = SecItemUpdate(match as CFDictionary, changes as CFDictionary)
            }
            guard status == errSecSuccess else { throw EtcdError.keychain(operation: "add", status: status) }
        }
    }

    private func read(service: String, account: String) throws -> Data? {
        try scoped {
            var query = base(service)
            query[kSecAttrAccount as String] = account
            query[kSecReturnData as String] = true
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess else { throw EtcdError.keychain(operation: "read", status: status) }
            return result as? Data
        }
    }

    private func copyAll(_ query: [String: Any]) throws -> [[String: Any]] {
        try scoped {
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return [] }
            guard status == errSecSuccess else { throw EtcdError.keychain(operation: "list", status: status) }
            return (result as? [[String: Any]]) ?? []
        }
    }

    private func delete(_ selector: [String: String]) throws {
        try scoped {
            var query = base(selector["service"] ?? service)
            if let account = selector["account"] { query[kSecAttrAccount as String] = account }
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw EtcdError.keychain(operation: "delete", status: status)
            }
        }
    }
}
