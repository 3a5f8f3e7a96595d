import Foundation
import KeychainServices

/// A registry server URL as Docker passes it (`https://index.docker.io/v1/`,
/// `registry.example.com:5000`), split into the attributes docker-credential-osxkeychain
/// stores: protocol (`htps` unless the scheme is `http`), server, port and path.
struct RegistryAddress: Equatable {
    /// The host name, without port.
    var server: String
    /// `htps`, or `http` for an `http://` URL.
    var protocolCode: String
    /// The port, 0 when the URL has none.
    var port: Int
    /// The path, empty when the URL has none.
    var path: String

    /// Parses `text` as docker-credential-helpers does: a URL without a scheme is read as
    /// `//text` (so the host is never taken for a path), only `http` and `https` schemes
    /// are accepted, the query is dropped.
    /// - Throws: ``HelperFailure`` for an unsupported scheme, no host or a bad port.
    init(_ text: String) throws(HelperFailure) {
        var candidate = text
        if !candidate.contains("://") && !candidate.hasPrefix("//") { candidate = "//" + candidate }
        // Messages never repeat the URL: it may carry a user name and password (`user:pw@`).
        guard let components = URLComponents(string: candidate) else {
            throw HelperFailure("keysmith: the server URL is not a URL (it is not shown: it may hold a password).")
        }
        let scheme = components.scheme ?? ""
        guard scheme.isEmpty || scheme == "https" || scheme == "http" else {
            throw HelperFailure("unsupported scheme: \(scheme)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw HelperFailure("no hostname in URL")
        }
        if let port = components.port {
            guard (0...65535).contains(port) else {
                throw HelperFailure(
                    "keysmith: the port in the server URL\(components.host.map { " for \($0)" } ?? "") is not a number "
                        + "from 0 to 65535.")
            }
            self.port = port
        } else {
            self.port = 0
        }
        server = host
        protocolCode = scheme == "http" ? kSecAttrProtocolHTTP as String : kSecAttrProtocolHTTPS as String
        path = components.path
    }

    /// The attributes that select this address's items.
    var query: [String: Any] {
        [
            kSecAttrServer as String: server,
            kSecAttrProtocol as String: protocolCode,
            kSecAttrPort as String: NSNumber(value: port),
            kSecAttrPath as String: path,
        ]
    }

    /// The URL `list` prints for an item: scheme, host (with `:port` when not 0) and path.
    static func url(of item: InternetPasswordKeychain.Item) -> String {
        let scheme = InternetPasswordKeychain.string(item, kSecAttrProtocol) == kSecAttrProtocolHTTPS as String ? "https" : "http"
        var host = InternetPasswordKeychain.string(item, kSecAttrServer) ?? ""
        let port = InternetPasswordKeychain.port(item)
        if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
        if port != 0 { host += ":\(port)" }
        return "\(scheme)://\(host)\(InternetPasswordKeychain.string(item, kSecAttrPath) ?? "")"
    }
}
