import Foundation

/// Where a fleet's keys live in etcd and how to reach them.
///
/// ```swift
/// let configuration = try EtcdConfiguration(
///     endpoints: ["http://10.0.0.1:2379", "http://10.0.0.2:2379", "http://10.0.0.3:2379"],
///     prefix: "/keysmith/prod/")
/// ```
///
/// Each version of a key is one etcd key, `PREFIX` + `ID/VERSION`
/// (`/keysmith/prod/api_key/2024.07.01`).
public struct EtcdConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// The client URLs of the etcd members, tried in order; a member that does not answer is
    /// skipped (failover) and the one that answered is tried first next time.
    public var endpoints: [URL]
    /// The key prefix, ending with `/` (added when missing).
    public var prefix: String
    /// How long one call to one endpoint may take before the next endpoint is tried.
    public var requestTimeout: Duration
    /// The first delay before the watch reconnects; doubled after each failure up to
    /// ``maximumReconnectDelay``.
    public var initialReconnectDelay: Duration
    /// The longest delay between two reconnection attempts of the watch.
    public var maximumReconnectDelay: Duration
    /// How old an offline copy may be (since etcd last confirmed it) and still be served
    /// while etcd is unreachable; `nil` serves it however old.
    public var maximumStaleness: Duration?
    /// etcd username and password, when the cluster has authentication enabled.
    public var credentials: EtcdCredentials?
    /// TLS settings for `https://` endpoints.
    public var tls: EtcdTLSOptions

    /// Creates a configuration.
    /// - Parameters:
    ///   - endpoints: etcd client URLs (`http://host:2379` or `https://…`), at least one.
    ///   - prefix: The key prefix, such as `/keysmith/prod/`.
    ///   - requestTimeout: Per call and endpoint (default 2 s).
    ///   - initialReconnectDelay: First watch reconnection delay (default 100 ms).
    ///   - maximumReconnectDelay: Longest watch reconnection delay (default 5 s).
    ///   - maximumStaleness: Oldest offline copy served (default 24 hours).
    ///   - credentials: etcd username and password, if needed.
    ///   - tls: TLS settings.
    /// - Throws: ``EtcdError/invalidConfiguration(reason:)`` for no endpoint, a URL that is
    ///   not http(s) with a host, http:// and https:// endpoints together, an empty prefix, or
    ///   TLS files that cannot be read or a client key others may read (or, on Apple platforms,
    ///   TLS files at all).
    public init(
        endpoints: [URL], prefix: String, requestTimeout: Duration = .seconds(2),
        initialReconnectDelay: Duration = .milliseconds(100), maximumReconnectDelay: Duration = .seconds(5),
        maximumStaleness: Duration? = .seconds(86_400), credentials: EtcdCredentials? = nil,
        tls: EtcdTLSOptions = EtcdTLSOptions()
    ) throws {
        guard !endpoints.isEmpty else { throw EtcdError.invalidConfiguration(reason: "no endpoint given") }
        for endpoint in endpoints {
            guard let scheme = endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https",
                endpoint.host != nil
            else {
                throw EtcdError.invalidConfiguration(
                    reason: "endpoint \(endpoint.absoluteString) is not an http:// or https:// URL with a host")
            }
        }
        let trimmed = prefix.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed != "/" else {
            throw EtcdError.invalidConfiguration(
                reason: "the prefix is empty; give one such as /keysmith/prod/ so the fleet's keys do not mix with "
                    + "other data")
        }
        guard requestTimeout > .zero else {
            throw EtcdError.invalidConfiguration(reason: "the request timeout must be positive")
        }
        // A fleet is all TLS or all plain: a failover from an https:// endpoint to an http://
        // one would carry the token and the sealed values in the clear.
        if let secure = endpoints.first(where: { $0.scheme?.lowercased() == "https" }),
            let plain = endpoints.first(where: { $0.scheme?.lowercased() == "http" })
        {
            throw EtcdError.invalidConfiguration(
                reason: "endpoint \(secure.absoluteString) is https:// but \(plain.absoluteString) is http://: a "
                    + "failover would leave TLS; give every endpoint as https://")
        }
        try tls.validate()
        if tls.asksForFiles, let plain = endpoints.first(where: { $0.scheme?.lowercased() == "http" }) {
            throw EtcdError.invalidConfiguration(
                reason: "TLS files are given but endpoint \(plain.absoluteString) is http://, which would be used "
                    + "without TLS; give every endpoint as https://")
        }
        self.endpoints = endpoints
        self.prefix = trimmed.hasSuffix("/") ? trimmed : trimmed + "/"
        self.requestTimeout = requestTimeout
        self.initialReconnectDelay = initialReconnectDelay
        self.maximumReconnectDelay = maximumReconnectDelay
        self.maximumStaleness = maximumStaleness
        self.credentials = credentials
        self.tls = tls
    }

    /// Creates a configuration from endpoint strings.
    /// - Parameters:
    ///   - endpoints: etcd client URLs as text, such as `http://127.0.0.1:2379`.
    ///   - prefix: The key prefix.
    ///   - maximumStaleness: Oldest offline copy served (default 24 hours).
    ///   - credentials: etcd username and password, if needed.
    ///   - tls: TLS settings for `https://` endpoints.
    /// - Throws: ``EtcdError/invalidConfiguration(reason:)`` as the main initializer does,
    ///   and for text that is not a URL.
    public init(
        endpoints: [String], prefix: String, maximumStaleness: Duration? = .seconds(86_400),
        credentials: EtcdCredentials? = nil, tls: EtcdTLSOptions = EtcdTLSOptions()
    ) throws {
        var urls: [URL] = []
        for text in endpoints {
            guard let url = URL(string: text.trimmingCharacters(in: .whitespaces)) else {
                throw EtcdError.invalidConfiguration(reason: "endpoint \"\(text)\" is not a URL")
            }
            urls.append(url)
        }
        try self.init(
            endpoints: urls, prefix: prefix, maximumStaleness: maximumStaleness, credentials: credentials, tls: tls)
    }

    /// The etcd key of one version: `PREFIX` + `ID/VERSION`.
    func key(_ identifier: String, _ version: String) -> String {
        prefix + identifier + "/" + version
    }

    /// `etcd http://a:2379, http://b:2379 prefix /keysmith/prod/`.
    public var description: String {
        "etcd \(endpoints.map(\.absoluteString).joined(separator: ", ")) prefix \(prefix)"
    }

    /// Checks that a name can be one path segment of an etcd key.
    static func validate(_ name: String, what: String) throws {
        guard !name.isEmpty else { throw EtcdError.invalidName(name, reason: "the \(what) is empty") }
        guard !name.contains("/") else {
            throw EtcdError.invalidName(name, reason: "the \(what) may not contain \"/\" (it separates ID and VERSION)")
        }
        guard !name.contains(where: { $0.isNewline || $0 == "\u{0}" }) else {
            throw EtcdError.invalidName(name, reason: "the \(what) may not contain a newline or NUL")
        }
    }
}
