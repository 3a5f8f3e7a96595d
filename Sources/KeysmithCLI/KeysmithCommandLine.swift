import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry point of the `keysmith` tool.
///
/// `main.swift` calls ``run(_:)``; everything else (parsing, dispatch, output, exit
/// statuses) lives here and in the command files, so it can be tested without a process.
public enum KeysmithCommandLine {
    /// Runs the tool with `arguments` (the first is the program name) and returns the
    /// process exit status (see ``ExitCode``). A command line that needs the fleet's etcd
    /// client (`fleet …`, `--fleet`) is handed to `keysmith-fleet` beside this executable
    /// (see ``FleetCommands``).
    /// - Parameter arguments: The command line, program name first.
    /// - Returns: The exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        if let refused = refusingArgumentsNotUTF8(output: .process()) { return refused }
        return run(
            arguments, environment: processEnvironment(), output: .process(),
            secretInput: SecretInput(), fleet: .separateExecutable(processArguments: arguments))
    }

    /// Refuses a process whose command line holds an argument that is not valid UTF-8:
    /// reports which one (never its bytes: it may be a secret given with `-w`) and returns the
    /// usage exit status; `nil` when every argument is UTF-8.
    ///
    /// Names are bytes of UTF-8 text. `CommandLine.arguments` repairs every invalid byte into
    /// U+FFFD, so `-s $'tenant\xFF'` and `-s $'tenant\xFE'` would both name the service
    /// `tenant\u{FFFD}`, and one would read the other's item.
    /// - Parameter output: Where the error goes.
    /// - Returns: The exit status, or `nil`.
    package static func refusingArgumentsNotUTF8(output: Output) -> Int32? {
        let count = Int(CommandLine.argc)
        guard count > 1 else { return nil }
        for position in 1..<count {
            guard let argument = CommandLine.unsafeArgv[position], String(validatingCString: argument) == nil else {
                continue
            }
            let error = CommandLineError.usage(
                "argument \(position) is not valid UTF-8 text; names (service, account, label, ...) are UTF-8, and "
                    + "keysmith does not guess what other bytes mean (the argument is not repeated here). Pass names "
                    + "as UTF-8 text, and secrets on standard input: --stdin-exact stores any bytes",
                usageLine: HelpCommand.toolUsageLine)
            report(error, commandName: nil, output: output)
            output.flush()
            return error.exitCode.rawValue
        }
        return nil
    }

    /// The process environment, as `ProcessInfo.processInfo.environment` gives it (each
    /// `NAME=VALUE` entry of `environ` split at its first `=`, a later entry for the same name
    /// winning, entries without `=` left out, invalid UTF-8 repaired), read without
    /// Foundation's conversions: it is read once per run, at start-up.
    /// - Returns: The variables.
    package static func processEnvironment() -> [String: String] {
        #if os(Linux)
        let entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard var entry = entries else { return [:] }
        var count = 0
        while entry[count] != nil { count += 1 }
        // Sized once: growing entry by entry rehashes every name at each doubling.
        var variables = [String: String](minimumCapacity: count)
        while let pointer = entry.pointee {
            let length = strlen(pointer)
            pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
                let text = UnsafeBufferPointer(start: bytes, count: length)
                if let equals = text.firstIndex(of: UInt8(ascii: "=")) {
                    let name = String(decoding: UnsafeBufferPointer(rebasing: text[..<equals]), as: UTF8.self)
                    variables[name] = String(
                        decoding: UnsafeBufferPointer(rebasing: text[(equals + 1)...]), as: UTF8.self)
                }
            }
            entry += 1
        }
        return variables
        #else
        return ProcessInfo.processInfo.environment
        #endif
    }

    /// Runs the tool with explicit environment variables and I/O; the demo runs its steps
    /// through here with a captured ``Output``.
    ///
    /// The keychain directory and access groups are put in force for this call only
    /// (task-scoped), so nothing process-wide changes.
    /// - Parameters:
    ///   - arguments: The command line, program name first.
    ///   - environment: The environment variables to honour (`KEYSMITH_HOME`, ...).
    ///   - output: Where output goes.
    ///   - secretInput: Where secrets are read from.
    ///   - fleet: Where the fleet commands run (by default nowhere: they fail).
    /// - Returns: The exit status.
    public static func run(
        _ arguments: [String], environment: [String: String], output: Output, secretInput: SecretInput,
        fleet: FleetSupport = .unavailable
    ) -> Int32 {
        var commandName: String?
        do throws(CommandLineError) {
            try dispatch(
                Array(arguments.dropFirst()), environment: environment, output: output, secretInput: secretInput,
                fleet: fleet, commandName: &commandName)
            output.flush()
            if let failure = writeFailure(output, commandName: commandName) { throw failure }
            return ExitCode.success.rawValue
        } catch {
            report(error, commandName: commandName, output: output)
            // A failed write of the output outranks the command's own outcome only when the
            // command succeeded (a script must not take a failed write for output).
            return error.exitCode.rawValue
        }
    }

    /// The commands that change the keychain: when their report cannot be written, the
    /// change itself is already made, and running them again would not repeat it (an add
    /// finds the item, a rotation its version, a delete nothing).
    static let keychainChangingCommands: Set<String> = [
        "add-generic-password", "add-internet-password", "delete-generic-password", "delete-internet-password",
        "rotate", "migrate-service",
    ]

    /// The error for output that could not be written (a full disk, a closed pipe), if any:
    /// exit status 1, so `keysmith … -w > key.file` never passes an empty file on as a key.
    private static func writeFailure(_ output: Output, commandName: String?) -> CommandLineError? {
        guard let reason = output.standardOutputFailure else { return nil }
        let check = "check where standard output goes (free space on the disk, a reader at the other end of the pipe)"
        if let commandName, keychainChangingCommands.contains(commandName) {
            return .failure(
                "cannot write the output to standard output: \(reason); the keychain change itself was made, only "
                    + "its report is incomplete.",
                recovery: "\(check); do not run the command again to repeat the change: keysmith dump-keychain "
                    + "shows the keychain as it is now.")
        }
        return .failure(
            "cannot write the output to standard output: \(reason); what was printed is incomplete.",
            recovery: "\(check) and run the command again.")
    }

    private static func dispatch(
        _ words: [String], environment: [String: String], output: Output, secretInput: SecretInput,
        fleet: FleetSupport, commandName: inout String?
    ) throws(CommandLineError) {
        let globalParser = ArgumentParser(options: GlobalOptions.specs + [GlobalOptions.version])
        let leading: ParsedArguments
        do {
            leading = try globalParser.parse(words, stopAtFirstPositional: true)
        } catch {
            throw .usage(error.description, usageLine: HelpCommand.toolUsageLine)
        }
        if leading.contains("tool-version") {
            output.data("keysmith \(GlobalOptions.toolVersion)")
            return
        }
        guard let name = leading.positionals.first else {
            if leading.contains("help") {
                output.block(HelpCommand.overview())
                return
            }
            throw .usage("no command given; 'keysmith help' lists the commands", usageLine: HelpCommand.toolUsageLine)
        }
        guard let command = CommandRegistry.command(named: name) else {
            throw HelpCommand.unknownCommand(name, usageLine: HelpCommand.toolUsageLine)
        }
        commandName = command.name
        let commandParser = ArgumentParser(options: command.options + GlobalOptions.specs)
        let trailing: ParsedArguments
        do {
            trailing = try commandParser.parse(Array(leading.positionals.dropFirst()))
        } catch {
            throw .usage(error.description, usageLine: command.usageLine)
        }
        let arguments = ParsedArguments(occurrences: leading.occurrences).appending(trailing)
        if arguments.contains("help") {
            output.block(HelpCommand.commandHelp(command))
            return
        }
        if arguments.positionals.count > command.positionalNames.count {
            let extra = arguments.positionals[command.positionalNames.count]
            // A command that takes a secret may have been handed it here by mistake
            // (`-w -- SECRET`, a forgotten -w): never echo such an argument.
            // macOS security takes a keychain file as the last argument; keysmith takes --keychain.
            let keychainHint = command.group == .items
                ? "; if it names a keychain, give the keychain directory with --keychain DIRECTORY (before or after "
                    + "the command): keysmith does not take a keychain as the last argument as macOS security does"
                : ""
            if command.options.contains(where: { $0.name == "stdin" }) {
                // Only commands that have -w prompt with it; the others prompt on their own.
                let prompt = command.options.contains(where: { $0.shortName == "w" }) ? "at the -w prompt" : "at the prompt"
                throw .usage(
                    "unexpected argument (\(extra.count) characters, not shown in case it is a secret); "
                        + "give a secret with --stdin or \(prompt)\(keychainHint)", usageLine: command.usageLine)
            }
            throw .usage("unexpected argument '\(extra)'\(keychainHint)", usageLine: command.usageLine)
        }
        if FleetCommands.needsFleet(command, arguments) {
            switch fleet {
            case .linked: break
            case .separateExecutable(let processArguments): throw FleetCommands.executeFleetExecutable(processArguments)
            case .unavailable: throw FleetCommands.unavailable
            }
        }
        if SecretServiceCommand.isSecretService(command) {
            // The server is keysmith-secret-service beside this executable (it links sd-bus).
            guard case .separateExecutable(let processArguments) = fleet else { throw SecretServiceCommand.unavailable }
            throw SecretServiceCommand.executeServer(processArguments)
        }
        let settings = try GlobalSettings(arguments: arguments, environment: environment, usageLine: command.usageLine)
        output.json = settings.json
        output.quiet = settings.quiet
        let invocation = CommandInvocation(
            command: command, arguments: arguments, settings: settings, output: output, secretInput: secretInput,
            environment: environment, fleet: fleet.implementation)
        var failure: CommandLineError?
        settings.withKeychain {
            do throws(CommandLineError) {
                #if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
                DeviceKeyCommands.askForTPMPINIfNeeded(command)
                #endif
                try command.run(invocation)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Prints an error as `keysmith: COMMAND: what happened`, then what to do, then (for
    /// usage errors) the usage line.
    private static func report(_ error: CommandLineError, commandName: String?, output: Output) {
        let prefix = commandName.map { "keysmith: \($0): " } ?? "keysmith: "
        output.error(prefix + error.message)
        if let recovery = error.recovery {
            output.error("  to fix: \(recovery)")
        }
        if let usageLine = error.usageLine {
            output.error(usageLine)
        }
    }
}
