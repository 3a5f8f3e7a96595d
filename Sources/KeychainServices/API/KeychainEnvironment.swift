#if !canImport(Security)
import Foundation
import Synchronization

/// Where this process's keychain lives and which access groups it is entitled to (Linux only).
///
/// On iOS the system decides both: the keychain is the device's, and the access groups
/// come from the app's signed `keychain-access-groups` entitlement. On Linux a process
/// has no signature, so `KeychainEnvironment` supplies the same two facts:
///
/// - ``directory``: where keychain files live. Default: `$KEYSMITH_HOME`, else
///   `$XDG_DATA_HOME/keysmith`, else `~/.local/share/keysmith`.
/// - ``accessGroups``: this process's access groups, in order; the first is the default
///   group for new items. Default: `$KEYSMITH_ACCESS_GROUPS` (comma-separated), else the
///   `keychain-access-groups` (and `application-identifier`) of the entitlements plist
///   named by `$KEYSMITH_ENTITLEMENTS`, else ``sharedAccessGroup`` followed by the group
///   earlier versions derived from the executable name (`local.<name>`, still read so
///   nothing stored before is lost). A `KEYSMITH_ACCESS_GROUPS` that is set but names no
///   group gives no groups and a ``configurationIssue`` (never the shared group).
///
/// Every program that configures nothing shares ``sharedAccessGroup``, as every
/// unsandboxed macOS app shares the login keychain: what the `keysmith` tool stores there
/// a plain program reads, and the reverse. A program that names its groups (an
/// entitlements plist, `KEYSMITH_ACCESS_GROUPS`) sees only those, as a sandboxed app does.
///
/// An entitlements plist as Xcode writes it names groups like
/// `$(AppIdentifierPrefix)com.example.shared`: the prefix is expanded from `$KEYSMITH_TEAM_ID`
/// (`ABCDE12345` gives `ABCDE12345.com.example.shared`), or from a literal
/// `application-identifier` in the same plist. A variable that cannot be expanded, or a
/// file that is missing or unreadable, gives no groups and a ``configurationIssue`` that
/// every keychain call reports (never a group named literally `$(…)`).
///
/// The process-wide values can be changed at run time (thread-safe). Code that needs an
/// isolated keychain for a while, tests above all, scopes an override to the current task
/// with ``withEnvironment(_:_:)``:
///
/// ```swift
/// let env = KeychainEnvironment(directory: temporaryURL, accessGroups: ["com.example.app"])
/// try KeychainEnvironment.withEnvironment(env) {
///     let status = SecItemAdd(query as CFDictionary, nil)
/// }
/// ```
///
/// - Note: This type exists only where KeychainServices implements the API itself; on
///   Apple platforms the system supplies the keychain and the entitlements.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public struct KeychainEnvironment: Sendable, Hashable, CustomStringConvertible {
    /// The directory that holds the keychain database and its key file.
    public var directory: URL
    /// The access groups this process may read and write, in order; the first is the
    /// default group for new items. An empty list makes every call fail with
    /// `errSecMissingEntitlement`, as an app without keychain entitlements does on iOS.
    public var accessGroups: [String]
    /// The application identifier (`TEAMID.bundle.id` on iOS), informational.
    public var applicationIdentifier: String?
    /// Why the configuration gave no access groups (a missing entitlements file, an Xcode
    /// variable that cannot be expanded), or `nil`. Keychain calls report it instead of a
    /// bare "no access groups".
    public var configurationIssue: ConfigurationIssue?

    /// The access group every program without configured access groups shares (and where
    /// the `keysmith` tool stores new items by default).
    public static let sharedAccessGroup = "keysmith.shared"

    /// A configuration mistake: what is wrong and how to fix it.
    public struct ConfigurationIssue: Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, naming the file or variable.
        public var problem: String
        /// What to do.
        public var fix: String

        /// Creates an issue.
        /// - Parameters:
        ///   - problem: What is wrong.
        ///   - fix: What to do.
        public init(problem: String, fix: String) {
            self.problem = problem
            self.fix = fix
        }

        /// The problem and the fix, in one line.
        public var description: String { "\(problem) \(fix)" }
    }

    /// Creates an environment.
    /// - Parameters:
    ///   - directory: The directory for the keychain files (created 0700 when missing).
    ///   - accessGroups: The entitled access groups, default group first.
    ///   - applicationIdentifier: The application identifier, if any.
    public init(directory: URL, accessGroups: [String], applicationIdentifier: String? = nil) {
        self.directory = directory
        self.accessGroups = accessGroups
        self.applicationIdentifier = applicationIdentifier
    }

    /// Creates an environment that records why its configuration gave no access groups.
    /// - Parameters:
    ///   - directory: The directory for the keychain files.
    ///   - accessGroups: The entitled access groups, default group first.
    ///   - applicationIdentifier: The application identifier, if any.
    ///   - configurationIssue: The configuration mistake, if any.
    public init(
        directory: URL, accessGroups: [String], applicationIdentifier: String? = nil,
        configurationIssue: ConfigurationIssue?
    ) {
        self.init(directory: directory, accessGroups: accessGroups, applicationIdentifier: applicationIdentifier)
        self.configurationIssue = configurationIssue
    }

    /// A one-line summary: directory and groups (never anything secret).
    public var description: String {
        "KeychainEnvironment(directory: \(directory.path), accessGroups: \(accessGroups))"
    }

    // MARK: Process-wide defaults

    private static let processDefault = Mutex<KeychainEnvironment?>(nil)
    @TaskLocal private static var scoped: KeychainEnvironment?

    /// The environment in force for the caller: a task-scoped override if one is active,
    /// else the process-wide environment.
    public static var current: KeychainEnvironment {
        if let scoped { return scoped }
        return processDefault.withLock { value in
            if let value { return value }
            let made = KeychainEnvironment.fromProcessEnvironment()
            value = made
            return made
        }
    }

    /// The process-wide keychain directory. Setting it affects later calls in every thread
    /// (a task-scoped override from ``withEnvironment(_:_:)`` still wins inside its scope).
    public static var directory: URL {
        get { current.directory }
        set { updateProcessDefault { $0.directory = newValue } }
    }

    /// The process-wide access groups (this process's `keychain-access-groups`), default
    /// group first.
    public static var accessGroups: [String] {
        get { current.accessGroups }
        set { updateProcessDefault { $0.accessGroups = newValue } }
    }

    /// Runs `body` with `environment` in force for the current task (and the child tasks it
    /// creates). Threads started inside `body` do not inherit it; wrap their work in their
    /// own call.
    /// - Parameters:
    ///   - environment: The environment to use inside `body`.
    ///   - body: The work to run.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func withEnvironment<Result>(
        _ environment: KeychainEnvironment, _ body: () throws -> Result
    ) rethrows -> Result {
        try $scoped.withValue(environment, operation: body)
    }

    /// Runs the asynchronous `body` with `environment` in force for the current task.
    /// - Parameters:
    ///   - environment: The environment to use inside `body`.
    ///   - body: The work to run.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func withEnvironment<Result: Sendable>(
        _ environment: KeychainEnvironment, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await $scoped.withValue(environment, operation: body)
    }

    /// Re-reads the process-wide defaults from the environment variables, discarding any
    /// value set with ``directory`` or ``accessGroups``.
    public static func reset() {
        processDefault.withLock { $0 = nil }
    }

    private static func updateProcessDefault(_ change: (inout KeychainEnvironment) -> Void) {
        processDefault.withLock { value in
            var environment = value ?? KeychainEnvironment.fromProcessEnvironment()
            change(&environment)
            value = environment
        }
    }

    // MARK: Defaults from the process environment

    /// The environment described by `KEYSMITH_HOME`, `XDG_DATA_HOME`,
    /// `KEYSMITH_ACCESS_GROUPS`, `KEYSMITH_ENTITLEMENTS` and `KEYSMITH_TEAM_ID`.
    /// - Parameter variables: The environment variables to read (default: this process's).
    /// - Returns: The environment those variables describe.
    public static func fromProcessEnvironment(
        _ variables: [String: String] = ProcessInfo.processInfo.environment
    ) -> KeychainEnvironment {
        let directory = defaultDirectory(variables)
        var groups: [String] = []
        var applicationIdentifier: String?
        var issue: ConfigurationIssue?
        if let list = variables["KEYSMITH_ACCESS_GROUPS"] {
            groups = list.split(separator: ",").map { $0.trimmingScalars(where: ProcessVariables.isWhitespace) }
                .filter { !$0.isEmpty }
            if groups.isEmpty {
                // Set but empty (a deployment template with a blank value): no groups, as
                // configured, but say so rather than "no access groups"; never fall back to
                // the shared group, where every unconfigured program would read the app's items.
                issue = .init(
                    problem: "KEYSMITH_ACCESS_GROUPS is set but names no access group.",
                    fix: "Name the groups, comma-separated (for example KEYSMITH_ACCESS_GROUPS=com.example.app), or unset it to use the shared default access group.")
            }
        } else if let path = variables["KEYSMITH_ENTITLEMENTS"], !path.isEmpty {
            let entitlements = Entitlements(
                contentsOf: URL(fileURLWithPath: path), teamIdentifier: variables["KEYSMITH_TEAM_ID"])
            groups = entitlements.accessGroups
            applicationIdentifier = entitlements.applicationIdentifier
            issue = entitlements.issue
        } else {
            groups = defaultAccessGroups()
        }
        return KeychainEnvironment(
            directory: directory, accessGroups: groups, applicationIdentifier: applicationIdentifier,
            configurationIssue: issue)
    }

    /// The groups of a program that configured none: ``sharedAccessGroup``, then the group
    /// earlier versions gave it (`local.<executable name>`), still readable and writable so
    /// its existing items stay visible.
    /// - Parameter executable: The program's path (default: this process's).
    /// - Returns: The groups, default first.
    public static func defaultAccessGroups(executable: String? = CommandLine.arguments.first) -> [String] {
        let name = lastPathComponent(of: executable ?? "app")
        return [sharedAccessGroup, "local.\(name.isEmpty ? "app" : name)"]
    }

    /// The last component of `path`, as `URL(fileURLWithPath:).lastPathComponent` gives it;
    /// without building a URL for a plain path (at every start of a program, that costs the
    /// Swift runtime a scan of its protocol conformances, about 0.2 ms).
    static func lastPathComponent(of path: String) -> String {
        // Left to URL: "", "/", a path starting with "~" (which URL expands to a home
        // directory), and a last component of "." or ".." (which URL resolves against the
        // working directory when the path is relative).
        guard path.utf8.first != UInt8(ascii: "~"), let last = path.utf8.split(separator: UInt8(ascii: "/")).last,
            !last.elementsEqual(".".utf8), !last.elementsEqual("..".utf8)
        else { return URL(fileURLWithPath: path).lastPathComponent }
        return String(decoding: last, as: UTF8.self)
    }

    private static func defaultDirectory(_ variables: [String: String]) -> URL {
        if let home = variables["KEYSMITH_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        if let data = variables["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("keysmith", isDirectory: true)
        }
        let home = variables["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".local/share/keysmith", isDirectory: true)
    }
}

