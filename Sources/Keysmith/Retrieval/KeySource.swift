/// A place the retriever can look keys up in: the keychain, a config file, the process
/// environment, compiled constants, a remote service, or your own.
///
/// A source answers two questions, both by exact name (the retriever, not the source,
/// tries candidate spellings):
///
/// - ``lookup(_:)``: every version it holds under one name;
/// - ``identifiers()``: every name it holds, for the audit.
///
/// Sources must be safe to call from any thread. Run ``SourceConformance/check(_:expecting:)``
/// in your tests to check a custom source against the contract below.
///
/// ```swift
/// struct VaultKeySource: KeySource {
///     var kind: KeySourceKind { .remote }
///     var sourceDescription: String { "Vault" }
///     func lookup(_ name: String) throws -> [KeyInfo] { ... }
///     func identifiers() throws -> [String] { ... }
/// }
/// ```
public protocol KeySource: Sendable {
    /// The kind of source, used for priority and for the plaintext policy.
    var kind: KeySourceKind { get }

    /// A short, human-readable name for logs and traces, such as `Keychain` or
    /// `ConfigFile(plist)`. Never key material.
    var sourceDescription: String { get }

    /// Every version the source holds under exactly `name`.
    ///
    /// Matching is exact: the source must not try other spellings (the retriever already
    /// does, in a fixed order). Each returned record has `matchedName == name`, `source ==
    /// kind`, and a version; records may come in any order.
    /// - Parameter name: The exact name to look up.
    /// - Returns: The records for `name`, one per version; empty when the source has none.
    /// - Throws: An error when the source cannot answer (keychain locked, file unreadable):
    ///   not finding the name is *not* an error.
    func lookup(_ name: String) throws -> [KeyInfo]

    /// Every name the source holds, each once, for the audit.
    /// - Returns: The stored names (in any order). A source that cannot enumerate its
    ///   names (an environment without a prefix) returns the ones it knows, possibly none.
    /// - Throws: An error when the source cannot answer.
    func identifiers() throws -> [String]
}
