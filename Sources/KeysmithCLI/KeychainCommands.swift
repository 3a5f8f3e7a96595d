import Foundation
import KeychainServices

// The global options (which keychain, which access groups, --json, --quiet, --help) and
// the `help` command that documents every command and flag.

/// The options every command accepts, before or after the command name.
public enum GlobalOptions {
    /// `--keychain DIRECTORY`, `--access-group GROUP`, `--json`, `--quiet`, `-h`/`--help`.
    public static let specs: [OptionSpec] = [
        OptionSpec(
            long: "keychain", value: .required("DIRECTORY"),
            help: "The keychain directory to use (it holds keychain.db and device.key; the first item added "
                + "creates it, 0700; reading never does). Default: $KEYSMITH_HOME, else $XDG_DATA_HOME/keysmith, "
                + "else ~/.local/share/keysmith."),
        OptionSpec(
            name: "access-group", long: "access-group", value: .required("GROUP"), repeatable: true,
            help: "Act as a program entitled to GROUP (repeatable, or comma-separated): the first group is "
                + "where new items go, and finds and deletes see only these groups. Default: "
                + "$KEYSMITH_ACCESS_GROUPS, else the groups of the entitlements plist in $KEYSMITH_ENTITLEMENTS, "
                + "else new items go to \"\(GlobalSettings.defaultAccessGroup)\", the group every program without "
                + "configured access groups shares, and finds, deletes and dump-keychain see every group."),
        OptionSpec(long: "json", help: "Print data as JSON (sorted keys; fields listed in each command's help)."),
        OptionSpec(
            long: "quiet",
            help: "Print nothing on standard output except what a reveal flag (-w, -d, --reveal) asked for; the exit "
                + "status tells the outcome. Errors and warnings still go to standard error."),
        OptionSpec(name: "help", short: "h", long: "help", help: "Show the help of the command and exit."),
    ]

    /// `--version`, accepted before the command only (`resolve` and `explain` have a
    /// `--version VERSION` of their own).
    static let version = OptionSpec(name: "tool-version", long: "version", help: "Print the version of keysmith and exit.")

    /// The version `keysmith --version` prints.
    public static let toolVersion = "0.10.0"
}

/// The settings of one run that come from the global options and the environment.
public struct GlobalSettings: Sendable {
    /// The access group new items go to when none is configured: the one every program
    /// without configured access groups shares, so what the tool stores an app reads.
    #if canImport(Security) || KEYSMITH_APPLE_SURFACE
    public static let defaultAccessGroup = "keysmith.shared"
    #else
    public static let defaultAccessGroup = KeychainEnvironment.sharedAccessGroup
    #endif

    /// The keychain directory in force (Linux), or `nil` where the system keychain is used.
    public let keychainDirectory: URL?
    /// Where ``keychainDirectory`` came from, for messages: `--keychain`, `KEYSMITH_HOME`,
    /// `XDG_DATA_HOME` or `the default location`.
    public let keychainOrigin: String
    /// The access groups in force, default group first (`*` when every group is seen).
    /// Where the system keychain is used, only the groups given with `--access-group`.
    public let accessGroups: [String]
    /// Where ``accessGroups`` came from, for messages: `--access-group`, an environment
    /// variable, or the default.
    public let accessGroupOrigin: String
    /// Whether `--access-group` was given.
    public let accessGroupsGivenExplicitly: Bool
    /// Whether this run sees the items of every access group (nothing configured).
    public let seesEveryGroup: Bool
    /// `--json`.
    public let json: Bool
    /// `--quiet`.
    public let quiet: Bool

