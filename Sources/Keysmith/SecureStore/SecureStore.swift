import Foundation
import KeychainServices

/// A namespaced secure store: business code stores and reads values by key and namespace,
/// and the store takes care of services, serialization, size limits, error codes,
/// biometric fallback, migrations and logging.
///
/// ```swift
/// let store = try SecureStore(servicePrefix: "com.example.app.store")
/// try store.set(token, for: "access_token", in: "auth")
/// let token = try store.string(for: "access_token", in: "auth")             // nil when absent
/// try store.set(profile, for: "profile", in: .account(userID))               // any Encodable
/// let saved = try store.value(Profile.self, for: "profile", in: .account(userID))
/// try store.resetNamespace("auth")                                           // sign out
/// ```
///
/// The argument order is ``KeychainStore``'s: the value, then `for:` the key; the namespace
/// comes last. Use a `KeychainStore` for the items of one service with full control
/// (accessibility, access policy, labels, internet passwords; errors are ``KeychainError``
/// with the raw `OSStatus`); use a `SecureStore` for an app's values grouped by feature or
/// account, with size limits, namespace resets, migrations and reinstall cleanup (errors are
/// ``SecureStoreError`` with cross-platform codes).
///
/// Three layers: a ``SecureStoreProvider`` does atomic set/get/remove of
/// bytes (``KeychainStoreProvider`` on ``KeychainStore``); this store does namespaces,
/// serialization (``ValueCoding``), error mapping to ``SecureStoreError`` codes and safe
/// fallbacks; business code calls `set`, `get`, `remove`.
///
/// - Namespaces: each ``Namespace`` lives in its own keychain service,
///   `<servicePrefix>.<namespace>`; per-account data goes in ``Namespace/account(_:)``.
/// - Values: any `Encodable`; strings are stored raw; `nil` is rejected (call ``remove(_:in:)``);
///   values longer than ``Configuration/sizeLimit`` characters once serialized, or longer than
///   four UTF-8 bytes per character of the limit (one "character" of many combining marks
///   counts its bytes), are rejected with ``SecureStoreError/Code/limitExceeded``.
/// - A missing item is `nil`, not an error, and is never reported as a failure.
/// - Platform differences (biometry, the simulator, Linux) are handled inside; the API is
///   the same everywhere.
///
/// - Note: `SecureStore` is an immutable `Sendable` value; use one from any thread. Every
///   method throws ``SecureStoreError`` (typed throws), which never contains a value.
public struct SecureStore: Sendable {
    /// The settings of a store.
    public struct Configuration: Sendable {
        /// The prefix of every service, reverse-DNS, for example `com.example.app.store`.
        public var servicePrefix: String
        /// The accessibility of items (default ``Accessibility/afterFirstUnlockThisDeviceOnly``,
        /// so that background refreshes can read tokens).
        public var accessibility: Accessibility
        /// The access group shared with extensions or other apps, or `nil`.
        public var accessGroup: String?
        /// The largest serialized value, in characters (default 2,048): user-perceived
        /// characters, as `String.count` counts them. The value's UTF-8 bytes are bounded
        /// too, at four per character of the limit (8,192 by default), so that text of any
        /// script fits in full but one "character" of many combining marks cannot carry
        /// megabytes.
        public var sizeLimit: Int
        /// The accessibility of biometric-protected items (default
        /// ``Accessibility/whenUnlockedThisDeviceOnly``: they prompt, so they are read in the
        /// foreground).
        public var biometricAccessibility: Accessibility
        /// How to tell whether biometry can be used (default ``BiometryCapability/system``).
        public var biometry: BiometryCapability
        /// The logging hook, or `nil`.
        public var logger: SecureStoreLogger?
        /// A test hook that makes chosen keychain calls fail, or `nil`.
        public var errorInjection: ErrorInjection?

        /// Creates a configuration.
        /// - Parameters:
        ///   - servicePrefix: The prefix of every service, for example `com.example.app.store`.
        ///   - accessibility: The accessibility of items.
        ///   - accessGroup: The access group, or `nil`.
        ///   - sizeLimit: The largest serialized value, in characters (and four UTF-8 bytes per character).
        ///   - biometricAccessibility: The accessibility of biometric-protected items.
        ///   - biometry: How to tell whether biometry can be used.
        ///   - logger: The logging hook, or `nil`.
        ///   - errorInjection: A test hook, or `nil`.
        public init(
            servicePrefix: String, accessibility: Accessibility = .afterFirstUnlockThisDeviceOnly,
            accessGroup: String? = nil, sizeLimit: Int = 2048,
            biometricAccessibility: Accessibility = .whenUnlockedThisDeviceOnly,
            biometry: BiometryCapability = .system, logger: SecureStoreLogger? = nil,
            errorInjection: ErrorInjection? = nil
        ) {
            self.servicePrefix = servicePrefix
            self.accessibility = accessibility
            self.accessGroup = accessGroup
            self.sizeLimit = sizeLimit
            self.biometricAccessibility = biometricAccessibility
            self.biometry = biometry
            self.logger = logger
            self.errorInjection = errorInjection
        }
    }

