/// Where every key lives, how many copies exist, and which one wins.
///
/// Produced by ``KeyRetriever/audit()``. Its `description` is a readable report; it never
/// contains key bytes.
///
/// ```
/// Key audit [debug, debug build] priority: Keychain > ConfigFile > Environment > Compiled
/// api_key (2 copies)
///   * Keychain "api_key" 2024.07.01 (versions: 2024.06.01, 2024.07.01)  keychain service ...
///     ConfigFile(plist) "api_key" builtin  file Keys.plist, key "api_key"
/// ```
public struct KeyAudit: Sendable, CustomStringConvertible {
    /// One stored copy of a key (all the versions one source holds under one name).
    public struct Copy: Sendable, CustomStringConvertible {
        /// The kind of source.
        public let source: KeySourceKind
        /// The source's description.
        public let sourceDescription: String
        /// The stored name.
        public let name: String
        /// The versions stored under that name, oldest first.
        public let versions: [String]
        /// Where the copy lives (file and key, variable, keychain service and account).
        public let location: String
        /// Whether the retriever consults this source in this build (the environment source
        /// is not consulted in release builds; kinds missing from the priority never are).
        public let isConsulted: Bool

        /// The newest version of the copy.
        public var newestVersion: String {
            versions.max { KeyVersion($0) < KeyVersion($1) } ?? KeyVersion.unknown.rawValue
        }

        /// `Keychain "api_key" 2024.07.01 (versions: ...)  <location>`.
        public var description: String {
            var text = "\(sourceDescription) \"\(name)\" \(newestVersion)"
            if versions.count > 1 { text += " (versions: \(versions.joined(separator: ", ")))" }
            text += "  \(location)"
            if !isConsulted { text += "  [not consulted in this build]" }
            return text
        }
    }

    /// Something in the key layout that deserves attention.
    public enum Warning: Sendable, Hashable, CustomStringConvertible {
        /// A sensitive key has a copy in a plaintext source.
        case sensitiveKeyInPlaintextSource(identifier: String, source: KeySourceKind, location: String)
        /// Sources hold different versions of one key.
        case versionsDisagree(identifier: String, versions: [String])
        /// Two sources hold different bytes under the same version (compared in constant time).
        case differentKeysForSameVersion(identifier: String, version: String, sources: [String])
        /// The key is stored only under a `_test`/`_prod` suffix, which candidates never add.
        case onlyUnderEnvironmentSuffix(identifier: String)
        /// Copies exist, but this build cannot be served any of them.
        case notServedInThisBuild(identifier: String, reason: String)
        /// A source could not be listed; the audit is incomplete.
        case sourceUnavailable(source: String, message: String)

        /// The warning as one sentence with what to do.
        public var description: String {
            switch self {
            case .sensitiveKeyInPlaintextSource(let identifier, let source, let location):
                return "sensitive key \"\(identifier)\" has a plaintext copy in \(source) (\(location)); "
                    + "move it into the keychain and delete the plaintext copy"
            case .versionsDisagree(let identifier, let versions):
                return "sources disagree on the version of \"\(identifier)\": \(versions.joined(separator: "; ")); "
                    + "update the stale copies or remove them"
            case .differentKeysForSameVersion(let identifier, let version, let sources):
                return
                    "\"\(identifier)\" version \(version) has different bytes in \(sources.joined(separator: " and ")); "
                    + "one copy is wrong: give each key its own version"
            case .onlyUnderEnvironmentSuffix(let identifier):
                return "\"\(identifier)\" is stored only under a _test/_prod suffix; a lookup of the bare name will "
                    + "not find it (candidates remove suffixes, never add them)"
            case .notServedInThisBuild(let identifier, let reason):
                return "\"\(identifier)\" has copies but this build is not served any: \(reason)"
            case .sourceUnavailable(let source, let message):
                return "source \(source) could not be listed (\(message)); the audit is incomplete"
            }
        }
    }

    /// One key: the copy that wins and every other copy.
    public struct Entry: Sendable, CustomStringConvertible {
        /// The identifier (the name as stored in the highest-priority source).
        public let identifier: String
        /// Whether the policy marks it sensitive.
        public let isSensitive: Bool
        /// The copy a lookup of ``identifier`` gets in this build, if any.
        public let effective: Copy?
        /// The version a lookup of ``identifier`` gets in this build, if any.
        public let effectiveVersion: String?
        /// Every other copy reachable through the identifier's candidate names.
        public let shadowed: [Copy]
        /// Warnings about this key.
        public let warnings: [Warning]

