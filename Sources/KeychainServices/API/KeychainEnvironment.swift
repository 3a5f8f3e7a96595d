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
///   named by `$KEYSMITH_ENTITLEMENTS`, else one group derived from the executable name,
///   so a plain program works with zero setup.
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
    /// `KEYSMITH_ACCESS_GROUPS` and `KEYSMITH_ENTITLEMENTS`.
    /// - Parameter variables: The environment variables to read (default: this process's).
    /// - Returns: The environment those variables describe.
    public static func fromProcessEnvironment(
        _ variables: [String: String] = ProcessInfo.processInfo.environment
    ) -> KeychainEnvironment {
        let directory = defaultDirectory(variables)
        var groups: [String] = []
        var applicationIdentifier: String?
        if let list = variables["KEYSMITH_ACCESS_GROUPS"] {
            groups = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        } else if let path = variables["KEYSMITH_ENTITLEMENTS"], !path.isEmpty {
            let entitlements = Entitlements(contentsOf: URL(fileURLWithPath: path))
            groups = entitlements.accessGroups
            applicationIdentifier = entitlements.applicationIdentifier
        } else {
            let name = URL(fileURLWithPath: CommandLine.arguments.first ?? "app").lastPathComponent
            groups = ["local.\(name.isEmpty ? "app" : name)"]
        }
        return KeychainEnvironment(
            directory: directory, accessGroups: groups, applicationIdentifier: applicationIdentifier)
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

    /// Reads `keychain-access-groups`, `application-identifier` and
    /// `com.apple.security.application-groups` from a plist, in Apple's order; a missing
    /// or unreadable file gives no groups (every keychain call then reports
    /// `errSecMissingEntitlement`, which names the cause).
    init(contentsOf url: URL) {
        guard let data = try? Data(contentsOf: url),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil),
            let dictionary = plist as? [String: Any]
        else { return }
        applicationIdentifier = dictionary["application-identifier"] as? String
        var groups = (dictionary["keychain-access-groups"] as? [String]) ?? []
        if let applicationIdentifier, !groups.contains(applicationIdentifier) {
            groups.append(applicationIdentifier)
        }
        for group in (dictionary["com.apple.security.application-groups"] as? [String]) ?? [] where !groups.contains(group) {
            groups.append(group)
        }
        // As on iOS, the read-only token group goes last.
        if let index = groups.firstIndex(of: "com.apple.token") {
            groups.remove(at: index)
            groups.append("com.apple.token")
        }
        accessGroups = groups
    }
}
#endif