    /// The store's settings.
    public let configuration: Configuration
    /// The layer that stores bytes.
    public let provider: any SecureStoreProvider

    /// Creates a store on the keychain.
    /// - Parameters:
    ///   - servicePrefix: The prefix of every service, reverse-DNS, for example
    ///     `com.example.app.store`.
    ///   - accessibility: The accessibility of items (default
    ///     ``Accessibility/afterFirstUnlockThisDeviceOnly``).
    ///   - accessGroup: The access group shared with extensions, or `nil`.
    ///   - sizeLimit: The largest serialized value in characters (default 2,048; and four
    ///     UTF-8 bytes per character).
    ///   - logger: The logging hook, or `nil`.
    /// - Throws: ``SecureStoreError`` with code ``SecureStoreError/Code/invalidValue`` for an
    ///   empty prefix, one with a trailing dot or a control character, or a size limit below 1.
    public init(
        servicePrefix: String, accessibility: Accessibility = .afterFirstUnlockThisDeviceOnly,
        accessGroup: String? = nil, sizeLimit: Int = 2048, logger: SecureStoreLogger? = nil
    ) throws(SecureStoreError) {
        try self.init(
            configuration: Configuration(
                servicePrefix: servicePrefix, accessibility: accessibility, accessGroup: accessGroup,
                sizeLimit: sizeLimit, logger: logger))
    }

