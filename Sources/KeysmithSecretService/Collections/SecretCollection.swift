import Foundation

/// What the service knows of one item, without its secret.
public struct ItemSummary: Sendable {
    /// The item's path element (letters and digits).
    public let identifier: String
    /// The label.
    public let label: String
    /// The lookup attributes.
    public let attributes: ItemAttributes
    /// Seconds since 1970 when it was created and last modified.
    public let created: UInt64
    public let modified: UInt64
}

/// A secret and its content type, as stored.
public struct StoredSecret {
    /// The secret's bytes (the caller zeroes them when done).
    public var bytes: [UInt8]
    /// The content type the client gave (`text/plain` when unknown).
    public var contentType: String
}

/// What ``SecretCollection/createItem(label:attributes:secret:replace:)`` did.
public enum ItemCreation {
    /// A new item.
    case created(String)
    /// An existing item was given the new secret, label and attributes.
    case replaced(String)

    /// The item's path element.
    public var identifier: String {
        switch self {
        case .created(let identifier), .replaced(let identifier): return identifier
        }
    }
}

/// A collection of items the service serves: the keychain's (an access group) or the
/// in-memory session collection.
public protocol SecretCollection: AnyObject {
    /// The collection's path element (`login`, `session`, …).
    var identifier: String { get }
    /// The label people see.
    var label: String { get }
    /// Changes the label.
    func setLabel(_ label: String) throws(SecretServiceError)
    /// Whether its secrets cannot be read now.
    var isLocked: Bool { get }
    /// Seconds since 1970.
    var created: UInt64 { get }
    var modified: UInt64 { get }

    /// Every item (while locked: those known from before the lock).
    func items() throws(SecretServiceError) -> [ItemSummary]
    /// One item; `nil` when there is none with this identifier.
    func item(_ identifier: String) throws(SecretServiceError) -> ItemSummary?
    /// The items whose attributes include every one of `attributes`.
    func search(_ attributes: ItemAttributes) throws(SecretServiceError) -> [ItemSummary]
    /// An item's secret. Throws `isLocked` while locked.
    func secret(of identifier: String) throws(SecretServiceError) -> StoredSecret
    /// Stores a new item, or replaces one (see the implementations for which).
    func createItem(label: String, attributes: ItemAttributes, secret: StoredSecret, replace: Bool) throws(SecretServiceError) -> ItemCreation
    /// Replaces an item's secret.
    func setSecret(of identifier: String, to secret: StoredSecret) throws(SecretServiceError)
    /// Replaces an item's attributes.
    func setAttributes(of identifier: String, to attributes: ItemAttributes) throws(SecretServiceError)
    /// Replaces an item's label.
    func setLabel(of identifier: String, to label: String) throws(SecretServiceError)
    /// Deletes an item.
    func deleteItem(_ identifier: String) throws(SecretServiceError)
    /// Locks the collection (every process of the user, for the keychain's).
    func lock() throws(SecretServiceError)
    /// Deletes the collection with its items.
    func delete() throws(SecretServiceError)
}

extension SecretCollection {
    /// Seconds since 1970, now.
    static var now: UInt64 { UInt64(max(0, Date().timeIntervalSince1970)) }
}
