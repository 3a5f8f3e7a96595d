import Foundation
import KeychainServices

// The global options (which keychain, which access groups, --json, --quiet, --help) and
// the `help` command that documents every command and flag.

/// The options every command accepts, before or after the command name.
public enum GlobalOptions {
    /// `--keychain PATH`, `--access-group GROUP`, `--json`, `--quiet`, `-h`/`--help`.
    public static let specs: [OptionSpec] = [
        OptionSpec(
            long: "keychain", value: .required("PATH"),
            help: "The keychain directory to use (created 0700 if missing). Default: $KEYSMITH_HOME, else "
                + "$XDG_DATA_HOME/keysmith, else ~/.local/share/keysmith."),
        OptionSpec(
            name: "access-group", long: "access-group", value: .required("GROUP"), repeatable: true,
            help: "Act as a program entitled to GROUP (repeatable, or comma-separated). The first group is "
                + "where new items go; finds and deletes see only these groups. Default: "
                + "$KEYSMITH_ACCESS_GROUPS, else the groups of the entitlements plist in "
                + "$KEYSMITH_ENTITLEMENTS, else \"\(GlobalSettings.defaultAccessGroup)\"."),
        OptionSpec(long: "json", help: "Print data as JSON (sorted keys; fields listed in each command's help)."),
        OptionSpec(
            long: "quiet",
            help: "Print nothing on standard output except what a reveal flag (-w, --reveal) asked for; the exit status "
                + "tells the outcome. Errors and warnings still go to standard error."),
        OptionSpec(name: "help", short: "h", long: "help", help: "Show the help of the command and exit."),
    ]
}

/// The settings of one run that come from the global options and the environment.
public struct GlobalSettings: Sendable {
    /// The access group the CLI uses when none is configured: a stable name, so items
    /// stored by one version of the tool are found by the next (the engine's own default
    /// would be derived from the executable's name).
    public static let defaultAccessGroup = "keysmith.cli"

    /// The keychain directory in force (Linux), or `nil` where the system keychain is used.
    public let keychainDirectory: URL?
    /// The access groups in force, default group first. Where the system keychain is used,
    /// only the groups given with `--access-group`.
    public let accessGroups: [String]
    /// Where ``accessGroups`` came from, for messages: `--access-group`, an environment
    /// variable, or the default.
    public let accessGroupOrigin: String
    /// Whether `--access-group` was given.
    public let accessGroupsGivenExplicitly: Bool
    /// `--json`.
    public let json: Bool
    /// `--quiet`.
    public let quiet: Bool

    /// Creates the settings of a run.
    /// - Parameters:
    ///   - arguments: The parsed command line.
    ///   - environment: The process environment (`KEYSMITH_HOME`, `KEYSMITH_ACCESS_GROUPS`,
    ///     `KEYSMITH_ENTITLEMENTS`, `XDG_DATA_HOME`, `HOME`).
    ///   - usageLine: The usage line for errors.
    /// - Throws: A usage error for `--keychain` where the system keychain is used, or an
    ///   empty `--keychain` or `--access-group` value.
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
        accessGroups = explicitGroups
        accessGroupOrigin = explicitGroups.isEmpty ? "the program's entitlements" : "--access-group"
        #else
        let fromEnvironment = KeychainEnvironment.fromProcessEnvironment(environment)
        if let path = arguments.value("keychain") {
            guard !path.isEmpty else { throw .usage("--keychain needs a directory", usageLine: usageLine) }
            keychainDirectory = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        } else {
            keychainDirectory = fromEnvironment.directory
        }
        if !explicitGroups.isEmpty {
            accessGroups = explicitGroups
            accessGroupOrigin = "--access-group"
        } else if let list = environment["KEYSMITH_ACCESS_GROUPS"], !list.isEmpty {
            accessGroups = fromEnvironment.accessGroups
            accessGroupOrigin = "KEYSMITH_ACCESS_GROUPS"
        } else if let path = environment["KEYSMITH_ENTITLEMENTS"], !path.isEmpty {
            accessGroups = fromEnvironment.accessGroups
            accessGroupOrigin = "KEYSMITH_ENTITLEMENTS"
        } else {
            accessGroups = [Self.defaultAccessGroup]
            accessGroupOrigin = "the default"
        }
        #endif
    }

    /// The group new items go to: the first access group, if known.
    public var defaultAccessGroup: String? { accessGroups.first }

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

    /// For messages: `keysmith.cli (the default)` or `a, b (from KEYSMITH_ACCESS_GROUPS)`.
    public var accessGroupsDescription: String {
        let list = accessGroups.isEmpty ? "none" : accessGroups.joined(separator: ", ")
        if accessGroupOrigin == "the default" { return "\(list) (the default)" }
        return "\(list) (from \(accessGroupOrigin))"
    }

    /// For messages: the keychain directory, or `the system keychain`.
    public var keychainDescription: String {
        keychainDirectory?.path ?? "the system keychain"
    }

    /// Runs `body` with this run's keychain directory and access groups in force for the
    /// current task only (no process-wide state is changed).
    /// - Parameter body: The work.
    /// - Returns: What `body` returns.
    public func withKeychain<Result>(_ body: () -> Result) -> Result {
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        return body()
        #else
        guard let keychainDirectory else { return body() }
        let environment = KeychainEnvironment(directory: keychainDirectory, accessGroups: accessGroups)
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
            invocation.output.data(commandHelp(command))
        } else {
            invocation.output.data(overview())
        }
    }

    /// The error for a command name that is not registered (with a suggestion if close).
    static func unknownCommand(_ name: String, usageLine: String) -> CommandLineError {
        var message = "unknown command '\(name)'"
        if let suggestion = CommandRegistry.suggestion(for: name) { message += " (did you mean '\(suggestion)'?)" }
        return .usage(message + "; 'keysmith help' lists the commands", usageLine: usageLine)
    }

    /// The usage line of the tool as a whole.
    static let toolUsageLine = "usage: keysmith [--keychain PATH] [--access-group GROUP] [--json] [--quiet] COMMAND [options]"

    /// The text of `keysmith help`.
    public static func overview() -> String {
        var lines: [String] = [
            "keysmith: keep keys in the keychain, and find them again.",
            "",
            toolUsageLine,
            "       keysmith help [COMMAND]",
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
        let environment = [
            ("KEYSMITH_HOME", "the keychain directory (overridden by --keychain)"),
            ("KEYSMITH_ACCESS_GROUPS", "comma-separated access groups (overridden by --access-group)"),
            ("KEYSMITH_ENTITLEMENTS", "an entitlements plist whose keychain-access-groups are used"),
            ("XDG_DATA_HOME", "the keychain is $XDG_DATA_HOME/keysmith when KEYSMITH_HOME is not set"),
        ]
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
        lines.append("Global options: --keychain PATH, --access-group GROUP, --json, --quiet, -h/--help "
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
