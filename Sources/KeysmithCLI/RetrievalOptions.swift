import Foundation
import Keysmith
import KeychainServices

// What the retrieval commands (resolve, explain, audit) share: the options that choose the
// sources, the KeyRetriever built from them, the JSON shapes of keys, and the single
// mapping from KeyRetrievalError to a `keysmith` error and exit status.

/// The options and defaults of the key retrieval commands.
public enum RetrievalOptions {
    /// The keychain service the retrieval commands read and `rotate` writes when `--service`
    /// is not given. Keys live there as one generic password per version (account
    /// `name@version`, label `name`, comment `version`; docs/RETRIEVAL.md section 4).
    public static let defaultService = "keysmith.keys"

    /// The environment tag the tool resolves keys for (it is part of the retriever's cache
    /// key and shows in traces and audits).
    public static let environmentTag = "cli"

    /// Whether this tool is a release build (`make install`), so that traces and audits
    /// name its build truly. It changes nothing else: the tool enforces `--sensitive` in
    /// every build and consults the environment only when asked (`--env-prefix`).
    static var isReleaseBuild: Bool {
        #if DEBUG
        return false
        #else
        return true
        #endif
    }

    /// `--service S`, shared by resolve, explain, audit and rotate.
    static let service = OptionSpec(
        long: "service", value: .required("SERVICE"),
        help: "The keychain service that holds the keys (default \"\(defaultService)\").")

    /// The options that choose the sources of resolve, explain and audit.
    static let sourceOptions: [OptionSpec] = [
        OptionSpec(
            long: "config", value: .required("FILE"), repeatable: true,
            help: "A key file (plist or JSON, as ConfigFileKeySource reads it) consulted after the keychain; "
                + "repeatable, consulted in the order given. A malformed file is an error, never a silent miss."),
        OptionSpec(
            name: "env-prefix", long: "env-prefix", value: .required("PREFIX"),
            help: "Also consult environment variables, after the config files: the exact name, then "
                + "PREFIX_NAME upper-cased (version \"env\"). Without this option the environment is not "
                + "consulted. The tool allows this source explicitly (apps consult it in debug builds only)."),
        service,
        OptionSpec(
            long: "sensitive", value: .required("ID"), repeatable: true,
            help: "Mark a key sensitive (repeatable): it is then never served from a plaintext source (config "
                + "file, environment), and the command fails with exit status 3 if its first copy is one."),
        FleetCommands.fleetOption,
    ]

    /// `--min-version V` and `--version V`, for resolve and explain.
    static let versionOptions: [OptionSpec] = [
        OptionSpec(
            name: "min-version", long: "min-version", value: .required("VERSION"),
            help: "Only a version at or above VERSION (compared numerically, segment by segment); the first "
                + "source in priority that has one answers."),
        OptionSpec(
            long: "version", value: .required("VERSION"),
            help: "Exactly this version (for example the old key needed to decrypt data written before a "
                + "rotation)."),
    ]

    /// The usage-line part for the source options.
    static let sourceSynopsis =
        "[--config FILE]... [--env-prefix PREFIX] [--service SERVICE] [--sensitive ID]... [--fleet]"

    /// The help paragraph about the sources, shared by the commands' details.
    static let sourcesParagraph =
        "Sources, in the default priority Keychain > ConfigFile > Environment: the keychain (generic passwords "
        + "of --service, default \"\(defaultService)\", in the keychain chosen with --keychain or KEYSMITH_HOME), "
        + "then each --config file in the order given, then the environment when --env-prefix is given. In each "
        + "source every candidate spelling of ID is tried in order (ID; without a _test/_prod suffix; "
        + "lower-case; upper-case; snake_case <-> camelCase), nothing fuzzy."
}

/// One retrieval command's sources and the retriever over them.
struct RetrievalSetup {
    /// The keychain source (always consulted first).
    let keychain: KeychainKeySource
    /// The config files, in the order given.
    let configFiles: [ConfigFileKeySource]
    /// The environment source, when `--env-prefix` was given.
    let environment: EnvironmentKeySource?
    /// The policy built from `--sensitive`.
    let policy: KeyPolicy
    /// Where the keychain is, for messages: `in /path` or `no keychain at /path yet`.
    let keychainPlace: String
    /// The fleet's keys in etcd, when `--fleet` was given.
    let fleet: (any FleetRetrievalSource)?

