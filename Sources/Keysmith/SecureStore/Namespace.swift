import Foundation

/// A business area of a ``SecureStore`` (`auth`, `local_pin`, `account_42`): the store keeps
/// each namespace in its own keychain service, `<prefix>.<namespace>`, so areas never
/// overwrite each other and one can be cleared on its own with
/// ``SecureStore/resetNamespace(_:)``.
///
/// ```swift
/// try store.set(token, for: "access_token", in: "auth")
/// try store.set(info, for: "user_info", in: .account(userID))   // per-account isolation
/// ```
///
/// Namespaces are compared byte for byte, as the keychain compares services:
/// `.account("jos\u{E9}")` and `.account("jose\u{301}")` look alike but are two namespaces,
/// two services, with their own items (see ``ExactName``).
///
/// - Note: A namespace name must not be empty or contain control characters; the store
///   rejects such a name with ``SecureStoreError/Code/invalidValue`` when it is used.
public struct Namespace: Sendable, Hashable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name, the last component of the service (`<prefix>.<name>`).
    public let name: String

    /// Creates a namespace.
    /// - Parameter name: The name, for example `auth`.
    public init(_ name: String) {
        self.name = name
    }

    /// Creates a namespace from a string literal.
    /// - Parameter value: The name.
    public init(stringLiteral value: String) {
        self.name = value
    }

    /// The namespace used when none is given: `default`.
    public static let `default` = Namespace("default")

    /// The namespace of one signed-in account, `account_<id>`: data of
    /// different accounts never mixes, and signing one out clears only its namespace.
    /// - Parameter id: The account's stable identifier (a user ID, not a display name).
    /// - Returns: The namespace.
    public static func account(_ id: String) -> Namespace {
        Namespace("account_\(id)")
    }

    /// Why the name cannot be used, or `nil` when it is valid.
    var problem: String? {
        if name.isEmpty { return "A namespace name must not be empty." }
        if name.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) {
            return "A namespace name must not contain control characters."
        }
        return nil
    }

    /// The name.
    public var description: String { name }

    /// Whether the two names have the same UTF-8 bytes.
    public static func == (lhs: Namespace, rhs: Namespace) -> Bool { ExactName(lhs.name) == ExactName(rhs.name) }

    /// Hashes the name's UTF-8 bytes.
    public func hash(into hasher: inout Hasher) { hasher.combine(ExactName(name)) }

    /// Orders namespaces by name, in UTF-8 byte order.
    public static func < (lhs: Namespace, rhs: Namespace) -> Bool { ExactName(lhs.name) < ExactName(rhs.name) }
}
