import Foundation
import KeychainServices

// The item commands, with macOS `security`'s names and flags: add, find and delete for
// generic and internet passwords, and dump-keychain. They use only the public SecItem API
// (SecItemAdd, SecItemCopyMatching, SecItemUpdate, SecItemDelete), as a tool on macOS or
// iOS would; the keychain directory and access groups are put in force by the dispatcher.

/// The item commands.
public enum ItemCommands {
    /// Every item command, in help order.
    public static let all: [Command] = [
        addCommand(.generic), findCommand(.generic), deleteCommand(.generic),
        addCommand(.internet), findCommand(.internet), deleteCommand(.internet),
        dumpCommand,
    ]

    /// The add, find or delete command of either password kind named `name`, built alone
    /// (the same command ``all`` holds); `nil` for any other name.
    /// - Parameter name: The name typed on the command line.
    /// - Returns: The command, or `nil`.
    static func command(named name: String) -> Command? {
        for kind in [PasswordKind.generic, .internet] {
            switch name {
            case "add-\(kind.suffix)": return addCommand(kind)
            case "find-\(kind.suffix)": return findCommand(kind)
            case "delete-\(kind.suffix)": return deleteCommand(kind)
            default: continue
            }
        }
        return nil
    }
}

// MARK: - Password kinds and their selector flags

/// Generic or internet password: the class, its flags and its wording.
enum PasswordKind: Sendable {
    case generic, internet

    var classCode: String {
        self == .generic ? kSecClassGenericPassword as String : kSecClassInternetPassword as String
    }

    var noun: String { self == .generic ? "generic password" : "internet password" }
    var suffix: String { self == .generic ? "generic-password" : "internet-password" }

    /// `service and account` or `server and account`, for hints.
    var subjectNames: String { self == .generic ? "service and account" : "server, protocol, port, path and account" }

    /// The flags that select (and on add: describe) an item.
    var selectorOptions: [OptionSpec] {
        switch self {
        case .generic:
            return [
                OptionSpec(name: "service", short: "s", value: .required("SERVICE"), help: "The service name (kSecAttrService)."),
                OptionSpec(name: "account", short: "a", value: .required("ACCOUNT"), help: "The account name (kSecAttrAccount)."),
                OptionSpec(name: "label", short: "l", value: .required("LABEL"), help: "The label (kSecAttrLabel); add uses the service when none is given."),
                OptionSpec(name: "comment", short: "j", value: .required("COMMENT"), help: "The comment (kSecAttrComment)."),
                OptionSpec(name: "kind", short: "D", value: .required("KIND"), help: "The kind, a description of the item (kSecAttrDescription)."),
                OptionSpec(name: "generic", short: "G", value: .required("VALUE"), help: "The generic attribute (kSecAttrGeneric), stored as the UTF-8 bytes of VALUE."),
            ] + PasswordKind.codeOptions
        case .internet:
            return [
                OptionSpec(name: "server", short: "s", value: .required("SERVER"), help: "The server name (kSecAttrServer)."),
                OptionSpec(name: "account", short: "a", value: .required("ACCOUNT"), help: "The account name (kSecAttrAccount)."),
                OptionSpec(
                    name: "protocol", short: "r", value: .required("PROTOCOL"),
                    help: "The protocol (kSecAttrProtocol): a name (\(InternetProtocol.namesList)) or a four-character code such as \"htps\"."),
                OptionSpec(name: "port", short: "P", value: .required("PORT"), help: "The port number, 0 to 65535 (kSecAttrPort)."),
                OptionSpec(name: "path", short: "p", value: .required("PATH"), help: "The path (kSecAttrPath)."),
                OptionSpec(name: "domain", short: "d", value: .required("DOMAIN"), help: "The security domain (kSecAttrSecurityDomain)."),
                OptionSpec(
                    name: "authentication-type", short: "t", value: .required("TYPE"),
                    help: "The authentication type (kSecAttrAuthenticationType): \(AuthenticationType.namesList), or a four-character code."),
                OptionSpec(name: "label", short: "l", value: .required("LABEL"), help: "The label (kSecAttrLabel); add uses the server when none is given."),
                OptionSpec(name: "comment", short: "j", value: .required("COMMENT"), help: "The comment (kSecAttrComment)."),
                OptionSpec(name: "kind", short: "D", value: .required("KIND"), help: "The kind, a description of the item (kSecAttrDescription)."),
            ] + PasswordKind.codeOptions
        }
    }

    /// `-c CREATOR` and `-C TYPE`, four-character codes as macOS `security` takes them.
    static let codeOptions: [OptionSpec] = [
        OptionSpec(name: "creator", short: "c", value: .required("CREATOR"), help: "The creator, a four-character code such as \"aapl\" (kSecAttrCreator)."),
        OptionSpec(name: "type", short: "C", value: .required("TYPE"), help: "The item type, a four-character code such as \"note\" (kSecAttrType)."),
    ]

