import Foundation

/// A machine's fleet settings, kept in its keychain by `keysmith fleet init` and `join`:
/// where etcd is and under which prefix the fleet's keys live. No secret.
public struct FleetSettings: Codable, Sendable, Equatable {
    /// etcd client URLs, such as `http://10.0.0.1:2379`.
    public var endpoints: [String]
    /// The key prefix, such as `/keysmith/prod/`.
    public var prefix: String
    /// How old an offline copy may be and still be served, in seconds; `nil` for no limit.
    public var maximumStalenessSeconds: Int?
    /// The etcd user, when the cluster has authentication enabled (its password is a
    /// separate keychain item).
    public var username: String?
    /// The CA file that signed etcd's certificates (`--cacert`), if any.
    public var caFile: String?
    /// The client certificate presented to etcd (`--cert`), if any.
    public var clientCertificate: String?
    /// The client certificate's key file (`--cert-key`), if any.
    public var clientKey: String?

    /// The TLS settings these settings name.
    public var tls: EtcdTLSOptions {
        EtcdTLSOptions(caFile: caFile, clientCertificate: clientCertificate, clientKey: clientKey)
    }

    /// Creates settings.
    /// - Parameters:
    ///   - endpoints: etcd client URLs.
    ///   - prefix: The key prefix.
    ///   - maximumStalenessSeconds: The offline copies' maximum age (default 24 hours).
    ///   - username: The etcd user, if any.
    public init(endpoints: [String], prefix: String, maximumStalenessSeconds: Int? = 86_400, username: String? = nil) {
        self.endpoints = endpoints
        self.prefix = prefix
        self.maximumStalenessSeconds = maximumStalenessSeconds
        self.username = username
    }

    /// The configuration these settings describe.
    /// - Parameter password: The etcd password, when ``username`` is set.
    /// - Returns: The configuration.
    /// - Throws: ``EtcdError/invalidConfiguration(reason:)`` as ``EtcdConfiguration`` does.
    public func configuration(password: String? = nil) throws -> EtcdConfiguration {
        let credentials = username.map { EtcdCredentials(username: $0, password: password ?? "") }
        return try EtcdConfiguration(
            endpoints: endpoints, prefix: prefix, maximumStaleness: maximumStalenessSeconds.map { .seconds($0) },
            credentials: credentials, tls: tls)
    }
}