    /// Reads the source options and loads the config files.
    /// - Parameter invocation: The running command.
    /// - Throws: A usage error for empty values; the mapped error for a config file that
    ///   cannot be read or is malformed.
    init(_ invocation: CommandInvocation) throws(CommandLineError) {
        let arguments = invocation.arguments
        let settings = invocation.settings
        keychainPlace = settings.keychainExists
            ? "in \(settings.keychainDescription)" : "no keychain at \(settings.keychainDescription) yet"
        keychain = KeychainKeySource(
            service: try RetrievalSetup.service(invocation), accessGroup: invocation.settings.queryAccessGroup)
        var files: [ConfigFileKeySource] = []
        for path in arguments.values("config") {
            guard !path.isEmpty else { throw invocation.usageError("--config needs a file") }
            do {
                files.append(try ConfigFileKeySource(url: URL(fileURLWithPath: path)))
            } catch {
                throw CommandLineError.retrieval(error, invocation)
            }
        }
        configFiles = files
        if arguments.contains("env-prefix") {
            guard let prefix = arguments.value("env-prefix"), !prefix.isEmpty else {
                throw invocation.usageError("--env-prefix needs a prefix, for example XY")
            }
            environment = EnvironmentKeySource(prefix: prefix, environment: invocation.environment)
        } else {
            environment = nil
        }
        let sensitive = arguments.values("sensitive")
        if sensitive.contains(where: \.isEmpty) { throw invocation.usageError("--sensitive needs a key identifier") }
        policy = KeyPolicy(sensitive: Set(sensitive), enforcement: .always)
        fleet = try FleetCommands.source(invocation)
    }

    /// The `--service` value, or the default; empty is a usage error.
    static func service(_ invocation: CommandInvocation) throws(CommandLineError) -> String {
        guard let service = invocation.arguments.value("service") else { return RetrievalOptions.defaultService }
        guard !service.isEmpty else { throw invocation.usageError("--service needs a service name") }
        return service
    }

    /// Every source, keychain first.
    var sources: [any KeySource] {
        var sources: [any KeySource] = [keychain]
        sources += configFiles
        if let environment { sources.append(environment) }
        if let fleet { sources.append(fleet.keySource) }
        return sources
    }

    /// A retriever over `sources` (or over these sources): default priority, no cache
    /// expiry timer, no logging, no notification observers, environment allowed.
    func retriever(sources: [any KeySource]? = nil) -> KeyRetriever {
        KeyRetriever(
            sources: sources ?? self.sources,
            environment: KeyRetriever.BuildEnvironment(tag: RetrievalOptions.environmentTag, isRelease: RetrievalOptions.isReleaseBuild),
            policy: policy, allowsEnvironmentInRelease: true, cacheTimeToLive: nil, logging: .disabled,
            notificationCenter: nil)
    }

    /// For messages: `Keychain (service "keysmith.keys"), ConfigFile(plist) Keys.plist`.
    var description: String {
        var parts = ["Keychain (service \"\(keychain.service)\", \(keychainPlace))"]
        parts += configFiles.map { "\($0.sourceDescription) \($0.path)" }
        if let environment { parts.append("Environment (prefix \(environment.prefix ?? "none"))") }
        if let fleet { parts.append("Fleet (\(fleet.locationDescription))") }
        return parts.joined(separator: ", ")
    }

    /// Warns, in the every-group view, about keychain entries of the service that one account
    /// holds in more than one access group: the view reads them all and serves one, while a
    /// program reads only its own groups and may get the other.
    /// - Parameters:
    ///   - invocation: The running command.
    ///   - name: Only the entries of this key name (their label), or every entry.
    func warnAboutKeysInSeveralGroups(_ invocation: CommandInvocation, name: String? = nil) {
        guard invocation.settings.seesEveryGroup else { return }
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword as String,
            kSecAttrService as String: keychain.service,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny as String,
            kSecMatchLimit as String: kSecMatchLimitAll as String,
            kSecReturnAttributes as String: kCFBooleanTrue as Any,
        ]
        if let name { query[kSecAttrLabel as String] = name }
        var result: AnyObject?
        // A failure here is the lookup's to report; this is only a second look.
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return }
        let rows = (result as? [NSDictionary]) ?? (result as? NSDictionary).map { [$0] } ?? []
        // Accounts and groups compare byte for byte: two accounts that differ only in Unicode
        // form are two accounts, each perhaps in one group.
        var groupsByAccount: [ExactName: [String]] = [:]
        var order: [ExactName] = []
        for row in rows {
            let account = ExactName(AttributeCatalog.describe((row[kSecAttrAccount as String] ?? "") as AnyObject))
            guard let group = row[kSecAttrAccessGroup as String] as? String else { continue }
            if groupsByAccount[account] == nil { order.append(account) }
            if !(groupsByAccount[account] ?? []).contains(where: { ExactName($0) == ExactName(group) }) {
                groupsByAccount[account, default: []].append(group)
            }
        }
        for account in order {
            guard let groups = groupsByAccount[account], groups.count > 1 else { continue }
            invocation.output.warning(
                "account \"\(account)\" of service \"\(keychain.service)\" is in \(groups.count) access groups ("
                    + groups.joined(separator: ", ") + "); this run reads every group and serves one of them, while a "
                    + "program reads only its own: pass --access-group GROUP to see what a program of that group gets.")
        }
    }

    /// The source flags as typed, for hints that suggest another command.
    func flags(_ invocation: CommandInvocation) -> String {
        var words: [String] = []
        for path in invocation.arguments.values("config") { words += ["--config", shellWord(path)] }
        if let prefix = environment?.prefix { words += ["--env-prefix", shellWord(prefix)] }
        if let service = invocation.arguments.value("service") { words += ["--service", shellWord(service)] }
        return words.isEmpty ? "" : " " + words.joined(separator: " ")
    }
}

