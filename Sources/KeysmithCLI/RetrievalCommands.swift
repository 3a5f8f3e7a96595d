import Foundation
import Keysmith
import KeychainServices

// The key retrieval commands: resolve, explain, audit and rotate expose KeyRetriever and
// KeychainKeySource; migrate-service and generate live in their own files. None of them
// prints key bytes unless `resolve --reveal` asks.

/// The key retrieval commands, in help order.
public enum RetrievalCommands {
    /// resolve, explain, audit, rotate, migrate-service, generate.
    public static let all: [Command] = [
        resolveCommand, explainCommand, auditCommand, rotateCommand, MigrateServiceCommand.command,
        GenerateCommand.command,
    ]
}

// MARK: - resolve

private let resolveCommand = Command(
    name: "resolve", group: .retrieval,
    synopsis: "ID \(RetrievalOptions.sourceSynopsis) [--min-version VERSION | --version VERSION] [--reveal]",
    summary: "Find a key by identifier across the keychain, config files and environment",
    details: "Looks ID up as an app's KeyRetriever would and prints which copy answers: the identifier asked "
        + "for, the name that matched, the version, the source and where exactly the copy lives. The key itself "
        + "is printed only with --reveal. Exit status 44 when no source holds the key (in the version asked "
        + "for), 3 when a --sensitive key's first copy is in a plaintext source.\n\n"
        + RetrievalOptions.sourcesParagraph + "\n\n"
        + "With --json: {\"identifier\", \"matchedName\", \"version\", \"source\" (keychain, configFile, "
        + "environment), \"sourceDescription\", \"location\"}, plus \"secret\" (when the key is UTF-8) and "
        + "\"secretBase64\" with --reveal. With --reveal --quiet: only the key and a newline, for scripts.\n\n"
        + "Examples:\n\n"
        + "  keysmith resolve api_key --config Keys.plist\n"
        + "  keysmith resolve db_key --min-version 2024.07.01 --json\n"
        + "  KEY=$(keysmith resolve api_key --config Keys.plist --reveal --quiet)",
    options: RetrievalOptions.sourceOptions + RetrievalOptions.versionOptions + [
        OptionSpec(
            long: "reveal",
            help: "Also print the key: a \"secret\" row (text in quotes, else hexadecimal), \"secret\" and "
                + "\"secretBase64\" in JSON, or the bare key with --quiet (on a terminal, a key with control "
                + "characters is shown escaped, with a note)."),
    ],
    positionalNames: ["ID"]
) { invocation throws(CommandLineError) in
    let identifier = try invocation.identifierArgument()
    let request = try VersionRequest(invocation)
    let setup = try RetrievalSetup(invocation)
    let retriever = setup.retriever()
    let found: KeyInfo?
    do {
        switch request {
        case .newest: found = try retriever.retrieve(identifier)
        case .minimum(let version): found = try retriever.retrieve(identifier, minVersion: version)
        case .exact(let version): found = try retriever.retrieve(identifier, version: version)
        }
    } catch {
        throw CommandLineError.retrieval(error, invocation)
    }
    guard let info = found else {
        throw CommandLineError.keyNotFound(identifier, request: request, setup: setup, invocation: invocation)
    }
    if info.source == .keychain { setup.warnAboutKeysInSeveralGroups(invocation, name: info.matchedName) }
    let output = invocation.output
    let reveal = invocation.arguments.contains("reveal")
    if reveal && output.quiet {
        output.writeSecret(info.data)
        return
    }
    if output.json {
        output.printJSON(RetrievalPresentation.json(info, reveal: reveal))
        return
    }
    var table = RetrievalPresentation.table(info)
    if reveal { table.add("secret", SecretText.human(info.data)) }
    for line in table.lines() { output.info(line) }
}

// MARK: - explain

