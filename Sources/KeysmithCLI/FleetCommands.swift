import Foundation
import Keysmith

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// `keysmith fleet …` and `--fleet` of resolve, explain and audit: what the tool knows about them
// without the etcd client. The client (KeysmithEtcd, over libcurl on Linux) is linked only
// into `keysmith-fleet`, installed beside `keysmith`; the `keysmith`
// process runs it in its own place (exec, same arguments, environment, standard streams and
// exit status) for exactly the command lines that need etcd. Every other command starts
// without loading the HTTP client and the TLS and other libraries behind it.

/// The `fleet` command as `keysmith help` shows it, the `--fleet` option, and the hand-over
/// to the fleet implementation.
public enum FleetCommands {
    /// The `fleet` command.
    public static let all: [Command] = [fleetCommand]

    /// The name of the executable that holds the etcd client, installed beside `keysmith`.
    public static let executableName = "keysmith-fleet"

    /// `--fleet`, for resolve, explain and audit.
    static let fleetOption = OptionSpec(
        long: "fleet",
        help: "Also consult the fleet's keys in etcd (set up with keysmith fleet init or join), after the other "
            + "sources. When etcd does not answer, the last copy read is served from this keychain, and the "
            + "location says it is an offline copy and when etcd last confirmed it.")

    /// Whether a parsed command line needs the fleet implementation: the `fleet` command, or
    /// `--fleet` of resolve, explain and audit.
    /// - Parameters:
    ///   - command: The command being run.
    ///   - arguments: Its parsed arguments.
    /// - Returns: `true` when the etcd client is needed.
    static func needsFleet(_ command: Command, _ arguments: ParsedArguments) -> Bool {
        command.name == fleetCommand.name || arguments.contains("fleet")
    }

    /// The fleet source for `--fleet`, or `nil` without the option.
    /// - Parameter invocation: The running command.
    /// - Throws: A failure when this keychain has no fleet, or this process has no fleet implementation.
    static func source(_ invocation: CommandInvocation) throws(CommandLineError) -> (any FleetRetrievalSource)? {
        guard invocation.arguments.contains("fleet") else { return nil }
        guard let implementation = invocation.fleet else { throw unavailable }
        return try implementation.retrievalSource(invocation)
    }

    /// For `--fleet` lookups that found nothing: the fleet's own failure (a refused value,
    /// an offline copy too old, etcd unreachable), which must not read as "not found".
    static func failure(_ identifier: String, source: (any FleetRetrievalSource)?) -> CommandLineError? {
        source?.failure(for: identifier)
    }

    /// The error when a process has no fleet implementation (an in-process run without one).
    static var unavailable: CommandLineError {
        .failure(
            "the fleet commands are not available in this process.",
            recovery: "run them with the keysmith tool (or \(executableName)).")
    }

    /// Replaces this process with `keysmith-fleet`, found beside the running executable, with
    /// the same arguments; returns only when that fails, with the error to report.
    /// - Parameter processArguments: The command line, program name first.
    /// - Returns: Why the fleet executable could not be started.
    static func executeFleetExecutable(_ processArguments: [String]) -> CommandLineError {
        guard let path = SiblingExecutable.path(of: executableName) else {
            return .failure(
                "cannot find where this keysmith executable is, so not \(executableName) beside it either.",
                recovery: "run \(executableName) with the same arguments.")
        }
        let reason = SiblingExecutable.execute(path, processArguments: processArguments)
        return .failure(
            "the fleet commands are in \(executableName), which could not be started from \(path): \(reason).",
            recovery: "install \(executableName) beside keysmith (make install installs both; in a checkout, swift build --product \(executableName)).")
    }
}

/// Where a `keysmith` run finds the fleet implementation (the etcd client).
public enum FleetSupport: Sendable {
    /// Linked into this process: runs here.
    case linked(any FleetImplementation)
    /// In `keysmith-fleet` beside this executable: a command line that needs it replaces
    /// this process with that executable, given these arguments (program name first).
    case separateExecutable(processArguments: [String])
    /// Not available: a command line that needs it fails (exit status 1).
    case unavailable

    /// The implementation linked into this process, if any.
    var implementation: (any FleetImplementation)? {
        if case .linked(let implementation) = self { return implementation }
        return nil
    }
}

