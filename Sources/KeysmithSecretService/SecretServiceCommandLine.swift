import Foundation
import Keysmith
import KeychainServices
import Synchronization

/// Set by SIGTERM and SIGINT; the service's loop stops when it sees it.
private let stopRequested = Atomic<Bool>(false)

/// `keysmith secret-service [--replace] [--bus-address ADDRESS]`: serves
/// `org.freedesktop.secrets` on the session bus (or the bus at ADDRESS) in the foreground, over
/// the keychain of `KEYSMITH_HOME`, until SIGTERM or SIGINT, or until the bus goes away.
public enum SecretServiceCommandLine {
    /// The usage line.
    public static let usage = "usage: keysmith secret-service [--replace] [--bus-address ADDRESS] [--keychain DIRECTORY]"

    /// What `keysmith help secret-service` says.
    public static let help = """
        \(usage)

        Serves the freedesktop Secret Service (org.freedesktop.secrets) on the session bus, so programs that use \
        libsecret, secret-tool, Python's secretstorage and keyring, and other Secret Service clients store into \
        this keychain. Runs in the foreground until SIGTERM or SIGINT, or until the bus goes away.

        The login collection (the default alias) holds the keychain's generic passwords of the shared access group: \
        an item stored with 'secret-tool store --label=L service S account A' is found by \
        'keysmith find-generic-password -s S -a A -w', and the reverse. It is locked exactly when the keychain is \
        ('keysmith lock', 'keysmith unlock', the auto-lock timeout). The session collection lives in memory and goes \
        away with the service. Reads of secrets by bus clients are recorded for 'keysmith audit --secret-service'.

          --replace              Take the name over from the program that owns it when it allows that (another keysmith \
        secret-service does), or else wait and take it when that program exits (gnome-keyring does not allow it).
          --bus-address ADDRESS  Serve on the bus at ADDRESS instead of $DBUS_SESSION_BUS_ADDRESS.
          --keychain DIRECTORY   Use the keychain in DIRECTORY instead of $KEYSMITH_HOME's.

        Unlock asks through the program KEYSMITH_ASKPASS names (it gets the prompt as its argument and prints the \
        passphrase); without one, it says to run 'keysmith unlock'.
        """

    /// Runs the service.
    /// - Parameter processArguments: The command line, program name first; the word
    ///   `secret-service` may follow it (as `keysmith` hands it over).
    /// - Returns: The exit status: 0 when stopped by a signal or when the bus went away, 1 on failure, 2 on bad usage.
    public static func run(_ processArguments: [String]) -> Int32 {
        var arguments = Array(processArguments.dropFirst())
        // `keysmith [global options] secret-service [options]` arrives as it was typed: the
        // command word may follow global options (--keychain DIRECTORY, --quiet, --json).
        if let word = arguments.firstIndex(where: { ObjectPath.same($0, "secret-service") }) { arguments.remove(at: word) }
        var replace = false
        var address: String?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            func value() -> String? {
                if let equals = argument.firstIndex(of: "=") { return String(argument[argument.index(after: equals)...]) }
                index += 1
                return index < arguments.count ? arguments[index] : nil
            }
            if ObjectPath.same(argument, "--replace") {
                replace = true
            } else if ["--quiet", "-q", "--json"].contains(where: { ObjectPath.same($0, argument) }) {
                // Global options of the keysmith tool that change nothing here.
            } else if ObjectPath.same(argument, "--help") || ObjectPath.same(argument, "-h") {
                print(help)
                return 0
            } else if argument.hasPrefix("--bus-address") {
                guard let text = value(), !text.isEmpty else { return usageError("--bus-address needs an address (unix:path=...)") }
                address = text
            } else if argument.hasPrefix("--access-group") {
                // A global option of the keysmith tool that cannot apply: the login collection is one access group.
                return usageError(
                    "--access-group does not apply here: the Secret Service serves the generic passwords of the access group "
                        + "\(KeychainEnvironment.sharedAccessGroup), the one secret-tool and 'keysmith find-generic-password' share; "
                        + "leave the option out.")
            } else if argument.hasPrefix("--keychain") {
                guard let text = value(), !text.isEmpty else { return usageError("--keychain needs a directory") }
                KeychainEnvironment.directory = URL(fileURLWithPath: text, isDirectory: true)
            } else {
                return usageError("unknown argument '\(argument)'")
            }
            index += 1
        }
        return serve(address: address, replace: replace)
    }

    private static func usageError(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("keysmith secret-service: \(message)\n\(usage)\n".utf8))
        return 2
    }

    private static func say(_ message: String) {
        FileHandle.standardError.write(Data("keysmith secret-service: \(message)\n".utf8))
    }

    private static func serve(address: String?, replace: Bool) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in [SIGTERM, SIGINT] {
            signal(number) { _ in stopRequested.store(true, ordering: .relaxed) }
            sigaddset(&unblocked, number)
        }
        // A parent may start this process with the signals blocked (they are inherited).
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        if address == nil, ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"].map({ $0.isEmpty }) ?? true {
            say("there is no session bus (DBUS_SESSION_BUS_ADDRESS is not set); run it inside a desktop session, under dbus-run-session, or with --bus-address.")
            return 1
        }
        let connection: BusConnection
        do {
            connection = try BusConnection(address: address)
        } catch {
            let given = address == nil ? "DBUS_SESSION_BUS_ADDRESS" : "--bus-address"
            say(
                "\(error); check that \(given) names a bus that is running (a desktop session's, or one started "
                    + "with dbus-run-session or dbus-daemon), for example unix:path=$XDG_RUNTIME_DIR/bus.")
            return 1
        }
        let server = SecretServiceServer(connection: connection, readLog: BusClientReadLog(directory: KeychainEnvironment.directory))
        do {
            try connection.attach(server)
            switch try connection.requestName(SecretServiceServer.busName, replace: replace) {
            case .owned:
                break
            case .taken:
                var owner = "another program"
                if let pid = connection.processID(of: SecretServiceServer.busName) {
                    owner = "process \(pid)"
                    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") {
                        owner += " (\(executable))"
                    }
                }
                say("\(SecretServiceServer.busName) is already served by \(owner); stop it, or run 'keysmith secret-service --replace' to take over.")
                return 1
            case .queued:
                say("waiting for the program that serves \(SecretServiceServer.busName) to let it go (it does not allow replacement)")
                while !connection.owns(SecretServiceServer.busName) {
                    if stopRequested.load(ordering: .relaxed) { return 0 }
                    try connection.processAndWait(timeout: 0.25)
                }
            }
        } catch {
            say("\(error).")
            return 1
        }
        say("serving \(SecretServiceServer.busName) on the \(address == nil ? "session bus" : "bus at \(address!)")")
        let (reason, failed) = server.run { stopRequested.load(ordering: .relaxed) }
        connection.flush()
        say("stopped: \(reason)")
        return failed ? 1 : 0
    }
}