private let explainCommand = Command(
    name: "explain", group: .retrieval,
    synopsis: "ID \(RetrievalOptions.sourceSynopsis) [--min-version VERSION | --version VERSION]",
    summary: "Show every step of a key lookup: sources, candidates, outcomes, timings, the winner",
    details: "Runs the lookup of ID and prints its trace: the priority, the sources and candidate names, one line "
        + "per source and candidate tried with its outcome (hit with the versions found, miss, no matching "
        + "version, skipped, FAILED, REFUSED) and its duration, then the winner and its version, and hints for "
        + "the usual mistakes (a misspelled name, a version too low, a source not consulted). Never key bytes. The exit status is the one "
        + "resolve would give: 0 found, 44 not found, 3 refused by --sensitive, 1 a source failed.\n\n"
        + RetrievalOptions.sourcesParagraph + "\n\n"
        + "With --json: {\"identifier\", \"request\": {\"kind\", \"version\"?, \"description\"}, \"environment\", "
        + "\"sensitive\", \"priority\", \"sources\", \"candidates\", \"steps\": [{\"source\", "
        + "\"sourceDescription\", \"candidate\", \"outcome\" (hit, miss, noMatchingVersion, skipped, failed, "
        + "refused), \"selected\"?, \"versions\"?, \"reason\"?, \"durationMicroseconds\"}], \"result\" (found, "
        + "notFound, failed), \"winner\": {\"source\", \"sourceDescription\", \"matchedName\", \"version\", "
        + "\"location\"} or null, \"error\"?, \"durationMicroseconds\", \"hints\"}.\n\n"
        + "Examples:\n\n"
        + "  keysmith explain apiKey --config Keys.plist\n"
        + "  keysmith explain db_key --min-version 2024.07.01 --json",
    options: RetrievalOptions.sourceOptions + RetrievalOptions.versionOptions,
    positionalNames: ["ID"]
) { invocation throws(CommandLineError) in
    let identifier = try invocation.identifierArgument()
    let request = try VersionRequest(invocation)
    let setup = try RetrievalSetup(invocation)
    let trace = setup.retriever().explain(
        identifier, minVersion: request.minimumVersion, version: request.exactVersion)
    var failure: CommandLineError?
    switch trace.result {
    case .found: break
    case .notFound:
        failure = CommandLineError.keyNotFound(identifier, request: request, setup: setup, invocation: invocation)
    case .failed(let error):
        failure = CommandLineError.retrieval(error, invocation)
    }
    let output = invocation.output
    if output.json {
        output.printJSON(RetrievalPresentation.json(trace, error: failure))
    } else {
        for line in trace.description.split(separator: "\n", omittingEmptySubsequences: false) {
            output.info(String(line))
        }
    }
    if let failure { throw failure }
}

// MARK: - audit

