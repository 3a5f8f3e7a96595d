import Foundation
import KeychainServices

// macOS `security`'s keychain commands, with the options that mean something here: each runs
// the keychain command it stands for (create, unlock, lock, passwd, status), so both
// spellings behave alike. The keychain argument macOS takes is the keychain directory here.

/// `create-keychain`, `unlock-keychain`, `lock-keychain`, `set-keychain-password`,
/// `set-keychain-settings` and `show-keychain-info`, as macOS `security` names them.
public enum MacOSKeychainCommands {
    /// Every command, in help order (none where the system keychain is used).
    public static let all: [Command] = {
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        return []
        #else
        return [createKeychain, unlockKeychain, lockKeychain, setKeychainPassword, setKeychainSettings, showKeychainInfo]
        #endif
    }()
}

#if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
/// What every command's help says about the keychain argument.
private let keychainArgumentHelp =
    "KEYCHAIN is the keychain directory, as --keychain DIRECTORY (it holds keychain.db; a macOS keychain file name "
    + "such as login.keychain names a directory here); without it, the keychain in use ($KEYSMITH_HOME, else "
    + "~/.local/share/keysmith)."

private let passwordHelp =
    "works, with a warning: a password on the command line lands in shell history and the process list; "
    + "without it the passphrase is asked without echo, or read from standard input with --stdin."

private let stdin = OptionSpec(
    name: "stdin", long: "stdin",
    help: "Read the passphrase(s) from standard input instead of prompting, one per line.")

/// The keychain command `name` (create, unlock, lock, passwd, status).
private func keychainCommand(_ name: String) -> Command {
    guard let command = KeychainStateCommands.all.first(where: { $0.name == name }) else {
        preconditionFailure("no keychain command \(name)")
    }
    return command
}

/// The `--keychain DIRECTORY` occurrence for the KEYCHAIN argument, if one was given; a
/// usage error when it names another directory than --keychain.
private func keychainOccurrence(_ invocation: CommandInvocation) throws(CommandLineError) -> OptionOccurrence? {
    guard let argument = invocation.arguments.positionals.first else { return nil }
    guard !argument.isEmpty else { throw invocation.usageError("KEYCHAIN is empty; give the keychain directory, or leave it out") }
    if let flag = invocation.arguments.value("keychain"),
        URL(fileURLWithPath: flag).standardizedFileURL.path != URL(fileURLWithPath: argument).standardizedFileURL.path
    {
        throw invocation.usageError(
            "KEYCHAIN (\(argument)) and --keychain (\(flag)) name different directories; give one of them")
    }
    return OptionOccurrence("keychain", argument)
}

/// A password given on the command line (`-p`, `-o`), warned about; `nil` when not given.
private func commandLinePassword(_ invocation: CommandInvocation, _ name: String) -> String? {
    guard let value = invocation.arguments.value(name) else { return nil }
    // An empty password (create-keychain -p "") reveals nothing.
    if value.isEmpty { return value }
    invocation.output.warning(
        "a password given as '-\(name == "old-password" ? "o" : "p") PASSWORD' lands in your shell history and is visible "
            + "to other users in the process list; prefer --stdin (printf '%s\\n' \"$PASSPHRASE\" | keysmith ... --stdin) "
            + "or leave it out to be prompted without echo.")
    return value
}