    /// The selector part of the usage line.
    var selectorSynopsis: String {
        switch self {
        case .generic: return "[-s SERVICE] [-a ACCOUNT] [-l LABEL] [-j COMMENT] [-D KIND] [-G VALUE] [-c CREATOR] [-C TYPE]"
        case .internet:
            return "[-s SERVER] [-a ACCOUNT] [-r PROTOCOL] [-P PORT] [-p PATH] [-d DOMAIN] [-t TYPE] [-l LABEL] [-j COMMENT] [-D KIND] [-c CREATOR] [-C TYPE]"
        }
    }

    /// The primary-key attributes a new item gets when they are not given (Apple's
    /// defaults); used to aim `-U` at exactly the item `add` collided with.
    var primaryKeyDefaults: [String: Any] {
        switch self {
        case .generic: return ["svce": "", "acct": ""]
        case .internet: return ["srvr": "", "acct": "", "ptcl": NSNumber(value: 0), "port": NSNumber(value: 0), "path": "", "sdmn": "", "atyp": ""]
        }
    }

    /// The name of the attribute that names the item (`svce` or `srvr`) and its flag.
    var nameOption: (name: String, tag: String) {
        self == .generic ? ("service", "svce") : ("server", "srvr")
    }
}

/// The attributes selected by flags, with their descriptions for messages.
struct Selection {
    /// Apple tag → value, ready for a query dictionary.
    var attributes: [String: Any] = [:]
    /// `service "api"`, `port 443`, ..., in flag order.
    var phrases: [String] = []
    /// The attribute tag of each phrase.
    private var tags: [String] = []

    /// `service "api" and account "deploy"`.
    var description: String {
        switch phrases.count {
        case 0: return "any attributes"
        case 1: return phrases[0]
        // The usual -s and -a, spelled without joined(): its generic instantiation costs a
        // lookup at start-up more than the whole string.
        case 2: return phrases[0] + " and " + phrases[1]
        default: return phrases.dropLast().joined(separator: ", ") + " and " + phrases.last!
        }
    }

    /// Reads the selector flags of `kind` from the command line.
    /// - Throws: A usage error for a protocol, port or authentication type that is not valid.
    init(_ kind: PasswordKind, _ invocation: CommandInvocation) throws(CommandLineError) {
        let arguments = invocation.arguments
        func text(_ name: String, _ tag: String, _ word: String) {
            guard let value = arguments.value(name) else { return }
            attributes[tag] = value
            add(tag, "\(word) \"\(value)\"")
        }
        switch kind {
        case .generic:
            text("service", "svce", "service")
            text("account", "acct", "account")
        case .internet:
            text("server", "srvr", "server")
            text("account", "acct", "account")
            if let value = arguments.value("protocol") {
                guard let code = InternetProtocol.code(forCommandLineFlag: value) else {
                    throw invocation.usageError(
                        "unknown protocol '\(value)'; use one of \(InternetProtocol.namesList), or a four-character code")
                }
                attributes["ptcl"] = code
                add("ptcl", "protocol \(InternetProtocol.name(forCode: code) ?? code)")
            }
            if let value = arguments.value("port") {
                guard let port = Int(value), (0...65535).contains(port) else {
                    throw invocation.usageError("the port must be a number from 0 to 65535, not '\(value)'")
                }
                attributes["port"] = NSNumber(value: port)
                add("port", "port \(port)")
            }
            text("path", "path", "path")
            text("domain", "sdmn", "security domain")
            if let value = arguments.value("authentication-type") {
                guard let code = AuthenticationType.code(forCommandLineFlag: value) else {
                    throw invocation.usageError(
                        "unknown authentication type '\(value)'; use one of \(AuthenticationType.namesList), or a four-character code")
                }
                attributes["atyp"] = code
                add("atyp", "authentication type \(AuthenticationType.name(forCode: code) ?? code)")
            }
        }
        text("label", "labl", "label")
        text("comment", "icmt", "comment")
        text("kind", "desc", "kind")
        if kind == .generic, let value = arguments.value("generic") {
            attributes["gena"] = Data(value.utf8)
            add("gena", "generic \"\(value)\"")
        }
        for (name, tag, word) in [("creator", "crtr", "creator"), ("type", "type", "type")] {
            guard let value = arguments.value(name) else { continue }
            guard let code = FourCharacterCode.number(value) else {
                throw invocation.usageError("the \(word) must be a four-character code such as \"aapl\", not '\(value)'")
            }
            attributes[tag] = code
            add(tag, "\(word) \"\(value)\"")
        }
    }

    /// Records the phrase of one selected attribute.
    private mutating func add(_ tag: String, _ phrase: String) {
        phrases.append(phrase)
        tags.append(tag)
    }

    /// The phrases of the primary-key attributes only (`service "api" and account
    /// "deploy"`): what makes an add collide with an existing item.
    func primaryKeyDescription(_ kind: PasswordKind) -> String {
        let selected = zip(tags, phrases).filter { kind.primaryKeyDefaults[$0.0] != nil }.map(\.1)
        switch selected.count {
        case 0: return description
        case 1: return selected[0]
        default: return selected.dropLast().joined(separator: ", ") + " and " + selected.last!
        }
    }
}

