import Foundation

/// A conformance check any ``KeySource`` can run, including your own: the contract the
/// retriever relies on, checked against a live source.
///
/// ```swift
/// @Test func vaultSourceConforms() async throws {
///     let source = VaultKeySource(...)
///     try await SourceConformance.check(source, expecting: ["api_key": ["2024.06.01"]])
/// }
/// ```
///
/// What is checked:
/// - the description is a short, single line;
/// - a name the source does not hold gives an empty result, not an error, and so does the
///   empty name;
/// - listed names are unique, and each one looks up to at least one record;
/// - every record has `matchedName` equal to the name asked, `source` equal to the
///   source's kind, a non-empty version (distinct within one name) and non-empty bytes;
/// - matching is not fuzzy: a listed name with a `_test` suffix, a prefix or a letter
///   missing finds nothing unless it is listed itself (the retriever tries spellings
///   itself, in a fixed order);
/// - records' `description`, `debugDescription` and `location` never contain the key bytes;
/// - the source itself never shows them either: `String(describing:)`,
///   `String(reflecting:)` and `dump` of the source contain none of its keys' bytes (as
///   text, hex or base64);
/// - lookups are repeatable and safe from several concurrent tasks at once (child tasks,
///   so task-local state such as a test's scoped keychain stays in force);
/// - the keys you say the source holds are there, with the versions you say.
public enum SourceConformance {
    /// The problems found, if any. Thrown by ``check(_:expecting:)``.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The source's description.
        public let source: String
        /// One sentence per problem (never key bytes).
        public let problems: [String]