/// Runs the keychain command `target` with `occurrences` (its own options and handed-on
/// passphrases), the global options of `invocation`, and KEYCHAIN as --keychain.
private func run(
    _ target: Command, for invocation: CommandInvocation, occurrences: [OptionOccurrence]
) throws(CommandLineError) {
    let global = Set(GlobalOptions.specs.map(\.name))
    var kept = invocation.arguments.occurrences.filter { global.contains($0.name) }
    if let keychain = try keychainOccurrence(invocation) {
        kept.removeAll { $0.name == "keychain" }
        kept.append(keychain)
    }
    let arguments = ParsedArguments(occurrences: kept + occurrences)
    let settings = try GlobalSettings(arguments: arguments, environment: invocation.environment, usageLine: invocation.command.usageLine)
    if target.name != "create", !settings.keychainExists, let directory = settings.keychainDirectory {
        throw noKeychain(directory)
    }
    let handedOn = CommandInvocation(
        command: target, arguments: arguments, settings: settings, output: invocation.output,
        secretInput: invocation.secretInput, environment: invocation.environment, fleet: invocation.fleet)
    var failure: CommandLineError?
    settings.withKeychain {
        do throws(CommandLineError) {
            try target.run(handedOn)
        } catch {
            failure = error
        }
    }
    if let failure { throw failure }
}

/// Runs `body` with the keychain of `invocation` (KEYCHAIN, --keychain or the default) in force.
private func withNamedKeychain<Result>(
    _ invocation: CommandInvocation, _ body: (URL) throws -> Result
) throws(CommandLineError) -> Result {
    var occurrences = invocation.arguments.occurrences
    if let keychain = try keychainOccurrence(invocation) { occurrences.append(keychain) }
    let settings = try GlobalSettings(
        arguments: ParsedArguments(occurrences: occurrences), environment: invocation.environment,
        usageLine: invocation.command.usageLine)
    let directory = settings.keychainDirectory ?? KeychainEnvironment.current.directory
    let environment = KeychainEnvironment(directory: directory, accessGroups: settings.accessGroups)
    do {
        return try KeychainEnvironment.withEnvironment(environment) { try body(directory) }
    } catch let error as CommandLineError {
        throw error
    } catch let error as KeychainStateError {
        var message = error.reason
        if message.hasSuffix(".") { message.removeLast() }
        throw CommandLineError(.failure, message + " (\(error.statusName), \(error.status)).", recovery: error.recovery, status: error.status)
    } catch {
        throw .failure("\(error)")
    }
}

private let createKeychain = Command(
    name: "create-keychain", group: .keychain, synopsis: "[-p PASSWORD | -P | --stdin] [KEYCHAIN]",
    summary: "macOS security's name for create: create the keychain, with a passphrase",
    details: """
        Creates the keychain as 'keysmith create' does: with a passphrase, asked twice without echo (-P asks too, as on macOS), read from standard input with --stdin, or given with -p PASSWORD, which \(passwordHelp) -p "" (an empty password, as CI scripts write it on macOS) creates the keychain without a passphrase, as 'keysmith create --no-passphrase'.

        \(keychainArgumentHelp)

        Examples:

          keysmith create-keychain build.keychain
          printf '%s\\n' "$PASSPHRASE" | keysmith create-keychain --stdin build.keychain
        """,
    options: [
        OptionSpec(name: "password", short: "p", value: .required("PASSWORD"), help: "The new passphrase (warns; -p \"\": none)."),
        OptionSpec(name: "prompt", short: "P", help: "Ask for the passphrase (the default)."),
        stdin,
    ],
    positionalNames: ["KEYCHAIN"]
) { invocation throws(CommandLineError) in
    var occurrences: [OptionOccurrence] = []
    if let password = commandLinePassword(invocation, "password") {
        occurrences.append(password.isEmpty ? OptionOccurrence("no-passphrase") : OptionOccurrence(GivenPassphrase.new, password))
    } else if invocation.arguments.contains("stdin") {
        occurrences.append(OptionOccurrence("stdin"))
    }
    try run(keychainCommand("create"), for: invocation, occurrences: occurrences)
}