// MARK: - Shared helpers

extension CommandInvocation {
    /// The context hints need.
    func keychainContext(_ kind: PasswordKind?) -> KeychainCallContext {
        KeychainCallContext(
            commandName: command.name, subjectNames: kind?.subjectNames ?? "attributes",
            deleteCommand: kind.map { "delete-\($0.suffix)" } ?? "the delete command",
            accessGroupsDescription: settings.accessGroupsDescription, keychainDescription: settings.keychainDescription,
            keychainOrigin: settings.keychainOrigin, keychainExists: settings.keychainExists,
            hasConfigurationIssue: settings.hasConfigurationIssue, seesEveryGroup: settings.seesEveryGroup)
    }

    /// The error for a failed call.
    func keychainError(
        _ outcome: KeychainCallOutcome, _ kind: PasswordKind?, notFound: String? = nil, duplicate: String? = nil
    ) -> CommandLineError {
        KeychainStatusExplanation.error(
            for: outcome, context: keychainContext(kind), notFoundMessage: notFound, duplicateMessage: duplicate)
    }

    /// A query: class, the selection, every synchronizable state, and the access group
    /// where the system keychain needs one.
    func baseQuery(_ kind: PasswordKind, _ selection: Selection) -> [String: Any] {
        var query = selection.attributes
        query[kSecClass as String] = kind.classCode
        query[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny as String
        if let group = settings.queryAccessGroup { query[kSecAttrAccessGroup as String] = group }
        return query
    }
}

/// Runs SecItemCopyMatching and returns its result and outcome.
/// A data result of SecItemCopyMatching (an NSData, the keychain's zeroing buffer on Linux)
/// as Data, read with a class cast: the general cast to Data looks up Data's bridging
/// conformance at run time, which in a new process scans every protocol conformance of the
/// program (0.8M instructions, a twentieth of `find-generic-password -w`).
private func dataResult(_ result: AnyObject?) -> Data? {
    if let data = result as? NSData { return Data(bytes: data.bytes, count: data.length) }
    return result as? Data
}

private func copyMatching(_ query: [String: Any]) -> (AnyObject?, KeychainCallOutcome) {
    var result: AnyObject?
    let outcome = KeychainCallOutcome.capture { SecItemCopyMatching(query as CFDictionary, &result) }
    return (result, outcome)
}

// MARK: - add

private func addCommand(_ kind: PasswordKind) -> Command {
    let nameFlag = kind == .generic ? "-s SERVICE" : "-s SERVER"
    let options = kind.selectorOptions + [
        OptionSpec(
            name: "password", short: "w", value: .optional("PASSWORD"),
            help: "The secret. Put -w last (or before another option) to be prompted without echo; '-w -' reads standard input. '-w VALUE' works but prints a warning: the value lands in shell history and the process list."),
        OptionSpec(name: "stdin", long: "stdin", help: "Read the secret from standard input as a line: one trailing newline (LF or CR LF) is removed, so echo and here-strings work. On a terminal, prompts without echo instead."),
        SecretInput.exactOption(of: "secret"),
        OptionSpec(name: "update", short: "U", help: "Update the item if it already exists (its secret, and the label, comment, kind and accessibility given); without -U an existing item is an error."),
        OptionSpec(
            name: "accessible", long: "accessible", value: .required("CLASS"),
            help: "When the item can be read (kSecAttrAccessible): \(Accessibility.namesList). Default: whenUnlocked."),
        OptionSpec(name: "sync", long: "sync", help: "Mark the item synchronizable (kSecAttrSynchronizable)."),
        OptionSpec(
            name: "access-control", long: "access-control", value: .required("POLICY"),
            help: "Who must be present to read the secret (kSecAttrAccessControl): \(AccessControlOption.namesList). "
                + "Reading it then asks for the keychain passphrase (device-passcode, user-presence without a fingerprint "
                + "reader; in a keychain without a passphrase, the login password) or a fingerprint (biometry-any, "
                + "biometry-current-set, which cannot be stored without an enrolled finger); its attributes stay "
                + "readable without asking. Not with --sync."),
        OptionSpec(
            name: "trusted-application", short: "T", value: .required("APP"), repeatable: true,
            help: "Accepted for macOS habits and ignored, with a note: application access lists do not apply here; "
                + "every program entitled to the item's access group reads it (choose the group with --access-group)."),
        OptionSpec(name: "any-application", short: "A", help: "Accepted for macOS habits and ignored, with a note (see -T)."),
    ]
    let example: String
    switch kind {
    case .generic:
        example = """
              printf '%s' "$TOKEN" | keysmith add-generic-password -s api.example.com -a deploy --stdin
              keysmith add-generic-password -s api.example.com -a deploy -U -w
              keysmith add-generic-password -s signing.example.com -a release --stdin-exact < signing.key
            """
    case .internet:
        example = """
              printf '%s' "$PASSWORD" | keysmith add-internet-password -s git.example.com -r https -a ci --stdin
              keysmith add-internet-password -s db.example.com -r ldaps -P 636 -a admin -w
            """
    }
    return Command(
        name: "add-\(kind.suffix)", group: .items,
        synopsis: "\(nameFlag) -a ACCOUNT [-w [PASSWORD] | --stdin | --stdin-exact] \(kind == .internet ? "[-r PROTOCOL] [-P PORT] [-p PATH] [-d DOMAIN] [-t TYPE] " : "")[-l LABEL] [-j COMMENT] [-D KIND] \(kind == .generic ? "[-G VALUE] " : "")[-c CREATOR] [-C TYPE] [-U] [--accessible CLASS] [--access-control POLICY] [--sync] [-T APP] [-A]",
        summary: "Add a\(kind == .internet ? "n" : "") \(kind.noun) (update it in place with -U)",
        details: "Stores a new \(kind.noun) in the access group that comes first (see --access-group; by default the group every program without configured access groups shares). The secret comes from standard input (--stdin reads a line: one trailing newline, LF or CR LF, is removed; --stdin-exact, for programs, keeps every byte), from a prompt without echo (-w as the last argument, asked twice), or from '-w VALUE' (discouraged). Nothing secret is printed. Exit status 45 when the item already exists and -U is not given, as macOS security.\n\nPrints one line saying what was stored; with --json: {\"result\": \"added\" or \"updated\", \"item\": {attributes as in find-\(kind.suffix)}}.\n\nExamples:\n\n\(example)",
        options: options
    ) { invocation throws(CommandLineError) in
        try runAdd(kind, invocation)
    }
}

private func runAdd(_ kind: PasswordKind, _ invocation: CommandInvocation) throws(CommandLineError) {
    let arguments = invocation.arguments
    if arguments.contains("trusted-application") || arguments.contains("any-application") {
        invocation.output.warning(
            "application access lists (-T, -A) do not apply here and were ignored: every program entitled to the "
                + "item's access group can read it; choose the group with --access-group.")
    }
    _ = try invocation.requiredValue(kind.nameOption.name, spelling: kind == .generic ? "-s SERVICE" : "-s SERVER")
    _ = try invocation.requiredValue("account", spelling: "-a ACCOUNT")
    let selection = try Selection(kind, invocation)
    var accessibility: Accessibility?
    if let value = arguments.value("accessible") {
        guard let parsed = Accessibility(commandLineFlag: value) else {
            throw invocation.usageError("unknown accessibility '\(value)'; use one of \(Accessibility.namesList)")
        }
        accessibility = parsed
    }
    var accessControl: SecAccessControl?
    if let value = arguments.value("access-control") {
        guard let option = AccessControlOption(commandLineName: value) else {
            throw invocation.usageError("unknown access control '\(value)'; use one of \(AccessControlOption.namesList)")
        }
        if arguments.contains("sync") {
            throw invocation.usageError("--access-control cannot be combined with --sync: items that need the user are never synchronized")
        }
        guard let made = SecAccessControlCreateWithFlags(
            nil, (accessibility?.code ?? kSecAttrAccessibleWhenUnlocked as String) as CFString, option.flags, nil)
        else {
            throw invocation.usageError("--access-control \(value) cannot be combined with that accessibility")
        }
        accessControl = made
    }
    let source: SecretSource
    let passwordGiven = arguments.lastOccurrence(of: "password")
    let exact = arguments.contains("stdin-exact")
    if exact && arguments.contains("stdin") {
        throw invocation.usageError("give --stdin (a line) or --stdin-exact (every byte), not both")
    }
    switch (passwordGiven, arguments.contains("stdin") || exact) {
    case (.some, true):
        throw invocation.usageError("give the secret with -w or with \(exact ? "--stdin-exact" : "--stdin"), not both")
    case (nil, false):
        throw invocation.usageError("no secret: pipe it with --stdin, or put -w last to be prompted")
    case (nil, true):
        source = exact ? .exactStandardInput : .standardInput
    case (.some(let occurrence), false):
        if let value = occurrence.value {
            source = value == "-" ? .standardInput : .argument(value)
        } else {
            source = .prompt
        }
    }
    let synchronizable = arguments.contains("sync")
    let update = arguments.contains("update")
    let settings = invocation.settings

    // The query that finds the item this add would collide with.
    var collisionQuery = kind.primaryKeyDefaults
    for (tag, value) in selection.attributes where collisionQuery[tag] != nil { collisionQuery[tag] = value }
    collisionQuery[kSecClass as String] = kind.classCode
    collisionQuery[kSecAttrSynchronizable as String] = NSNumber(value: synchronizable)
    if let group = settings.defaultAccessGroup { collisionQuery[kSecAttrAccessGroup as String] = group }

    // The item an add collides with, named in the flags' words (not the engine's attribute codes).
    let duplicate = "a\(kind == .internet ? "n" : "") \(kind.noun) with \(selection.primaryKeyDescription(kind)) already "
        + "exists\(settings.defaultAccessGroup.map { " in access group \($0)" } ?? "")"

    // Without -U, say so before asking anyone to type a secret that cannot be stored.
    if !update && source == .prompt {
        let (_, existing) = copyMatching(collisionQuery)
        if existing.succeeded {
            throw invocation.keychainError(
                KeychainCallOutcome(status: errSecDuplicateItem, cause: nil, engineRecovery: nil), kind,
                duplicate: duplicate)
        }
    }

    var secret = try invocation.secretInput.read(
        source, promptText: "password data for new item: ", confirmText: "retype password for new item: ",
        output: invocation.output)
    // Declared before the queries that hold the secret, so it runs after they are gone.
    defer { secret.resetBytes(in: 0..<secret.count) }

    var attributes = selection.attributes
    attributes[kSecClass as String] = kind.classCode
    if attributes["labl"] == nil { attributes["labl"] = selection.attributes[kind.nameOption.tag] }
    attributes[kSecValueData as String] = secret
    if let accessibility { attributes[kSecAttrAccessible as String] = accessibility.code }
    if let accessControl { attributes[kSecAttrAccessControl as String] = accessControl }
    if synchronizable { attributes[kSecAttrSynchronizable as String] = kCFBooleanTrue }
    if let group = settings.queryAccessGroup { attributes[kSecAttrAccessGroup as String] = group }
    attributes[kSecReturnAttributes as String] = kCFBooleanTrue

    var result: AnyObject?
    let added = KeychainCallOutcome.capture { SecItemAdd(attributes as CFDictionary, &result) }
    var verb = "Added"
    if !added.succeeded {
        guard added.status == errSecDuplicateItem, update else {
            throw invocation.keychainError(added, kind, duplicate: duplicate)
        }
        var changes: [String: Any] = [kSecValueData as String: secret]
        for tag in ["labl", "icmt", "desc", "gena"] {
            if let value = selection.attributes[tag] { changes[tag] = value }
        }
        if let accessibility { changes[kSecAttrAccessible as String] = accessibility.code }
        if let accessControl { changes[kSecAttrAccessControl as String] = accessControl }
        let updated = KeychainCallOutcome.capture {
            SecItemUpdate(collisionQuery as CFDictionary, changes as CFDictionary)
        }
        guard updated.succeeded else { throw invocation.keychainError(updated, kind) }
        var readBack = collisionQuery
        readBack[kSecReturnAttributes as String] = kCFBooleanTrue
        readBack[kSecMatchLimit as String] = kSecMatchLimitOne as String
        (result, _) = copyMatching(readBack)
        verb = "Updated"
    }
    let output = invocation.output
    if output.json {
        var object: [String: Any] = ["result": verb.lowercased()]
        if let dictionary = result as? NSDictionary {
            object["item"] = ItemPresentation(dictionary, classCode: kind.classCode).jsonObject(dates: DateText())
        }
        output.printJSON(object)
    } else {
        var line = "\(verb) \(kind.noun) with \(selection.description)"
        if let dictionary = result as? NSDictionary,
            let group = ItemPresentation(dictionary, classCode: kind.classCode).text(kSecAttrAccessGroup as String)
        {
            line += " in access group \(group)"
        }
        output.info(line + ".")
    }
}

// MARK: - find

private func findCommand(_ kind: PasswordKind) -> Command {
    let options = kind.selectorOptions + [
        OptionSpec(name: "password", short: "w", help: "Print only the secret, followed by a newline, and nothing else (also with --json or --quiet). Redirected or piped: its exact bytes, then that newline (a program that stored bytes with --stdin-exact removes exactly one newline from the end). On a terminal, a secret with control characters is shown escaped, with a note."),
        OptionSpec(name: "show-password", short: "g", help: "Also print the secret, on standard error, as macOS security does: password: \"...\"."),
        OptionSpec(name: "table", long: "table", help: "Print the attributes as an aligned table with readable names instead of in macOS security's format."),
    ]
    let fields = kind == .generic
        ? "class, service, account, label, kind, comment, accessGroup, accessible, synchronizable, created, modified"
        : "class, server, protocol, port, path, securityDomain, authenticationType, account, label, kind, comment, accessGroup, accessible, synchronizable, created, modified"
    let example = kind == .generic
        ? "  keysmith find-generic-password -s api.example.com -a deploy\n  TOKEN=$(keysmith find-generic-password -s api.example.com -a deploy -w)"
        : "  keysmith find-internet-password -s git.example.com -r https -a ci\n  keysmith find-internet-password -s git.example.com -a ci -w"
    return Command(
        name: "find-\(kind.suffix)", group: .items,
        synopsis: "\(kind.selectorSynopsis) [-w] [-g] [--table]",
        summary: "Find a\(kind == .internet ? "n" : "") \(kind.noun): its attributes, or the secret alone with -w",
        details: "Finds the first \(kind.noun) that matches every flag given (in every synchronizable state, in the access groups in force: by default every group). Without -w it prints the item's attributes, and never the secret, in macOS security's format, so scripts that parse it keep working:\n\n  keychain: \"/home/me/.local/share/keysmith\"\n  version: 512\n  class: \"\(kind == .generic ? "genp" : "inet")\"\n  attributes:\n      0x00000007 <blob>=\"LABEL\"\n      \"acct\"<blob>=\"ACCOUNT\"\n      \"agrp\"<blob>=\"ACCESS GROUP\"\n      ...\n\nValues with control characters are shown as 0xHEX followed by the text with octal escapes, as macOS does; --table prints readable names instead. Exit status 44 when nothing matches.\n\nWith -w, an item stored with --access-control asks first: for the keychain passphrase (in a keychain without one, the login password), on the terminal or through the program KEYSMITH_ASKPASS names (it gets the prompt as its argument and prints the secret); with neither, the read fails with errSecInteractionNotAllowed.\n\nWith --json: one object with the fields \(fields) (attributes the item does not have are left out; dates are ISO 8601 UTC).\n\nExamples:\n\n\(example)",
        options: options
    ) { invocation throws(CommandLineError) in
        try runFind(kind, invocation)
    }
}

private func runFind(_ kind: PasswordKind, _ invocation: CommandInvocation) throws(CommandLineError) {
    let selection = try Selection(kind, invocation)
    let printSecret = invocation.arguments.contains("password")
    let showSecret = invocation.arguments.contains("show-password")
    var query = invocation.baseQuery(kind, selection)
    query[kSecMatchLimit as String] = kSecMatchLimitOne as String
    // -w prints the secret alone: the data is asked for without the attributes, and comes
    // back as Data (as SecItemCopyMatching returns one item's data), not in a dictionary.
    if !printSecret { query[kSecReturnAttributes as String] = kCFBooleanTrue }
    if printSecret || showSecret {
        query[kSecReturnData as String] = kCFBooleanTrue
        // Shown when the item's access control asks for the user.
        query[kSecUseOperationPrompt as String] = "keysmith: show the secret of the \(kind.noun) with \(selection.description)"
    }
    let (result, outcome) = copyMatching(query)
    let output = invocation.output
    if printSecret, outcome.succeeded, let secret = dataResult(result) {
        output.writeSecret(secret)
        return
    }
    guard outcome.succeeded, !printSecret, let dictionary = result as? NSDictionary else {
        throw invocation.keychainError(
            outcome.succeeded ? KeychainCallOutcome(status: errSecItemNotFound, cause: nil, engineRecovery: nil) : outcome,
            kind, notFound: "no \(kind.noun) with \(selection.description)")
    }
    let secret = dictionary[kSecValueData as String] as? Data
    let item = ItemPresentation(dictionary, classCode: kind.classCode)
    let dates = DateText()
    if output.json {
        output.printJSON(item.jsonObject(dates: dates))
    } else if invocation.arguments.contains("table") {
        for line in item.table(includeClass: true, dates: dates).lines() { output.info(line) }
    } else {
        for line in item.securityToolLines(keychain: invocation.settings.keychainDescription) { output.info(line) }
    }
    if showSecret {
        output.error("password: " + SecretText.human(secret ?? Data()))
    }
}

// MARK: - delete

private func deleteCommand(_ kind: PasswordKind) -> Command {
    Command(
        name: "delete-\(kind.suffix)", group: .items,
        synopsis: kind.selectorSynopsis + " [--all]",
        summary: "Delete the \(kind.noun) that matches (every match with --all)",
        details: "Deletes the \(kind.noun) that matches all the flags given (at least one is required), in the access groups in force. A flag left out matches every value of its attribute, so when more than one item matches nothing is deleted (exit status 1) unless --all is given: add flags to select one item, or pass --all to delete every match. A damaged match (one that cannot be read) stops the delete unless --all is given; with --all, damaged matches are deleted in the group new items go to, and one left in another group is reported with the --access-group that reaches it. Exit status 44 when nothing matches.\n\nWith --json: {\"deleted\": N} (null when damaged matches were deleted, which cannot be counted).\n\nExample:\n\n  keysmith delete-\(kind.suffix) -s \(kind == .generic ? "api.example.com" : "git.example.com") -a deploy",
        options: kind.selectorOptions + [
            OptionSpec(
                name: "all", long: "all",
                help: "Delete every item that matches, when the flags given select more than one (without it, nothing is deleted then)."),
        ]
    ) { invocation throws(CommandLineError) in
        let selection = try Selection(kind, invocation)
        guard !selection.attributes.isEmpty else {
            throw invocation.usageError("say which item to delete, for example with \(kind == .generic ? "-s SERVICE" : "-s SERVER") -a ACCOUNT")
        }
        let query = invocation.baseQuery(kind, selection)
        let notFound = "no \(kind.noun) with \(selection.description)"
        let deleteAll = invocation.arguments.contains("all")
        // Set once the damaged matches were deleted by a plain SecItemDelete: that reaches
        // the groups this run writes by default, and the matches left are counted again.
        var damagedMatchesDeleted = false
        while true {
            var counting = query
            counting[kSecMatchLimit as String] = kSecMatchLimitAll as String
            counting[kSecReturnPersistentRef as String] = kCFBooleanTrue
            counting[kSecReturnAttributes as String] = kCFBooleanTrue
            let (matches, counted) = copyMatching(counting)
            if counted.status == errSecItemNotFound && damagedMatchesDeleted {
                report(deleted: nil, kind, selection, invocation.output)
                return
            }
            guard counted.succeeded else {
                // A damaged item makes the count fail: the items it covers cannot be listed, so
                // nothing is deleted unless --all asked for every match, the damaged ones included.
                guard counted.status == errSecDecode, deleteAll, !damagedMatchesDeleted else {
                    throw damagedCountError(counted, kind, selection, invocation, afterDeleting: damagedMatchesDeleted)
                }
                let deleted = KeychainCallOutcome.capture { SecItemDelete(query as CFDictionary) }
                guard deleted.succeeded || deleted.status == errSecItemNotFound else {
                    throw damagedCountError(deleted, kind, selection, invocation, afterDeleting: false)
                }
                damagedMatchesDeleted = true
                continue
            }
            let items = ((matches as? [NSDictionary]) ?? (matches as? NSDictionary).map { [$0] } ?? [])
            // A flag left out matches every value of its attribute (every account of a service,
            // every port and path of a server): delete more than one item only when asked.
            if items.count > 1 && !deleteAll {
                // Items alike in every attribute but their access group differ by no flag: the
                // group is chosen with --access-group.
                var groups: [String] = []
                for item in items {
                    if let group = item[kSecAttrAccessGroup as String] as? String, !groups.contains(group) {
                        groups.append(group)
                    }
                }
                let groupChoice = invocation.settings.seesEveryGroup && groups.count > 1
                    ? ", choose the access group with --access-group GROUP (they are in \(groups.joined(separator: ", ")))"
                    : ""
                throw CommandLineError.failure(
                    "\(items.count) \(kind.noun)s match \(selection.description); nothing was deleted.",
                    recovery: "add flags to select one item (\(kind.selectorSynopsis); keysmith dump-keychain lists "
                        + "them)\(groupChoice), or pass --all to delete all \(items.count).")
            }
            // Delete exactly the items counted, by persistent reference: an item added after the
            // count (by another process) is never deleted with them.
            var deleted = 0
            for item in items {
                guard let reference = item[kSecValuePersistentRef as String] else { continue }
                let one: [String: Any] = [kSecClass as String: kind.classCode, kSecValuePersistentRef as String: reference]
                let outcome = invocation.settings.inAccessGroup(item[kSecAttrAccessGroup as String] as? String) {
                    KeychainCallOutcome.capture { SecItemDelete(one as CFDictionary) }
                }
                if outcome.status == errSecItemNotFound { continue }  // deleted meanwhile by someone else
                guard outcome.succeeded else {
                    if deleted > 0 { invocation.output.warning("\(deleted) of \(items.count) matching items were deleted before this failure.") }
                    throw invocation.keychainError(outcome, kind, notFound: notFound)
                }
                deleted += 1
            }
            guard deleted > 0 || damagedMatchesDeleted else {
                throw invocation.keychainError(
                    KeychainCallOutcome(status: errSecItemNotFound, cause: nil, engineRecovery: nil), kind, notFound: notFound)
            }
            report(deleted: damagedMatchesDeleted ? nil : deleted, kind, selection, invocation.output)
            return
        }
    }
}

/// The error for a count that failed: a damaged match says what `--all` does about it (and,
/// once the damaged matches of the default groups were deleted, that one is left in another
/// group, which `--access-group` reaches).
private func damagedCountError(
    _ counted: KeychainCallOutcome, _ kind: PasswordKind, _ selection: Selection, _ invocation: CommandInvocation,
    afterDeleting: Bool
) -> CommandLineError {
    let error = invocation.keychainError(counted, kind, notFound: "no \(kind.noun) with \(selection.description)")
    guard counted.status == errSecDecode else { return error }
    let names = kind == .generic ? "service and account" : "server and account"
    let byNamesAlone = selection.attributes.keys.allSatisfy { $0 == kind.nameOption.tag || $0 == "acct" }
    let reachable = byNamesAlone
        ? "pass --all"
        : "pass --all with -s and -a alone (a damaged item's other attributes cannot be read, so only a delete by "
            + "\(names) reaches it)"
    guard afterDeleting else {
        return CommandLineError(
            error.exitCode, "cannot count the \(kind.noun)s that match \(selection.description), so nothing was "
                + "deleted: \(error.message)",
            recovery: "a matching item is damaged; to delete every match, the damaged one included, \(reachable).",
            status: counted.status)
    }
    let groups = invocation.settings.seesEveryGroup
        ? "the group new items go to (\(invocation.settings.defaultAccessGroup ?? "none"))"
        : "the access groups in force"
    return CommandLineError(
        error.exitCode, "the matches in \(groups), if any, were deleted; a damaged \(kind.noun) that matches "
            + "\(selection.description) is left in another access group: \(error.message)",
        recovery: "run the delete again with --access-group GROUP --all, GROUP being the access group of the "
            + "program that stored the item" + (byNamesAlone ? "." : ", and with -s and -a alone (a damaged item's "
            + "other attributes cannot be read, so only a delete by \(names) reaches it)."),
        status: counted.status)
}

/// Prints what a delete did (`nil`: every match, number unknown).
private func report(deleted count: Int?, _ kind: PasswordKind, _ selection: Selection, _ output: Output) {
    if output.json {
        output.printJSON(["deleted": count.map { $0 as Any } ?? NSNull()])
    } else if let count {
        let noun = count > 1 ? "\(count) \(kind.noun)s" : kind.noun
        output.info("Deleted \(noun) with \(selection.description).")
    } else {
        output.info("Deleted every \(kind.noun) with \(selection.description).")
    }
}

// MARK: - dump-keychain

private let dumpCommand = Command(
    name: "dump-keychain", group: .items, synopsis: "[-d]",
    summary: "List every item's attributes (and secrets, with -d)",
    details: "Lists every item the access groups in force can read (by default every item, with its access group): generic and internet passwords, certificates and keys, sorted by class and name. Secrets are read and printed only with -d. A terminal shows progress for large keychains.\n\nWith --json: {\"keychain\": PATH, \"accessGroups\": [the groups in force; \"*\" means every group], \"count\": N, \"items\": [objects as in find-generic-password / find-internet-password]}; with -d each item also has \"passwordBase64\" and, when the secret is UTF-8, \"password\".\n\nExamples:\n\n  keysmith dump-keychain\n  keysmith --json dump-keychain | jq '.items[].service'",
    options: [OptionSpec(name: "data", short: "d", help: "Also print each item's secret (decrypted).")]
) { invocation throws(CommandLineError) in
    let includeSecrets = invocation.arguments.contains("data")
    let output = invocation.output
    var items: [(ItemPresentation, Data?)] = []
    let reading = output.progress("Reading item classes", total: ItemClassName.dumpOrder.count)
    for (index, classCode) in ItemClassName.dumpOrder.enumerated() {
        var query: [String: Any] = [
            kSecClass as String: classCode,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny as String,
            kSecMatchLimit as String: kSecMatchLimitAll as String,
            kSecReturnAttributes as String: kCFBooleanTrue as Any,
        ]
        if includeSecrets { query[kSecReturnData as String] = kCFBooleanTrue }
        if let group = invocation.settings.queryAccessGroup { query[kSecAttrAccessGroup as String] = group }
        let (result, outcome) = copyMatching(query)
        reading.update(index + 1)
        if outcome.status == errSecItemNotFound { continue }
        guard outcome.succeeded else {
            reading.finish()
            throw invocation.keychainError(outcome, nil)
        }
        let dictionaries = (result as? [NSDictionary]) ?? (result as? NSDictionary).map { [$0] } ?? []
        for dictionary in dictionaries {
            let secret = includeSecrets ? dictionary[kSecValueData as String] as? Data : nil
            items.append((ItemPresentation(dictionary, classCode: classCode), secret))
        }
    }
    reading.finish()
    items.sort { $0.0.sortKey.lexicographicallyPrecedes($1.0.sortKey) }

    let dates = DateText()
    let settings = invocation.settings
    let formatting = output.progress("Formatting items", total: items.count)
    defer { formatting.finish() }
    if output.json {
        var objects: [[String: Any]] = []
        for (index, (item, secret)) in items.enumerated() {
            var object = item.jsonObject(dates: dates)
            if let secret { object.merge(SecretText.jsonFields(secret)) { _, new in new } }
            objects.append(object)
            formatting.update(index + 1)
        }
        var document: [String: Any] = ["count": objects.count, "items": objects, "accessGroups": settings.accessGroups]
        document["keychain"] = settings.keychainDirectory?.path ?? NSNull()
        output.printJSON(document, revealed: includeSecrets)
        return
    }
    // With -d the listing is what a reveal flag asked for: printed also with --quiet.
    let print: (String) -> Void = includeSecrets ? output.revealed : output.info
    print("keychain: \(settings.keychainDescription)\(settings.keychainExists ? "" : " (does not exist yet)")")
    print("access groups: \(settings.accessGroupsDescription)")
    print(items.count == 1 ? "1 item" : "\(items.count) items")
    for (index, (item, secret)) in items.enumerated() {
        print("")
        print(item.className)
        var table = item.table(includeClass: false, dates: dates)
        if includeSecrets { table.add("password", secret.map(SecretText.human) ?? "(none)") }
        for line in table.lines(indent: 2) { print(line) }
        formatting.update(index + 1)
    }
}
