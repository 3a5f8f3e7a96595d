/// Which keys are sensitive, and what that means for where they may come from.
///
/// A sensitive key (an encryption key, a signing key) must come from the keychain (or
/// another non-plaintext source) in release builds. If the first copy the retriever finds
/// for a sensitive key is in a plaintext source (config file, environment, compiled
/// constants), the lookup fails with ``KeyRetrievalError/sensitiveKeyInPlaintextSource(identifier:matchedName:source:location:)``
/// instead of quietly serving the plaintext copy (seed 000, 2.2 and 6.1).
///
/// ```swift
/// let policy = KeyPolicy(sensitive: ["db_encryption_key", "signing_key"])
/// let retriever = KeyRetriever(sources: sources, policy: policy)
/// ```
///
/// A key counts as sensitive when the requested identifier, or any of its candidate names
/// (``KeyCandidates``), is listed: marking `db_encryption_key` also covers a request for
/// `dbEncryptionKey`.
///
/// Whatever the build, when a source *fails* (keychain locked, file unreadable) during
/// the lookup of a sensitive key, the lookup stops with that error rather than moving on
/// to a less secure source.
public struct KeyPolicy: Sendable, Hashable, CustomStringConvertible {
    /// When the plaintext rule applies.
    public enum Enforcement: String, Sendable, Hashable {
        /// In release builds only (``KeyRetriever/BuildEnvironment/isRelease``); debug builds
        /// may read sensitive keys from plaintext sources, as seed 000 allows for debugging.
        case releaseOnly
        /// In every build: useful to rehearse the release behaviour in debug builds and tests.
        case always
    }

    /// The identifiers marked sensitive (exact names as stored or requested).
    public var sensitiveIdentifiers: Set<String>
    /// When the plaintext rule applies (default: release builds only).
    public var enforcement: Enforcement

    /// A policy that marks nothing sensitive.
    public static let none = KeyPolicy()

    /// Creates a policy.
    /// - Parameters:
    ///   - sensitive: The identifiers that must never be served from a plaintext source.
    ///   - enforcement: When that rule applies (default ``Enforcement/releaseOnly``).
    public init(sensitive: Set<String> = [], enforcement: Enforcement = .releaseOnly) {
        self.sensitiveIdentifiers = sensitive
        self.enforcement = enforcement
    }

    /// Whether `identifier` is sensitive: it, or one of its candidate names, is listed.
    /// - Parameter identifier: A requested or stored identifier.
    /// - Returns: `true` when the key is sensitive.
    public func isSensitive(_ identifier: String) -> Bool {
        guard !sensitiveIdentifiers.isEmpty else { return false }
        if sensitiveIdentifiers.contains(identifier) { return true }
        return KeyCandidates.names(for: identifier).contains(where: sensitiveIdentifiers.contains)
    }

    /// Whether the plaintext rule applies in a build.
    /// - Parameter isRelease: Whether the build is a release build.
    /// - Returns: `true` when sensitive keys must not come from plaintext sources.
    public func isEnforced(isRelease: Bool) -> Bool {
        switch enforcement {
        case .releaseOnly: return isRelease
        case .always: return true
        }
    }

    /// Whether a copy of `identifier` in a `source` may be served in a build.
    /// - Parameters:
    ///   - identifier: The requested identifier.
    ///   - source: The kind of source that holds the copy.
    ///   - isRelease: Whether the build is a release build.
    /// - Returns: `false` for a sensitive key in a plaintext source when the rule applies.
    public func allows(_ identifier: String, from source: KeySourceKind, isRelease: Bool) -> Bool {
        !(source.isPlaintext && isEnforced(isRelease: isRelease) && isSensitive(identifier))
    }

    /// The sensitive identifiers, sorted, and the enforcement (identifiers are not secret).
    public var description: String {
        "KeyPolicy(sensitive: \(sensitiveIdentifiers.sorted()), enforcement: \(enforcement.rawValue))"
    }
}
