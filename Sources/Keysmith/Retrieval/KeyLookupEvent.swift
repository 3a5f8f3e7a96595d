/// One resolved lookup, as logged: identifier, outcome, source and version, and for a lookup
/// that found the key only in versions it could not accept, those versions. Never key bytes.
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

    /// A copy of the key that a lookup found but did not serve, because none of its
    /// versions was the one asked for.
    public struct RefusedCopy: Sendable, Hashable, CustomStringConvertible {
        /// The source's description, for example `Keychain` or `ConfigFile(json)`.
        public let sourceDescription: String
        /// The name the copy is stored under.
        public let matchedName: String
        /// Its versions, oldest first.
        public let versions: [String]

        /// For example `ConfigFile(json) "db_key" 2024.03.01, 2024.06.01`.
        public var description: String {
            "\(sourceDescription) \"\(matchedName)\" \(versions.joined(separator: ", "))"
        }
    }

    /// The identifier asked for.
    public let identifier: String
    /// The version asked for: `at or above 2025.01.01` for a minimum, the version itself for
    /// an exact lookup, `nil` for the newest.
    public let requestedVersion: String?
    /// Copies found with versions that do not match ``requestedVersion``, when the lookup
    /// ended without a key; empty otherwise.
    public let refusedCopies: [RefusedCopy]
    /// The sources that could not be consulted, each as `description: reason` (a key file
    /// named by `KEYSMITH_CONFIG` that does not exist, a malformed file, a locked keychain);
    /// never key bytes. A lookup that misses with failures did not look everywhere.
    public let sourceFailures: [String]
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
            let failed =
                sourceFailures.isEmpty
                ? ""
                : " Not every source could be consulted: " + sourceFailures.joined(separator: "; ")
                    + ". Fix \(sourceFailures.count == 1 ? "that source" : "those sources") and look again."
            if !refusedCopies.isEmpty, let requestedVersion {
                return "[KeyRetriever] WARNING: \(identifier) has no version \(requestedVersion) [\(environmentTag)]: found "
                    + refusedCopies.map(\.description).joined(separator: "; ")
                    + "; none was served. Store the version asked for (rotate), or ask for one that exists." + failed
            }
            if !sourceFailures.isEmpty {
                return "[KeyRetriever] WARNING: \(identifier) not found [\(environmentTag)].\(failed)"
            }
            return "[KeyRetriever] WARNING: \(identifier) not found in any source [\(environmentTag)]"
        case .failed(let message):
            return "[KeyRetriever] ERROR: \(identifier) lookup failed [\(environmentTag)]: \(message)"
        }
    }
}
