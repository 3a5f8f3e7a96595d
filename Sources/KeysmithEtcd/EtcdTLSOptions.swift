import Foundation

/// TLS settings for `https://` endpoints, as etcd deployments use them: the cluster's own
/// certificate authority, and a client certificate when etcd runs with
/// `--client-cert-auth` (etcdctl's `--cacert`, `--cert` and `--key`).
///
/// On Linux (libcurl) every `https://` connection is verified: the server's certificate must
/// be signed by ``caFile`` (only that CA is trusted when it is given; otherwise the system's
/// trusted CAs) and be issued for the endpoint's host; ``clientCertificate`` and
/// ``clientKey`` are presented to the server. A refused certificate fails the call with
/// ``EtcdError/tlsFailed(endpoint:reason:)`` naming the cause, never with a retry without
/// TLS or an offline copy.
///
/// On Apple platforms (URLSession) `https://` is verified against the system trust store,
/// and the files are not supported yet: giving them is refused by ``EtcdConfiguration``.
public struct EtcdTLSOptions: Sendable, Equatable, CustomStringConvertible {
    /// A PEM file with the certificate authority that signed the etcd servers' certificates.
    public var caFile: String?
    /// A PEM client certificate.
    public var clientCertificate: String?
    /// The PEM private key of the client certificate.
    public var clientKey: String?

    /// Creates TLS settings.
    /// - Parameters:
    ///   - caFile: A CA file (PEM).
    ///   - clientCertificate: A client certificate file (PEM).
    ///   - clientKey: The client key file (PEM), given with `clientCertificate`.
    public init(caFile: String? = nil, clientCertificate: String? = nil, clientKey: String? = nil) {
        self.caFile = caFile
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
    }

    /// Whether anything beyond the system trust store is asked for.
    var asksForFiles: Bool { caFile != nil || clientCertificate != nil || clientKey != nil }

    /// Checks what can be checked before connecting: the files exist and read, certificate
    /// and key come together, the client key is not open to every user (as ssh refuses such
    /// a key), the client certificate is a PEM certificate.
    /// - Throws: ``EtcdError/invalidConfiguration(reason:)``.
    func validate() throws {
        guard asksForFiles else { return }
        guard EtcdTransports.supportsTLSFiles else {
            throw EtcdError.invalidConfiguration(
                reason: "a CA file or client certificate is not supported on this platform yet (https is verified "
                    + "against the system trust store here): install the CA in the system trust store and use etcd "
                    + "username/password authentication")
        }
        if (clientCertificate == nil) != (clientKey == nil) {
            throw EtcdError.invalidConfiguration(
                reason: "a client certificate and its key go together: give both --cert and --cert-key")
        }
        for (what, path) in [("CA file", caFile), ("client certificate", clientCertificate), ("client key", clientKey)] {
            guard let path else { continue }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw EtcdError.invalidConfiguration(reason: "the \(what) \(path) cannot be read")
            }
        }
        if let clientKey, let mode = try? FileManager.default.attributesOfItem(atPath: clientKey)[.posixPermissions]
            as? NSNumber, mode.intValue & 0o007 != 0
        {
            // As ssh refuses a private key others can read: whoever reads it can be this machine to etcd.
            throw EtcdError.invalidConfiguration(
                reason: "the client key \(clientKey) may be read by every user of this machine (mode "
                    + "\(String(mode.intValue & 0o777, radix: 8))); make it private with chmod 600 \(clientKey) (or "
                    + "640 with a group that needs it)")
        }
        if let caFile {
            do {
                _ = try CertificateValidity.read(pemFile: caFile)
            } catch {
                throw EtcdError.invalidConfiguration(reason: "the CA file \(caFile) \(error)")
            }
        }
        if let clientCertificate {
            do {
                _ = try CertificateValidity.read(pemFile: clientCertificate)
            } catch {
                throw EtcdError.invalidConfiguration(reason: "the client certificate \(clientCertificate) \(error)")
            }
        }
    }

    /// The file paths given (never their contents).
    public var description: String {
        var parts: [String] = []
        if let caFile { parts.append("CA \(caFile)") }
        if let clientCertificate { parts.append("client certificate \(clientCertificate)") }
        if let clientKey { parts.append("client key \(clientKey)") }
        return "EtcdTLSOptions(" + (parts.isEmpty ? "system trust store" : parts.joined(separator: ", ")) + ")"
    }
}
