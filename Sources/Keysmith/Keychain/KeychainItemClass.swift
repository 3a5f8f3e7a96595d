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
            var attributes: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword,
                kSecAttrServer as String: server.host,
                kSecAttrProtocol as String: server.protocol.secValue,
            ]
            if let port = server.port { attributes[kSecAttrPort as String] = port }
            if let path = server.path { attributes[kSecAttrPath as String] = path }
            if let authenticationType = server.authenticationType {
                attributes[kSecAttrAuthenticationType as String] = authenticationType.secValue
            }
            if let securityDomain = server.securityDomain {
                attributes[kSecAttrSecurityDomain as String] = securityDomain
            }
            return attributes
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
