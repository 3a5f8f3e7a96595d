import Foundation
#if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
@_spi(Keysmith) import KeychainServices
#else
import KeychainServices
#endif

/// Typed access to the keychain items of one service: strings, data and `Codable` values
/// by key, with an explicit accessibility, an optional access group, synchronizable items
/// and access control, and errors that say what to do.
///
/// ```swift
/// let store = try KeychainStore(service: "com.example.app.auth")
/// try store.set(token, for: "access_token")
/// let token = try store.string(for: "access_token")      // nil when absent
/// try store.set(profile, for: "profile")                  // any Encodable, as JSON
/// let profile = try store.value(Profile.self, for: "profile")
/// try store.remove("access_token")                        // absent is fine
/// ```
///
/// Rules the store follows for you:
/// - **One store per service.** There is no default service: a bundle-ID default could be
///   shared by accident with an SDK in the same app. Use reverse-DNS names.
/// - **Explicit accessibility**, default ``Accessibility/afterFirstUnlockThisDeviceOnly``:
///   readable by background work after the first unlock, never copied to another device
///   (a synchronizable store defaults to ``Accessibility/afterFirstUnlock``, which may
///   sync). Never the platform's implicit default.
/// - **Values**: `set(_:for:)` takes `Data` (stored as is), a `String` (stored as UTF-8)
///   or any other `Encodable` (stored as JSON); `data(for:)`, `string(for:)` and
///   `value(_:for:)` read them back, `value(String.self, for:)` and `value(Data.self, for:)`
///   as `string(for:)` and `data(for:)` do, except that a quoted JSON string (what earlier
///   versions' `setValue(_:for:)` stored for a `String` or `Data`) is decoded, as it was then.
/// - **`set` updates first and adds only when the item is missing**, and re-applies the
///   store's accessibility and access policy to an existing item, so changing a setting in
///   code reaches items written by older versions instead of orphaning them.
/// - **A missing item is `nil`**, and removing a missing item succeeds.
/// - **``removeAll()`` removes only this store's items** (its class, service, access group
///   and synchronizable setting), never the whole app's keychain.
///
/// Thread safety: `KeychainStore` is an immutable `Sendable` value and Keychain Services is
/// thread-safe, so one store can be used from any thread or task. Concurrent `set`s of the
/// same key resolve to one of the values (a lost add race is retried as an update), and a
/// `set` racing a `remove` of the same key still succeeds (an item removed under it is added
/// again). The
/// `async` variants run the blocking keychain call on the global concurrent executor, off
/// the caller's actor (the main actor included).
///
/// - Note: Every throwing method throws ``KeychainError`` (typed throws). Its
///   `description` names the key and service, the raw `OSStatus` with Apple's message, and
///   the fix; it never contains the item's data.
public struct KeychainStore: Sendable {
    /// The item class and service (or server) the store is scoped to.
    public let itemClass: KeychainItemClass
    /// The access group items are written to and read from, or `nil` for the app's default
    /// group on writes and all the app's groups on reads (Apple's rule).
    public let accessGroup: String?
    /// The data-protection class of items this store writes.
    public let accessibility: Accessibility
    /// Whether the store's items are synchronized through iCloud Keychain. A synchronizable
    /// store and a local store with the same service see different items.
    public let synchronizable: Bool
    /// The authentication required to read the store's items, or `nil` for none.
    public let accessPolicy: AccessPolicy?
    /// The test hook the store consults before each keychain call, or `nil`.
    public let errorInjection: ErrorInjection?

    /// The service (generic passwords) or server host (internet passwords).
    public var service: String { itemClass.scopeName }

