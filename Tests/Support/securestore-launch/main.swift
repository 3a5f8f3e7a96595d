// securestore-launch: one launch of an app that uses SecureStore's launch-time features, for
// the tests that need real process launches (preferences are saved, or not, when a process
// exits; nothing inside one process can show that). It uses the keychain named by
// KEYSMITH_HOME and the preferences of the user named by HOME (and XDG_CONFIG_HOME), like
// any other program.
//
//   securestore-launch cleanup PREFIX           removeLeftoversAfterReinstall(), then set
//                                               "token" in namespace "auth" if absent; prints
//                                               "outcome OUTCOME" and "token kept|new"
//   securestore-launch set-default KEY VALUE    UserDefaults.standard.set(VALUE, forKey: KEY)
//   securestore-launch migrate PREFIX KEY       migratePlaintext(from: .standard, keys: [KEY]);
//                                               prints the report's description
//   securestore-launch show-default KEY         prints "default present" or "default absent"
//   securestore-launch set-flag KEY             UserDefaults.standard.set(true, forKey: KEY)
//
// Exit status: 0 on success, 1 otherwise (the error is on stderr).
import Foundation
import Keysmith

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("securestore-launch: \(message)\n".utf8))
    exit(1)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { fail("usage: securestore-launch COMMAND ARGUMENTS") }

do {
    switch (command, arguments.count) {
    case ("cleanup", 2):
        let store = try SecureStore(servicePrefix: arguments[1])
        let outcome = try store.removeLeftoversAfterReinstall()
        say("outcome \(outcome)")
        if try store.string(for: "token", in: "auth") == nil {
            try store.set("first-launch-token", for: "token", in: "auth")
            say("token new")
        } else {
            say("token kept")
        }
    case ("set-default", 3):
        UserDefaults.standard.set(arguments[2], forKey: arguments[1])
        // The setup itself must reach the disk whatever the code under test does.
        guard UserDefaults.standard.synchronize() else { fail("the preferences could not be saved") }
    case ("set-flag", 2):
        UserDefaults.standard.set(true, forKey: arguments[1])
        guard UserDefaults.standard.synchronize() else { fail("the preferences could not be saved") }
    case ("migrate", 3):
        let store = try SecureStore(servicePrefix: arguments[1])
        let report = try store.migratePlaintext(from: .standard, keys: [arguments[2]], in: "auth")
        say("report \(report)")
    case ("show-default", 2):
        say(UserDefaults.standard.object(forKey: arguments[1]) == nil ? "default absent" : "default present")
    default:
        fail("unknown command or wrong number of arguments: \(arguments.joined(separator: " "))")
    }
} catch {
    fail("\(error)")
}
