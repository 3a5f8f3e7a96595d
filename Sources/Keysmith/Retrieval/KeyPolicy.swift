/// Which keys are sensitive, and what that means for where they may come from.
///
/// A sensitive key (an encryption key, a signing key) must come from the keychain (or
/// another non-plaintext source) in release builds. If the first copy the retriever finds
/// for a sensitive key is in a plaintext source (config file, environment, compiled
/// constants), the lookup fails with ``KeyRetrievalError/sensitiveKeyInPlaintextSource(identifier:matchedName:source:location:)``
/// instead of quietly serving the plaintext copy.
///
/// ```swift
/// let policy = KeyPolicy(sensitive: ["db_encryption_key", "signing_key"])
/// let retriever = KeyRetriever(sources: sources, policy: policy)
/// ```
///
/// A key counts as sensitive when the requested identifier, any of its candidate names
/// (``KeyCandidates``), or the stored name that answered has the same canonical form
/// (``canonicalName(_:)``: snake_case, lower-cased, without `_test`/`_prod`) as a listed
/// name: marking `db_encryption_key` also covers `dbEncryptionKey`, `DB_ENCRYPTION_KEY_PROD`
/// and a plist entry `dbEncryptionKey` found for a request of `db_encryption_key_prod`.
///
/// Whatever the build, when a source *fails* (keychain locked, file unreadable) during
/// the lookup of a sensitive key, the lookup stops with that error rather than moving on
/// to a less secure source.
public struct KeyPolicy: Sendable, Hashable, CustomStringConvertible {
    /// When the plaintext rule applies.
    public enum Enforcement: String, Sendable, Hashable {
        /// In release builds only (``KeyRetriever/BuildEnvironment/isRelease``); debug builds
        /// may read sensitive keys from plaintext sources, for debugging.
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

    /// Whether `identifier` is sensitive: it, or one of its candidate names, is listed, or
    /// canonicalises (``canonicalName(_:)``) to the canonical form of a listed name.
    ///
    /// Canonical forms make the policy independent of spelling: listing `db_key` covers
    /// `DB_KEY`, `dbKey` and `DB_KEY_PROD`; listing `dbEncryptionKey` covers
    /// `db_encryption_key_prod`.
    /// - Parameter identifier: A requested or stored identifier.
    /// - Returns: `true` when the key is sensitive.
    public func isSensitive(_ identifier: String) -> Bool {
        guard !sensitiveIdentifiers.isEmpty, !identifier.isEmpty else { return false }
        if sensitiveIdentifiers.contains(identifier) { return true }
        let candidates = KeyCandidates.names(for: identifier)
        if candidates.contains(where: sensitiveIdentifiers.contains) { return true }
        let listed = Set(sensitiveIdentifiers.map(KeyPolicy.canonicalName))
        return candidates.contains { listed.contains(KeyPolicy.canonicalName($0)) }
    }

    /// Whether a lookup is sensitive: the requested identifier (or one of its candidates)
    /// is sensitive, or the name the key was actually found under is.
    /// - Parameters:
    ///   - identifier: The requested identifier.
    ///   - matchedName: The stored name that answered, if known.
    /// - Returns: `true` when the key is sensitive.
    public func isSensitive(_ identifier: String, matchedName: String?) -> Bool {
        isSensitive(identifier) || (matchedName.map(isSensitive) ?? false)
    }

    /// The spelling-independent form of a name used to decide sensitivity: camelCase turned
    /// into snake_case, lower-cased, and every trailing `_test`/`_prod` removed
    /// (`dbEncryptionKey`, `DB_ENCRYPTION_KEY_PROD` and `db_encryption_key` all give
    /// `db_encryption_key`).
    /// - Parameter name: A listed, requested or stored name.
    /// - Returns: The canonical form.
    public static func canonicalName(_ name: String) -> String {
        var result = (KeyCandidates.snakeCase(fromCamelCase: name) ?? name).lowercased()
        while let stripped = KeyCandidates.strippingEnvironmentSuffix(result) { result = stripped }
        return result
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