/// The fleet's etcd client, as the `fleet` command and `--fleet` use it (KeysmithFleetCLI
/// provides it).
public protocol FleetImplementation: Sendable {
    /// Runs `keysmith fleet SUBCOMMAND …`.
    /// - Parameter invocation: The running command.
    /// - Throws: The command's failure.
    func runFleetCommand(_ invocation: CommandInvocation) throws(CommandLineError)

    /// The fleet source for `--fleet` of resolve, explain and audit.
    /// - Parameter invocation: The running command.
    /// - Returns: The source.
    /// - Throws: A failure when this keychain has no fleet.
    func retrievalSource(_ invocation: CommandInvocation) throws(CommandLineError) -> any FleetRetrievalSource
}

/// The fleet as one more source of the retrieval commands.
public protocol FleetRetrievalSource: Sendable {
    /// The key source the retriever consults.
    var keySource: any KeySource { get }
    /// Where the fleet is, for messages (endpoints and prefix).
    var locationDescription: String { get }
    /// For a lookup that found nothing: the fleet's own failure, which must not read as
    /// "not found" (a refused value, an offline copy too old, etcd unreachable), if any.
    /// - Parameter identifier: The key identifier looked up.
    /// - Returns: The error to report instead of "not found", or `nil`.
    func failure(for identifier: String) -> CommandLineError?
}