    /// Creates the settings of a run.
    /// - Parameters:
    ///   - arguments: The parsed command line.
    ///   - environment: The process environment (`KEYSMITH_HOME`, `KEYSMITH_ACCESS_GROUPS`,
    ///     `KEYSMITH_ENTITLEMENTS`, `KEYSMITH_TEAM_ID`, `XDG_DATA_HOME`, `HOME`).
    ///   - usageLine: The usage line for errors.
    /// - Throws: A usage error for `--keychain` where the system keychain is used, a
    ///   `--keychain` that names a file, or an empty `--keychain` or `--access-group` value.
    public init(arguments: ParsedArguments, environment: [String: String], usageLine: String) throws(CommandLineError) {
        json = arguments.contains("json")
        quiet = arguments.contains("quiet")
        let explicitGroups = arguments.values("access-group")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if arguments.contains("access-group") && (explicitGroups.isEmpty || explicitGroups.contains(where: \.isEmpty)) {
            throw .usage("--access-group needs a group name", usageLine: usageLine)
        }
        accessGroupsGivenExplicitly = !explicitGroups.isEmpty
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        if arguments.contains("keychain") {
            throw .usage(
                "--keychain is available only where keysmith runs its own keychain (Linux); here the system "
                    + "keychain is used", usageLine: usageLine)
        }
        keychainDirectory = nil
        keychainOrigin = "the system"
        accessGroups = explicitGroups
        accessGroupOrigin = explicitGroups.isEmpty ? "the program's entitlements" : "--access-group"
        seesEveryGroup = explicitGroups.isEmpty
        #else
        let fromEnvironment = KeychainEnvironment.fromProcessEnvironment(environment)
        if let path = arguments.value("keychain") {
            guard !path.isEmpty else { throw .usage("--keychain needs a directory", usageLine: usageLine) }
            let url = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                throw .failure(
                    "the keychain location \(url.path) given with --keychain is a file, not a directory.",
                    recovery: "give --keychain the keychain's directory (it holds keychain.db and device.key; the first "
                        + "add creates it), not a keychain file as macOS security takes.")
            }
            keychainDirectory = url
            keychainOrigin = "--keychain"
        } else {
            keychainDirectory = fromEnvironment.directory
            if let home = environment["KEYSMITH_HOME"], !home.isEmpty {
                keychainOrigin = "KEYSMITH_HOME"
            } else if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
                keychainOrigin = "XDG_DATA_HOME"
            } else {
                keychainOrigin = "the default location"
            }
        }
        if !explicitGroups.isEmpty {
            accessGroups = explicitGroups
            accessGroupOrigin = "--access-group"
        } else if environment["KEYSMITH_ACCESS_GROUPS"] != nil {
            // Set, even empty: the groups as an app with this environment has them (an empty
            // value is a configuration issue, reported by every keychain call).
            accessGroups = fromEnvironment.accessGroups
            accessGroupOrigin = "KEYSMITH_ACCESS_GROUPS"
        } else if let path = environment["KEYSMITH_ENTITLEMENTS"], !path.isEmpty {
            accessGroups = fromEnvironment.accessGroups
            accessGroupOrigin = "KEYSMITH_ENTITLEMENTS"
        } else {
            // Like macOS's security tool over the login keychain: see every group, store new
            // items in the group every unconfigured program shares.
            accessGroups = [Self.defaultAccessGroup, "*"]
            accessGroupOrigin = "the default"
        }
        seesEveryGroup = accessGroups.contains("*")
        configurationIssue = fromEnvironment.configurationIssue
        #endif
    }

    #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
    /// The configuration mistake the environment reported, handed on to the keychain calls.
    private let configurationIssue: KeychainEnvironment.ConfigurationIssue?
    #endif

    /// Whether the access-group configuration is broken (a missing entitlements file, an
    /// Xcode variable that cannot be expanded): keychain calls then name the cause.
    public var hasConfigurationIssue: Bool {
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        return false
        #else
        return configurationIssue != nil
        #endif
    }

    /// The group new items go to: the first access group, if known.
    public var defaultAccessGroup: String? { accessGroups.first { $0 != "*" } }

    /// The access group to put in queries. Where keysmith runs its own keychain the
    /// entitlements already limit every call, so no group is added; with the system
    /// keychain, the group from `--access-group` if given.
    public var queryAccessGroup: String? {
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        return accessGroups.first
        #else
        return nil
        #endif
    }

    /// For messages: `keysmith.shared (the default; ...)` or `a, b (from KEYSMITH_ACCESS_GROUPS)`.
    public var accessGroupsDescription: String {
        if accessGroupOrigin == "the default" {
            return "every group (the default; new items go to \(Self.defaultAccessGroup))"
        }
        let list = accessGroups.isEmpty ? "none" : accessGroups.joined(separator: ", ")
        return "\(list) (from \(accessGroupOrigin))"
    }

    /// For messages: the keychain directory, or `the system keychain`.
    public var keychainDescription: String {
        keychainDirectory?.path ?? "the system keychain"
    }

    /// Whether the keychain exists yet (reading never creates one).
    public var keychainExists: Bool {
        guard let keychainDirectory else { return true }
        return FileManager.default.fileExists(atPath: keychainDirectory.appendingPathComponent("keychain.db").path)
    }

    /// Runs `body` with this run's keychain directory and access groups, and the
    /// authenticators that prompt on the terminal, in force for the current task only (no
    /// process-wide state is changed).
    /// - Parameter body: The work.
    /// - Returns: What `body` returns.
    public func withKeychain<Result>(_ body: () -> Result) -> Result {
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        return body()
        #else
        // Items whose access control needs the user ask for the keychain passphrase on the
        // terminal.
        guard let keychainDirectory else {
            return KeychainAuthenticators.withAuthenticators(TerminalAuthenticators.list, body)
        }
        let environment = KeychainEnvironment(
            directory: keychainDirectory, accessGroups: accessGroups, configurationIssue: configurationIssue)
        return KeychainEnvironment.withEnvironment(environment) {
            KeychainAuthenticators.withAuthenticators(TerminalAuthenticators.list, body)
        }
        #endif
    }

    /// Runs `body` as a program entitled to `group` alone, when this run sees every group
    /// and `group` is not one it writes by default: how the tool changes an item it found
    /// in another program's group. Otherwise (groups configured, or no group) `body` runs
    /// as it is, within the configured groups.
    /// - Parameters:
    ///   - group: The access group of the item to change.
    ///   - body: The work.
    /// - Returns: What `body` returns.
    func inAccessGroup<Result>(_ group: String?, _ body: () -> Result) -> Result {
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        return body()
        #else
        guard seesEveryGroup, let group, group != defaultAccessGroup, let keychainDirectory else { return body() }
        let environment = KeychainEnvironment(directory: keychainDirectory, accessGroups: [group])
        return KeychainEnvironment.withEnvironment(environment, body)
        #endif
    }
}

