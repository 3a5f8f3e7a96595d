import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import KeychainServices

// `keysmith secret-service`: the freedesktop Secret Service over this keychain. The server
// (sd-bus, libcrypto) is `keysmith-secret-service`, installed beside `keysmith`; this process
// runs it in its own place (exec, same arguments), as `keysmith fleet` runs keysmith-fleet, so
// `keysmith` itself loads neither library. `keysmith audit --secret-service` shows which bus
// clients read which items, from the log the server keeps.

/// The `secret-service` command, its hand-over, and the bus-client reads of `audit --secret-service`.
public enum SecretServiceCommand {
    /// The `secret-service` command.
    public static let all: [Command] = [command]

    /// The executable that serves the Secret Service, installed beside `keysmith`.
    public static let executableName = "keysmith-secret-service"

    /// The log of reads the server keeps in the keychain directory.
    static let readLogName = "secret-service-reads.log"

    /// `--secret-service` of audit.
    static let auditOption = OptionSpec(
        name: "secret-service", long: "secret-service",
        help: "Instead of the key audit: which Secret Service clients (process id and executable) read which items' "
            + "secrets, latest last; never the secrets.")

    /// Whether a parsed command line is `secret-service`.
    static func isSecretService(_ command: Command) -> Bool { command.name == Self.command.name }

    /// Replaces this process with `keysmith-secret-service` beside the running executable, with
    /// the same arguments; returns only when that fails, with the error to report.
    /// - Parameter processArguments: The command line, program name first.
    /// - Returns: Why the server could not be started.
    static func executeServer(_ processArguments: [String]) -> CommandLineError {
        guard let path = SiblingExecutable.path(of: executableName) else {
            return .failure(
                "cannot find where this keysmith executable is, so not \(executableName) beside it either.",
                recovery: "run \(executableName) with the same arguments.")
        }
        let reason = SiblingExecutable.execute(path, processArguments: processArguments)
        return .failure(
            "the Secret Service is served by \(executableName), which could not be started from \(path): \(reason).",
            recovery: "install \(executableName) beside keysmith (in a checkout: swift build --product \(executableName)); it is built on Linux only.")
    }

    /// The error when this process cannot hand the command over (an in-process run).
    static var unavailable: CommandLineError {
        .failure(
            "the Secret Service is not served from this process.",
            recovery: "run keysmith secret-service from the keysmith tool, or \(executableName) itself.")
    }

    /// One read from the log.
    struct Read {
        let time: String
        let processID: String
        let executable: String
        let collection: String
        let item: String
        let method: String
    }

    /// `keysmith audit --secret-service`: the reads, with each item's service, account and
    /// label looked up in the keychain (when it can be read now).
    static func showReads(_ invocation: CommandInvocation) throws(CommandLineError) {
        guard let directory = invocation.settings.keychainDirectory else {
            throw .failure("the Secret Service's reads are logged beside a Keysmith keychain; this run uses the system keychain.", recovery: nil)
        }
        var reads: [Read] = []
        for name in [readLogName + ".1", readLogName] {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else { continue }
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard fields.count == 6 else { continue }
                reads.append(Read(time: fields[0], processID: fields[1], executable: fields[2], collection: fields[3], item: fields[4], method: fields[5]))
            }
        }
        let output = invocation.output
        let names = invocation.settings.withKeychain { reads.map { itemNames($0.item) } }
        if output.json {
            output.printJSON([
                "keychain": directory.path, "count": reads.count,
                "reads": zip(reads, names).map { read, name -> [String: Any] in
                    [
                        "time": read.time, "pid": Int(read.processID) ?? NSNull(), "executable": read.executable,
                        "collection": read.collection, "item": read.item, "method": read.method,
                        "service": name?.service ?? NSNull(), "account": name?.account ?? NSNull(), "label": name?.label ?? NSNull(),
                    ]
                },
            ])
            return
        }
        output.info("Secret Service reads in \(directory.path) (latest last)")
        if reads.isEmpty {
            output.info("no bus client has read a secret (or keysmith secret-service has not run with this keychain)")
            return
        }
        var table = ColumnTable(headers: ["TIME", "PID", "EXECUTABLE", "COLLECTION", "SERVICE", "ACCOUNT", "LABEL"])
        for (read, name) in zip(reads, names) {
            table.add([
                read.time, read.processID, read.executable, read.collection,
                name?.service ?? "(item \(read.item): deleted, or the keychain is locked)", name?.account ?? "", name?.label ?? "",
            ])
        }
        for line in table.lines() { output.data(line) }
    }

    /// The service, account and label of the item with this Secret Service identifier.
    private static func itemNames(_ identifier: String) -> (service: String, account: String, label: String)? {
        let hex = Array(identifier.utf8)
        guard hex.count == 32 else { return nil }
        var bytes = Array("genp".utf8)
        for index in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: Data(bytes),
            kSecReturnAttributes as String: kCFBooleanTrue as Any,
        ]
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, let item = result as? [String: Any] else { return nil }
        return (
            item[kSecAttrService as String] as? String ?? "", item[kSecAttrAccount as String] as? String ?? "",
            item[kSecAttrLabel as String] as? String ?? ""
        )
    }

    private static let command = Command(
        name: "secret-service", group: .keychain, synopsis: "[--replace] [--bus-address ADDRESS]",
        summary: "Serve the freedesktop Secret Service (org.freedesktop.secrets) from this keychain",
        details: """
            Serves the Secret Service API on the session bus in the foreground, until SIGTERM or SIGINT, or until the bus goes away, so programs that use libsecret (secret-tool, GNOME apps, Chromium, VS Code), Python's secretstorage and keyring, and other Secret Service clients store into this keychain. It prints one line on standard error when it is ready. Refused (exit status 1) when another program serves org.freedesktop.secrets, unless --replace.

            The login collection (alias default) is the keychain's generic passwords of the shared access group: an item stored with 'secret-tool store --label=L service S account A' is found by 'keysmith find-generic-password -s S -a A -w', and one added with 'keysmith add-generic-password -s S -a A' by 'secret-tool lookup service S account A'. Other attributes are kept sealed with the item. The collection is locked exactly when the keychain is ('keysmith lock', 'keysmith unlock', the auto-lock timeout); an unlock asks through the program KEYSMITH_ASKPASS names, else the client is told it was dismissed and the service says to run 'keysmith unlock'. The session collection lives in the service's memory only. Which bus client read which item is shown by 'keysmith audit --secret-service'.

            The server is keysmith-secret-service, installed beside keysmith (Linux).

            Examples:

              keysmith secret-service
              keysmith secret-service --replace
              dbus-run-session -- sh -c 'keysmith secret-service & sleep 1; secret-tool lookup service S account A'
            """,
        options: [
            OptionSpec(name: "replace", long: "replace", help: "Take org.freedesktop.secrets over from the program that serves it, when it allows that (another keysmith secret-service does), or else wait and take it when that program exits (gnome-keyring does not allow it: stop gnome-keyring)."),
            OptionSpec(name: "bus-address", long: "bus-address", value: .required("ADDRESS"), help: "Serve on the bus at ADDRESS (unix:path=...) instead of the session bus."),
        ]
    ) { _ throws(CommandLineError) in
        throw SecretServiceCommand.unavailable
    }
}