        /// `Source X does not conform: ...`, one problem per line.
        public var description: String {
            "Key source \(source) does not conform to KeySource:\n"
                + problems.map { "  - \($0)" }.joined(separator: "\n")
        }
    }

    /// Runs every check and throws if any fails.
    /// - Parameters:
    ///   - source: The source to check.
    ///   - expected: Keys the source is known to hold, with their versions (any order);
    ///     an empty version list only requires the key to exist.
    /// - Returns: The number of names checked.
    /// - Throws: ``Failure`` listing every problem found.
    @discardableResult
    public static func check(_ source: any KeySource, expecting expected: [String: [String]] = [:]) async throws -> Int
    {
        let (problems, count) = await findProblems(source, expecting: expected)
        if !problems.isEmpty { throw Failure(source: source.sourceDescription, problems: problems) }
        return count
    }

    /// Runs every check and returns the problems instead of throwing.
    /// - Parameters:
    ///   - source: The source to check.
    ///   - expected: Keys the source is known to hold, with their versions.
    /// - Returns: One sentence per problem; empty when the source conforms.
    public static func problems(in source: any KeySource, expecting expected: [String: [String]] = [:]) async
        -> [String]
    {
        await findProblems(source, expecting: expected).problems
    }

    private static func findProblems(
        _ source: any KeySource, expecting expected: [String: [String]]
    ) async -> (problems: [String], count: Int) {
        var problems: [String] = []
        let description = source.sourceDescription
        if description.isEmpty || description.contains(where: \.isNewline) || description.count > 80 {
            problems.append("sourceDescription must be a short single line (got \(description.count) characters)")
        }

        let absent = "keysmith-conformance-absent-\(UInt32.random(in: .min ... .max))"
        for name in [absent, ""] {
            do {
                let records = try source.lookup(name)
                if !records.isEmpty {
                    problems.append("lookup(\"\(name)\") must be empty, got \(records.count) records")
                }
            } catch {
                problems.append("lookup(\"\(name)\") of an absent name must return [], not throw: \(error)")
            }
        }

        let names: [String]
        do {
            names = try source.identifiers()
        } catch {
            problems.append("identifiers() threw: \(error)")
            return (problems, 0)
        }
        // Names compare byte for byte, as the keychain compares them: "jos\u{E9}" and
        // "jose\u{301}" are two keys, each listed once.
        let listed = Set(names.map { ExactName($0) })
        if listed.count != names.count { problems.append("identifiers() lists some names more than once") }

        // The source's own texts, checked against every record's bytes below.
        var dumped = ""
        dump(source, to: &dumped)
        let sourceTexts = [String(describing: source), String(reflecting: source), dumped]
        var sourceLeaks: Set<ExactName> = []

        var snapshot: [ExactName: [String]] = [:]
        for exactName in listed.sorted() {
            let name = exactName.text
            let records: [KeyInfo]
            do {
                records = try source.lookup(name)
            } catch {
                problems.append("lookup(\"\(name)\") of a listed name threw: \(error)")
                continue
            }
            if records.isEmpty { problems.append("identifiers() lists \"\(name)\" but lookup finds nothing") }
            var versions: Set<KeyVersion> = []
            for record in records {
                if ExactName(record.matchedName) != exactName {
                    problems.append("a record for \"\(name)\" has matchedName \"\(record.matchedName)\"")
                }
                if record.source != source.kind {
                    problems.append(
                        "a record for \"\(name)\" has source \(record.source), the source is \(source.kind)")
                }
                if record.version.isEmpty { problems.append("a record for \"\(name)\" has an empty version") }
                if !versions.insert(record.keyVersion).inserted {
                    problems.append("\"\(name)\" has version \(record.version) more than once")
                }
                if record.data.isEmpty { problems.append("\"\(name)\" version \(record.version) has no bytes") }
                if leaks(record) {
                    problems.append(
                        "the description, debugDescription or location of \"\(name)\" contains the key bytes")
                }
                if !sourceLeaks.contains(exactName), leaks(record.data, into: sourceTexts) {
                    sourceLeaks.insert(exactName)
                    problems.append(
                        "String(describing:), String(reflecting:) or dump of the source contains the bytes of "
                            + "\"\(name)\"; give the source a redacting description, debugDescription and customMirror")
                }
            }
            snapshot[exactName] = records.map(\.version).sorted()

            // Fuzzy matches (prefixes, longer names, the other Unicode form of the same
            // text) are out; case rules of the source's own naming scheme (the
            // environment's PREFIX_NAME) are its business.
            let others = [
                name + "_test", "x" + name, name.count > 1 ? String(name.dropLast()) : nil,
                name.decomposedStringWithCanonicalMapping, name.precomposedStringWithCanonicalMapping,
            ].compactMap { $0 }
            for spelling in others where !listed.contains(ExactName(spelling)) {
                if let found = try? source.lookup(spelling), !found.isEmpty {
                    problems.append(
                        "lookup(\"\(spelling)\") found \"\(name)\": matching must be exact (the retriever tries spellings)"
                    )
                }
            }
        }

        for (name, versions) in expected.sorted(by: { $0.key < $1.key }) {
            guard let found = try? source.lookup(name), !found.isEmpty else {
                problems.append("expected key \"\(name)\" is missing")
                continue
            }
            if !listed.contains(ExactName(name)) { problems.append("expected key \"\(name)\" is not listed by identifiers()") }
            let have = Set(found.map(\.keyVersion))
            for version in versions where !have.contains(KeyVersion(version)) {
                problems.append("expected key \"\(name)\" lacks version \(version)")
            }
        }

        // Repeatable, and safe from several tasks at once.
        let sample = Array(listed.sorted().prefix(8))
        let single = snapshot
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var count = 0
                    for name in sample where (try? source.lookup(name.text))?.map(\.version).sorted() != single[name] {
                        count += 1
                    }
                    return count
                }
            }
            return await group.reduce(0, +)
        }
        if mismatches > 0 {
            problems.append("\(mismatches) concurrent lookups returned different versions than a single lookup")
        }
        return (problems, listed.count)
    }

    /// Whether a record's texts contain its bytes (as text, when they are text of at least
    /// four characters, or as hex or base64).
    private static func leaks(_ record: KeyInfo) -> Bool {
        leaks(record.data, into: [record.description, record.debugDescription, record.location, "\(record)"])
    }

    /// Whether any text contains `data` as UTF-8 text, lower- or upper-case hex, or base64
    /// (with or without padding). Keys shorter than four bytes are not checked (too many
    /// false alarms).
    private static func leaks(_ data: Data, into texts: [String]) -> Bool {
        guard data.count >= 4 else { return false }
        var needles: [String] = []
        if let text = String(data: data, encoding: .utf8) { needles.append(text) }
        let hex = data.map { String(format: "%02x", $0) }.joined()
        needles.append(hex)
        needles.append(hex.uppercased())
        let base64 = data.base64EncodedString()
        needles.append(base64)
        var unpadded = base64
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        needles.append(unpadded)
        if needles.contains(where: { needle in texts.contains { $0.contains(needle) } }) { return true }
        return texts.contains { containsDumpedBytes($0, data) }
    }

    /// Whether a `dump` output lists `data`'s bytes one per line (`- 83`, `- 51`, ...), as
    /// the default mirror of `Data` or `[UInt8]` prints them.
    private static func containsDumpedBytes(_ text: String, _ data: Data) -> Bool {
        let wanted = Array(data)
        var run: [UInt8] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("- "), let byte = UInt8(trimmed.dropFirst(2)) {
                run.append(byte)
                if run.count >= wanted.count, Array(run.suffix(wanted.count)) == wanted { return true }
            } else {
                run.removeAll()
            }
        }
        return false
    }
}
