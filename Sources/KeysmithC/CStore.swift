import Foundation
import Keysmith
import KeychainServices
import Synchronization

/// What a `keysmith_store *` points to: the access group and accessibility of a store, and
/// the ``KeychainStoreProvider`` that does the work (the same layer a Swift ``SecureStore``
/// uses, so C callers get the same items and the same rules).
///
/// Immutable once opened, so one store may be used from many threads at once.
final class CStore: Sendable {
    /// The access group, or `nil` for the program's default group.
    let accessGroup: String?
    /// The accessibility of the items written.
    let accessibility: Accessibility
    /// The byte layer of a Swift `SecureStore` with these settings.
    let provider: KeychainStoreProvider

    /// Creates the store.
    /// - Parameters:
    ///   - accessGroup: The access group, or `nil`.
    ///   - accessibility: The accessibility of the items written.
    init(accessGroup: String?, accessibility: Accessibility) {
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        provider = KeychainStoreProvider(accessGroup: accessGroup, accessibility: accessibility)
    }

    /// The keychain stores of the services read through this store, so a read does not
    /// check and build its store again; at most ``maximumCachedStores`` are kept (the
    /// least recently added go first). Keyed by the service's bytes: two services that
    /// differ only in Unicode form (`account_jos\u{E9}`, `account_jose\u{301}`) are two
    /// services with their own items, never one cache entry.
    private let readStores = Mutex<(stores: [ExactName: KeychainStore], order: [ExactName])>(([:], []))
    private static let maximumCachedStores = 64

    /// The store that reads `service` (the one ``KeychainStoreProvider/store(for:protection:)``
    /// makes for standard items), cached.
    /// - Parameter service: The full service name.
    /// - Returns: The store.
    /// - Throws: ``KeychainError`` for an unusable service.
    func readStore(for service: String) throws(KeychainError) -> KeychainStore {
        let name = ExactName(service)
        if let cached = readStores.withLock({ $0.stores[name] }) { return cached }
        let store = try provider.store(for: service)
        readStores.withLock { cache in
            guard cache.stores[name] == nil else { return }
            cache.stores[name] = store
            cache.order.append(name)
            if cache.order.count > Self.maximumCachedStores { cache.stores[cache.order.removeFirst()] = nil }
        }
        return store
    }

    /// A Swift `SecureStore` with this store's settings and `servicePrefix`, for the calls
    /// whose rules live there (biometric protection, migrations). Its size limit is left to
    /// the caller (the C interface stores bytes of any size the keychain takes).
    /// - Parameter servicePrefix: The prefix of the namespace's service.
    /// - Returns: The store.
    /// - Throws: ``SecureStoreError`` for an unusable prefix.
    func secureStore(servicePrefix: String) throws(SecureStoreError) -> SecureStore {
        try SecureStore(
            configuration: SecureStore.Configuration(
                servicePrefix: servicePrefix, accessibility: accessibility, accessGroup: accessGroup,
                sizeLimit: Int.max))
    }

    /// The store behind a handle.
    /// - Parameter handle: A `keysmith_store *` from `keysmith_store_open`.
    /// - Returns: The store, or `nil` for a NULL handle.
    static func from(_ handle: OpaquePointer?) -> CStore? {
        guard let handle else { return nil }
        return Unmanaged<CStore>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }
}
