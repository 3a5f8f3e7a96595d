import Foundation
import KeychainServices

/// The server an internet password belongs to: host, protocol and, optionally, port, path,
/// authentication type and security domain (the primary key of `kSecClassInternetPassword`
/// items, without the account).
///
/// ```swift
/// let server = try InternetServer(host: "api.example.com", protocol: .https, port: 443)
/// let store = try KeychainStore(server: server)
/// try store.set("s3cret", for: "alice@example.com")
/// ```
public struct InternetServer: Sendable, Hashable, CustomStringConvertible {
    /// The host name (`kSecAttrServer`), for example `api.example.com`.
    public let host: String
    /// The protocol (`kSecAttrProtocol`).
    public let `protocol`: InternetProtocol
    /// The port (`kSecAttrPort`), or `nil` for none (stored and matched as 0: a store without
    /// a port never touches the passwords of a specific port).
    public let port: Int?
    /// The path (`kSecAttrPath`), or `nil` for none (stored and matched as "").
    public let path: String?
    /// The authentication type (`kSecAttrAuthenticationType`), or `nil` for none (stored and
    /// matched as "").
    public let authenticationType: InternetAuthenticationType?
    /// The security domain or realm (`kSecAttrSecurityDomain`), or `nil` for none (stored and
    /// matched as "").
    public let securityDomain: String?

    /// Creates a server description.
    /// - Parameters:
    ///   - host: The host name; must not be empty.
    ///   - protocol: The protocol (default HTTPS).
    ///   - port: The port, 1...65535, or `nil`.
    ///   - path: The path, or `nil`.
    ///   - authenticationType: The authentication type, or `nil`.
    ///   - securityDomain: The security domain (realm), or `nil`.
    /// - Throws: ``KeychainError`` with code ``KeychainError/Code/invalidParameters`` for an
    ///   empty host or a port out of range.
    public init(
        host: String, protocol: InternetProtocol = .https, port: Int? = nil, path: String? = nil,
        authenticationType: InternetAuthenticationType? = nil, securityDomain: String? = nil
    ) throws(KeychainError) {
        guard !host.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw .invalidConfiguration(
                "An internet password needs a host name; got an empty string.",
                fix: "Pass the server's host name, for example \"git.example.com\".", service: nil)
        }
        if let port, !(1...65535).contains(port) {
            throw .invalidConfiguration(
                "Port \(port) is out of range 1...65535.",
                fix: "Pass a port between 1 and 65535, or nil for the protocol's default port.", service: host)
        }
        self.host = host
        self.protocol = `protocol`
        self.port = port
        self.path = path
        self.authenticationType = authenticationType
        self.securityDomain = securityDomain
    }

    /// Whether the two name the same server: every attribute equal, the host, path and
    /// security domain byte for byte (as the keychain compares them).
    public static func == (lhs: InternetServer, rhs: InternetServer) -> Bool {
        ExactName(lhs.host) == ExactName(rhs.host) && lhs.protocol == rhs.protocol && lhs.port == rhs.port
            && ExactName.same(lhs.path, rhs.path) && lhs.authenticationType == rhs.authenticationType
            && ExactName.same(lhs.securityDomain, rhs.securityDomain)
    }

    /// Hashes every attribute, the names by their bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactName(host))
        hasher.combine(`protocol`)
        hasher.combine(port)
        hasher.combine(path.map { ExactName($0) })
        hasher.combine(authenticationType)
        hasher.combine(securityDomain.map { ExactName($0) })
    }

    /// For example `https://api.example.com:443/v1`.
    public var description: String {
        var text = "\(`protocol`.rawValue)://\(host)"
        if let port { text += ":\(port)" }
        if let path { text += path.hasPrefix("/") ? path : "/" + path }
        return text
    }
}

/// The protocol of an internet password (`kSecAttrProtocol`), for the common protocols.
public enum InternetProtocol: String, Sendable, Hashable, CaseIterable {
    /// HTTPS.
    case https
    /// HTTP.
    case http
    /// FTP.
    case ftp
    /// FTP over TLS.
    case ftps
    /// SSH.
    case ssh
    /// SMTP.
    case smtp
    /// IMAP.
    case imap
    /// IMAP over TLS.
    case imaps
    /// POP3.
    case pop3
    /// POP3 over TLS.
    case pop3s
    /// LDAP.
    case ldap
    /// LDAP over TLS.
    case ldaps
    /// SMB.
    case smb

    /// The `kSecAttrProtocol…` value: the one place this enum maps to Keychain Services.
    public var secValue: CFString {
        switch self {
        case .https: return kSecAttrProtocolHTTPS
        case .http: return kSecAttrProtocolHTTP
        case .ftp: return kSecAttrProtocolFTP
        case .ftps: return kSecAttrProtocolFTPS
        case .ssh: return kSecAttrProtocolSSH
        case .smtp: return kSecAttrProtocolSMTP
        case .imap: return kSecAttrProtocolIMAP
        case .imaps: return kSecAttrProtocolIMAPS
        case .pop3: return kSecAttrProtocolPOP3
        case .pop3s: return kSecAttrProtocolPOP3S
        case .ldap: return kSecAttrProtocolLDAP
        case .ldaps: return kSecAttrProtocolLDAPS
        case .smb: return kSecAttrProtocolSMB
        }
    }
}

/// The authentication type of an internet password (`kSecAttrAuthenticationType`).
public enum InternetAuthenticationType: String, Sendable, Hashable, CaseIterable {
    /// HTTP Basic.
    case httpBasic
    /// HTTP Digest.
    case httpDigest
    /// An HTML form.
    case htmlForm
    /// NTLM.
    case ntlm
    /// The default for the protocol.
    case `default`

    /// The `kSecAttrAuthenticationType…` value: the one place this enum maps to Keychain Services.
    public var secValue: CFString {
        switch self {
        case .httpBasic: return kSecAttrAuthenticationTypeHTTPBasic
        case .httpDigest: return kSecAttrAuthenticationTypeHTTPDigest
        case .htmlForm: return kSecAttrAuthenticationTypeHTMLForm
        case .ntlm: return kSecAttrAuthenticationTypeNTLM
        case .default: return kSecAttrAuthenticationTypeDefault
        }
    }
}
