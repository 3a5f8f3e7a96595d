import Foundation
import KeychainServices

/// The internet-password attributes a git credential names: server, protocol code, port
/// and path, as git-credential-osxkeychain sets them.
struct GitItemKey: Equatable {
    /// The host without its port.
    var server: String
    /// The four-character protocol code (`htps` for https).
    var protocolCode: String
    /// The port, 0 when git gave none.
    var port: Int
    /// The path, empty when git gave none.
    var path: String

    /// Git's protocol names and the codes git-credential-osxkeychain stores for them.
    static let protocolCodes: [String: String] = [
        "https": kSecAttrProtocolHTTPS as String, "http": kSecAttrProtocolHTTP as String,
        "ftp": kSecAttrProtocolFTP as String, "ftps": kSecAttrProtocolFTPS as String,
        "imap": kSecAttrProtocolIMAP as String, "imaps": kSecAttrProtocolIMAPS as String,
        "smtp": kSecAttrProtocolSMTP as String,
    ]

    /// The key of `credential`; `nil` when it has no protocol or host, or a protocol this
    /// helper does not store.
    /// - Throws: ``HelperFailure`` for a host with `@` in it, or a port that is not a number
    ///   from 0 to 65535.
    init?(_ credential: GitCredential) throws(HelperFailure) {
        guard let name = credential.protocol, let code = Self.protocolCodes[name],
            let host = credential.host, !host.isEmpty
        else { return nil }
        // Git sends a user name and password as their own attributes, never in `host`: a
        // host with `@` is refused, and not repeated (what precedes `@` may be a password).
        guard !host.contains("@") else {
            throw HelperFailure(
                "keysmith: the host git sent contains '@' (a user name or password in the host; the host is not "
                    + "shown, it may hold a secret). Send the user name as username= and the password as "
                    + "password=, and only the host name (with :port) as host=.")
        }
        let (server, port) = try Self.split(host: host)
        self.server = server
        self.protocolCode = code
        self.port = port
        self.path = credential.path ?? ""
    }

    /// Splits `host:port` (and `[v6]:port`) into server and port (0 when there is none).
    /// - Throws: ``HelperFailure`` for a port that is not a number from 0 to 65535.
    static func split(host: String) throws(HelperFailure) -> (String, Int) {
        var server = Substring(host)
        var portText: Substring?
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            server = host[...close]
            let rest = host[host.index(after: close)...]
            if rest.hasPrefix(":") { portText = rest.dropFirst() }
        } else if let colon = host.lastIndex(of: ":") {
            server = host[..<colon]
            portText = host[host.index(after: colon)...]
        }
        guard let portText else { return (String(server), 0) }
        guard !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = Int(portText), (0...65535).contains(port)
        else {
            throw HelperFailure("keysmith: the port in host '\(host)' is not a number from 0 to 65535.")
        }
        return (String(server), port)
    }

    /// The query for this key's items (`account` when given; every account otherwise).
    func query(account: String?) -> [String: Any] {
        var query: [String: Any] = [
            kSecAttrServer as String: server,
            kSecAttrProtocol as String: protocolCode,
            kSecAttrPort as String: NSNumber(value: port),
            kSecAttrPath as String: path,
            kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeDefault as String,
        ]
        if let account { query[kSecAttrAccount as String] = account }
        return query
    }
}