// MARK: - help

/// `keysmith help [COMMAND]`.
public enum HelpCommand {
    /// The help command.
    public static let command = Command(
        name: "help", group: .tool, synopsis: "[COMMAND]",
        summary: "Show this overview, or every flag of one command",
        details: "Without a command: the list of commands, the global options, the exit statuses and the "
            + "environment variables. With a command: its usage line, what it does, every flag, its JSON "
            + "fields and examples. `keysmith COMMAND --help` does the same.",
        options: [], positionalNames: ["COMMAND"]
    ) { invocation throws(CommandLineError) in
        if let name = invocation.arguments.positionals.first {
            guard let command = CommandRegistry.command(named: name) else {
                throw unknownCommand(name, usageLine: invocation.command.usageLine)
            }
            invocation.output.block(commandHelp(command))
        } else {
            invocation.output.block(overview())
        }
    }

    /// The error for a command name that is not registered (with a suggestion if close).
    static func unknownCommand(_ name: String, usageLine: String) -> CommandLineError {
        var message = "unknown command '\(name)'"
        if let note = CommandRegistry.macOSNote(for: name) {
            message += " (\(note))"
        } else if let suggestion = CommandRegistry.suggestion(for: name) {
            message += " (did you mean '\(suggestion)'?)"
        }
        return .usage(message + "; 'keysmith help' lists the commands", usageLine: usageLine)
    }

    /// The usage line of the tool as a whole.
    static let toolUsageLine = "usage: keysmith [--keychain DIRECTORY] [--access-group GROUP] [--json] [--quiet] COMMAND [options]"

