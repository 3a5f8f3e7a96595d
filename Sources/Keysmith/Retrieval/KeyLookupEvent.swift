/// One resolved lookup, as logged: identifier, outcome, source and version. Never key bytes.
public struct KeyLookupEvent: Sendable, CustomStringConvertible {
    /// How the lookup ended.
    public enum Outcome: Sendable {
        /// A key was found.
        case found
        /// No source holds the key.
        case notFound
        /// The lookup failed; the message says why (no key material).
        case failed(String)
    }

    /// The identifier asked for.
    public let identifier: String
    /// How the lookup ended.
    public let outcome: Outcome
    /// The source that served the key, when found.
    public let source: KeySourceKind?
    /// The source's description (`Keychain`, `ConfigFile(plist)`), when found.
    public let sourceDescription: String?
    /// The name that matched, when found.
    public let matchedName: String?
    /// The version served, when found.
    public let version: String?
    /// The environment tag of the lookup.
    public let environmentTag: String
    /// How long the lookup took (sources only; cache hits are not logged).
    public let duration: Duration

    /// `[KeyRetriever] api_key loaded from ConfigFile(plist), version=builtin` and the like.
    public var description: String {
        switch outcome {
        case .found:
            let alias = (matchedName.map { $0 == identifier ? "" : " as \"\($0)\"" }) ?? ""
            return "[KeyRetriever] \(identifier) loaded from \(sourceDescription ?? "?")\(alias), "
                + "version=\(version ?? "?") [\(environmentTag)]"
        case .notFound:
            return "[KeyRetriever] WARNING: \(identifier) not found in any source [\(environmentTag)]"
        case .failed(let message):
            return "[KeyRetriever] ERROR: \(identifier) lookup failed [\(environmentTag)]: \(message)"
        }
    }
}
