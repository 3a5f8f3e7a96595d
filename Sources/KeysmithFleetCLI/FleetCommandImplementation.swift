import Foundation
import Keysmith
import KeychainServices
import KeysmithCLI
import KeysmithEtcd

// The fleet commands over the etcd client: `keysmith fleet …` and the source of `--fleet`
// for resolve and explain. Linked into `keysmith-fleet` only (see FleetCommands in
// KeysmithCLI for the help text and the hand-over from `keysmith`). Never key bytes,
// passphrases or passwords on the command line or in the output.

/// The fleet implementation `keysmith-fleet` runs the tool with.
public struct FleetCommandImplementation: FleetImplementation {
    /// Creates the implementation.
    public init() {}

    /// Runs `keysmith fleet SUBCOMMAND …`.
    /// - Parameter invocation: The running command.
    /// - Throws: The command's failure.
    public func runFleetCommand(_ invocation: CommandInvocation) throws(CommandLineError) {
        guard let subcommand = invocation.arguments.positionals.first else {
            throw invocation.usageError("give a subcommand: \(subcommands.joined(separator: ", "))")
        }
        switch subcommand {
        case "init": try fleetInit(invocation)
        case "export-key": try fleetExportKey(invocation)
        case "join": try fleetJoin(invocation)
        case "put": try fleetPut(invocation)
        case "list": try fleetList(invocation)
        case "retire": try fleetRetire(invocation)
        case "watch": try fleetWatch(invocation)
        default:
            throw invocation.usageError(
                "unknown fleet subcommand '\(subcommand)'; give one of \(subcommands.joined(separator: ", "))")
        }
    }

    /// The fleet source for `--fleet`, from this keychain's fleet settings and key.
    /// - Parameter invocation: The running command.
    /// - Returns: The source.
    /// - Throws: A failure when this keychain has no fleet.
    public func retrievalSource(_ invocation: CommandInvocation) throws(CommandLineError) -> any FleetRetrievalSource {
        FleetRetrieval(source: try FleetSetup(invocation).source())
    }
}

/// The tool with the fleet commands linked in: what `keysmith-fleet` runs.
public enum KeysmithFleetCommandLine {
    /// Runs the tool with `arguments` (the first is the program name), the fleet commands
    /// in this process, and returns the process exit status.
    /// - Parameter arguments: The command line, program name first.
    /// - Returns: The exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        if let refused = KeysmithCommandLine.refusingArgumentsNotUTF8(output: .process()) { return refused }
        return KeysmithCommandLine.run(
            arguments, environment: ProcessInfo.processInfo.environment, output: .process(),
            secretInput: SecretInput(), fleet: .linked(FleetCommandImplementation()))
    }
}

/// The etcd source as one more source of the retrieval commands.
struct FleetRetrieval: FleetRetrievalSource {
    let source: EtcdKeySource

    var keySource: any KeySource { source }
    var locationDescription: String { "\(source.configuration)" }

    func failure(for identifier: String) -> CommandLineError? {
        for candidate in KeyRetriever.candidates(for: identifier) {
            do {
                if !(try source.lookup(candidate)).isEmpty { return nil }
            } catch {
                return FleetCommands.map(error)
            }
        }
        return nil
    }
}

extension FleetCommands {
    /// The one mapping from a fleet error to a `keysmith` error (exit status 44 for a version
    /// not found, 75 for an unknown outcome, else 1).
    /// - Parameter error: The error.
    /// - Returns: The error to report.
    public static func map(_ error: any Error) -> CommandLineError {
        guard let error = error as? EtcdError else {
            if let error = error as? CommandLineError { return error }
            return .failure("\(error)", recovery: "run the command again; if it keeps failing, report it.")
        }
        switch error {
        case .versionNotFound: return CommandLineError(.itemNotFound, error.description + ".", recovery: error.recovery)
        case .outcomeUnknown: return CommandLineError(.outcomeUnknown, error.description + ".", recovery: error.recovery)
        default: return .failure(error.description + ".", recovery: error.recovery)
        }
    }
}

/// A fleet's settings and key, read from this keychain.
private struct FleetSetup {
    let keychain: FleetKeychain
    let settings: FleetSettings