/// The two entitlements the keychain reads from an entitlements plist.
struct Entitlements {
    var accessGroups: [String] = []
    var applicationIdentifier: String?
    /// Why the file gave no groups, if it did not.
    var issue: KeychainEnvironment.ConfigurationIssue?

    /// Reads `keychain-access-groups`, `application-identifier` and
    /// `com.apple.security.application-groups` from a plist, in Apple's order, expanding
    /// Xcode's `$(AppIdentifierPrefix)` and `$(TeamIdentifierPrefix)`. A missing or
    /// unreadable file, or a variable that cannot be expanded, gives no groups and an
    /// ``issue`` that names the cause and the fix.
    /// - Parameters:
    ///   - url: The plist.
    ///   - teamIdentifier: The team ID for the prefix (`KEYSMITH_TEAM_ID`), if configured.
    init(contentsOf url: URL, teamIdentifier: String? = nil) {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            issue = .init(
                problem: "The entitlements file \(path) named by KEYSMITH_ENTITLEMENTS does not exist.",
                fix: "Fix the path in KEYSMITH_ENTITLEMENTS (a relative path starts in the current directory), or unset it to use the shared default access group.")
            return
        }
        guard let data = try? Data(contentsOf: url),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil),
            let dictionary = plist as? [String: Any]
        else {
            issue = .init(
                problem: "The entitlements file \(path) named by KEYSMITH_ENTITLEMENTS cannot be read as a property list dictionary.",
                fix: "Check that the file is readable and is an entitlements plist (a <dict> with keychain-access-groups).")
            return
        }
        // A list of the wrong shape (a single string, a number) would silently leave the
        // process with other groups than the file names: refuse it with the fix.
        for key in ["keychain-access-groups", "com.apple.security.application-groups"] {
            if let value = dictionary[key], !(value is [String]) {
                issue = .init(
                    problem: "The entitlements file \(path) named by KEYSMITH_ENTITLEMENTS has a \(key) that is not an array of strings.",
                    fix: "Write it as <key>\(key)</key><array><string>GROUP</string></array>, one <string> per group.")
                return
            }
        }
        let rawIdentifier = dictionary["application-identifier"] as? String
        var groups = (dictionary["keychain-access-groups"] as? [String]) ?? []
        if let rawIdentifier, !groups.contains(rawIdentifier) {
            groups.append(rawIdentifier)
        }
        for group in (dictionary["com.apple.security.application-groups"] as? [String]) ?? [] where !groups.contains(group) {
            groups.append(group)
        }
        // Xcode's variables: the team prefix from KEYSMITH_TEAM_ID, or from a literal
        // application identifier ("ABCDE12345.com.example.app").
        let team = teamIdentifier.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
            ?? rawIdentifier.flatMap(Self.literalTeamPrefix)
        var expanded: [String] = []
        for group in groups {
            let value = team.map { Self.expandTeamPrefix(group, team: $0) } ?? group
            if let start = value.range(of: "$(") {
                let variable = value[start.lowerBound...].prefix { $0 != ")" } + ")"
                let isTeamPrefix = variable == "$(AppIdentifierPrefix)" || variable == "$(TeamIdentifierPrefix)"
                issue = .init(
                    problem: "The entitlements file \(path) names access group \"\(group)\", whose \(variable) Xcode expands at build time; it is never used literally.",
                    fix: isTeamPrefix
                        ? "Set KEYSMITH_TEAM_ID to your team ID (for example KEYSMITH_TEAM_ID=ABCDE12345), or write the group out in the file."
                        : "Write the group out in the file, with \(variable) replaced by its value.")
                return
            }
            if !expanded.contains(value) { expanded.append(value) }
        }
        var identifier = rawIdentifier
        if let raw = rawIdentifier, let team { identifier = Self.expandTeamPrefix(raw, team: team) }
        applicationIdentifier = (identifier?.contains("$(") ?? false) ? nil : identifier
        // As on iOS, the read-only token group goes last.
        if let index = expanded.firstIndex(of: "com.apple.token") {
            expanded.remove(at: index)
            expanded.append("com.apple.token")
        }
        accessGroups = expanded
    }

    /// `$(AppIdentifierPrefix)x` and `$(TeamIdentifierPrefix)x` with the team: `TEAM.x`.
    static func expandTeamPrefix(_ value: String, team: String) -> String {
        let prefix = team.hasSuffix(".") ? team : team + "."
        return value.replacingOccurrences(of: "$(AppIdentifierPrefix)", with: prefix)
            .replacingOccurrences(of: "$(TeamIdentifierPrefix)", with: prefix)
    }

    /// The team of a literal application identifier (`ABCDE12345.com.example.app`): ten
    /// letters and digits before the first dot.
    static func literalTeamPrefix(_ identifier: String) -> String? {
        guard !identifier.contains("$("), let dot = identifier.firstIndex(of: ".") else { return nil }
        let team = identifier[..<dot]
        guard team.count == 10, team.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return String(team)
    }
}

