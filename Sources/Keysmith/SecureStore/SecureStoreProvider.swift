import Foundation
import KeychainServices

/// The bottom layer of a ``SecureStore``: atomic set, get and remove of
/// bytes by service and key, plus listing and clearing a service. It knows nothing about
/// namespaces, serialization or error codes; the store above it does.
///
/// ``KeychainStoreProvider`` is the implementation on ``KeychainStore``. Another provider
/// (for example one that adds an app-level encryption layer) can be passed to
/// ``SecureStore/init(configuration:provider:)`` without changing business code.
public protocol SecureStoreProvider: Sendable {
    /// A short name for diagnostics, for example `keychain`.
    var providerName: String { get }

    /// Stores `data` under `key` in `service`, replacing any existing value.
    /// - Parameters:
    ///   - data: The bytes.
    ///   - key: The key.
    ///   - service: The full service name.
    ///   - protection: How the item is protected.
    /// - Throws: ``KeychainError``; on failure the previous value stays.
    func setItem(_ data: Data, key: String, service: String, protection: ItemProtection) throws(KeychainError)

    /// The bytes under `key` in `service`.
    /// - Parameters:
    ///   - key: The key.
    ///   - service: The full service name.
    ///   - prompt: The reason shown if authentication is needed, or `nil`.
    /// - Returns: The bytes, or `nil` when there is no such item.
    /// - Throws: ``KeychainError`` (not for a missing item).
    func getItem(key: String, service: String, prompt: String?) throws(KeychainError) -> Data?

    /// Whether an item exists under `key` in `service`, without prompting.
    /// - Parameters:
    ///   - key: The key.
    ///   - service: The full service name.
    /// - Returns: Whether it exists.
    /// - Throws: ``KeychainError``.
    func containsItem(key: String, service: String) throws(KeychainError) -> Bool

    /// Removes the item under `key` in `service`; a missing item is success.
    /// - Parameters:
    ///   - key: The key.
    ///   - service: The full service name.
    /// - Throws: ``KeychainError``.
    func removeItem(key: String, service: String) throws(KeychainError)

    /// The keys in `service`, each once (byte for byte), in UTF-8 byte order.
    /// - Parameter service: The full service name.
    /// - Returns: The keys.
    /// - Throws: ``KeychainError``.
    func keys(service: String) throws(KeychainError) -> [String]

    /// Removes every item of `service` (and only of it).
    /// - Parameter service: The full service name.
    /// - Throws: ``KeychainError``.
    func removeAll(service: String) throws(KeychainError)

    /// The services, among those this provider can see, whose UTF-8 bytes start with
    /// `prefix`'s bytes.
    /// - Parameter prefix: The prefix, for example `com.example.app.store.`.
    /// - Returns: The services, each once (byte for byte), in UTF-8 byte order.
    /// - Throws: ``KeychainError``.
    func services(withPrefix prefix: String) throws(KeychainError) -> [String]
}

/// How a ``SecureStoreProvider`` protects an item.
public enum ItemProtection: Sendable, Hashable {
    /// The store's accessibility, no access control.
    case standard
    /// An access policy (for example biometry) on top of an accessibility.
    case accessControl(AccessPolicy, accessibility: Accessibility)
}

/// The ``SecureStoreProvider`` on ``KeychainStore``: one generic-password store per service.
public struct KeychainStoreProvider: SecureStoreProvider {
    /// The access group, or `nil` for the app's default group.
    public let accessGroup: String?
    /// The accessibility of ``ItemProtection/standard`` items.
    public let accessibility: Accessibility
    /// The test hook passed to every store, or `nil`.
    public let errorInjection: ErrorInjection?

    /// `keychain`.
    public var providerName: String { "keychain" }

    /// Creates the provider.
    /// - Parameters:
    ///   - accessGroup: The access group, or `nil` for the app's default group.
    ///   - accessibility: The accessibility of standard items.
    ///   - errorInjection: A test hook, or `nil`.
    public init(accessGroup: String?, accessibility: Accessibility, errorInjection: ErrorInjection? = nil) {
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        self.errorInjection = errorInjection
    }

    /// The keychain store for `service` with `protection`.
    /// - Parameters:
    ///   - service: The full service name.
    ///   - protection: The protection.
    /// - Returns: The store.
    /// - Throws: ``KeychainError`` for an invalid combination.
    public func store(for service: String, protection: ItemProtection = .standard) throws(KeychainError) -> KeychainStore {
        switch protection {
        case .standard:
            return try KeychainStore(
                service: service, accessGroup: accessGroup, accessibility: accessibility, errorInjection: errorInjection)
        case .accessControl(let policy, let itemAccessibility):
            return try KeychainStore(
                service: service, accessGroup: accessGroup, accessibility: itemAccessibility, accessPolicy: policy,
                errorInjection: errorInjection)
        }
    }

    public func setItem(_ data: Data, key: String, service: String, protection: ItemProtection) throws(KeychainError) {
        try store(for: service, protection: protection).set(data, for: key)
    }

    public func getItem(key: String, service: String, prompt: String?) throws(KeychainError) -> Data? {
        try store(for: service).data(for: key, prompt: prompt)
    }

    public func containsItem(key: String, service: String) throws(KeychainError) -> Bool {
        try store(for: service).contains(key)
    }

    public func removeItem(key: String, service: String) throws(KeychainError) {
        try store(for: service).remove(key)
    }

    public func keys(service: String) throws(KeychainError) -> [String] {
        try store(for: service).allKeys()
    }

    public func removeAll(service: String) throws(KeychainError) {
        try store(for: service).removeAll()
    }

    public func services(withPrefix prefix: String) throws(KeychainError) -> [String] {
        let prefix = ExactName(prefix)
        return try KeychainStore.genericPasswordServices(accessGroup: accessGroup, errorInjection: errorInjection)
            .filter { ExactName($0).hasPrefix(prefix) }
    }
}

extension KeychainStore {
    /// The services of all generic passwords the app can see in `accessGroup` (all its
    /// groups when `nil`), local items only. Reads attributes only: never data, never a prompt.
    /// - Parameters:
    ///   - accessGroup: The access group, or `nil` for all the app's groups.
    ///   - errorInjection: A test hook, or `nil`.
    /// - Returns: The distinct services (byte for byte: `"jos\u{E9}"` and `"jose\u{301}"` are
    ///   two services), in UTF-8 byte order.
    /// - Throws: ``KeychainError`` (not when there are no items).
    public static func genericPasswordServices(
        accessGroup: String? = nil, errorInjection: ErrorInjection? = nil
    ) throws(KeychainError) -> [String] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrSynchronizable as String: false,
            kSecUseDataProtectionKeychain as String: true,
            kSecReturnAttributes as String: true,
            kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        var result: CFTypeRef?
        let status: OSStatus
        let injected = errorInjection?.consume(.copyMatching)
        if let injected {
            status = injected
        } else {
            status = SecItemCopyMatching(query as CFDictionary, &result)
        }
        switch status {
        case errSecSuccess:
            let items = (result as? [Any]) ?? []
            let services = items.compactMap { item -> String? in
                guard let dictionary = item as? [String: Any] else { return nil }
                return KeychainItemAttributes.string(dictionary[kSecAttrService as String])
            }
            return ExactName.distinctSorted(services)
        case errSecItemNotFound:
            return []
        default:
            throw KeychainError(
                status: status, operation: .copyMatching, service: nil, key: nil,
                detail: injected == nil ? lastEngineDiagnosis() : nil)
        }
    }
}
