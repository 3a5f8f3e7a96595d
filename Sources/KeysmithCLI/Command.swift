import Foundation

/// One `keysmith` command: its name, how it is used, its help, its options and what it does.
///
/// Commands are values collected in ``CommandRegistry/commands``; adding a command means
/// declaring one more `Command` and appending it there. `keysmith help` lists exactly the
/// registered commands, grouped by ``Group``.
public struct Command: Sendable {
    /// The sections of `keysmith help`, in the order they are listed.
    public enum Group: String, Sendable, CaseIterable {
        /// Item commands in the spirit of macOS `security`.
        case items = "Item commands (flags as macOS security)"
        /// Key retrieval commands (KeyRetriever).
        case retrieval = "Key retrieval commands"
        /// Keychain state commands.
        case keychain = "Keychain commands"
        /// The tool itself: demo, help.
        case tool = "Other commands"
    }

    /// The name typed after `keysmith`, for example `find-generic-password`.
    public let name: String
    /// The help section the command is listed in.
    public let group: Group
    /// The arguments after the name, for the usage line: `-s SERVICE -a ACCOUNT [-w]`.
    public let synopsis: String
    /// One line for the command list.
    public let summary: String
    /// Paragraphs for `keysmith help COMMAND` (what it does, output, examples).
    public let details: String
    /// The command's own options (the global options are added by the dispatcher).
    public let options: [OptionSpec]
    /// The names of the positional arguments it takes, for example `["COMMAND"]`.
    public let positionalNames: [String]
    /// Does the work. Throws ``CommandLineError`` to fail with its exit status.
    public let run: @Sendable (CommandInvocation) throws(CommandLineError) -> Void

    /// Creates a command.
    /// - Parameters:
    ///   - name: The command name.
    ///   - group: The help section.
    ///   - synopsis: The arguments for the usage line.
    ///   - summary: One line for the command list.
    ///   - details: The long help.
    ///   - options: The command's options.
    ///   - positionalNames: The positional arguments it accepts (none by default).
    ///   - run: The work.
    public init(
        name: String, group: Group, synopsis: String, summary: String, details: String, options: [OptionSpec],
        positionalNames: [String] = [], run: @escaping @Sendable (CommandInvocation) throws(CommandLineError) -> Void
    ) {
        self.name = name
        self.group = group
        self.synopsis = synopsis
        self.summary = summary
        self.details = details
        self.options = options
        self.positionalNames = positionalNames
        self.run = run
    }

    /// `usage: keysmith NAME SYNOPSIS`.
    public var usageLine: String {
        synopsis.isEmpty ? "usage: keysmith \(name)" : "usage: keysmith \(name) \(synopsis)"
    }
}

/// Everything a running command needs: its arguments, the global settings, the output
/// channels and the secret reader.
public final class CommandInvocation {
    /// The command being run.
    public let command: Command
    /// The parsed command line (the command's and the global options).
    public let arguments: ParsedArguments
    /// The global settings: keychain, access groups, `--json`, `--quiet`.
    public let settings: GlobalSettings
    /// Standard output and standard error.
    public let output: Output
    /// Reads secrets from standard input or a terminal prompt.
    public let secretInput: SecretInput
    /// The process environment the run was started with (the demo passes it on).
    public let environment: [String: String]
    /// The fleet implementation (etcd client) linked into this process, if any.
    public let fleet: (any FleetImplementation)?

    /// Creates an invocation.
    /// - Parameters:
    ///   - command: The command.
    ///   - arguments: Its parsed arguments.
    ///   - settings: The global settings.
    ///   - output: The output channels.
    ///   - secretInput: The secret reader.
    ///   - environment: The process environment.
    ///   - fleet: The fleet implementation linked into this process, if any.
    public init(
        command: Command, arguments: ParsedArguments, settings: GlobalSettings, output: Output,
        secretInput: SecretInput, environment: [String: String], fleet: (any FleetImplementation)? = nil
    ) {
        self.command = command
        self.arguments = arguments
        self.settings = settings
        self.output = output
        self.secretInput = secretInput
        self.environment = environment
        self.fleet = fleet
    }

    /// A usage error for this command (exit 2, with its usage line).
    /// - Parameter message: What is wrong with the command line.
    /// - Returns: The error to throw.
    public func usageError(_ message: String) -> CommandLineError {
        .usage(message, usageLine: command.usageLine)
    }

