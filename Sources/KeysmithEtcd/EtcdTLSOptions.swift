import Foundation

/// TLS settings for `https://` endpoints.
///
/// `https://` endpoints are verified against the system's trust store on every platform.
/// A private certificate authority file and a client certificate are settings of the
/// connection that FoundationNetworking on Linux does not expose per session (libcurl is
/// configured for the process's system store only), and they are not implemented on Apple
/// platforms yet either: giving ``caFile``, ``clientCertificate`` or ``clientKey`` is
/// refused with a clear error at configuration time, never silently ignored. Install the
/// fleet's CA in the system store (`update-ca-certificates`), and use etcd's
/// username/password authentication (``EtcdCredentials``) instead of client certificates.
public struct EtcdTLSOptions: Sendable, Equatable, CustomStringConvertible {
    /// A PEM file with the certificate authority that signed the etcd servers' certificates.
    public var caFile: String?
    /// A PEM client certificate.
    public var clientCertificate: String?
    /// The PEM private key of the client certificate.
    public var clientKey: String?

    /// Creates TLS settings.
    /// - Parameters:
    ///   - caFile: A CA file.
    ///   - clientCertificate: A client certificate file.
    ///   - clientKey: The client key file.
    public init(caFile: String? = nil, clientCertificate: String? = nil, clientKey: String? = nil) {
        self.caFile = caFile
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
    }

    /// Whether anything beyond the system trust store is asked for.
    var asksForFiles: Bool { caFile != nil || clientCertificate != nil || clientKey != nil }

    /// The file paths given (never their contents).
    public var description: String {
        var parts: [String] = []
        if let caFile { parts.append("CA \(caFile)") }
        if let clientCertificate { parts.append("client certificate \(clientCertificate)") }
        if let clientKey { parts.append("client key \(clientKey)") }
        return "EtcdTLSOptions(" + (parts.isEmpty ? "system trust store" : parts.joined(separator: ", ")) + ")"
    }
}