/// The few environment variables opening a keychain reads, looked up one by one with
/// `getenv` rather than by converting the whole environment into a dictionary
/// (`ProcessInfo.environment`), and the whitespace rules that trim them.
enum ProcessVariables {
    /// This process's values of `names` (those that are set), as
    /// `ProcessInfo.processInfo.environment` would give them.
    static func named(_ names: String...) -> [String: String] {
        var variables: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return variables
    }

    /// Whether `scalar` is in `CharacterSet.whitespaces`: space separators (Unicode
    /// general category Zs, as Foundation lists them, with U+200B) and the tab.
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x20, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// Whether `scalar` is in `CharacterSet.whitespacesAndNewlines`: ``isWhitespace(_:)``
    /// and the newlines (U+000A to U+000D, U+0085, U+2028, U+2029).
    static func isWhitespaceOrNewline(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return true
        default: return isWhitespace(scalar)
        }
    }
}

extension String {
    /// This string without the leading and trailing Unicode scalars `isTrimmed` accepts:
    /// what `trimmingCharacters(in:)` gives for the matching character set, in plain Swift
    /// (Foundation's version goes through NSString, which costs a first-use setup that a
    /// short-lived process pays in full).
    func trimmingScalars(where isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isTrimmed($0) })!
        return String(scalars[first...last])
    }
}

extension Substring {
    /// ``Swift/String/trimmingScalars(where:)`` for a part of a string.
    func trimmingScalars(where isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        String(self).trimmingScalars(where: isTrimmed)
    }
}
#endif