        /// The number of copies (effective and shadowed).
        public var copyCount: Int { shadowed.count + (effective == nil ? 0 : 1) }

        /// The entry as lines: `*` marks the effective copy.
        public var description: String {
            var lines = [
                "\(identifier) (\(copyCount) \(copyCount == 1 ? "copy" : "copies"))\(isSensitive ? " sensitive" : "")"
            ]
            if let effective {
                lines.append("  * \(effective)")
            } else {
                lines.append("  * (none served in this build)")
            }
            for copy in shadowed { lines.append("    \(copy)") }
            for warning in warnings { lines.append("  ! \(warning)") }
            return lines.joined(separator: "\n")
        }
    }

    /// The environment tag audited.
    public let environmentTag: String
    /// Whether the audit ran as a release build.
    public let isRelease: Bool
    /// The source priority in force.
    public let priority: [KeySourceKind]
    /// Every key, in the order first seen (by source priority).
    public let entries: [Entry]
    /// Problems with sources as a whole (a source that could not be listed).
    public let sourceWarnings: [Warning]

    /// Every warning: the sources' and each entry's.
    public var warnings: [Warning] { sourceWarnings + entries.flatMap(\.warnings) }

    /// The entry for an identifier, if the audit found it.
    /// - Parameter identifier: The identifier as stored.
    /// - Returns: The entry, or `nil`.
    public func entry(_ identifier: String) -> Entry? {
        entries.first { ExactName($0.identifier) == ExactName(identifier) }
    }

    /// The readable report.
    public var description: String {
        var lines = [
            "Key audit [\(environmentTag), \(isRelease ? "release" : "debug") build] priority: "
                + priority.map(\.description).joined(separator: " > ")
        ]
        for warning in sourceWarnings { lines.append("! \(warning)") }
        for entry in entries { lines.append(entry.description) }
        lines.append(
            "\(entries.count) keys, \(entries.reduce(0) { $0 + $1.copyCount }) copies, \(warnings.count) warnings")
        return lines.joined(separator: "\n")
    }

    // MARK: Building

    /// Lists every source, groups the names that are spellings of each other, resolves
    /// each group the way a lookup would, and collects the warnings.
    static func build(snapshot: KeyRetriever.Snapshot) throws -> KeyAudit {
        let consulted = snapshot.ordered
        let all: [(source: any KeySource, consulted: Bool)] =
            consulted.map { ($0, isConsulted($0, snapshot)) } + snapshot.unconsulted.map { ($0, false) }

        var sourceWarnings: [Warning] = []
        var names: [String] = []
        var listed = 0
        for (source, _) in all {
            do {
                // Byte for byte: names that differ only in Unicode form are two keys.
                for name in try source.identifiers() where !names.contains(where: { ExactName($0) == ExactName(name) }) {
                    names.append(name)
                }
                listed += 1
            } catch {
                sourceWarnings.append(.sourceUnavailable(source: source.sourceDescription, message: "\(error)"))
            }
        }
        if listed == 0, !all.isEmpty {
            throw KeyRetrievalError.auditFailed(reasons: sourceWarnings.map(\.description))
        }

        // Names that are candidate spellings of each other (api_key and apiKey) form one key.
        var identifiers: [String] = []
        for name in names {
            let candidates = KeyCandidates.names(for: name)
            let merged = identifiers.contains { identifier in
                candidates.contains { ExactName($0) == ExactName(identifier) }
                    && KeyCandidates.names(for: identifier).contains { ExactName($0) == ExactName(name) }
            }
            if !merged { identifiers.append(name) }
        }

        var entries: [Entry] = []
        for identifier in identifiers {
            entries.append(entry(for: identifier, sources: all, snapshot: snapshot, allNames: Set(names.map { ExactName($0) })))
        }
        return KeyAudit(
            environmentTag: snapshot.environment.tag, isRelease: snapshot.environment.isRelease,
            priority: snapshot.priority, entries: entries, sourceWarnings: sourceWarnings)
    }

    private static func isConsulted(_ source: any KeySource, _ snapshot: KeyRetriever.Snapshot) -> Bool {
        !(source.kind == .environment && snapshot.environment.isRelease && !snapshot.allowsEnvironmentInRelease)
    }