    init(_ invocation: CommandInvocation) throws(CommandLineError) {
        keychain = FleetKeychain(accessGroup: invocation.settings.queryAccessGroup)
        do {
            guard let settings = try keychain.settings() else {
                throw EtcdError.noFleetSettings(service: keychain.service)
            }
            self.settings = settings
        } catch {
            throw FleetCommands.map(error)
        }
    }

    func source() throws(CommandLineError) -> EtcdKeySource {
        do {
            let password = try keychain.etcdPassword().map { String(decoding: $0, as: UTF8.self) }
            return try EtcdKeySource(configuration: try settings.configuration(password: password), keychain: keychain)
        } catch {
            throw FleetCommands.map(error)
        }
    }
}

private let subcommands = ["init", "export-key", "join", "put", "list", "retire", "watch"]

// MARK: - Subcommands

/// The positional after the subcommand.
private func operand(_ invocation: CommandInvocation, _ what: String) throws(CommandLineError) -> String {
    guard invocation.arguments.positionals.count > 1, !invocation.arguments.positionals[1].isEmpty else {
        throw invocation.usageError("\(what) is required")
    }
    return invocation.arguments.positionals[1]
}

private func noOperand(_ invocation: CommandInvocation) throws(CommandLineError) {
    if invocation.arguments.positionals.count > 1 {
        throw invocation.usageError("unexpected argument '\(invocation.arguments.positionals[1])'")
    }
}

/// `--endpoints`, `--prefix`, `--max-staleness`, `--user`, `--cacert`, `--cert`, `--cert-key`
/// as settings (TLS file paths made absolute: the settings outlive the working directory).
private func settingsFromArguments(_ invocation: CommandInvocation) throws(CommandLineError) -> FleetSettings {
    let endpoints = try invocation.requiredValue("endpoints", spelling: "--endpoints URL[,URL...]")
        .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    let prefix = try invocation.requiredValue("prefix", spelling: "--prefix PREFIX")
    var staleness: Int? = 86_400
    if let text = invocation.arguments.value("max-staleness") {
        guard let seconds = Int(text), seconds >= 0 else {
            throw invocation.usageError("--max-staleness needs a number of seconds (0 or more)")
        }
        staleness = seconds
    }
    var settings = FleetSettings(endpoints: endpoints, prefix: prefix, maximumStalenessSeconds: staleness)
    settings.username = invocation.arguments.value("user")
    func absolute(_ option: String) -> String? {
        guard let path = invocation.arguments.value(option), !path.isEmpty else { return nil }
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(path)
            .standardizedFileURL.path
    }
    settings.caFile = absolute("cacert")
    settings.clientCertificate = absolute("cert")
    settings.clientKey = absolute("cert-key")
    do {
        settings.prefix = try settings.configuration(password: nil).prefix
    } catch {
        throw FleetCommands.map(error)
    }
    return settings
}

/// Refuses to overwrite another fleet key unless `--replace-key`.
private func checkExistingKey(_ keychain: FleetKeychain, _ invocation: CommandInvocation, incoming: FleetKey?)
    throws(CommandLineError) -> Bool
{
    let existing: FleetKey?
    do {
        existing = try keychain.fleetKey()
    } catch {
        throw FleetCommands.map(error)
    }
    guard let existing else { return false }
    if let incoming, incoming.fingerprint == existing.fingerprint { return true }
    guard invocation.arguments.contains("replace-key") else {
        throw CommandLineError.failure(
            "this keychain already has a fleet key (fingerprint \(existing.fingerprint)); nothing was changed.",
            recovery: "use another keychain (--keychain), or pass --replace-key to replace it (values sealed under "
                + "the old key can then no longer be read here).")
    }
    return true
}