/// Which version a command asks for (`--version` / `--min-version`).
enum VersionRequest {
    case newest
    case minimum(String)
    case exact(String)

    /// Reads `--version` and `--min-version`.
    /// - Throws: A usage error for both at once or an empty value.
    init(_ invocation: CommandInvocation) throws(CommandLineError) {
        let arguments = invocation.arguments
        let minimum = arguments.value("min-version")
        let exact = arguments.value("version")
        if arguments.contains("min-version") && (minimum ?? "").isEmpty {
            throw invocation.usageError("--min-version needs a version, for example 2024.07.01")
        }
        if arguments.contains("version") && (exact ?? "").isEmpty {
            throw invocation.usageError("--version needs a version, for example 2024.06.01")
        }
        switch (minimum, exact) {
        case (.some, .some): throw invocation.usageError("give --version or --min-version, not both")
        case (.some(let minimum), nil): self = .minimum(minimum)
        case (nil, .some(let exact)): self = .exact(exact)
        case (nil, nil): self = .newest
        }
    }

    /// `version >= 2024.07.01`, for messages.
    var phrase: String {
        switch self {
        case .newest: return "any version"
        case .minimum(let version): return "a version >= \(version)"
        case .exact(let version): return "version \(version)"
        }
    }

    var minimumVersion: String? {
        if case .minimum(let version) = self { return version }
        return nil
    }

    var exactVersion: String? {
        if case .exact(let version) = self { return version }
        return nil
    }
}

extension CommandInvocation {
    /// The required positional `ID`.
    func identifierArgument() throws(CommandLineError) -> String {
        guard let identifier = arguments.positionals.first else {
            throw usageError("ID is required: the key identifier, for example api_key")
        }
        guard !identifier.isEmpty else { throw usageError("ID is empty; give a key identifier such as api_key") }
        return identifier
    }
}

// MARK: - Presentation

/// The JSON and text shapes of keys, copies and traces (never key bytes, unless revealed).
enum RetrievalPresentation {
    /// `{identifier, matchedName, version, source, sourceDescription, location}`, plus
    /// `secret`/`secretBase64` when revealed.
    static func json(_ info: KeyInfo, reveal: Bool) -> [String: Any] {
        var object: [String: Any] = [
            "identifier": info.identifier, "matchedName": info.matchedName, "version": info.version,
            "source": info.source.rawValue, "sourceDescription": info.sourceDescription, "location": info.location,
        ]
        if reveal {
            object["secretBase64"] = info.data.base64EncodedString()
            if let text = String(data: info.data, encoding: .utf8) { object["secret"] = text }
        }
        return object
    }

    /// The aligned rows of `resolve`.
    static func table(_ info: KeyInfo) -> KeyValueTable {
        var table = KeyValueTable()
        table.add("identifier", info.identifier)
        table.add("matched name", info.matchedName)
        table.add("version", info.version)
        table.add("source", info.sourceDescription)
        table.add("location", info.location)
        return table
    }

    /// Microseconds, rounded to a tenth, for JSON.
    static func microseconds(_ duration: Duration) -> Double {
        let components = duration.components
        let value = Double(components.seconds) * 1e6 + Double(components.attoseconds) / 1e12
        return (value * 10).rounded() / 10
    }

