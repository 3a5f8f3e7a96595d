import Foundation
import KeychainServices

/// The keychain bookkeeping of a ``SecureStore``: which namespaces it created, and whether
/// reinstall cleanup has run on this device before.
///
/// Both are keychain items, so they survive an app deletion exactly like the store's data
/// (preferences do not). They live in one service, ``service``, with accounts that start
/// with the store's prefix, so they never appear in a namespace of any store:
/// - `namespace<US><prefix><US><name>`: the store wrote to namespace `name` (written after
///   the first successful write there). Reinstall cleanup removes exactly these namespaces,
///   never other services that happen to start with the prefix (another store's
///   `<prefix>.keys`, `<prefix>.payments.cards`).
/// - `installed<US><prefix>`: the reinstall sentinel, written by
///   ``SecureStore/removeLeftoversAfterReinstall(defaults:cleanup:)`` together with the
///   preferences marker.
///
/// Bookkeeping never goes through the store's ``ErrorInjection``, so injected failures
/// reach the calls a test aims them at.
struct NamespaceRegistry {
    /// The service of every store's bookkeeping items.
    static let service = "com.keysmith.securestore.registry"
    private static let separator = "\u{1F}"

    let prefix: String
    let store: KeychainStore

    init(configuration: SecureStore.Configuration) throws(KeychainError) {
        prefix = configuration.servicePrefix
        store = try KeychainStore(
            service: NamespaceRegistry.service, accessGroup: configuration.accessGroup,
            accessibility: configuration.accessibility)
    }

    private var namespacePrefix: String { "namespace" + Self.separator + prefix + Self.separator }
    private var sentinelKey: String { "installed" + Self.separator + prefix }

    /// Records that the store wrote to `namespace` (no write when already recorded).
    func record(_ namespace: Namespace) throws(KeychainError) {
        let key = namespacePrefix + namespace.name
        if try store.contains(key) { return }
        try store.set(Data(namespace.name.utf8), for: key)
    }

    /// The namespaces the store recorded, in UTF-8 byte order (each once, byte for byte).
    func recorded() throws(KeychainError) -> [Namespace] {
        let start = ExactName(namespacePrefix)
        return try store.allKeys().compactMap { ExactName($0).droppingPrefix(start) }.filter { !$0.isEmpty }
            .map { Namespace($0) }.sorted()
    }

    /// Forgets `namespace` (after its items were removed).
    func forget(_ namespace: Namespace) throws(KeychainError) {
        try store.remove(namespacePrefix + namespace.name)
    }

    /// Whether the reinstall sentinel exists.
    func hasSentinel() throws(KeychainError) -> Bool {
        try store.contains(sentinelKey)
    }

    /// Writes the reinstall sentinel.
    func setSentinel() throws(KeychainError) {
        try store.set(Data("1".utf8), for: sentinelKey)
    }

    /// Removes the reinstall sentinel (when the launch marker could not be saved).
    func removeSentinel() throws(KeychainError) {
        try store.remove(sentinelKey)
    }
}

extension SecureStore {
    /// Records, best effort, that this store wrote to `namespace`, so that reinstall cleanup
    /// removes it. A failure here only means the namespace is not cleaned after a reinstall
    /// (its data is kept), so it does not fail the write that succeeded.
    func recordNamespace(_ namespace: Namespace) {
        try? NamespaceRegistry(configuration: configuration).record(namespace)
    }

    /// The namespaces this store recorded, whether or not they still hold values.
    func recordedNamespaces() throws(SecureStoreError) -> [Namespace] {
        do {
            return try NamespaceRegistry(configuration: configuration).recorded()
        } catch {
            throw SecureStoreError(error, key: nil, namespace: nil)
        }
    }
}