private func fleetInit(_ invocation: CommandInvocation) throws(CommandLineError) {
    try noOperand(invocation)
    let settings = try settingsFromArguments(invocation)
    let keychain = FleetKeychain(accessGroup: invocation.settings.queryAccessGroup)
    let replacing = try checkExistingKey(keychain, invocation, incoming: nil)
    var password: Data?
    if settings.username != nil {
        password = try invocation.secretInput.read(
            .standardInput, promptText: "etcd password for \(settings.username ?? ""): ", confirmText: nil,
            output: invocation.output)
    }
    defer { if var password { password.resetBytes(in: 0..<password.count) } }
    let key = FleetKey.generate()
    // A prefix that already holds values belongs to a fleet: a new key could not open them.
    do {
        let configuration = try settings.configuration(password: password.map { String(decoding: $0, as: UTF8.self) })
        let census = try EtcdKeySource(configuration: configuration, fleetKey: key, keychain: keychain).fleetKeyCensus()
        if census.values > 0 {
            throw EtcdError.prefixInUse(
                prefix: settings.prefix, values: census.values, fleetKeys: census.otherKeys.map(\.fingerprint))
        }
    } catch EtcdError.unreachable(let reasons) {
        throw CommandLineError.failure(
            "etcd did not answer (\(reasons.joined(separator: "; "))), so fleet init could not check that prefix "
                + "\(settings.prefix) is free; nothing was changed.",
            recovery: "run it again when etcd answers (etcdctl --endpoints URL endpoint health).")
    } catch {
        throw FleetCommands.map(error)
    }
    do {
        try keychain.storeFleetKey(key, replacing: replacing)
        try keychain.storeSettings(settings)
        if let password { try keychain.storeEtcdPassword(password) }
    } catch {
        throw FleetCommands.map(error)
    }
    let output = invocation.output
    if output.json {
        output.printJSON([
            "fingerprint": key.fingerprint, "endpoints": settings.endpoints, "prefix": settings.prefix,
            "maxStalenessSeconds": settings.maximumStalenessSeconds.map { $0 as Any } ?? NSNull(),
        ])
        return
    }
    output.info("Created a fleet key in this keychain (fingerprint \(key.fingerprint)), for etcd "
        + "\(settings.endpoints.joined(separator: ", ")) prefix \(settings.prefix).")
    output.info("Next: keysmith fleet put ID --version VERSION --generate 32; give the key to other machines with "
        + "keysmith fleet export-key FILE --stdin and keysmith fleet join.")
}

private func readPassphrase(_ invocation: CommandInvocation, confirm: Bool) throws(CommandLineError) -> Data {
    let source: SecretSource = invocation.arguments.contains("stdin") ? .standardInput : .prompt
    return try invocation.secretInput.read(
        source, promptText: "passphrase for the fleet key file: ", confirmText: confirm ? "retype passphrase: " : nil,
        output: invocation.output)
}

private func fleetExportKey(_ invocation: CommandInvocation) throws(CommandLineError) {
    let path = try operand(invocation, "FILE (where to write the key file)")
    let keychain = FleetKeychain(accessGroup: invocation.settings.queryAccessGroup)
    let key: FleetKey
    do {
        guard let stored = try keychain.fleetKey() else { throw EtcdError.noFleetKey(service: keychain.service) }
        key = stored
    } catch {
        throw FleetCommands.map(error)
    }
    var passphrase = try readPassphrase(invocation, confirm: true)
    defer { passphrase.resetBytes(in: 0..<passphrase.count) }
    do {
        try FleetKeyFile.write(key, passphrase: passphrase, to: path)
    } catch {
        throw FleetCommands.map(error)
    }
    if invocation.output.json {
        invocation.output.printJSON(["file": path, "fingerprint": key.fingerprint])
    } else {
        invocation.output.info(
            "Wrote the fleet key (fingerprint \(key.fingerprint)) to \(path), sealed with the passphrase; copy it to "
                + "the next machine, run keysmith fleet join there, then delete the file.")
    }
}