    private static func entry(
        for identifier: String, sources: [(source: any KeySource, consulted: Bool)], snapshot: KeyRetriever.Snapshot,
        allNames: Set<ExactName>
    ) -> Entry {
        // Every copy reachable through the candidates, in lookup order.
        var copies: [(copy: Copy, records: [KeyInfo], sourceIndex: Int)] = []
        for (index, entry) in sources.enumerated() {
            for candidate in KeyCandidates.names(for: identifier) {
                guard let records = try? entry.source.lookup(candidate),
                    let first = KeyRetriever.select(records, .newest)
                else { continue }
                // One stored copy can answer several spellings (the environment's
                // PREFIX_NAME is upper-cased): count it once.
                if copies.contains(where: { $0.sourceIndex == index && $0.copy.location == first.location }) {
                    continue
                }
                let copy = Copy(
                    source: entry.source.kind, sourceDescription: entry.source.sourceDescription, name: candidate,
                    versions: KeyRetriever.sortedVersions(records), location: first.location,
                    isConsulted: entry.consulted)
                copies.append((copy, records, index))
            }
        }

        // The copy a lookup actually gets.
        var warnings: [Warning] = []
        var effectiveIndex: Int?
        var effectiveVersion: String?
        do {
            if let info = try KeyRetriever.lookup(identifier, selector: .newest, snapshot: snapshot, recorder: nil) {
                effectiveVersion = info.version
                // Copies are listed in lookup order, so the first one that matches is the winner.
                effectiveIndex = copies.firstIndex { candidate in
                    candidate.copy.isConsulted && candidate.copy.source == info.source
                        && candidate.copy.sourceDescription == info.sourceDescription
                        && ExactName(candidate.copy.name) == ExactName(info.matchedName)
                }
            }
        } catch {
            warnings.append(.notServedInThisBuild(identifier: identifier, reason: "\(error)"))
        }
        if effectiveIndex == nil, warnings.isEmpty, !copies.isEmpty {
            let reason =
                copies.allSatisfy { !$0.copy.isConsulted }
                ? "every copy is in a source this build does not consult (the environment source is skipped in "
                    + "release builds; kinds missing from the priority are never consulted)"
                : "no consulted source answered"
            warnings.append(.notServedInThisBuild(identifier: identifier, reason: reason))
        }

        // Sensitive by canonical form (KeyPolicy.canonicalName): the identifier, or the
        // name any copy is stored under.
        let identifierSensitive = snapshot.policy.isSensitive(identifier)
        let sensitive =
            identifierSensitive || copies.contains { snapshot.policy.isSensitive(identifier, matchedName: $0.copy.name) }
        if sensitive {
            for (copy, _, _) in copies where copy.source.isPlaintext {
                warnings.append(
                    .sensitiveKeyInPlaintextSource(identifier: identifier, source: copy.source, location: copy.location)
                )
            }
        }

        // Versions that disagree between sources (explicit, numeric versions only: an
        // unversioned fallback such as `builtin` or `env` is not a disagreement).
        var newestBySource: [(String, KeyVersion)] = []
        for (copy, _, _) in copies {
            let newest = KeyVersion(copy.newestVersion)
            if newest.isNumeric, !newestBySource.contains(where: { $0.0 == copy.sourceDescription }) {
                newestBySource.append((copy.sourceDescription, newest))
            }
        }
        if Set(newestBySource.map(\.1)).count > 1 {
            warnings.append(
                .versionsDisagree(
                    identifier: identifier, versions: newestBySource.map { "\($0.0) has \($0.1.rawValue)" }))
        }

        // The same version with different bytes in two copies.
        var reported: Set<KeyVersion> = []
        for (i, left) in copies.enumerated() {
            for right in copies[(i + 1)...] where right.sourceIndex != left.sourceIndex {
                for a in left.records {
                    let version = a.keyVersion
                    guard !reported.contains(version), version.isNumeric else { continue }
                    if let b = right.records.first(where: { $0.keyVersion == version }), !a.hasSameMaterial(as: b.data)
                    {
                        reported.insert(version)
                        warnings.append(
                            .differentKeysForSameVersion(
                                identifier: identifier, version: a.version,
                                sources: [left.copy.sourceDescription, right.copy.sourceDescription]))
                    }
                }
            }
        }

        if KeyCandidates.hasEnvironmentSuffix(identifier),
            copies.allSatisfy({ KeyCandidates.hasEnvironmentSuffix($0.copy.name) }),
            let bare = KeyCandidates.strippingEnvironmentSuffix(identifier), !allNames.contains(ExactName(bare))
        {
            warnings.append(.onlyUnderEnvironmentSuffix(identifier: identifier))
        }

        let effective = effectiveIndex.map { copies[$0].copy }
        let shadowed = copies.indices.filter { $0 != effectiveIndex }.map { copies[$0].copy }
        return Entry(
            identifier: identifier, isSensitive: sensitive, effective: effective, effectiveVersion: effectiveVersion,
            shadowed: shadowed, warnings: warnings)
    }
}