    /// The JSON form of a trace step's outcome.
    static func json(_ outcome: KeyLookupTrace.Outcome) -> [String: Any] {
        switch outcome {
        case .hit(let selected, let versions): return ["outcome": "hit", "selected": selected, "versions": versions]
        case .noMatchingVersion(let versions): return ["outcome": "noMatchingVersion", "versions": versions]
        case .miss: return ["outcome": "miss"]
        case .skipped(let reason): return ["outcome": "skipped", "reason": reason]
        case .failed(let message): return ["outcome": "failed", "reason": message]
        case .refused(let reason): return ["outcome": "refused", "reason": reason]
        }
    }

    /// The JSON form of a trace.
    static func json(_ trace: KeyLookupTrace, error: CommandLineError?) -> [String: Any] {
        var request: [String: Any]
        switch trace.request {
        case .newest: request = ["kind": "newest"]
        case .minimum(let version): request = ["kind": "minimum", "version": version]
        case .exact(let version): request = ["kind": "exact", "version": version]
        }
        request["description"] = trace.request.description
        var object: [String: Any] = [
            "identifier": trace.identifier, "request": request, "environment": trace.environmentTag,
            "sensitive": trace.isSensitive, "priority": trace.priority.map(\.description), "sources": trace.sources,
            "candidates": trace.candidates, "durationMicroseconds": microseconds(trace.duration),
            "hints": trace.hints,
        ]
        object["steps"] = trace.steps.map { step -> [String: Any] in
            var fields = json(step.outcome)
            fields["source"] = step.source.rawValue
            fields["sourceDescription"] = step.sourceDescription
            fields["candidate"] = step.candidate ?? NSNull()
            fields["durationMicroseconds"] = microseconds(step.duration)
            return fields
        }
        switch trace.result {
        case .found(let winner):
            object["result"] = "found"
            object["winner"] = [
                "source": winner.source.rawValue, "sourceDescription": winner.sourceDescription,
                "matchedName": winner.matchedName, "version": winner.version, "location": winner.location,
            ]
        case .notFound:
            object["result"] = "notFound"
            object["winner"] = NSNull()
        case .failed:
            object["result"] = "failed"
            object["winner"] = NSNull()
            if let error { object["error"] = error.message }
        }
        return object
    }

    /// The JSON form of an audit copy.
    static func json(_ copy: KeyAudit.Copy) -> [String: Any] {
        [
            "source": copy.source.rawValue, "sourceDescription": copy.sourceDescription, "name": copy.name,
            "versions": copy.versions, "newestVersion": copy.newestVersion, "location": copy.location,
            "consulted": copy.isConsulted,
        ]
    }
}

