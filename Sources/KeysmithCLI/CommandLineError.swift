import Foundation
import KeychainServices

/// The exit statuses of `keysmith`, documented in `keysmith help`.
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// The command did what was asked.
    case success = 0
    /// Any other failure: the keychain refused the operation, input could not be read, …
    case failure = 1
    /// The command line was wrong (unknown command or option, missing value); the usage
    /// line of the command is printed.
    case usage = 2
    /// The key retrieval policy refused to serve a key: a key marked sensitive
    /// (`--sensitive`) was found first in a plaintext source (config file, environment).
    case policyRefused = 3
    /// The item (or key) was not found; the same status macOS `security` uses.
    case itemNotFound = 44
    /// The item already exists (an add without -U); the same status macOS `security` uses.
    case duplicateItem = 45
    /// A write reached no answer: etcd may have applied it or not (`fleet put`, `fleet
    /// retire`); look before trying again.
    case outcomeUnknown = 75

    /// One line for the exit-status table of `keysmith help`.
    var helpLine: String {
        switch self {
        case .success: return "success"
        case .failure: return "failure (the keychain refused, input could not be read or output written, ...)"
        case .usage: return "bad usage: unknown command or option, missing value (the usage line is printed)"
        case .itemNotFound: return "the item was not found (as macOS security), or no source holds the key"
        case .duplicateItem: return "the item already exists (as macOS security); add -U updates it"
        case .policyRefused:
            return "refused: a key marked --sensitive was found first in a plaintext source (resolve, explain)"
        case .outcomeUnknown:
            return "the outcome is unknown: etcd may have applied the write but did not answer (fleet put, retire)"
        }
    }
}

/// A failure of a `keysmith` command: what happened, what to do, and the exit status.
///
/// Printed on standard error as two lines, never with secret bytes:
/// ```
/// keysmith: add-generic-password: The specified item already exists in the keychain. (errSecDuplicateItem, -25299)
///   to fix: pass -U to update the existing item, or delete it first with delete-generic-password.
/// ```
public struct CommandLineError: Error, Sendable, CustomStringConvertible {
    /// The exit status the process ends with.
    public let exitCode: ExitCode
    /// What happened, one sentence.
    public let message: String
    /// What to do about it, one sentence, if there is something to say.
    public let recovery: String?
    /// For usage errors: the usage line of the command.
    public let usageLine: String?
    /// For keychain failures: the status the SecItem call returned.
    public let status: OSStatus?

    /// Creates an error.
    /// - Parameters:
    ///   - exitCode: The exit status.
    ///   - message: What happened.
    ///   - recovery: What to do, if anything.
    ///   - usageLine: The usage line to print (usage errors).
    ///   - status: The keychain status, if one caused this.
    public init(
        _ exitCode: ExitCode, _ message: String, recovery: String? = nil, usageLine: String? = nil,
        status: OSStatus? = nil
    ) {
        self.exitCode = exitCode
        self.message = message
        self.recovery = recovery
        self.usageLine = usageLine
        self.status = status
    }

    /// A bad command line (exit 2).
    /// - Parameters:
    ///   - message: What is wrong.
    ///   - usageLine: The usage line of the command.
    /// - Returns: The error.
    public static func usage(_ message: String, usageLine: String) -> CommandLineError {
        CommandLineError(.usage, message, usageLine: usageLine)
    }

    /// A failure that is not about the command line (exit 1).
    /// - Parameters:
    ///   - message: What happened.
    ///   - recovery: What to do.
    /// - Returns: The error.
    public static func failure(_ message: String, recovery: String? = nil) -> CommandLineError {
        CommandLineError(.failure, message, recovery: recovery)
    }

    /// The lines printed on standard error (the program and command name are prefixed by
    /// the caller).
    public var description: String {
        var text = message
        if let recovery { text += "\n  to fix: \(recovery)" }
        return text
    }
}

// MARK: - Keychain statuses

/// The status of one SecItem call together with the engine's explanation of it, captured
/// on the calling thread right after the call.
struct KeychainCallOutcome: Sendable {
    /// The status the call returned.
    let status: OSStatus
    /// The engine's precise cause (Linux), if it recorded one.
    let cause: String?
    /// The engine's suggested fix (Linux), if it recorded one.
    let engineRecovery: String?

    /// Whether the call succeeded.
    var succeeded: Bool { status == errSecSuccess }