private func fleetJoin(_ invocation: CommandInvocation) throws(CommandLineError) {
    try noOperand(invocation)
    let settings = try settingsFromArguments(invocation)
    let path = try invocation.requiredValue("key", spelling: "--key FILE")
    var passphrase = try readPassphrase(invocation, confirm: false)
    defer { passphrase.resetBytes(in: 0..<passphrase.count) }
    let key: FleetKey
    do {
        key = try FleetKeyFile.read(path, passphrase: passphrase)
    } catch {
        throw FleetCommands.map(error)
    }
    let keychain = FleetKeychain(accessGroup: invocation.settings.queryAccessGroup)
    let replacing = try checkExistingKey(keychain, invocation, incoming: key)
    var keys: Int?
    var unanswered: EtcdError?
    // etcd is asked before anything is stored: settings whose TLS etcd refuses would replace
    // working ones. etcd that does not answer (it may be down) does not stop a join.
    do {
        keys = try EtcdKeySource(configuration: try settings.configuration(), fleetKey: key, keychain: keychain)
            .identifiers().count
    } catch let error as EtcdError {
        if case .tlsFailed = error {
            throw CommandLineError.failure(error.description + "; nothing was changed.", recovery: error.recovery)
        }
        unanswered = error
    } catch {
        throw FleetCommands.map(error)
    }
    do {
        try keychain.storeFleetKey(key, replacing: replacing)
        try keychain.storeSettings(settings)
    } catch {
        throw FleetCommands.map(error)
    }
    let output = invocation.output
    if output.json {
        output.printJSON([
            "fingerprint": key.fingerprint, "endpoints": settings.endpoints, "prefix": settings.prefix,
            "keys": keys.map { $0 as Any } ?? NSNull(),
        ])
        return
    }
    output.info("Joined the fleet (key fingerprint \(key.fingerprint)), etcd \(settings.endpoints.joined(separator: ", ")) "
        + "prefix \(settings.prefix).")
    if let keys {
        output.info("etcd holds \(keys) \(keys == 1 ? "key" : "keys") under the prefix; see them with keysmith fleet list.")
    } else if let unanswered, case .unreachable = unanswered {
        output.warning("etcd did not answer now; the settings are stored, and lookups will reach it when it does.")
    } else if let unanswered {
        output.warning("the settings are stored, but etcd cannot be used with them: \(unanswered.description). To fix: "
            + unanswered.recovery)
    }
}

private func fleetPut(_ invocation: CommandInvocation) throws(CommandLineError) {
    let identifier = try operand(invocation, "ID (the key identifier)")
    let arguments = invocation.arguments
    guard let version = arguments.value("version"), !version.isEmpty else {
        throw invocation.usageError("--version VERSION is required, for example --version 2024.07.01")
    }
    let newKey = try NewKeyBytes(invocation)
    let source = try FleetSetup(invocation).source()
    var key = try newKey.read(for: identifier, version: version, invocation: invocation)
    defer { key.resetBytes(in: 0..<key.count) }
    let outcome: EtcdKeySource.PublishOutcome
    do {
        outcome = try source.publish(key, for: identifier, version: version)
    } catch {
        throw FleetCommands.map(error)
    }
    let output = invocation.output
    if output.json {
        output.printJSON([
            "identifier": identifier, "version": version, "bytes": key.count,
            "origin": newKey.isGenerated ? "generated" : "stdin", "key": source.configuration.prefix + identifier + "/" + version,
            "unchanged": outcome == .unchanged,
        ])
    } else if outcome == .unchanged {
        output.info(
            "Version \(version) of \"\(identifier)\" already holds these \(key.count) bytes in etcd; nothing changed.")
    } else {
        output.info(
            "Published version \(version) of \"\(identifier)\" to etcd (\(source.configuration.prefix)\(identifier)/"
                + "\(version)): \(key.count) bytes, sealed under the fleet key, not shown.")
    }
}