    /// The text of `keysmith help`.
    public static func overview() -> String {
        var lines: [String] = [
            "keysmith: keep keys in the keychain, and find them again.",
            "",
            toolUsageLine,
            "       keysmith help [COMMAND]",
            "       keysmith --version",
        ]
        let width = CommandRegistry.commands.map(\.name.count).max() ?? 0
        for group in Command.Group.allCases {
            let members = CommandRegistry.commands.filter { $0.group == group }
            guard !members.isEmpty else { continue }
            lines.append("")
            lines.append("\(group.rawValue):")
            for command in members {
                lines.append("  " + command.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + command.summary)
            }
        }
        lines.append("")
        lines.append("Global options (before or after the command):")
        lines.append(contentsOf: optionLines(GlobalOptions.specs))
        lines.append("")
        lines.append("Secrets:")
        lines.append(contentsOf: TextWrap.wrap(
            "A secret is printed only when a flag asks for it: -w (find: the secret alone on standard "
                + "output), -g (find: the secret on standard error, as macOS security), -d (dump-keychain) and "
                + "--reveal (resolve). "
                + "To store a secret, pipe it with --stdin, or put -w last to be prompted without echo; "
                + "'-w VALUE' works but warns, because the value lands in shell history and the process list.",
            indent: 2))
        lines.append("")
        lines.append("Exit status:")
        for code in ExitCode.allCases {
            lines.append("  " + String(code.rawValue).padding(toLength: 4, withPad: " ", startingAt: 0) + code.helpLine)
        }
        lines.append("")
        lines.append("Environment:")
        var environment = [
            ("KEYSMITH_HOME", "the keychain directory (overridden by --keychain)"),
            ("KEYSMITH_ACCESS_GROUPS", "comma-separated access groups (overridden by --access-group)"),
            ("KEYSMITH_ENTITLEMENTS", "an entitlements plist whose keychain-access-groups are used"),
            ("KEYSMITH_TEAM_ID", "the team ID that expands $(AppIdentifierPrefix) in that plist"),
            ("KEYSMITH_ASKPASS", "a program that asks for passwords (gets the prompt, prints the secret)"),
            ("XDG_DATA_HOME", "the keychain is $XDG_DATA_HOME/keysmith when KEYSMITH_HOME is not set"),
        ]
        #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
        environment += [
            ("KEYSMITH_KEY_STORE", "where a new keychain's device key goes: auto, file, tpm2, systemd-credential"),
            ("KEYSMITH_TPM2_TCTI", "how to reach the TPM (default device:/dev/tpmrm0; swtpm:host=H,port=P)"),
            ("KEYSMITH_TPM2_PCRS", "PCRs a new TPM-sealed key is bound to (7, or 0,7)"),
            ("KEYSMITH_TPM2_PIN", "the TPM PIN (child processes inherit it; a terminal prompt is safer)"),
        ]
        #endif
        for (name, meaning) in environment {
            lines.append("  " + name.padding(toLength: 24, withPad: " ", startingAt: 0) + meaning)
        }
        lines.append("")
        lines.append(contentsOf: TextWrap.wrap(
            "Errors are two lines on standard error: what happened, then what to do. With --json, data is "
                + "one JSON document on standard output (sorted keys); errors stay plain text. Dates are "
                + "ISO 8601 in UTC with milliseconds.", indent: 0))
        lines.append("")
        lines.append("Run 'keysmith help COMMAND' for every flag of a command.")
        return lines.joined(separator: "\n")
    }

    /// The text of `keysmith help COMMAND`.
    /// - Parameter command: The command.
    /// - Returns: Its usage line, description, options, global options and details.
    public static func commandHelp(_ command: Command) -> String {
        var lines: [String] = [command.usageLine, "", command.summary + "."]
        if !command.details.isEmpty {
            lines.append("")
            for paragraph in command.details.components(separatedBy: "\n\n") {
                if paragraph.hasPrefix("  ") {
                    lines.append(paragraph)  // preformatted (examples, field lists)
                } else {
                    lines.append(contentsOf: TextWrap.wrap(paragraph, indent: 0))
                }
                lines.append("")
            }
            lines.removeLast()
        }
        if !command.options.isEmpty {
            lines.append("")
            lines.append("Options:")
            lines.append(contentsOf: optionLines(command.options))
        }
        lines.append("")
        lines.append("Global options: --keychain DIRECTORY, --access-group GROUP, --json, --quiet, -h/--help "
            + "(see 'keysmith help').")
        return lines.joined(separator: "\n")
    }

    private static func optionLines(_ options: [OptionSpec]) -> [String] {
        let width = min(26, options.map(\.helpSpelling.count).max() ?? 0)
        var lines: [String] = []
        for option in options {
            let spelling = option.helpSpelling
            let help = TextWrap.wrap(option.help, indent: width + 4)
            if spelling.count <= width, let first = help.first {
                let head = "  " + spelling.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                lines.append(head + first.dropFirst(width + 4))
                lines.append(contentsOf: help.dropFirst())
            } else {
                lines.append("  " + spelling)
                lines.append(contentsOf: help)
            }
        }
        return lines
    }
}

/// Word wrapping for help text.
enum TextWrap {
    /// Wraps a paragraph.
    /// - Parameters:
    ///   - text: The paragraph (single spaces between words).
    ///   - indent: Spaces before every line.
    ///   - width: The maximum line length, indentation included.
    /// - Returns: The lines.
    static func wrap(_ text: String, indent: Int, width: Int = 80) -> [String] {
        let prefix = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.isEmpty {
                line = String(word)
            } else if prefix.count + line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(prefix + line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(prefix + line) }
        return lines
    }
}