private let unlockKeychain = Command(
    name: "unlock-keychain", group: .keychain, synopsis: "[-p PASSWORD | --stdin] [KEYCHAIN]",
    summary: "macOS security's name for unlock: unlock the keychain",
    details: """
        Unlocks the keychain as 'keysmith unlock' does, for the keychain's auto-lock time (set-keychain-settings -t; else $KEYSMITH_AUTO_LOCK, else 900 seconds). The passphrase is asked without echo, read from standard input with --stdin, or given with -p PASSWORD, which \(passwordHelp)

        \(keychainArgumentHelp)

        Example:

          keysmith unlock-keychain build.keychain
        """,
    options: [
        OptionSpec(name: "password", short: "p", value: .required("PASSWORD"), help: "The passphrase (warns)."),
        stdin,
    ],
    positionalNames: ["KEYCHAIN"]
) { invocation throws(CommandLineError) in
    var occurrences: [OptionOccurrence] = []
    if let password = commandLinePassword(invocation, "password") {
        occurrences.append(OptionOccurrence(GivenPassphrase.current, password))
    } else if invocation.arguments.contains("stdin") {
        occurrences.append(OptionOccurrence("stdin"))
    }
    try run(keychainCommand("unlock"), for: invocation, occurrences: occurrences)
}

private let lockKeychain = Command(
    name: "lock-keychain", group: .keychain, synopsis: "[-a] [KEYCHAIN]",
    summary: "macOS security's name for lock: lock the keychain",
    details: """
        Locks the keychain as 'keysmith lock' does (its items accessible only when unlocked). -a (every keychain, on macOS) locks this one: keysmith uses one keychain at a time. To lock also the items accessible after the first unlock, as a restart does, use 'keysmith lock --all'.

        \(keychainArgumentHelp)
        """,
    options: [OptionSpec(name: "every-keychain", short: "a", help: "Lock every keychain: here, the one in use.")],
    positionalNames: ["KEYCHAIN"]
) { invocation throws(CommandLineError) in
    try run(keychainCommand("lock"), for: invocation, occurrences: [])
}

private let setKeychainPassword = Command(
    name: "set-keychain-password", group: .keychain, synopsis: "[-o OLD] [-p NEW] [--stdin] [KEYCHAIN]",
    summary: "macOS security's name for passwd: set or change the keychain passphrase",
    details: """
        Sets or changes the keychain passphrase as 'keysmith passwd' does. -o OLD gives the current passphrase and -p NEW the new one; each \(passwordHelp) With --stdin, standard input holds the ones not given, one per line: the current one first (when the keychain has one), then the new one.

        \(keychainArgumentHelp)
        """,
    options: [
        OptionSpec(name: "old-password", short: "o", value: .required("OLD"), help: "The current passphrase (warns)."),
        OptionSpec(name: "password", short: "p", value: .required("NEW"), help: "The new passphrase (warns)."),
        stdin,
    ],
    positionalNames: ["KEYCHAIN"]
) { invocation throws(CommandLineError) in
    var occurrences: [OptionOccurrence] = []
    if let old = commandLinePassword(invocation, "old-password") { occurrences.append(OptionOccurrence(GivenPassphrase.current, old)) }
    if let new = commandLinePassword(invocation, "password") {
        guard !new.isEmpty else {
            throw invocation.usageError("-p needs a passphrase; to remove the passphrase use 'keysmith passwd --remove'")
        }
        occurrences.append(OptionOccurrence(GivenPassphrase.new, new))
    }
    if invocation.arguments.contains("stdin") { occurrences.append(OptionOccurrence("stdin")) }
    try run(keychainCommand("passwd"), for: invocation, occurrences: occurrences)
}