private func fleetList(_ invocation: CommandInvocation) throws(CommandLineError) {
    try noOperand(invocation)
    let source = try FleetSetup(invocation).source()
    let entries: [EtcdKeySource.Entry]
    do {
        entries = try source.entries()
    } catch {
        throw FleetCommands.map(error)
    }
    var grouped: [(String, [String])] = []
    for entry in entries {
        if grouped.last?.0 == entry.identifier {
            grouped[grouped.count - 1].1.append(entry.version)
        } else {
            grouped.append((entry.identifier, [entry.version]))
        }
    }
    let output = invocation.output
    if output.json {
        output.printJSON([
            "prefix": source.configuration.prefix,
            "endpoints": source.configuration.endpoints.map(\.absoluteString),
            "fleetKey": source.fleetKeyFingerprint,
            "keys": grouped.map { ["identifier": $0.0, "versions": $0.1, "newest": $0.1.last ?? ""] },
        ])
        return
    }
    output.info("Fleet keys in \(source.configuration) (this machine's fleet key: \(source.fleetKeyFingerprint))")
    let foreign = entries.filter { $0.sealedWith.map { $0 != source.fleetKeyFingerprint } ?? false }
    if !foreign.isEmpty {
        output.warning(
            "\(foreign.count) of \(entries.count) versions are sealed under another fleet key ("
                + Array(Set(foreign.compactMap(\.sealedWith))).sorted().joined(separator: ", ") + ")")
    }
    var table = ColumnTable(headers: ["KEY", "NEWEST", "VERSIONS"])
    for (identifier, versions) in grouped {
        table.add([identifier, versions.last ?? "", versions.joined(separator: ", ")])
    }
    if grouped.isEmpty {
        output.info("(no keys yet: keysmith fleet put ID --version VERSION --generate 32)")
    } else {
        for line in table.lines() { output.data(line) }
    }
}

private func fleetRetire(_ invocation: CommandInvocation) throws(CommandLineError) {
    let identifier = try operand(invocation, "ID (the key identifier)")
    guard let version = invocation.arguments.value("version"), !version.isEmpty else {
        throw invocation.usageError("--version VERSION is required")
    }
    let source = try FleetSetup(invocation).source()
    do {
        try source.retire(identifier, version: version, force: invocation.arguments.contains("force"))
    } catch {
        throw FleetCommands.map(error)
    }
    if invocation.output.json {
        invocation.output.printJSON(["identifier": identifier, "version": version, "retired": true])
    } else {
        invocation.output.info("Retired version \(version) of \"\(identifier)\" from etcd.")
    }
}

/// Changes handed from the watch's thread to the command's.
private final class WatchLines: @unchecked Sendable {
    let condition = NSCondition()
    var lines: [String] = []
}

private func fleetWatch(_ invocation: CommandInvocation) throws(CommandLineError) {
    try noOperand(invocation)
    var count: Int?
    if let text = invocation.arguments.value("count") {
        guard let value = Int(text), value > 0 else { throw invocation.usageError("--count needs a positive number") }
        count = value
    }
    var timeout: Double?
    if let text = invocation.arguments.value("timeout") {
        guard let value = Double(text), value > 0 else {
            throw invocation.usageError("--timeout needs a positive number of seconds")
        }
        timeout = value
    }
    let source = try FleetSetup(invocation).source()
    let shared = WatchLines()
    source.startWatching { change in
        shared.condition.lock()
        shared.lines.append(change.description)
        shared.condition.broadcast()
        shared.condition.unlock()
    }
    defer { source.stopWatching() }
    let output = invocation.output
    let deadline = timeout.map { Date().addingTimeInterval($0) } ?? .distantFuture
    var announced = false
    var printed = 0
    var reported: String?
    shared.condition.lock()
    defer { shared.condition.unlock() }
    while true {
        if !announced, source.isInStep {
            announced = true
            output.error("keysmith: fleet watch: watching \(source.configuration.prefix) (in step with etcd)")
        }
        // Why it is not in step (a TLS refusal, etcd down), each new reason once: the watch
        // keeps trying, and says so rather than wait in silence.
        if source.isInStep {
            reported = nil
        } else if let problem = source.watchProblem, problem != reported {
            reported = problem
            output.error("keysmith: fleet watch: not in step with etcd, trying again: \(problem)")
        }
        while printed < shared.lines.count, count.map({ printed < $0 }) ?? true {
            output.data(shared.lines[printed])
            output.flush()
            printed += 1
        }
        if let count, printed >= count { return }
        // Wake up at least every 100 ms to notice the watch coming in step.
        let wake = min(deadline, Date().addingTimeInterval(0.1))
        if !shared.condition.wait(until: wake), Date() >= deadline { break }
    }
    if let count {
        let problem = source.watchProblem.map { " (not in step with etcd: \($0))" } ?? ""
        throw CommandLineError.failure(
            "saw \(printed) of \(count) changes in \(timeout.map { "\($0)" } ?? "?") s\(problem).",
            recovery: "check that etcd runs (keysmith fleet list), or wait longer with --timeout.")
    }
}