    /// The value of an option the command cannot do without.
    /// - Parameters:
    ///   - name: The canonical option name.
    ///   - spelling: How it is written, for the message (`-s SERVICE`).
    /// - Returns: The value.
    /// - Throws: A usage error when the option is missing or empty.
    public func requiredValue(_ name: String, spelling: String) throws(CommandLineError) -> String {
        guard let value = arguments.value(name), !value.isEmpty else {
            throw usageError("\(spelling) is required")
        }
        return value
    }
}

/// The list of every `keysmith` command, in help order.
///
/// The item commands (``ItemCommands``), the key retrieval commands (`resolve`, `explain`,
/// `audit`, `rotate`, `migrate-service`, `generate`: ``RetrievalCommands``), `demo` and
/// `help`; `keysmith help` shows what is registered.
public enum CommandRegistry {
    /// Every command, in the order `keysmith help` lists them within their groups.
    public static let commands: [Command] =
        ItemCommands.all + RetrievalCommands.all + FleetCommands.all + KeychainStateCommands.all + SecretServiceCommand.all + MacOSKeychainCommands.all
        + [DemoCommand.command, HelpCommand.command]

    /// The command with this name, if there is one.
    /// - Parameter name: The name typed on the command line.
    /// - Returns: The command, or `nil`.
    public static func command(named name: String) -> Command? {
        // An item command is built on its own: `find-generic-password -w` does not assemble
        // the help texts of every other command first.
        if let command = ItemCommands.command(named: name) { return command }
        return commands.first { $0.name == name }
    }

    /// The registered command whose name is closest to `name`, if any is close: a typo
    /// (`unlok`), a name that shares words with one (`find-password`, `keychain-info`), or a
    /// macOS `security` command that has a counterpart here (`list-keychains`: `status`).
    /// - Parameter name: The unknown name.
    /// - Returns: A suggestion, or `nil` when no command is close.
    public static func suggestion(for name: String) -> String? {
        let typed = name.lowercased()
        if let counterpart = macOSCounterparts.first(where: { $0.macOS == typed }) { return counterpart.here }
        let typedWords = typed.split(separator: "-")
        var best: (name: String, rank: (Int, Int, Int))?
        for command in commands {
            let distance = editDistance(typed, command.name)
            let words = command.name.split(separator: "-")
            // A word of the name typed that is a word (or, from three letters, the start of one) of the command's.
            func isShared(_ word: Substring) -> Bool { words.contains { $0 == word || (word.count >= 3 && $0.hasPrefix(word)) } }
            let shared = typedWords.filter(isShared).count
            // Shared words count only with the first word typed among them: `remove-keychain`
            // shares `keychain` with `create-keychain`, which does the opposite.
            let keepsTheVerb = typedWords.first.map(isShared) ?? false
            let rank: (Int, Int, Int)
            if distance <= max(2, typed.count / 4) {
                rank = (0, distance, 0)
            } else if shared > 0 && keepsTheVerb {
                rank = (1, -shared, distance)
            } else {
                continue
            }
            if best == nil || rank < best!.rank { best = (command.name, rank) }
        }
        return best?.name
    }

    /// Why a macOS `security` command that has no counterpart here is not needed, or how to
    /// do its job without it; `nil` for other names.
    /// - Parameter name: The unknown name.
    /// - Returns: The explanation, in place of a suggestion.
    public static func macOSNote(for name: String) -> String? {
        macOSNotes.first { $0.macOS == name.lowercased() }?.note
    }

    /// macOS `security` commands with no counterpart here (a suggestion would name a command
    /// that does something else), and what to do instead.
    static let macOSNotes: [(macOS: String, note: String)] = [
        ("set-key-partition-list",
         "keysmith needs no set-key-partition-list: there are no per-application access lists here; every program "
            + "entitled to an item's access group reads it (see --access-group)"),
        ("set-generic-password-partition-list",
         "keysmith needs no set-generic-password-partition-list: there are no per-application access lists here; "
            + "every program entitled to an item's access group reads it (see --access-group)"),
        ("set-internet-password-partition-list",
         "keysmith needs no set-internet-password-partition-list: there are no per-application access lists here; "
            + "every program entitled to an item's access group reads it (see --access-group)"),
    ]

    /// macOS `security` commands that have no command of the same name here, with the one
    /// that does their job.
    static let macOSCounterparts: [(macOS: String, here: String)] = [
        ("list-keychains", "status"), ("default-keychain", "status"), ("login-keychain", "status"),
        ("find-key", "find-generic-password"), ("dump", "dump-keychain"),
    ]

    private static func editDistance(_ left: String, _ right: String) -> Int {
        let a = Array(left), b = Array(right)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