    /// Runs one SecItem call and captures its diagnostics before anything else can
    /// overwrite them.
    /// - Parameter call: The call, returning its status.
    /// - Returns: The outcome.
    static func capture(_ call: () -> OSStatus) -> KeychainCallOutcome {
        let status = call()
        guard status != errSecSuccess else { return KeychainCallOutcome(status: status, cause: nil, engineRecovery: nil) }
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        return KeychainCallOutcome(status: status, cause: nil, engineRecovery: nil)
        #else
        return KeychainCallOutcome(
            status: status, cause: KeychainDiagnostics.lastFailureDescription,
            engineRecovery: KeychainDiagnostics.lastFailureRecovery)
        #endif
    }
}

/// Turns keychain statuses into `keysmith` errors: the single place where an `OSStatus`
/// becomes a message, a hint and an exit status.
enum KeychainStatusExplanation {
    /// The constant names of the statuses people meet most, for messages.
    static let names: [OSStatus: String] = [
        errSecParam: "errSecParam",
        errSecWrPerm: "errSecWrPerm",
        errSecUserCanceled: "errSecUserCanceled",
        errSecNotAvailable: "errSecNotAvailable",
        errSecReadOnly: "errSecReadOnly",
        errSecAuthFailed: "errSecAuthFailed",
        errSecDuplicateItem: "errSecDuplicateItem",
        errSecItemNotFound: "errSecItemNotFound",
        errSecNoSuchAttr: "errSecNoSuchAttr",
        errSecInteractionNotAllowed: "errSecInteractionNotAllowed",
        errSecDecode: "errSecDecode",
        errSecMissingEntitlement: "errSecMissingEntitlement",
        errSecUnimplemented: "errSecUnimplemented",
        errSecIO: "errSecIO",
        errSecDiskFull: "errSecDiskFull",
    ]

    /// The statuses whose fix is a flag of this tool.
    static let flagHintStatuses: Set<OSStatus> = [
        errSecDuplicateItem, errSecItemNotFound, errSecMissingEntitlement, errSecDecode,
    ]

    /// `errSecDuplicateItem, -25299` or `OSStatus -12345`.
    static func label(for status: OSStatus) -> String {
        if let name = names[status] { return "\(name), \(status)" }
        return "OSStatus \(status)"
    }