private let setKeychainSettings = Command(
    name: "set-keychain-settings", group: .keychain, synopsis: "[-lu] [-t SECONDS] [KEYCHAIN]",
    summary: "Set when the unlocked keychain locks itself (-t SECONDS; none: never)",
    details: """
        Sets the keychain's auto-lock time, as macOS's set-keychain-settings: -t SECONDS locks it SECONDS after each unlock; without -t it stays unlocked until 'keysmith lock' (no timeout, as on macOS). The setting is kept with the keychain and used by every later unlock ($KEYSMITH_AUTO_LOCK and 'keysmith unlock --timeout' still win); an unlocked keychain now locks SECONDS from now. -u (lock after the timeout) is implied by -t; -l (lock on sleep) is accepted and does nothing: keysmith does not see the machine sleep.

        \(keychainArgumentHelp)

        Example:

          keysmith set-keychain-settings -t 3600 build.keychain
        """,
    options: [
        OptionSpec(name: "timeout", short: "t", value: .required("SECONDS"), help: "Lock SECONDS after an unlock (0 or none: never)."),
        OptionSpec(name: "lock-after-timeout", short: "u", help: "Lock after the timeout (implied by -t)."),
        OptionSpec(name: "lock-on-sleep", short: "l", help: "Lock on sleep: accepted, does nothing here."),
    ],
    positionalNames: ["KEYCHAIN"]
) { invocation throws(CommandLineError) in
    var setting = KeychainEnvironment.AutoLock.never
    if let text = invocation.arguments.value("timeout") {
        guard let seconds = UInt32(text) else { throw invocation.usageError("-t needs a number of seconds, not '\(text)'") }
        if seconds > 0 { setting = .after(seconds) }
    }
    if invocation.arguments.contains("lock-on-sleep") {
        invocation.output.warning("-l (lock on sleep) does nothing here: keysmith does not see the machine sleep.")
    }
    let (directory, appliedNow, hasPassphrase) = try withNamedKeychain(invocation) { directory in
        guard KeychainEnvironment.keychainExists else { throw noKeychain(directory) }
        return (directory, try KeychainEnvironment.setAutoLock(setting), KeychainEnvironment.hasPassphrase)
    }
    let when: String
    switch setting {
    case .never: when = "stays unlocked until 'keysmith lock'"
    case .after(let seconds) where !hasPassphrase:
        // Kept for later: a keychain without a passphrase is always unlocked.
        when = "will lock itself \(seconds) seconds after each unlock once it has a passphrase; it has no passphrase "
            + "now, so it is always unlocked (give it one with 'keysmith passwd')"
    case .after(let seconds): when = "locks itself \(seconds) seconds after each unlock"
    }
    invocation.output.info(
        "the keychain in \(directory.path) \(when)"
            + (appliedNow && hasPassphrase && setting != .never ? " (counted from now, as it is unlocked)" : ""))
}

private let showKeychainInfo = Command(
    name: "show-keychain-info", group: .keychain, synopsis: "[KEYCHAIN]",
    summary: "macOS security's name for a short status: the keychain, its auto-lock time and lock state",
    details: """
        Prints the keychain and its auto-lock setting the way macOS does (Keychain "PATH" timeout=SECONDS, or no-timeout), then its lock state. 'keysmith status' shows more: items per accessibility, where the lock state and the device key are kept. On a directory without a keychain it says so (exit status 1).

        \(keychainArgumentHelp)
        """,
    options: [],
    positionalNames: ["KEYCHAIN"]
) { invocation throws(CommandLineError) in
    let line = try withNamedKeychain(invocation) { directory -> String in
        guard KeychainEnvironment.keychainExists else { throw noKeychain(directory) }
        let timeout = KeychainEnvironment.defaultAutoLock.map { "timeout=\($0)s" } ?? "no-timeout"
        let state: String
        switch (KeychainEnvironment.hasPassphrase, KeychainEnvironment.lockState, KeychainEnvironment.autoLockTimeLeft) {
        case (false, _, _): state = "no passphrase: always unlocked"
        case (_, .unlocked, .seconds(let seconds)): state = "unlocked, locks itself in \(durationText(seconds))"
        case (_, .unlocked, _): state = "unlocked until 'keysmith lock'"
        case (_, .locked, _): state = "locked"
        case (_, .beforeFirstUnlock, _): state = "locked (not unlocked since the machine started)"
        }
        return "Keychain \"\(directory.path)\" \(timeout); \(state)"
    }
    invocation.output.data(line)
}
#endif