/// A word as a shell would need it (single-quoted when it has special characters).
func shellWord(_ word: String) -> String {
    let plain = word.unicodeScalars.allSatisfy {
        CharacterSet.alphanumerics.contains($0) || "-_./=:@,+".unicodeScalars.contains($0)
    }
    if plain && !word.isEmpty { return word }
    return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

// MARK: - Errors

extension CommandLineError {
    /// The one mapping from a key retrieval failure to a `keysmith` error: what happened and
    /// what to do, never key bytes.
    ///
    /// | error | exit status |
    /// |---|---|
    /// | `invalidIdentifier`, `invalidVersion`, `emptyPriority` | 2 (usage, with the usage line) |
    /// | `sensitiveKeyInPlaintextSource` | 3 (policy refused) |
    /// | `keychain` with `errSecItemNotFound` | 44 |
    /// | `keychain` (other statuses), `sourceFailed`, `unreadableFile`, `malformedFile`, `auditFailed`, anything else | 1 |
    ///
    /// (A key that is not found is not an error of the retriever: the commands turn `nil`
    /// into exit status 44 themselves, see ``keyNotFound(_:request:setup:invocation:)``.)
    /// - Parameters:
    ///   - error: The error thrown by Keysmith.
    ///   - invocation: The running command (for the usage line and hints).
    /// - Returns: The error to throw.
    static func retrieval(_ error: any Error, _ invocation: CommandInvocation) -> CommandLineError {
        if let error = error as? CommandLineError { return error }
        guard let error = error as? KeyRetrievalError else {
            return .failure("\(error)", recovery: "run the command again; if it keeps failing, report it.")
        }
        switch error {
        case .invalidIdentifier(let identifier, let reason):
            return .usage("invalid key identifier \"\(identifier)\": \(reason)", usageLine: invocation.command.usageLine)
        case .invalidVersion(let version, let reason):
            return .usage(
                "invalid version \"\(version)\": \(reason); use a dotted number such as 2024.07.01",
                usageLine: invocation.command.usageLine)
        case .emptyPriority:
            return .usage("the source priority is empty", usageLine: invocation.command.usageLine)
        case .sensitiveKeyInPlaintextSource(let identifier, let matchedName, let source, let location):
            return CommandLineError(
                .policyRefused,
                "refused to serve sensitive key \"\(identifier)\": its first copy is in a plaintext source (\(source): "
                    + "\(location), stored as \"\(matchedName)\").",
                recovery: "store it in the keychain (printf '%s' \"$KEY\" | keysmith rotate \(shellWord(identifier)) "
                    + "--stdin --version VERSION), then delete the plaintext copy from \(location).")
        case .sourceFailed(let identifier, _, let sourceDescription, let underlying):
            let inner = retrieval(underlying, invocation)
            return CommandLineError(
                inner.exitCode == .itemNotFound ? .failure : inner.exitCode,
                "the lookup of sensitive key \"\(identifier)\" stopped because the \(sourceDescription) source "
                    + "failed (sensitive keys never fall back to a less secure source): \(inner.message)",
                recovery: inner.recovery ?? "fix the source and run the command again.", status: inner.status)
        case .keychain(let operation, let status, let service, let account):
            let item = account.map { "service \"\(service)\", account \"\($0)\"" } ?? "service \"\(service)\""
            let context = KeychainCallContext(
                commandName: invocation.command.name, subjectNames: "service and key identifier",
                deleteCommand: "delete-generic-password",
                accessGroupsDescription: invocation.settings.accessGroupsDescription,
                keychainDescription: invocation.settings.keychainDescription,
                keychainOrigin: invocation.settings.keychainOrigin, keychainExists: invocation.settings.keychainExists,
                hasConfigurationIssue: invocation.settings.hasConfigurationIssue,
                seesEveryGroup: invocation.settings.seesEveryGroup)
            return CommandLineError(
                status == errSecItemNotFound ? .itemNotFound : status == errSecDuplicateItem ? .duplicateItem : .failure,
                "keychain \(operation) failed for \(item) (\(KeychainStatusExplanation.label(for: status))).",
                recovery: KeychainStatusExplanation.hint(for: status, context: context)
                    ?? "see keysmith help \(invocation.command.name), and check the keychain with keysmith dump-keychain.",
                status: status)
        case .unreadableFile(let path, let reason):
            return .failure(
                "cannot read the key file \(path): \(reason)",
                recovery: "check the path (a relative path starts in the current directory) and that the file is "
                    + "readable.")
        case .malformedFile(let path, let key, let reason):
            let place = key.map { "entry \"\($0)\" of \(path)" } ?? path
            return .failure(
                "malformed key file: \(place): \(reason).",
                recovery: "fix the file: entries are {\"value\": BASE64, \"version\": \"2024.06.01\"} (recommended), "
                    + "a bare string, or plist <data>; docs/RETRIEVAL.md section 9 has every form.")
        case .auditFailed(let reasons):
            return .failure(
                "the audit could not list any source: \(reasons.joined(separator: "; ")).",
                recovery: "fix the sources (the keychain directory, the --config files) and run the audit again.")
        }
    }

    /// Exit status 44: no consulted source holds the key (in the version asked for).
    static func keyNotFound(
        _ identifier: String, request: VersionRequest, setup: RetrievalSetup, invocation: CommandInvocation
    ) -> CommandLineError {
        if let failure = FleetCommands.failure(identifier, source: setup.fleet) { return failure }
        let what: String
        switch request {
        case .newest: what = "no key \"\(identifier)\""
        case .minimum, .exact: what = "no copy of key \"\(identifier)\" has \(request.phrase)"
        }
        let flags = setup.flags(invocation)
        var message = "\(what) in \(setup.description)."
        var recovery = "see every candidate and source tried with keysmith explain \(shellWord(identifier))\(flags), "
            + "or list every key with keysmith audit\(flags)."
        #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
        // A locked keychain cannot be searched for keys that need it unlocked: say so,
        // rather than only that the key is not there.
        let settings = invocation.settings
        if settings.keychainExists, settings.withKeychain({ KeychainEnvironment.lockState }) != .unlocked {
            message += " The keychain is locked: keys that need it unlocked were not searched."
            recovery = "unlock the keychain (keysmith unlock) and look again; or " + recovery
        }
        #endif
        return CommandLineError(.itemNotFound, message, recovery: recovery)
    }
}