    /// Apple's generic sentence for a status.
    static func genericMessage(for status: OSStatus) -> String {
        (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
    }

    /// The hint for statuses the engine did not explain.
    /// - Parameters:
    ///   - status: The status.
    ///   - context: The command that failed and the keychain it used.
    /// - Returns: What to do, or `nil` when there is nothing useful to say.
    static func hint(for status: OSStatus, context: KeychainCallContext) -> String? {
        switch status {
        case errSecDuplicateItem:
            return "pass -U to update the existing item, or delete it first with \(context.deleteCommand)."
        case errSecItemNotFound where !context.keychainExists:
            return "check \(context.keychainOrigin) (now \(context.keychainDescription)): nothing was ever stored "
                + "there. The first add creates a keychain; reading never does."
        case errSecItemNotFound where context.seesEveryGroup:
            // Every group was searched: no other group would find it.
            return "check the \(context.subjectNames) (keysmith dump-keychain lists the items of every access "
                + "group) and the keychain directory."
        case errSecItemNotFound:
            return "check the \(context.subjectNames) (keysmith dump-keychain lists the items) and the access "
                + "group: this run uses \(context.accessGroupsDescription); choose others with --access-group "
                + "or KEYSMITH_ACCESS_GROUPS."
        case errSecMissingEntitlement:
            return "the access groups in force are: \(context.accessGroupsDescription); pass --access-group "
                + "GROUP (or set KEYSMITH_ACCESS_GROUPS) to name the group the item belongs to."
        case errSecInteractionNotAllowed:
            return "the keychain is locked or the item's protection class is not available now, or the item's "
                + "access control needs the user and there is no terminal to ask on; unlock the keychain, store the "
                + "item with --accessible afterFirstUnlock, or run the command in a terminal."
        case errSecAuthFailed:
            return "authentication failed: type the keychain passphrase at the prompt (in a keychain without one, "
                + "your login password), or set a passphrase with keysmith passwd; a biometry-any or "
                + "biometry-current-set item needs a fingerprint reader with an enrolled finger."
        case errSecUserCanceled:
            return "the prompt was cancelled; nothing was read or changed."
        case errSecParam:
            return "a value was rejected; see keysmith help \(context.commandName)."
        case errSecWrPerm:
            return "check that the keychain directory \(context.keychainDescription) is yours and not readable "
                + "by others (chmod 700)."
        case errSecNotAvailable:
            return "check that \(context.keychainOrigin) (now \(context.keychainDescription)) names a keychain "
                + "directory you can write."
        case errSecDecode where context.deleteCommand.hasPrefix("delete-"):
            let name = context.deleteCommand.hasSuffix("internet-password") ? "SERVER" : "SERVICE"
            return "the item is damaged or was copied from another keychain: delete it with keysmith "
                + "\(context.deleteCommand) -s \(name) -a ACCOUNT --all (only its \(name.lowercased()) and account can "
                + "still be matched) and store it again."
        case errSecDecode:
            return "an item is damaged or was copied from another keychain, and stops the listing: list one access "
                + "group at a time (keysmith --access-group GROUP dump-keychain) to find where it is, delete it with "
                + "keysmith delete-generic-password (or delete-internet-password) -s SERVICE -a ACCOUNT --all, and store "
                + "it again."
        default:
            return nil
        }
    }

    /// The error for a failed keychain call.
    /// - Parameters:
    ///   - outcome: The failed call's status and diagnostics.
    ///   - context: The command and keychain, for the hint.
    ///   - notFoundMessage: The sentence for `errSecItemNotFound` (names what was looked for).
    ///   - duplicateMessage: The sentence for `errSecDuplicateItem` (names the item that exists,
    ///     in the command's words rather than the engine's attribute codes).
    /// - Returns: The error: exit 44 for not found, 45 for an item that exists, else 1.
    static func error(
        for outcome: KeychainCallOutcome, context: KeychainCallContext, notFoundMessage: String? = nil,
        duplicateMessage: String? = nil
    ) -> CommandLineError {
        let status = outcome.status
        var message: String
        if status == errSecItemNotFound, let notFoundMessage {
            message = notFoundMessage
        } else if status == errSecDuplicateItem, let duplicateMessage {
            message = duplicateMessage
        } else if let cause = outcome.cause {
            message = context.naming(cause)
        } else {
            message = genericMessage(for: status)
        }
        if message.hasSuffix(".") { message.removeLast() }
        if status == errSecItemNotFound {
            // Say where it looked: a mistyped KEYSMITH_HOME is the first thing to rule out.
            message += context.keychainExists
                ? " in the keychain at \(context.keychainDescription)"
                : " (there is no keychain at \(context.keychainDescription) yet; \(context.keychainOrigin) chose it)"
        }
        message += " (\(label(for: status)))."
        // The CLI's own hint wins where it can name a flag (-U, --access-group); elsewhere the
        // engine's recovery is the more precise one (for example the chmod command to run).
        let engineRecovery = outcome.engineRecovery.map(context.naming)
        // errSecDecode: the CLI's hint (delete the damaged item with the right command) fits
        // a damaged item; a failure of the whole keychain (a rolled-back database, a key file
        // of another keychain) has its own fix, which the engine gives.
        let wholeKeychainDamaged = status == errSecDecode && !(outcome.cause?.hasPrefix("An item") ?? true)
        let cliHintFirst = flagHintStatuses.contains(status)
            && !(status == errSecMissingEntitlement && context.hasConfigurationIssue)
            && !wholeKeychainDamaged
        let recovery = cliHintFirst
            ? hint(for: status, context: context) ?? engineRecovery
            : engineRecovery ?? hint(for: status, context: context)
        let exitCode: ExitCode
        switch status {
        case errSecItemNotFound: exitCode = .itemNotFound
        case errSecDuplicateItem: exitCode = .duplicateItem
        default: exitCode = .failure
        }
        return CommandLineError(exitCode, message, recovery: recovery, status: status)
    }
}

/// What a hint needs to know about the failing command.
struct KeychainCallContext: Sendable {
    /// The command name, for example `find-generic-password`.
    let commandName: String
    /// The attributes that select the item, for example `service and account`.
    let subjectNames: String
    /// The command that deletes such an item.
    let deleteCommand: String
    /// The access groups in force, for example `keysmith.cli`.
    let accessGroupsDescription: String
    /// The keychain directory in force.
    let keychainDescription: String
    /// Where the keychain directory came from: `--keychain`, `KEYSMITH_HOME`, ...
    var keychainOrigin: String = "KEYSMITH_HOME"
    /// Whether the keychain exists yet.
    var keychainExists: Bool = true
    /// Whether the access-group configuration itself is broken (its fix comes first).
    var hasConfigurationIssue: Bool = false
    /// Whether the run saw the items of every access group (nothing configured).
    var seesEveryGroup: Bool = false

    /// An engine message with the keychain setting named as this run chose it (the engine
    /// speaks of KEYSMITH_HOME; with --keychain, the flag is what to change).
    func naming(_ text: String) -> String {
        keychainOrigin == "--keychain" ? text.replacingOccurrences(of: "KEYSMITH_HOME", with: "--keychain") : text
    }
}
