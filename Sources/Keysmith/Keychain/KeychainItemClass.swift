import Foundation
import KeychainServices

/// Which kind of keychain item a ``KeychainStore`` keeps, and the attributes that make up
/// its "service": the item class with everything of the primary key except the account.
/// The account (`kSecAttrAccount`) is always the store's key.
public enum KeychainItemClass: Sendable, Hashable, CustomStringConvertible {
    /// Generic passwords (`kSecClassGenericPassword`) of one service (`kSecAttrService`),
    /// preferably reverse-DNS, for example `com.example.app.auth`. The main class for
    /// tokens, secrets and small values.
    case genericPassword(service: String)
    /// Internet passwords (`kSecClassInternetPassword`) for one server: the shape Safari
    /// and password managers use, so shared web credentials are found by server.
    case internetPassword(InternetServer)

    /// The service name (generic) or host (internet) the store is scoped to, for messages.
    public var scopeName: String {
        switch self {
        case .genericPassword(let service): return service
        case .internetPassword(let server): return server.host
        }
    }

    /// The query attributes that select this class and scope (no account).
    var queryAttributes: [String: Any] {
        switch self {
        case .genericPassword(let service):
            return [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
        case .internetPassword(let server):
            // Every primary-key attribute is pinned, the unset ones to the value the keychain
            // stores for them (0 or ""): an attribute missing from a query is a wildcard in
            // SecItemUpdate and SecItemDelete, so a store without a port would otherwise
            // overwrite and delete the passwords of every port, path and realm of the host.
            return [
                kSecClass as String: kSecClassInternetPassword,
                kSecAttrServer as String: server.host,
                kSecAttrProtocol as String: server.protocol.secValue,
                kSecAttrPort as String: server.port ?? 0,
                kSecAttrPath as String: server.path ?? "",
                kSecAttrAuthenticationType as String: server.authenticationType.map { $0.secValue as String } ?? "",
                kSecAttrSecurityDomain as String: server.securityDomain ?? "",
            ]
        }
    }

    /// Whether the two select the same items: the same class, and the same service or
    /// server, compared byte for byte (as the keychain compares them).
    public static func == (lhs: KeychainItemClass, rhs: KeychainItemClass) -> Bool {
        switch (lhs, rhs) {
        case (.genericPassword(let left), .genericPassword(let right)): return ExactName(left) == ExactName(right)
        case (.internetPassword(let left), .internetPassword(let right)): return left == right
        default: return false
        }
    }

    /// Hashes the class and the bytes of the service, or the server.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .genericPassword(let service):
            hasher.combine(0)
            hasher.combine(ExactName(service))
        case .internetPassword(let server):
            hasher.combine(1)
            hasher.combine(server)
        }
    }

    /// For example `genericPassword(com.example.auth)` or `internetPassword(https://api.example.com:443)`.
    public var description: String {
        switch self {
        case .genericPassword(let service): return "genericPassword(\(service))"
        case .internetPassword(let server): return "internetPassword(\(server))"
        }
    }
}
