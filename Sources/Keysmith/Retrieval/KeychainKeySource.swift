import Foundation
#if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
@_spi(Keysmith) import KeychainServices
#else
import KeychainServices
#endif

/// Keys in the keychain: the most secure source, and the first one consulted.
///
/// Keys are generic-password items (`kSecClassGenericPassword`) under one service. Several
/// versions of one key live side by side, so data encrypted with an old key can still be
/// decrypted after a rotation. Each version is one item:
///
/// | attribute | value | why |
/// |---|---|---|
/// | `kSecAttrService` | the source's service, e.g. `com.example.keys` | groups the keys |
/// | `kSecAttrAccount` | `name@version`, e.g. `api_key@2024.07.01` | the primary key (service + account) must differ per version |
/// | `kSecAttrLabel` | `name` | finds every version of a name with one exact-match query |
/// | `kSecAttrComment` | `version` | the version as metadata |
/// | `kSecAttrAccessible` | `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly` | readable by background work after the first unlock; never leaves the device |
/// | `kSecAttrAccessGroup` | the source's access group, when given | sharing with extensions |
///
/// Keychain matching is exact equality only, so "all versions of `api_key`" cannot be a
/// prefix search on the account; the label carries the bare name instead. Versions may
/// not contain `@`, so `name@version` is unambiguous.
///
/// Items written by other code in the older one-item-per-key layout (account = name,
/// version in the comment) are found too, with version `unknown` when
/// they have no comment.
///
/// ```swift
/// let keychain = KeychainKeySource(service: "com.example.keys")
/// try keychain.store(newKey, for: "db_key", version: "2024.07.01")  // the old version stays
/// try keychain.removeVersions(of: "db_key", olderThan: "2024.07.01") // when no longer needed
/// ```
public struct KeychainKeySource: KeySource {
    /// Always ``KeySourceKind/keychain``.
    public var kind: KeySourceKind { .keychain }
    /// `Keychain`.
    public var sourceDescription: String { "Keychain" }
    /// The keychain service (`kSecAttrService`) that holds the keys.
    public let service: String
    /// The access group (`kSecAttrAccessGroup`) to read and write, or `nil` for the app's
    /// default group when writing and every readable group when reading.
    public let accessGroup: String?

    /// Creates a keychain source.
    /// - Parameters:
    ///   - service: The keychain service, reverse-DNS by convention (`com.example.keys`).
    ///   - accessGroup: The access group shared with extensions, if any.
    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    /// One keychain item, as read back.
    private struct Item {
        let account: String
        let name: String
        let version: String
        let accessGroup: String?
        let data: Data?
        /// Whether the item is behind access control (`kSecAttrAccessControl`).
        var needsUserAuthentication = false

        /// Whether `other` is the same keychain item: the same account and access group,
        /// byte for byte.
        func isSameItem(as other: Item) -> Bool {
            ExactName(account) == ExactName(other.account) && ExactName.same(accessGroup, other.accessGroup)
        }
    }

    // MARK: KeySource

    /// Every version stored under exactly `name`.
    /// - Parameter name: The exact key name.
    /// - Returns: One record per version; empty when the keychain has none.
    /// - Throws: ``KeyRetrievalError/keychain(operation:status:service:account:)`` when the
    ///   keychain cannot answer (for example `errSecInteractionNotAllowed` while locked).
    public func lookup(_ name: String) throws -> [KeyInfo] {
        guard !name.isEmpty else { return [] }
        return try items(named: name, withData: true).compactMap { item in
            guard let data = item.data else { return nil }
            return KeyInfo(
                identifier: name, matchedName: name, version: item.version, data: data, source: .keychain,
                sourceDescription: sourceDescription,
                locationParts: .keychainItem(service: service, account: item.account, accessGroup: item.accessGroup),
                needsUserAuthentication: item.needsUserAuthentication)
        }
    }

    /// Every key name under the service, each once (byte for byte), in UTF-8 byte order.
    /// - Returns: The names.
    /// - Throws: ``KeyRetrievalError/keychain(operation:status:service:account:)`` when the
    ///   keychain cannot answer.
    public func identifiers() throws -> [String] {
        var query = baseQuery()
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        query[kSecReturnAttributes as String] = true
        let rows = try copyAll(query, operation: "listing", account: nil)
        return ExactName.distinctSorted(rows.map { item(from: $0).name })
    }

    // MARK: Managing keys

    /// The versions stored for `identifier`, oldest first.
    /// - Parameter identifier: The exact key name.
    /// - Returns: The versions.
    /// - Throws: ``KeyRetrievalError/keychain(operation:status:service:account:)`` on failure.
    public func versions(of identifier: String) throws -> [String] {
        try items(named: identifier, withData: false).map(\.version).sorted { KeyVersion($0) < KeyVersion($1) }
    }