private let auditCommand = Command(
    name: "audit", group: .retrieval,
    synopsis: RetrievalOptions.sourceSynopsis,
    summary: "List every key: the copy that wins, its version, shadowed copies and warnings",
    details: "Lists every key name in every source, groups the spellings of one key (api_key and apiKey), and "
        + "prints one row per copy: the effective copy (what resolve serves) first, then every shadowed copy "
        + "with its source, name, versions and location. Warnings follow: a --sensitive key with a plaintext "
        + "copy, sources that disagree on the version, one version with different bytes in two sources, a key "
        + "stored only under a _test/_prod suffix, a source that could not be listed. Never key bytes. A "
        + "terminal shows progress for large audits.\n\n"
        + RetrievalOptions.sourcesParagraph + "\n\n"
        + "With --json: {\"environment\", \"priority\", \"sources\", \"count\", \"copies\", \"keys\": "
        + "[{\"identifier\", \"sensitive\", \"effective\": COPY or null, \"effectiveVersion\", \"shadowed\": "
        + "[COPY], \"warnings\": [text]}], \"sourceWarnings\": [text], \"warnings\": [text]}, where COPY is "
        + "{\"source\", \"sourceDescription\", \"name\", \"versions\", \"newestVersion\", \"location\", "
        + "\"consulted\"}.\n\n"
        + "Examples:\n\n"
        + "  keysmith audit --config Keys.plist\n"
        + "  keysmith audit --config Keys.plist --env-prefix XY --json | jq '.warnings'\n\n"
        + "With --secret-service, instead: which Secret Service clients (keysmith secret-service) read which items' "
        + "secrets (time, process id, executable, collection, service, account, label; never the secret), latest last. "
        + "With --json: {\"keychain\", \"count\", \"reads\": [{\"time\", \"pid\", \"executable\", \"collection\", "
        + "\"item\", \"method\", \"service\", \"account\", \"label\"}]}.",
    options: RetrievalOptions.sourceOptions + [SecretServiceCommand.auditOption]
) { invocation throws(CommandLineError) in
    if invocation.arguments.contains("secret-service") {
        try SecretServiceCommand.showReads(invocation)
        return
    }
    let setup = try RetrievalSetup(invocation)
    let output = invocation.output
    let audit: KeyAudit
    let probe = output.progress("Auditing keys")
    do {
        if probe.isVisible {
            // Progress on a terminal: count the names first, then report each one the audit
            // reaches (through sources that tell the progress line about lookups).
            var names: Set<String> = []
            for source in setup.sources { names.formUnion((try? source.identifiers()) ?? []) }
            let progress = AuditProgress(output.progress("Auditing keys", total: names.count), names: names)
            defer { progress.finish() }
            audit = try setup.retriever(sources: setup.sources.map { ReportingKeySource($0, progress) }).audit()
        } else {
            audit = try setup.retriever().audit()
        }
    } catch {
        throw CommandLineError.retrieval(error, invocation)
    }
    setup.warnAboutKeysInSeveralGroups(invocation)
    let copies = audit.entries.reduce(0) { $0 + $1.copyCount }
    if output.json {
        let keys = audit.entries.map { entry -> [String: Any] in
            [
                "identifier": entry.identifier, "sensitive": entry.isSensitive,
                "effective": entry.effective.map(RetrievalPresentation.json) ?? NSNull(),
                "effectiveVersion": entry.effectiveVersion ?? NSNull(),
                "shadowed": entry.shadowed.map(RetrievalPresentation.json),
                "warnings": entry.warnings.map(\.description),
            ]
        }
        output.printJSON([
            "environment": audit.environmentTag, "priority": audit.priority.map(\.description),
            "sources": setup.sources.map(\.sourceDescription), "count": audit.entries.count, "copies": copies,
            "keys": keys, "sourceWarnings": audit.sourceWarnings.map(\.description),
            "warnings": audit.warnings.map(\.description),
        ])
        return
    }
    output.info("Key audit of \(setup.description)")
    output.info("priority: " + audit.priority.map(\.description).joined(separator: " > "))
    output.info("")
    var table = ColumnTable(headers: ["KEY", "COPY", "SOURCE", "NAME", "VERSION", "VERSIONS", "LOCATION"])
    for entry in audit.entries {
        let key = entry.identifier + (entry.isSensitive ? " (sensitive)" : "")
        if let effective = entry.effective {
            table.add([
                key, "effective", effective.sourceDescription, effective.name,
                entry.effectiveVersion ?? effective.newestVersion, effective.versions.joined(separator: ", "),
                effective.location,
            ])
        } else {
            table.add([key, "(none served)", "-", "-", "-", "-", "-"])
        }
        for copy in entry.shadowed {
            table.add([
                "", copy.isConsulted ? "shadowed" : "not consulted", copy.sourceDescription, copy.name,
                copy.newestVersion, copy.versions.joined(separator: ", "), copy.location,
            ])
        }
    }
    if audit.entries.isEmpty {
        output.info("No keys in any source.")
    } else {
        for line in table.lines() { output.info(line) }
    }
    let warnings = audit.sourceWarnings.map { "\($0)" } + audit.entries.flatMap { entry in
        entry.warnings.map { "\(entry.identifier): \($0)" }
    }
    if !warnings.isEmpty {
        output.info("")
        output.info("Warnings:")
        for warning in warnings {
            for (index, line) in TextWrap.wrap(warning, indent: 4).enumerated() {
                output.info(index == 0 ? "  ! " + line.dropFirst(4) : line)
            }
        }
    }
    output.info("")
    output.info(
        "\(audit.entries.count) \(audit.entries.count == 1 ? "key" : "keys"), \(copies) "
            + "\(copies == 1 ? "copy" : "copies"), \(warnings.count) \(warnings.count == 1 ? "warning" : "warnings")")
}

/// Counts the names an audit has reached, for its progress line.
final class AuditProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let line: ProgressLine
    private let names: Set<String>
    private var reached: Set<String> = []

    init(_ line: ProgressLine, names: Set<String>) {
        self.line = line
        self.names = names
    }

    /// A lookup of `name` started.
    func lookingUp(_ name: String) {
        lock.lock()
        defer { lock.unlock() }
        guard names.contains(name), reached.insert(name).inserted else { return }
        line.update(reached.count)
    }

    func finish() {
        lock.lock()
        defer { lock.unlock() }
        line.finish()
    }
}

/// A source that tells an ``AuditProgress`` about each lookup and otherwise forwards.
struct ReportingKeySource: KeySource {
    let base: any KeySource
    let progress: AuditProgress

    init(_ base: any KeySource, _ progress: AuditProgress) {
        self.base = base
        self.progress = progress
    }

    var kind: KeySourceKind { base.kind }
    var sourceDescription: String { base.sourceDescription }

    func lookup(_ name: String) throws -> [KeyInfo] {
        progress.lookingUp(name)
        return try base.lookup(name)
    }

    func identifiers() throws -> [String] { try base.identifiers() }
}

// MARK: - rotate

