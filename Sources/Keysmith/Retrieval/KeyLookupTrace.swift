/// A step-by-step account of one lookup, for troubleshooting: the priority, every source
/// and candidate tried with its outcome and timing, and the winner. Never key bytes.
///
/// Produced by ``KeyRetriever/explain(_:minVersion:version:)``; its `description` is a
/// readable report (a troubleshooting table, as output):
///
/// ```
/// Lookup of "apiKey" (newest version) [debug, debug build]
///   priority: Keychain > ConfigFile > Environment > Compiled
///   candidates: apiKey, apikey, APIKEY, api_key
///   Keychain            apiKey   miss          0.21 ms
///   ...
///   ConfigFile(plist)   api_key  hit 2024.06.01 (versions: 2024.06.01)  0.01 ms
///   => ConfigFile(plist) "api_key" version 2024.06.01 (file Keys.plist, key "api_key")
/// ```
public struct KeyLookupTrace: Sendable, CustomStringConvertible {
    /// Which version was asked for.
    public enum Request: Sendable, Hashable, CustomStringConvertible {
        /// The newest version.
        case newest
        /// The newest version at or above a minimum.
        case minimum(String)
        /// Exactly one version.
        case exact(String)

        /// `newest version`, `version >= 2024.07.01`, `version == 2024.06.01`.
        public var description: String {
            switch self {
            case .newest: return "newest version"
            case .minimum(let version): return "version >= \(version)"
            case .exact(let version): return "version == \(version)"
            }
        }
    }

    /// The outcome of one step.
    public enum Outcome: Sendable, CustomStringConvertible {
        /// The candidate was found; `selected` is the version served.
        case hit(selected: String, versions: [String])
        /// The candidate exists but no version satisfies the request.
        case noMatchingVersion(versions: [String])
        /// The source does not hold the candidate.
        case miss
        /// The source was not consulted; the reason says why.
        case skipped(reason: String)
        /// The source failed; the message says why (no key material).
        case failed(message: String)
        /// The copy was found but the policy refused to serve it.
        case refused(reason: String)

        /// A short outcome, such as `hit 2024.06.01 (versions: 2024.06.01, 2024.07.01)`.
        public var description: String {
            switch self {
            case .hit(let selected, let versions):
                return "hit \(selected) (versions: \(versions.joined(separator: ", ")))"
            case .noMatchingVersion(let versions):
                return "no matching version (has: \(versions.joined(separator: ", ")))"
            case .miss: return "miss"
            case .skipped(let reason): return "skipped: \(reason)"
            case .failed(let message): return "FAILED: \(message)"
            case .refused(let reason): return "REFUSED: \(reason)"
            }
        }
    }

    /// One source consulted for one candidate (or skipped as a whole, `candidate == nil`).
    public struct Step: Sendable, CustomStringConvertible {
        /// The kind of source.
        public let source: KeySourceKind
        /// The source's description.
        public let sourceDescription: String
        /// The candidate name tried; `nil` when the whole source was skipped or failed.
        public let candidate: String?
        /// What happened.
        public let outcome: Outcome
        /// How long the step took.
        public let duration: Duration

        /// One line: source, candidate, outcome, time.
        public var description: String {
            let name = candidate ?? "-"
            return pad(sourceDescription, 22) + pad(name, 22) + outcome.description + "  "
                + KeyLookupTrace.format(duration)
        }
    }

    /// The copy that was served.
    public struct Winner: Sendable, CustomStringConvertible {
        /// The kind of source.
        public let source: KeySourceKind
        /// The source's description.
        public let sourceDescription: String
        /// The name that matched.
        public let matchedName: String
        /// The version served.
        public let version: String
        /// Where the copy lives.
        public let location: String

        /// `ConfigFile(plist) "api_key" version 2024.06.01 (file ..., key "api_key")`.
        public var description: String {
            "\(sourceDescription) \"\(matchedName)\" version \(version) (\(location))"
        }
    }

    /// How the lookup ended.
    public enum Result: Sendable {
        /// A copy was served.
        case found(Winner)
        /// No source holds a matching copy.
        case notFound
        /// The lookup failed with an error (policy refusal, source failure).
        case failed(any Error)
    }

    /// The identifier asked for.
    public let identifier: String
    /// Which version was asked for.
    public let request: Request
    /// The environment tag of the lookup.
    public let environmentTag: String
    /// Whether the lookup ran as a release build.
    public let isRelease: Bool
    /// Whether the policy marks the identifier sensitive.
    public let isSensitive: Bool
    /// The source priority in force.
    public let priority: [KeySourceKind]
    /// The sources consulted, in order, by description.
    public let sources: [String]
    /// The candidate names, in order.
    public let candidates: [String]
    /// Every step, in order.
    public let steps: [Step]
    /// How the lookup ended.
    public let result: Result
    /// Whether the retriever's cache already held this key (explain always asks the
    /// sources, so the steps above are real).
    public let wasCached: Bool
    /// The whole lookup's duration.
    public let duration: Duration
    /// Troubleshooting hints drawn from the outcome.
    public let hints: [String]

    /// The winning copy, when one was served.
    public var winner: Winner? {
        if case .found(let winner) = result { return winner }
        return nil
    }

    /// The readable report.
    public var description: String {
        var lines: [String] = []
        lines.append(
            "Lookup of \"\(identifier)\" (\(request)) [\(environmentTag), \(isRelease ? "release" : "debug") build]"
                + (isSensitive ? " sensitive" : ""))
        lines.append("  priority: " + priority.map(\.description).joined(separator: " > "))
        lines.append("  sources: " + sources.joined(separator: ", "))
        lines.append("  candidates: " + candidates.joined(separator: ", "))
        for step in steps { lines.append("  " + step.description) }
        switch result {
        case .found(let winner): lines.append("  => \(winner)")
        case .notFound: lines.append("  => not found")
        case .failed(let error): lines.append("  => error: \(error)")
        }
        lines.append("  total: \(KeyLookupTrace.format(duration))\(wasCached ? " (a cached copy exists)" : "")")
        for hint in hints { lines.append("  hint: \(hint)") }
        return lines.joined(separator: "\n")
    }

    /// `0.21 ms`, `12 µs`.
    static func format(_ duration: Duration) -> String {
        let nanoseconds = Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
        if nanoseconds >= 1e6 {
            return "\((nanoseconds / 1e4).rounded() / 100) ms"
        }
        return "\((nanoseconds / 10).rounded() / 100) µs"
    }
}

/// Pads `text` with spaces to `width` columns (at least one space after it).
private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}

/// Collects the steps of one lookup (used only by `explain` and `audit`, never on the
/// normal lookup path).
final class KeyLookupRecorder {
    private(set) var steps: [KeyLookupTrace.Step] = []
    private let clock = ContinuousClock()

    func now() -> ContinuousClock.Instant { clock.now }

    func record(
        _ source: any KeySource, candidate: String?, outcome: KeyLookupTrace.Outcome,
        since start: ContinuousClock.Instant
    ) {
        steps.append(
            .init(
                source: source.kind, sourceDescription: source.sourceDescription, candidate: candidate,
                outcome: outcome, duration: clock.now - start))
    }
}