    /// Stores one version of a key. Other versions are kept (rotation: old data stays
    /// decryptable); storing a version that exists replaces its bytes.
    /// - Parameters:
    ///   - data: The key bytes.
    ///   - identifier: The key name.
    ///   - version: The version, such as `2024.07.01` (no `@`).
    /// - Throws: ``KeyRetrievalError/invalidIdentifier(_:reason:)`` or
    ///   ``KeyRetrievalError/invalidVersion(_:reason:)`` for unusable names;
    ///   ``KeyRetrievalError/keychain(operation:status:service:account:)`` when the keychain
    ///   refuses (locked, missing entitlement for the access group, ...).
    /// - Note: The item is written update-first, add as a fallback, so a concurrent writer
    ///   cannot make it fail with a duplicate.
    public func store(_ data: Data, for identifier: String, version: String) throws {
        guard !identifier.isEmpty else {
            throw KeyRetrievalError.invalidIdentifier(identifier, reason: "the identifier is empty")
        }
        guard !data.isEmpty else {
            throw KeyRetrievalError.invalidIdentifier(identifier, reason: "the key data is empty")
        }
        try Self.validate(version: version)
        let wanted = KeyVersion(version)
        let existing = try items(named: identifier, withData: false).first { KeyVersion($0.version) == wanted }
        let account = existing?.account ?? "\(identifier)@\(version)"

        var match = baseQuery()
        match[kSecAttrAccount as String] = account
        if let group = existing?.accessGroup ?? accessGroup { match[kSecAttrAccessGroup as String] = group }
        let changes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrComment as String: existing?.version ?? version,
            kSecAttrLabel as String: identifier,
        ]
        let updated = SecItemUpdate(match as CFDictionary, changes as CFDictionary)
        if updated == errSecSuccess { return }
        guard updated == errSecItemNotFound else {
            throw KeyRetrievalError.keychain(operation: "update", status: updated, service: service, account: account)
        }
        var attributes = baseQuery()
        attributes[kSecAttrAccount as String] = account
        attributes[kSecAttrLabel as String] = identifier
        attributes[kSecAttrComment as String] = version
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        attributes[kSecValueData as String] = data
        var status = SecItemAdd(attributes as CFDictionary, nil)
        if status == errSecDuplicateItem {
            // Someone added it between our update and add: update once more.
            status = SecItemUpdate(match as CFDictionary, changes as CFDictionary)
        }
        guard status == errSecSuccess else {
            throw KeyRetrievalError.keychain(operation: "add", status: status, service: service, account: account)
        }
    }

    /// Removes a key: one version, or every version.
    /// - Parameters:
    ///   - identifier: The key name.
    ///   - version: The version to remove; `nil` removes every version.
    /// - Returns: The number of items removed (0 when there was nothing to remove, which is
    ///   not an error).
    /// - Throws: ``KeyRetrievalError/keychain(operation:status:service:account:)`` on failure.
    @discardableResult
    public func remove(_ identifier: String, version: String? = nil) throws -> Int {
        let wanted = version.map(KeyVersion.init)
        let doomed = try items(named: identifier, withData: false).filter { item in
            wanted.map { KeyVersion(item.version) == $0 } ?? true
        }
        for item in doomed { try delete(item) }
        return doomed.count
    }

    /// Removes the versions of a key older than `version` (after a rotation, once no data
    /// encrypted with them remains). The newest version is never removed, even when it is
    /// older than `version`: retiring old keys must not leave the key without any version
    /// (use ``remove(_:version:)`` to delete a key outright).
    /// - Parameters:
    ///   - identifier: The key name.
    ///   - version: A version made of numbers, such as `2024.07.01` or `v3`; versions below
    ///     it are removed, it and newer ones stay, and so does the newest stored version.
    /// - Returns: The number of items removed.
    /// - Throws: ``KeyRetrievalError/invalidVersion(_:reason:)`` when `version` is not made
    ///   of numbers (a label such as `builtin` has no meaningful "older than", and a word in
    ///   it, as in `2024.x`, is more likely a typo than a pre-release to retire keys below);
    ///   ``KeyRetrievalError/keychain(operation:status:service:account:)`` on failure.
    @discardableResult
    public func removeVersions(of identifier: String, olderThan version: String) throws -> Int {
        let limit = KeyVersion(version)
        guard limit.isMadeOfNumbers else {
            throw KeyRetrievalError.invalidVersion(
                version, reason: "olderThan must be a version made of numbers, such as 2024.07.01 or v3")
        }
        let all = try items(named: identifier, withData: false)
        guard let newest = all.map({ KeyVersion($0.version) }).max() else { return 0 }
        let doomed = all.filter { KeyVersion($0.version) < limit && KeyVersion($0.version) != newest }
        for item in doomed { try delete(item) }
        return doomed.count
    }

    /// Removes every key under this service (and access group, when given).
    /// - Throws: ``KeyRetrievalError/keychain(operation:status:service:account:)`` on failure.
    public func removeAll() throws {
        let status = SecItemDelete(baseQuery() as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw KeyRetrievalError.keychain(operation: "delete", status: status, service: service, account: nil)
        }
    }

    // MARK: Keychain calls

    /// The attributes every query shares: class, service, data-protection keychain and,
    /// when given, the access group.
    private func baseQuery() -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    /// Every item of `name`: versioned items (found by label) and an item in the older
    /// one-item layout (account = name).
    private func items(named name: String, withData: Bool) throws -> [Item] {
        #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
        // The same two searches, in one keychain call, without query and attribute
        // dictionaries.
        let (byLabel, byAccount) = try searchTwice(name, withData: withData)
        var found = byLabel.filter { ExactName($0.name) == ExactName(name) }
        for item in byAccount where !found.contains(where: { $0.isSameItem(as: item) }) {
            found.append(item)
        }
        return found
        #else
        var byLabel = baseQuery()
        byLabel[kSecAttrLabel as String] = name
        byLabel[kSecMatchLimit as String] = kSecMatchLimitAll
        byLabel[kSecReturnAttributes as String] = true
        if withData { byLabel[kSecReturnData as String] = true }
        var found = try copyAll(byLabel, operation: "lookup", account: nil).map(item(from:))
            .filter { ExactName($0.name) == ExactName(name) }

        var byAccount = byLabel
        byAccount[kSecAttrLabel as String] = nil
        byAccount[kSecAttrAccount as String] = name
        for item in try copyAll(byAccount, operation: "lookup", account: name).map(item(from:))
        where !found.contains(where: { $0.isSameItem(as: item) }) {
            found.append(item)
        }
        return found
        #endif
    }

    #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
    /// The items of this source's service labelled `name`, and those whose account is
    /// `name`: the two match-all searches ``copyAll(_:operation:account:)`` runs, made in
    /// one call; not found is an empty result, and a failure names the account of the
    /// search that failed, as the separate calls do.
    private func searchTwice(_ name: String, withData: Bool) throws -> (byLabel: [Item], byAccount: [Item]) {
        let searches = [
            GenericPasswordSearch(
                service: service, label: name, accessGroup: accessGroup, matchesAll: true, returnsData: withData),
            GenericPasswordSearch(
                service: service, account: name, accessGroup: accessGroup, matchesAll: true, returnsData: withData),
        ]
        var results: [[GenericPasswordItem]] = []
        var failedSearch: Int?
        let status = KeychainCopyGenericPasswords(searches, &results, failedSearch: &failedSearch)
        guard status == errSecSuccess, results.count == 2 else {
            throw KeyRetrievalError.keychain(
                operation: "lookup", status: status, service: service, account: failedSearch == 1 ? name : nil)
        }
        let items = results.map { matches in
            matches.map {
                var found = item(
                    account: $0.account, label: $0.label, comment: $0.comment, group: $0.accessGroup, data: $0.data)
                found.needsUserAuthentication = $0.isAccessControlled
                return found
            }
        }
        return (items[0], items[1])
    }
    #endif

    /// Runs a match-all query; not found is an empty result.
    private func copyAll(_ query: [String: Any], operation: String, account: String?) throws -> [[String: Any]] {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess else {
            throw KeyRetrievalError.keychain(operation: operation, status: status, service: service, account: account)
        }
        return (result as? [[String: Any]]) ?? []
    }

    /// Reads one returned attribute dictionary: `name@version` accounts with a label are
    /// versioned items; anything else is a one-item-per-key item named by its account.
    private func item(from attributes: [String: Any]) -> Item {
        var found = item(
            account: attributes[kSecAttrAccount as String] as? String,
            label: attributes[kSecAttrLabel as String] as? String,
            comment: attributes[kSecAttrComment as String] as? String,
            group: attributes[kSecAttrAccessGroup as String] as? String,
            data: attributes[kSecValueData as String] as? Data)
        found.needsUserAuthentication = attributes[kSecAttrAccessControl as String] != nil
        return found
    }

    /// An item from its attributes, as ``item(from:)`` reads them.
    private func item(account: String?, label: String?, comment: String?, group: String?, data: Data?) -> Item {
        let account = account ?? ""
        // Byte for byte, as the keychain compares names (String.hasPrefix is canonical-equivalence based).
        if let label, let suffix = ExactName(account).droppingPrefix(ExactName(label + "@")), !suffix.isEmpty {
            return Item(account: account, name: label, version: comment ?? suffix, accessGroup: group, data: data)
        }
        return Item(
            account: account, name: account,
            version: comment.flatMap { $0.isEmpty ? nil : $0 } ?? KeyVersion.unknown.rawValue,
            accessGroup: group, data: data)
    }

    private func delete(_ item: Item) throws {
        var query = baseQuery()
        query[kSecAttrAccount as String] = item.account
        if let group = item.accessGroup { query[kSecAttrAccessGroup as String] = group }
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw KeyRetrievalError.keychain(
                operation: "delete", status: status, service: service, account: item.account)
        }
    }

    /// Checks that a version can be stored: non-empty, no `@` (it separates name and
    /// version in the account).
    static func validate(version: String) throws {
        guard !version.isEmpty else { throw KeyRetrievalError.invalidVersion(version, reason: "the version is empty") }
        guard !version.contains("@") else {
            throw KeyRetrievalError.invalidVersion(
                version, reason: "\"@\" separates name and version in the keychain account")
        }
    }
}