    /// Creates a store from a configuration, on the keychain or on another provider.
    /// - Parameters:
    ///   - configuration: The settings.
    ///   - provider: The byte layer, or `nil` for a ``KeychainStoreProvider`` built from
    ///     `configuration`.
    /// - Throws: ``SecureStoreError`` with code ``SecureStoreError/Code/invalidValue`` for an
    ///   empty prefix, one with a trailing dot or a control character, or a size limit below 1.
    public init(configuration: Configuration, provider: (any SecureStoreProvider)? = nil) throws(SecureStoreError) {
        let prefix = configuration.servicePrefix
        guard !prefix.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, !prefix.hasSuffix(".") else {
            throw SecureStoreError(
                .invalidValue,
                message: "The service prefix '\(prefix)' is not usable: give a reverse-DNS name without a trailing dot, "
                    + "for example \"com.example.app.store\".")
        }
        // The store's bookkeeping separates the prefix from a namespace with a control
        // character (U+001F), as namespace names may hold none.
        guard !prefix.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw SecureStoreError(
                .invalidValue,
                message: "The service prefix contains a control character: give a reverse-DNS name of printable "
                    + "characters, for example \"com.example.app.store\".")
        }
        guard configuration.sizeLimit >= 1 else {
            throw SecureStoreError(.invalidValue, message: "The size limit must be at least 1; got \(configuration.sizeLimit).")
        }
        self.configuration = configuration
        self.provider =
            provider
            ?? KeychainStoreProvider(
                accessGroup: configuration.accessGroup, accessibility: configuration.accessibility,
                errorInjection: configuration.errorInjection)
    }

    /// The keychain service of a namespace: `<servicePrefix>.<namespace>`.
    /// - Parameter namespace: The namespace.
    /// - Returns: The service name.
    public func service(for namespace: Namespace) -> String {
        "\(configuration.servicePrefix).\(namespace.name)"
    }

    // MARK: - API

    /// Stores `value` under `key` in `namespace`, replacing any previous value.
    ///
    /// ```swift
    /// try store.set(token, for: "access_token", in: "auth")
    /// try store.set(profile, for: "profile", in: .account(userID))
    /// ```
    ///
    /// - Parameters:
    ///   - value: Any `Encodable`; strings are stored raw, other values as JSON.
    ///   - key: The key, for example `access_token`; must not be empty.
    ///   - namespace: The namespace (default ``Namespace/default``).
    /// - Throws: ``SecureStoreError``: ``SecureStoreError/Code/invalidValue`` for `nil` (call
    ///   ``remove(_:in:)`` instead) or an unencodable value,
    ///   ``SecureStoreError/Code/limitExceeded`` when the serialized value is longer than
    ///   the size limit in characters or in bytes (the message names the key, its size and
    ///   the limit),
    ///   ``SecureStoreError/Code/interactionNotAllowed`` on a locked device, and the other
    ///   keychain codes.
    /// - Note: On failure the previous value stays in place.
    public func set<Value: Encodable>(_ value: Value, for key: String, in namespace: Namespace = .default) throws(SecureStoreError) {
        try logged(.set, key: key, namespace: namespace) { () throws(SecureStoreError) in
            let data = try ValueCoding.encode(value, key: key, namespace: namespace.name, sizeLimit: configuration.sizeLimit)
            try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                try provider.setItem(data, key: key, service: service(for: namespace), protection: .standard)
            }
            recordNamespace(namespace)
            return .success
        }
    }

    /// Stores `value` under `key`: the older spelling of ``set(_:for:in:)`` (key first).
    /// - Parameters:
    ///   - key: The key; must not be empty.
    ///   - value: Any `Encodable`.
    ///   - namespace: The namespace (default ``Namespace/default``).
    /// - Throws: ``SecureStoreError``, as ``set(_:for:in:)``.
    @available(*, deprecated, message: "Use set(_:for:in:): the value first, as KeychainStore.set(_:for:)")
    public func set<Value: Encodable>(_ key: String, _ value: Value, in namespace: Namespace = .default) throws(SecureStoreError) {
        try set(value, for: key, in: namespace)
    }

    /// The value under `key` in `namespace`, decoded as `type`.
    ///
    /// ```swift
    /// let profile = try store.value(Profile.self, for: "profile", in: .account(userID))
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to read (inferred when the result's type is known; a `String`
    ///     returns the stored text as it is).
    ///   - key: The key.
    ///   - namespace: The namespace (default ``Namespace/default``).
    ///   - prompt: The reason shown if the item is biometric-protected, or `nil`.
    /// - Returns: The value, or `nil` when there is none (`ITEM_NOT_FOUND` is a normal branch).
    /// - Throws: ``SecureStoreError``: ``SecureStoreError/Code/decodingFailed`` when the data
    ///   is not a `type`, ``SecureStoreError/Code/userCanceled`` /
    ///   ``SecureStoreError/Code/authFailed`` for biometric items,
    ///   ``SecureStoreError/Code/interactionNotAllowed`` on a locked device.
    public func value<Value: Decodable>(
        _ type: Value.Type = Value.self, for key: String, in namespace: Namespace = .default, prompt: String? = nil
    ) throws(SecureStoreError) -> Value? {
        var found: Value?
        try logged(.get, key: key, namespace: namespace) { () throws(SecureStoreError) in
            let data = try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                try provider.getItem(key: key, service: service(for: namespace), prompt: prompt)
            }
            guard let data else { return .notFound }
            found = try ValueCoding.decode(type, from: data, key: key, namespace: namespace.name)
            return .success
        }
        return found
    }

    /// The text under `key` in `namespace`, as it was stored.
    /// - Parameters:
    ///   - key: The key.
    ///   - namespace: The namespace (default ``Namespace/default``).
    ///   - prompt: The reason shown if the item is biometric-protected, or `nil`.
    /// - Returns: The text, or `nil` when there is none.
    /// - Throws: ``SecureStoreError``, as ``value(_:for:in:prompt:)``.
    public func string(for key: String, in namespace: Namespace = .default, prompt: String? = nil) throws(SecureStoreError)
        -> String?
    {
        try value(String.self, for: key, in: namespace, prompt: prompt)
    }

    /// The value under `key`: the older spelling of ``value(_:for:in:prompt:)`` (key first).
    /// - Parameters:
    ///   - key: The key.
    ///   - type: The type to read.
    ///   - namespace: The namespace (default ``Namespace/default``).
    ///   - prompt: The reason shown if the item is biometric-protected, or `nil`.
    /// - Returns: The value, or `nil` when there is none.
    /// - Throws: ``SecureStoreError``, as ``value(_:for:in:prompt:)``.
    @available(*, deprecated, message: "Use value(_:for:in:prompt:): the type, then the key, as KeychainStore.value(_:for:)")
    public func get<Value: Decodable>(
        _ key: String, as type: Value.Type = Value.self, in namespace: Namespace = .default, prompt: String? = nil
    ) throws(SecureStoreError) -> Value? {
        try value(type, for: key, in: namespace, prompt: prompt)
    }

    /// Whether a value exists under `key` in `namespace`. Never prompts.
    /// - Parameters:
    ///   - key: The key.
    ///   - namespace: The namespace (default ``Namespace/default``).
    /// - Returns: Whether it exists.
    /// - Throws: ``SecureStoreError`` (not for a missing item).
    public func contains(_ key: String, in namespace: Namespace = .default) throws(SecureStoreError) -> Bool {
        var exists = false
        try logged(.contains, key: key, namespace: namespace) { () throws(SecureStoreError) in
            exists = try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                try provider.containsItem(key: key, service: service(for: namespace))
            }
            return exists ? .success : .notFound
        }
        return exists
    }

    /// Removes the value under `key` in `namespace`; removing a missing value succeeds.
    /// - Parameters:
    ///   - key: The key.
    ///   - namespace: The namespace (default ``Namespace/default``).
    /// - Throws: ``SecureStoreError`` (not for a missing item).
    public func remove(_ key: String, in namespace: Namespace = .default) throws(SecureStoreError) {
        try logged(.remove, key: key, namespace: namespace) { () throws(SecureStoreError) in
            try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                try provider.removeItem(key: key, service: service(for: namespace))
            }
            return .success
        }
    }

    /// The keys stored in `namespace`, each once, in UTF-8 byte order.
    ///
    /// Keys are compared byte for byte (`"jos\u{E9}"` and `"jose\u{301}"` are two keys, both
    /// listed). With no access group configured, a key held in several of the app's groups
    /// is listed once.
    /// - Parameter namespace: The namespace (default ``Namespace/default``).
    /// - Returns: The keys; empty when there are none.
    /// - Throws: ``SecureStoreError``.
    public func keys(in namespace: Namespace = .default) throws(SecureStoreError) -> [String] {
        var keys: [String] = []
        try logged(.keys, key: nil, namespace: namespace) { () throws(SecureStoreError) in
            keys = try keychain(key: nil, namespace: namespace) { () throws(KeychainError) in
                try provider.keys(service: service(for: namespace))
            }
            return .success
        }
        return keys
    }

    /// Removes every value of `namespace`, and nothing else (a namespace reset instead of a
    /// "clear all" that would delete other modules' data).
    /// - Parameter namespace: The namespace, for example `auth` on sign-out.
    /// - Throws: ``SecureStoreError``.
    public func resetNamespace(_ namespace: Namespace) throws(SecureStoreError) {
        try logged(.resetNamespace, key: nil, namespace: namespace) { () throws(SecureStoreError) in
            try keychain(key: nil, namespace: namespace) { () throws(KeychainError) in
                try provider.removeAll(service: service(for: namespace))
            }
            return .success
        }
    }

    /// The namespaces this store wrote to that hold at least one value.
    ///
    /// The store records each namespace it writes to (in a keychain registry item), so
    /// services of other stores that merely start with the same prefix (another store's
    /// `<prefix>.keys`) are never listed as this store's. Names are compared byte for byte:
    /// `account_jos\u{E9}` and `account_jose\u{301}` are two namespaces, both listed.
    /// - Returns: The namespaces, in UTF-8 byte order.
    /// - Throws: ``SecureStoreError``.
    /// - Note: Namespaces written by versions of Keysmith without the registry are not
    ///   listed until the store writes to them again.
    public func namespaces() throws(SecureStoreError) -> [Namespace] {
        let prefix = configuration.servicePrefix + "."
        let recorded = try recordedNamespaces()
        guard !recorded.isEmpty else { return [] }
        do {
            let start = ExactName(prefix)
            let present = Set(try provider.services(withPrefix: prefix).compactMap { ExactName($0).droppingPrefix(start) }
                .map { ExactName($0) })
            return recorded.filter { present.contains(ExactName($0.name)) }
        } catch {
            throw SecureStoreError(error, key: nil, namespace: nil)
        }
    }

    // MARK: - Plumbing

    /// Runs a keychain call, mapping its error.
    func keychain<Result>(
        key: String?, namespace: Namespace, _ body: () throws(KeychainError) -> Result
    ) throws(SecureStoreError) -> Result {
        do {
            return try body()
        } catch {
            throw SecureStoreError(error, key: key, namespace: namespace.name)
        }
    }

    /// Validates the key and namespace, runs `body` and reports its outcome to the logger.
    func logged(
        _ operation: SecureStoreEvent.Operation, key: String?, namespace: Namespace,
        _ body: () throws(SecureStoreError) -> SecureStoreEvent.Outcome
    ) throws(SecureStoreError) {
        do throws(SecureStoreError) {
            if let problem = namespace.problem {
                throw SecureStoreError(.invalidValue, message: problem, key: key, namespace: namespace.name)
            }
            if let key, key.isEmpty {
                throw SecureStoreError(.invalidValue, message: "A key must not be empty.", key: key, namespace: namespace.name)
            }
            let outcome = try body()
            log(operation, key: key, namespace: namespace, outcome: outcome)
        } catch {
            log(operation, key: key, namespace: namespace, outcome: .failure(error.code))
            throw error
        }
    }

    func log(_ operation: SecureStoreEvent.Operation, key: String?, namespace: Namespace, outcome: SecureStoreEvent.Outcome) {
        configuration.logger?.log(SecureStoreEvent(operation: operation, namespace: namespace.name, key: key, outcome: outcome))
    }
}