    /// Creates a store for the generic passwords of one service.
    ///
    /// - Parameters:
    ///   - service: The service (`kSecAttrService`), reverse-DNS by convention, for example
    ///     `com.example.app.auth`. Must not be empty.
    ///   - accessGroup: The shared access group (`TEAMID.com.example.shared`), or `nil` for
    ///     the app's own default group.
    ///   - accessibility: When items can be read; `nil` (the default) for
    ///     ``Accessibility/afterFirstUnlockThisDeviceOnly``, or ``Accessibility/afterFirstUnlock``
    ///     for a synchronizable store (device-only items never sync).
    ///   - synchronizable: Whether items sync through iCloud Keychain (default `false`).
    ///   - accessPolicy: Authentication required to read items (default none).
    ///   - errorInjection: A test hook that makes chosen calls fail (default none).
    /// - Throws: ``KeychainError`` with code ``KeychainError/Code/invalidParameters`` when the
    ///   service is empty, or the options contradict each other: a synchronizable store with
    ///   an explicit `ThisDeviceOnly` accessibility or an access policy.
    public init(
        service: String, accessGroup: String? = nil,
        accessibility: Accessibility? = nil, synchronizable: Bool = false,
        accessPolicy: AccessPolicy? = nil, errorInjection: ErrorInjection? = nil
    ) throws(KeychainError) {
        guard !service.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw .invalidConfiguration(
                "A KeychainStore needs a service name; got an empty string. There is no bundle-identifier default, "
                    + "so that no other code shares your items by accident.",
                fix: "Pass a reverse-DNS service name, for example \"com.example.app.auth\".", service: nil)
        }
        try self.init(
            itemClass: .genericPassword(service: service), accessGroup: accessGroup, accessibility: accessibility,
            synchronizable: synchronizable, accessPolicy: accessPolicy, errorInjection: errorInjection)
    }

    /// Creates a store for the internet passwords of one server; keys are account names.
    ///
    /// - Parameters:
    ///   - server: The server the passwords belong to.
    ///   - accessGroup: The shared access group, or `nil` for the app's default group.
    ///   - accessibility: When items can be read; `nil` (the default) for
    ///     ``Accessibility/afterFirstUnlockThisDeviceOnly``, or ``Accessibility/afterFirstUnlock``
    ///     for a synchronizable store.
    ///   - synchronizable: Whether items sync through iCloud Keychain (default `false`).
    ///   - accessPolicy: Authentication required to read items (default none).
    ///   - errorInjection: A test hook that makes chosen calls fail (default none).
    /// - Throws: ``KeychainError`` with code ``KeychainError/Code/invalidParameters`` when the
    ///   options contradict each other.
    public init(
        server: InternetServer, accessGroup: String? = nil,
        accessibility: Accessibility? = nil, synchronizable: Bool = false,
        accessPolicy: AccessPolicy? = nil, errorInjection: ErrorInjection? = nil
    ) throws(KeychainError) {
        try self.init(
            itemClass: .internetPassword(server), accessGroup: accessGroup, accessibility: accessibility,
            synchronizable: synchronizable, accessPolicy: accessPolicy, errorInjection: errorInjection)
    }

    private init(
        itemClass: KeychainItemClass, accessGroup: String?, accessibility: Accessibility?, synchronizable: Bool,
        accessPolicy: AccessPolicy?, errorInjection: ErrorInjection?
    ) throws(KeychainError) {
        let scope = itemClass.scopeName
        let accessibility = accessibility ?? KeychainStore.defaultAccessibility(synchronizable: synchronizable)
        if let accessGroup, accessGroup.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw .invalidConfiguration(
                "The access group is empty.",
                fix: "Pass nil for the app's default group, or the full group name (TEAMID.com.example.shared).",
                service: scope)
        }
        if synchronizable && accessibility.isThisDeviceOnly {
            throw .invalidConfiguration(
                "A synchronizable store cannot use \(accessibility): ThisDeviceOnly items never leave the device.",
                fix: "Use .afterFirstUnlock or .whenUnlocked (or leave the accessibility out), or make the store local.",
                service: scope)
        }
        if synchronizable && accessPolicy != nil {
            throw .invalidConfiguration(
                "A synchronizable store cannot have an access policy: access-controlled items are bound to this device.",
                fix: "Make the store local (synchronizable: false), or drop the access policy.", service: scope)
        }
        self.itemClass = itemClass
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        self.synchronizable = synchronizable
        self.accessPolicy = accessPolicy
        self.errorInjection = errorInjection
    }

    /// The accessibility a store uses when none is given: ``Accessibility/afterFirstUnlockThisDeviceOnly``,
    /// or ``Accessibility/afterFirstUnlock`` for a synchronizable store.
    /// - Parameter synchronizable: Whether the store's items sync.
    /// - Returns: The accessibility.
    public static func defaultAccessibility(synchronizable: Bool) -> Accessibility {
        synchronizable ? .afterFirstUnlock : .afterFirstUnlockThisDeviceOnly
    }

    /// A copy of this store with other protection settings, for the same items: the next
    /// `set` of each key re-applies them.
    /// - Parameters:
    ///   - accessibility: The new accessibility.
    ///   - accessPolicy: The new access policy (`nil` for none).
    /// - Returns: The store.
    /// - Throws: ``KeychainError`` when the combination is invalid (see ``init(service:accessGroup:accessibility:synchronizable:accessPolicy:errorInjection:)``).
    public func with(accessibility: Accessibility, accessPolicy: AccessPolicy? = nil) throws(KeychainError) -> KeychainStore {
        try KeychainStore(
            itemClass: itemClass, accessGroup: accessGroup, accessibility: accessibility,
            synchronizable: synchronizable, accessPolicy: accessPolicy, errorInjection: errorInjection)
    }

    /// A copy of this store confined to one access group: for reading or deleting exactly
    /// the item found in that group, never the same key in the app's other groups.
    /// - Parameter group: The access group, or `nil` to keep this store's.
    /// - Returns: The store.
    /// - Throws: ``KeychainError`` for an empty group name.
    func pinned(toAccessGroup group: String?) throws(KeychainError) -> KeychainStore {
        guard let group else { return self }
        return try KeychainStore(
            itemClass: itemClass, accessGroup: group, accessibility: accessibility, synchronizable: synchronizable,
            accessPolicy: accessPolicy, errorInjection: errorInjection)
    }

    // MARK: - Writing

    /// Stores `data` under `key`, replacing any existing value.
    ///
    /// Updates the existing item first and adds it only when it is missing, so the item is
    /// never briefly absent. The store's accessibility and access policy are re-applied to
    /// an existing item. A `label` or `comment` of `nil` leaves the existing one unchanged.
    ///
    /// - Parameters:
    ///   - data: The bytes to store.
    ///   - key: The key (`kSecAttrAccount`); must not be empty.
    ///   - label: A user-visible label (`kSecAttrLabel`), or `nil`.
    ///   - comment: A comment (`kSecAttrComment`), or `nil`.
    /// - Throws: ``KeychainError``: ``KeychainError/Code/interactionNotAllowed`` when the
    ///   device is locked, ``KeychainError/Code/missingEntitlement`` for an access group the
    ///   app may not use, ``KeychainError/Code/invalidParameters`` for an empty key, and
    ///   others as the keychain reports them.
    /// - Note: On failure the previous value, if any, is left in place. A store without an
    ///   access policy re-applies its accessibility but does not strip an access policy an
    ///   older version put on the item; to drop a policy, `remove` the key, then `set` it.
    public func set(_ data: Data, for key: String, label: String? = nil, comment: String? = nil) throws(KeychainError) {
        try write(data, for: key, label: label, comment: comment)
    }

    /// Stores a string, as UTF-8, under `key`, replacing any existing value.
    /// - Parameters:
    ///   - string: The string to store.
    ///   - key: The key; must not be empty.
    ///   - label: A user-visible label, or `nil`.
    ///   - comment: A comment, or `nil`.
    /// - Throws: ``KeychainError``, as ``set(_:for:label:comment:)-(Data,_,_,_)``.
    /// - Note: On failure the previous value, if any, is left in place.
    public func set(_ string: String, for key: String, label: String? = nil, comment: String? = nil) throws(KeychainError) {
        try write(Data(string.utf8), for: key, label: label, comment: comment)
    }

    /// Stores any `Encodable` value under `key`, replacing any existing value: a `Codable`
    /// struct, an array, a number, as JSON.
    ///
    /// ```swift
    /// try store.set(profile, for: "profile")
    /// let profile = try store.value(Profile.self, for: "profile")
    /// ```
    ///
    /// A `String` or `Data` that reaches this method (from generic code) is stored exactly
    /// as the `String` and `Data` overloads store it: UTF-8 text, raw bytes.
    /// - Parameters:
    ///   - value: The value to store; `nil` is refused (call ``remove(_:)``).
    ///   - key: The key; must not be empty.
    ///   - label: A user-visible label, or `nil`.
    ///   - comment: A comment, or `nil`.
    /// - Throws: ``KeychainError`` with code ``KeychainError/Code/invalidParameters`` when
    ///   the value is `nil` or cannot be encoded; otherwise as
    ///   ``set(_:for:label:comment:)-(Data,_,_,_)``.
    /// - Note: On failure the previous value, if any, is left in place.
    public func set<Value: Encodable>(
        _ value: Value, for key: String, label: String? = nil, comment: String? = nil
    ) throws(KeychainError) {
        try write(try storedBytes(of: value, key: key), for: key, label: label, comment: comment)
    }

    /// Stores any `Encodable` value, as JSON, under `key`; the same as
    /// ``set(_:for:label:comment:)-(Value,_,_,_)`` for everything but `String` and `Data`,
    /// which this older spelling stores as JSON too.
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key; must not be empty.
    ///   - label: A user-visible label, or `nil`.
    ///   - comment: A comment, or `nil`.
    /// - Throws: ``KeychainError`` with code ``KeychainError/Code/invalidParameters`` when
    ///   the value cannot be encoded; otherwise as ``set(_:for:label:comment:)-(Data,_,_,_)``.
    /// - Note: On failure the previous value, if any, is left in place.
    @available(*, deprecated, renamed: "set(_:for:label:comment:)")
    public func setValue<Value: Encodable>(
        _ value: Value, for key: String, label: String? = nil, comment: String? = nil
    ) throws(KeychainError) {
        try write(try encode(value, key: key), for: key, label: label, comment: comment)
    }

    // MARK: - Reading

    /// The data stored under `key`.
    /// - Parameters:
    ///   - key: The key.
    ///   - prompt: The reason shown if the item's access policy asks the user to
    ///     authenticate, or `nil`.
    /// - Returns: The data, or `nil` when there is no such item.
    /// - Throws: ``KeychainError``: ``KeychainError/Code/interactionNotAllowed`` when the
    ///   device is locked or no prompt can be shown, ``KeychainError/Code/userCanceled`` and
    ///   ``KeychainError/Code/authenticationFailed`` for access-controlled items, and others
    ///   as the keychain reports them.
    public func data(for key: String, prompt: String? = nil) throws(KeychainError) -> Data? {
        try read(key, prompt: prompt)
    }

    /// The UTF-8 string stored under `key`.
    /// - Parameters:
    ///   - key: The key.
    ///   - prompt: The reason shown if authentication is needed, or `nil`.
    /// - Returns: The string, or `nil` when there is no such item.
    /// - Throws: ``KeychainError`` with code ``KeychainError/Code/dataCorrupted`` when the
    ///   data is not UTF-8; otherwise as ``data(for:prompt:)``.
    public func string(for key: String, prompt: String? = nil) throws(KeychainError) -> String? {
        guard let data = try read(key, prompt: prompt) else { return nil }
        return try decode(String.self, from: data, key: key)
    }

    /// The `Decodable` value stored under `key`: the JSON of `type`, or for `String` and
    /// `Data` the text and bytes as ``string(for:prompt:)`` and ``data(for:prompt:)`` read them;
    /// a quoted JSON string (what earlier versions' `setValue(_:for:)` stored for a `String`,
    /// or for `Data` as base64) is decoded, as this method did then. Read text that is itself
    /// a quoted JSON string exactly with ``string(for:prompt:)``.
    /// - Parameters:
    ///   - type: The type to decode (inferred when the result's type is known).
    ///   - key: The key.
    ///   - prompt: The reason shown if authentication is needed, or `nil`.
    /// - Returns: The value, or `nil` when there is no such item.
    /// - Throws: ``KeychainError`` with code ``KeychainError/Code/dataCorrupted`` when the
    ///   data is not the JSON of `type` (the message names the type and the failing coding
    ///   path, never the data); otherwise as ``data(for:prompt:)``.
    public func value<Value: Decodable>(
        _ type: Value.Type = Value.self, for key: String, prompt: String? = nil
    ) throws(KeychainError) -> Value? {
        guard let data = try read(key, prompt: prompt) else { return nil }
        return try decode(type, from: data, key: key)
    }

    /// Whether an item exists under `key`. Never prompts, even for access-controlled items.
    /// - Parameter key: The key.
    /// - Returns: `true` when the item exists.
    /// - Throws: ``KeychainError`` (not for a missing item).
    public func contains(_ key: String) throws(KeychainError) -> Bool {
        try validate(key)
        var query = baseQuery(key: key)
        query[kSecReturnAttributes as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = call(.copyMatching, key: key) { SecItemCopyMatching(query as CFDictionary, &result) }
        switch status {
        case errSecSuccess: return true
        case errSecItemNotFound: return false
        default: throw failure(status, .copyMatching, key: key)
        }
    }

    /// The metadata of the item under `key`: label, comment, dates, accessibility, access
    /// group; never its data. Never prompts.
    /// - Parameter key: The key.
    /// - Returns: The attributes, or `nil` when there is no such item.
    /// - Throws: ``KeychainError`` (not for a missing item).
    public func attributes(for key: String) throws(KeychainError) -> KeychainItemAttributes? {
        try validate(key)
        var query = baseQuery(key: key)
        query[kSecReturnAttributes as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = call(.copyMatching, key: key) { SecItemCopyMatching(query as CFDictionary, &result) }
        switch status {
        case errSecSuccess:
            guard let dictionary = result as? [String: Any], let attributes = KeychainItemAttributes(dictionary: dictionary)
            else {
                throw KeychainError(
                    status: errSecDecode, operation: .copyMatching, service: service, key: key,
                    detail: "The keychain returned attributes without an account.",
                    fix: "The keychain answered in an unexpected shape; retry, and report it if it persists.")
            }
            return attributes
        case errSecItemNotFound:
            return nil
        default:
            throw failure(status, .copyMatching, key: key)
        }
    }

    /// The keys of all this store's items, each once, in UTF-8 byte order.
    ///
    /// Keys are compared byte for byte: `"jos\u{E9}"` and `"jose\u{301}"` are two keys and
    /// both are listed. A key held in several access groups (a store without an access
    /// group reads all the app's groups) is listed once; ``allAttributes()`` lists each item
    /// with its group.
    /// - Returns: The keys; empty when there are none.
    /// - Throws: ``KeychainError`` (not when there are no items).
    public func allKeys() throws(KeychainError) -> [String] {
        ExactName.distinctSorted(try allAttributes().map(\.key))
    }

    /// The metadata of all this store's items, one entry per item, never their data: sorted
    /// by key, then access group, in UTF-8 byte order. A key held in two access groups is two
    /// items, each with its ``KeychainItemAttributes/accessGroup``.
    /// - Returns: The attributes; empty when there are none.
    /// - Throws: ``KeychainError`` (not when there are no items).
    public func allAttributes() throws(KeychainError) -> [KeychainItemAttributes] {
        var query = baseQuery(key: nil)
        query[kSecReturnAttributes as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        var result: CFTypeRef?
        let status = call(.copyMatching, key: nil) { SecItemCopyMatching(query as CFDictionary, &result) }
        switch status {
        case errSecSuccess:
            let items = (result as? [Any]) ?? []
            var seen = Set<ItemName>()
            return items.compactMap { ($0 as? [String: Any]).flatMap(KeychainItemAttributes.init(dictionary:)) }
                .filter { seen.insert(ItemName($0)).inserted }
                .sorted { ItemName($0) < ItemName($1) }
        case errSecItemNotFound:
            return []
        default:
            throw failure(status, .copyMatching, key: nil)
        }
    }

    // MARK: - Removing

    /// Removes the item under `key`. Removing a missing item succeeds.
    /// - Parameter key: The key.
    /// - Throws: ``KeychainError`` (not for a missing item).
    public func remove(_ key: String) throws(KeychainError) {
        try validate(key)
        let query = baseQuery(key: key)
        let status = call(.delete, key: key) { SecItemDelete(query as CFDictionary) }
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw failure(status, .delete, key: key)
        }
    }

    /// Removes every item of this store: its class and service (or server), its access
    /// group (all the app's groups when ``accessGroup`` is `nil`), and its synchronizable
    /// setting. Other services, and other groups of an explicit-group store, are untouched.
    /// - Throws: ``KeychainError`` (not when there are no items).
    public func removeAll() throws(KeychainError) {
        let query = baseQuery(key: nil)
        let status = call(.delete, key: nil) { SecItemDelete(query as CFDictionary) }
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw failure(status, .delete, key: nil)
        }
    }

    // MARK: - Implementation

    /// The query that selects this store's items (and one key, when given).
    func baseQuery(key: String?) -> [String: Any] {
        var query = itemClass.queryAttributes
        if let key { query[kSecAttrAccount as String] = key }
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        query[kSecAttrSynchronizable as String] = synchronizable
        // The iOS-style keychain on macOS too; ignored elsewhere.
        query[kSecUseDataProtectionKeychain as String] = true
        return query
    }

    /// The protection attributes re-applied on every write.
    func protectionAttributes() throws(KeychainError) -> [String: Any] {
        if let accessPolicy {
            return [kSecAttrAccessControl as String: try accessPolicy.accessControl(for: accessibility, service: service)]
        }
        return [kSecAttrAccessible as String: accessibility.secValue]
    }

    func write(_ data: Data, for key: String, label: String?, comment: String?) throws(KeychainError) {
        try validate(key)
        let query = baseQuery(key: key)
        var changes = try protectionAttributes()
        changes[kSecValueData as String] = data
        if let label { changes[kSecAttrLabel as String] = label }
        if let comment { changes[kSecAttrComment as String] = comment }

        let addition = query.merging(changes) { _, new in new }
        // Update the item; when it is missing, add it; when another writer added it in
        // between, update again; when a concurrent remove took it away in between, add
        // again. Each lost round means another thread or process both wrote and removed
        // the key meanwhile, so a set succeeds whatever a concurrent remove does; the bound
        // only stops a loop that other writers would otherwise keep going for ever.
        var lastStatus: OSStatus = errSecSuccess
        var lastOperation = KeychainError.Operation.update
        for _ in 0..<Self.maximumWriteRounds {
            let updated = call(.update, key: key) { SecItemUpdate(query as CFDictionary, changes as CFDictionary) }
            if updated == errSecSuccess { return }
            guard updated == errSecItemNotFound else { throw failure(updated, .update, key: key) }

            let added = call(.add, key: key) { SecItemAdd(addition as CFDictionary, nil) }
            if added == errSecSuccess { return }
            guard added == errSecDuplicateItem else { throw failure(added, .add, key: key) }
            (lastStatus, lastOperation) = (added, .add)
        }
        throw KeychainError(
            status: lastStatus, operation: lastOperation, service: service, key: key, detail: nil,
            fix: "Other threads or processes added and removed this key \(Self.maximumWriteRounds) times while this set "
                + "ran, so it never found the item in place nor the place free. Retry the set, or let one writer own "
                + "the key (serialize the sets and removes of it).")
    }

    /// How many update-then-add rounds a write tries while concurrent writers and removers
    /// of the same key keep winning the race between them.
    static let maximumWriteRounds = 64

    func read(_ key: String, prompt: String?) throws(KeychainError) -> Data? {
        try validate(key)
        #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
        if case .genericPassword(let service) = itemClass {
            return try readGenericPassword(key, service: service, prompt: prompt)
        }
        #endif
        var query = baseQuery(key: key)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query.merge(authenticationAttributes(prompt: prompt)) { _, new in new }
        var result: CFTypeRef?
        let status = call(.copyMatching, key: key) { SecItemCopyMatching(query as CFDictionary, &result) }
        switch status {
        case errSecSuccess:
            if result == nil { return Data() }
            guard let data = result as? Data else {
                throw KeychainError(
                    status: errSecDecode, operation: .copyMatching, service: service, key: key,
                    detail: "The keychain returned \(type(of: result!)) instead of data.",
                    fix: "The keychain answered in an unexpected shape; retry, and report it if it persists.")
            }
            return data
        case errSecItemNotFound:
            return nil
        default:
            throw failure(status, .copyMatching, key: key)
        }
    }

    #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
    /// ``read(_:prompt:)`` of a generic password, without the query dictionary: the same
    /// search, checks, statuses and diagnosis as the `SecItemCopyMatching` call it stands
    /// for (``GenericPasswordSearch/equivalentQuery``).
    func readGenericPassword(_ key: String, service: String, prompt: String?) throws(KeychainError) -> Data? {
        let search = GenericPasswordSearch(
            service: service, account: key, accessGroup: accessGroup, synchronizable: synchronizable,
            matchesAll: false, returnsData: true, operationPrompt: prompt)
        var items: [GenericPasswordItem] = []
        let status = call(.copyMatching, key: key) { KeychainCopyGenericPasswords(search, &items) }
        switch status {
        case errSecSuccess: return items.first?.data ?? Data()
        case errSecItemNotFound: return nil
        default: throw failure(status, .copyMatching, key: key)
        }
    }
    #endif

    func validate(_ key: String) throws(KeychainError) {
        guard !key.isEmpty else {
            throw .invalidConfiguration(
                "The key is empty.", fix: "Pass a non-empty key, for example \"access_token\".", service: service)
        }
    }

    /// The bytes ``set(_:for:label:comment:)-(Value,_,_,_)`` stores: `String` as UTF-8,
    /// `Data` as is, anything else as JSON; `nil` is refused.
    func storedBytes<Value: Encodable>(of value: Value, key: String) throws(KeychainError) -> Data {
        if let optional = value as? any OptionalValue, optional.isNone {
            throw .invalidConfiguration(
                "The value is nil.", fix: "Call remove(_:) to delete a value; set(_:for:) stores only values.",
                service: service, key: key)
        }
        let unwrapped = (value as? any OptionalValue)?.wrappedValue ?? value
        if let string = unwrapped as? String { return Data(string.utf8) }
        if let data = unwrapped as? Data { return data }
        return try encode(value, key: key)
    }

    func encode<Value: Encodable>(_ value: Value, key: String) throws(KeychainError) -> Data {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try encoder.encode(value)
        } catch {
            throw KeychainError(
                status: errSecParam, operation: .encode, service: service, key: key,
                detail: "A value of type \(Value.self) could not be encoded as JSON (\(KeychainStore.summary(of: error))).",
                fix: "Check \(Value.self)'s Encodable conformance (its encode(to:) or the values it holds at the path "
                    + "named), or store the value as Data you encode yourself.")
        }
    }

    func decode<Value: Decodable>(_ type: Value.Type, from data: Data, key: String) throws(KeychainError) -> Value {
        if Value.self == Data.self || Value.self == String.self, let earlier = KeychainStore.earlierJSON(type, in: data) {
            return earlier
        }
        if Value.self == Data.self { return data as! Value }
        if Value.self == String.self {
            guard let string = String(data: data, encoding: .utf8) else {
                throw KeychainError(
                    status: errSecDecode, operation: .decode, service: service, key: key,
                    detail: "The item's \(data.count) bytes are not valid UTF-8; it was not written as a string.",
                    fix: "Read it with data(for:), or write it again as a string.")
            }
            return string as! Value
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw KeychainError(
                status: errSecDecode, operation: .decode, service: service, key: key,
                detail: "The item's data is not the JSON of \(Value.self) (\(KeychainStore.summary(of: error))).",
                fix: "Read it with the type it was written with, or write it again.")
        }
    }

    /// A `String` or `Data` as earlier versions stored it with `setValue(_:for:)`: a quoted
    /// JSON string (for data, JSONEncoder's base64), which `value(_:for:)` decoded then and
    /// must still decode. `nil` for anything else (text and bytes stored raw).
    ///
    /// Only a complete JSON string counts, so raw text and binary keys read as they are;
    /// the one text that reads differently through ``value(_:for:prompt:)`` than through
    /// ``string(for:prompt:)`` is a stored text that is itself a quoted JSON string.
    static func earlierJSON<Value: Decodable>(_ type: Value.Type, in data: Data) -> Value? {
        guard data.count >= 2, data.first == UInt8(ascii: "\""), data.last == UInt8(ascii: "\""),
            let string = try? JSONDecoder().decode(String.self, from: data)
        else { return nil }
        if Value.self == String.self { return string as? Value }
        // JSONEncoder writes Data as canonical base64; anything else is raw bytes.
        guard let bytes = Data(base64Encoded: string), bytes.base64EncodedString() == string else { return nil }
        return bytes as? Value
    }

    /// What kind of coding error happened and where, without the values involved.
    static func summary(of error: any Error) -> String {
        guard let error = error as? DecodingError else {
            if let error = error as? EncodingError, case .invalidValue(_, let context) = error {
                return "invalid value at '\(path(context.codingPath))'"
            }
            return "not valid JSON"
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "expected \(type) at '\(path(context.codingPath))'"
        case .valueNotFound(let type, let context):
            return "missing \(type) value at '\(path(context.codingPath))'"
        case .keyNotFound(let key, let context):
            return "missing key '\(path(context.codingPath + [key]))'"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "corrupted value at '\(path(context.codingPath))'"
        @unknown default:
            return "decoding failed"
        }
    }

    /// The coding path as the code names it: properties (a type's `CodingKeys`, an enum) and
    /// array positions. A dictionary key comes from the stored data, which may be a secret (a
    /// map of tokens), so it is shown as `<key>`.
    private static func path(_ codingPath: [any CodingKey]) -> String {
        guard !codingPath.isEmpty else { return "<root>" }
        return codingPath.map { key in
            if Mirror(reflecting: key).displayStyle == .enum { return key.stringValue }
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == String(index) {
                return String(index)
            }
            return "<key>"
        }.joined(separator: ".")
    }

    /// Runs one SecItem call, unless the error injection fails it first.
    func call(_ operation: KeychainError.Operation, key: String?, _ body: () -> OSStatus) -> OSStatus {
        if let injected = errorInjection?.consume(operation) {
            InjectedCallMarker.record(injected: true)
            return injected
        }
        InjectedCallMarker.record(injected: false)
        return body()
    }

    /// The error for a failed call, with the keychain's own diagnosis where there is one
    /// (never for an injected status: the engine's record is then from an earlier call).
    /// For a keychain that is locked, the engine's fix (`keysmith unlock` on Linux) replaces
    /// the general advice, which is written for a locked phone.
    func failure(_ status: OSStatus, _ operation: KeychainError.Operation, key: String?) -> KeychainError {
        KeychainError(
            status: status, operation: operation, service: service, key: key, detail: diagnosisOfLastCall(),
            fix: status == errSecInteractionNotAllowed ? recoveryOfLastCall() : nil)
    }
}

/// The key and access group of one item, byte for byte: what tells two items of a store apart.
private struct ItemName: Hashable, Comparable {
    let key: ExactName
    let accessGroup: ExactName?

    init(_ attributes: KeychainItemAttributes) {
        key = ExactName(attributes.key)
        accessGroup = attributes.accessGroup.map { ExactName($0) }
    }

    static func < (lhs: ItemName, rhs: ItemName) -> Bool {
        if lhs.key != rhs.key { return lhs.key < rhs.key }
        switch (lhs.accessGroup, rhs.accessGroup) {
        case (nil, nil), (_, nil): return false
        case (nil, _): return true
        case (let left?, let right?): return left < right
        }
    }
}