private let fleetCommand = Command(
    name: "fleet", group: .retrieval,
    synopsis: "init|export-key|join|put|list|retire|watch [ID|FILE] [options]",
    summary: "Keys for a fleet of machines in etcd: sealed, versioned, rotated by watch, kept for outages",
    details: "A fleet keeps its keys in etcd, one etcd key per version (PREFIX + ID/VERSION). etcd never sees a "
        + "key: each value is sealed (XChaCha20-Poly1305) under the fleet key, which every machine keeps in its "
        + "own keychain (readable after first unlock, never leaving the device); identifier and version are bound "
        + "to the seal, so a value changed, swapped or moved in etcd is refused with its own error, never served. "
        + "Versions are created with etcd transactions and never overwritten. Each value read is also kept as an "
        + "offline copy in this keychain, served while etcd is unreachable (for at most --max-staleness).\n\n"
        + "  fleet init --endpoints URL[,URL...] --prefix PREFIX [--max-staleness SECONDS] [--user NAME] [TLS]\n"
        + "      A new fleet key in this keychain, and the fleet settings; refused when the prefix already holds values "
        + "(join that fleet instead). With --user, the etcd password is read "
        + "from standard input (--stdin) or a prompt. TLS: --cacert FILE --cert FILE --cert-key FILE for https:// "
        + "endpoints with the cluster's own CA and client certificates (kept in the settings; server names are "
        + "checked; every endpoint https://; the client key readable by its owner only, or a group).\n"
        + "  fleet export-key FILE [--stdin]\n"
        + "      Writes the fleet key to FILE (mode 0600), sealed with a passphrase (Argon2id) read from standard "
        + "input or a prompt. Copy it to the next machine, then delete it.\n"
        + "  fleet join --endpoints URL[,URL...] --prefix PREFIX --key FILE [--stdin] [--max-staleness SECONDS] [TLS]\n"
        + "      Takes the fleet key from FILE (passphrase from standard input or a prompt) into this keychain, "
        + "with the fleet settings. Refused, with nothing stored, when etcd refuses the TLS settings; stored "
        + "with a warning when etcd does not answer.\n"
        + "  fleet put ID --version VERSION (--stdin | --stdin-exact | --generate BYTES)\n"
        + "      Publishes a new version of ID. An existing version is refused, unless it holds the same bytes (then "
        + "nothing changes). --stdin reads a line (one trailing newline, LF or CR LF, is removed); --stdin-exact, "
        + "for programs, keeps every byte. Refused when the prefix's values are sealed under another fleet key. "
        + "Exit status 75 when etcd may have received the put but did not answer (look with fleet list before "
        + "trying again).\n"
        + "  fleet list\n"
        + "      Identifiers and versions in etcd (never bytes), and this machine's fleet key fingerprint. With "
        + "--json: {\"prefix\", \"endpoints\", \"fleetKey\", \"keys\": "
        + "[{\"identifier\", \"versions\", \"newest\"}]}.\n"
        + "  fleet retire ID --version VERSION [--force]\n"
        + "      Deletes one version from etcd (watching machines drop it). Exit status 44 when there is none. A "
        + "version this machine's fleet key does not open is retired only with --force.\n"
        + "  fleet watch [--count N] [--timeout SECONDS]\n"
        + "      One line per change, \"ID VERSION\" for a new version (\"ID VERSION retired\", \"ID VERSION "
        + "refused\" for the others), until N changes or SECONDS have passed; standard error says when the watch "
        + "is live, and why it is not (it keeps trying). Exit status 1 when --count changes did not come within --timeout.\n\n"
        + "resolve ID --fleet, explain ID --fleet and audit --fleet consult the fleet after the keychain and the other sources.\n\n"
        + "Examples:\n\n"
        + "  keysmith fleet init --endpoints http://10.0.0.1:2379,http://10.0.0.2:2379 --prefix /keysmith/prod/\n"
        + "  printf '%s' \"$PASSPHRASE\" | keysmith fleet export-key fleet.key --stdin\n"
        + "  printf '%s' \"$PASSPHRASE\" | keysmith fleet join --endpoints http://10.0.0.1:2379 --prefix "
        + "/keysmith/prod/ --key fleet.key --stdin\n"
        + "  keysmith fleet put api_key --version 2024.07.01 --generate 32\n"
        + "  keysmith resolve api_key --fleet",
    options: [
        OptionSpec(long: "endpoints", value: .required("URL[,URL...]"), help: "etcd client URLs (init, join)."),
        OptionSpec(long: "prefix", value: .required("PREFIX"), help: "The etcd key prefix of the fleet (init, join)."),
        OptionSpec(
            name: "max-staleness", long: "max-staleness", value: .required("SECONDS"),
            help: "How old an offline copy may be and still be served while etcd is unreachable (init, join; "
                + "default 86400; 0 never serves one)."),
        OptionSpec(long: "user", value: .required("NAME"), help: "etcd user, when etcd has authentication on (init)."),
        OptionSpec(
            long: "cacert", value: .required("FILE"),
            help: "The CA (PEM) that signed etcd's server certificates; only it is trusted (init, join; as etcdctl's "
                + "--cacert)."),
        OptionSpec(
            long: "cert", value: .required("FILE"),
            help: "A client certificate (PEM) for etcd with --client-cert-auth (init, join; etcdctl's --cert)."),
        OptionSpec(
            name: "cert-key", long: "cert-key", value: .required("FILE"),
            help: "The client certificate's private key (PEM) (init, join; etcdctl's --key, named so because --key "
                + "is the fleet key file)."),
        OptionSpec(long: "key", value: .required("FILE"), help: "The key file written by fleet export-key (join)."),
        OptionSpec(
            long: "stdin",
            help: "Read the passphrase (export-key, join), the etcd password (init --user) or the key (put) from "
                + "standard input as a line (one trailing newline, LF or CR LF, is removed); on a terminal, prompt "
                + "without echo."),
        SecretInput.exactOption(of: "key (put)"),
        OptionSpec(long: "generate", value: .required("BYTES"), help: "Draw a random key of BYTES bytes (put)."),
        OptionSpec(long: "version", value: .required("VERSION"), help: "The version (put, retire)."),
        OptionSpec(long: "count", value: .required("N"), help: "Stop after N changes (watch)."),
        OptionSpec(
            long: "force",
            help: "Retire a version even though this machine's fleet key does not open it (retire)."),
        OptionSpec(long: "timeout", value: .required("SECONDS"), help: "Stop after SECONDS (watch)."),
        OptionSpec(
            name: "replace-key", long: "replace-key",
            help: "Replace this keychain's fleet key (init, join); values sealed under the old key can no longer be "
                + "read here."),
    ],
    positionalNames: ["SUBCOMMAND", "ID|FILE"]
) { invocation throws(CommandLineError) in
    guard let implementation = invocation.fleet else { throw FleetCommands.unavailable }
    try implementation.runFleetCommand(invocation)
}