private let rotateCommand = Command(
    name: "rotate", group: .retrieval,
    synopsis: "ID (--stdin | --stdin-exact | --generate BYTES) --version VERSION [--service SERVICE] [--replace]",
    summary: "Store a new version of a key in the keychain, keeping the old ones",
    details: "Stores a new version of ID in the keychain source (service --service, default "
        + "\"\(RetrievalOptions.defaultService)\"): one generic password per version, account ID@VERSION, "
        + "label ID, comment VERSION. Older versions stay, so data encrypted with them can still be decrypted "
        + "(resolve ID --version OLD); resolve serves the newest. The key comes from standard input (--stdin, "
        + "a line: one trailing newline is removed, and on a terminal a prompt without echo; --stdin-exact, every "
        + "byte as it comes, for programs) or is drawn at random (--generate BYTES). The key is never "
        + "printed. A version that already exists is refused unless --replace.\n\n"
        + "Prints what was stored and the versions kept. With --json: {\"identifier\", \"service\", \"version\", "
        + "\"bytes\", \"origin\" (stdin or generated), \"replaced\", \"versions\", \"newest\"}.\n\n"
        + "Examples:\n\n"
        + "  printf '%s' \"$NEW_KEY\" | keysmith rotate api_key --stdin --version 2024.07.01\n"
        + "  keysmith rotate signing_key --stdin-exact --version 2024.07.01 < signing.key\n"
        + "  keysmith rotate db_key --generate 32 --version 2024.07.01",
    options: [
        OptionSpec(
            long: "stdin",
            help: "Read the key from standard input as a line: one trailing newline (LF or CR LF) is removed; on a "
                + "terminal, prompt without echo."),
        SecretInput.exactOption(of: "key"),
        OptionSpec(long: "generate", value: .required("BYTES"), help: "Draw a random key of BYTES bytes (1 to 4096)."),
        OptionSpec(
            long: "version", value: .required("VERSION"),
            help: "The new version, such as 2024.07.01 (compared numerically; no \"@\")."),
        RetrievalOptions.service,
        OptionSpec(
            long: "replace",
            help: "Overwrite the bytes of a version that already exists (data encrypted with the old bytes can no "
                + "longer be decrypted)."),
    ],
    positionalNames: ["ID"]
) { invocation throws(CommandLineError) in
    let arguments = invocation.arguments
    let identifier = try invocation.identifierArgument()
    guard let version = arguments.value("version"), !version.isEmpty else {
        throw invocation.usageError("--version VERSION is required, for example --version 2024.07.01")
    }
    guard !version.contains("@") else {
        throw invocation.usageError("the version may not contain \"@\" (it separates name and version in the keychain)")
    }
    let newKey = try NewKeyBytes(invocation)
    let source = KeychainKeySource(
        service: try RetrievalSetup.service(invocation), accessGroup: invocation.settings.queryAccessGroup)
    let existing: [String]
    do {
        existing = try source.versions(of: identifier)
    } catch {
        throw CommandLineError.retrieval(error, invocation)
    }
    let replacing = existing.contains { KeyVersion($0) == KeyVersion(version) }
    if replacing && !arguments.contains("replace") {
        throw CommandLineError.failure(
            "version \(version) of \"\(identifier)\" already exists in the keychain (service \"\(source.service)\"); "
                + "nothing was stored.",
            recovery: "a rotation adds a new version: choose one above \(existing.last ?? version), or pass --replace "
                + "to overwrite the bytes of version \(version).")
    }
    var key = try newKey.read(for: identifier, version: version, invocation: invocation)
    defer { key.resetBytes(in: 0..<key.count) }
    let versions: [String]
    do {
        try source.store(key, for: identifier, version: version)
        versions = try source.versions(of: identifier)
    } catch {
        throw CommandLineError.retrieval(error, invocation)
    }
    let newest = versions.max { KeyVersion($0) < KeyVersion($1) } ?? version
    let origin = newKey.isGenerated ? "generated" : "stdin"
    let output = invocation.output
    if output.json {
        output.printJSON([
            "identifier": identifier, "service": source.service, "version": version, "bytes": key.count,
            "origin": origin, "replaced": replacing, "versions": versions, "newest": newest,
        ])
    } else {
        let how = newKey.isGenerated ? "\(key.count) random bytes" : "\(key.count) bytes from standard input"
        output.info(
            "\(replacing ? "Replaced" : "Stored") version \(version) of \"\(identifier)\" in the keychain (service "
                + "\"\(source.service)\"): \(how), not shown.")
        let older = versions.filter { KeyVersion($0) != KeyVersion(version) }
        output.info(
            older.isEmpty
                ? "No other version is stored."
                : "Kept \(older.count) other \(older.count == 1 ? "version" : "versions"): \(older.joined(separator: ", ")).")
        output.info("resolve \(identifier) now serves version \(newest) from the keychain.")
    }
    if KeyVersion(newest) != KeyVersion(version) {
        output.warning(
            "version \(version) is not the newest (\(newest) is), so resolve keeps serving \(newest); ask for this "
                + "one with resolve \(identifier) --version \(version).")
    }
}
