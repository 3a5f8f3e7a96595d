// securestore-interop: the Swift SecureStore, driven from the command line, for the tests that
// check that other languages' stores (the JavaScript package) and the Swift store see the same
// items. It uses the keychain named by KEYSMITH_HOME.
//
//   securestore-interop set PREFIX NAMESPACE KEY          stores standard input (text) with set(_:for:in:)
//   securestore-interop get PREFIX NAMESPACE KEY          prints string(for:in:) exactly; exit 44 when absent
//   securestore-interop set-profile PREFIX NAMESPACE KEY NICKNAME AVATAR
//                                                         stores a Codable Profile (JSON)
//   securestore-interop get-profile PREFIX NAMESPACE KEY  prints "NICKNAME AVATAR" of value(Profile.self, …)
//   securestore-interop keys PREFIX NAMESPACE             prints keys(in:), one per line
//
// Exit status: 0 on success, 44 when the value is absent, 1 otherwise (the error on stderr).
import Foundation
import Keysmith

/// The Codable value both sides store as JSON.
struct Profile: Codable {
    var nickname: String
    var avatar: String
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("securestore-interop: \(message)\n".utf8))
    exit(1)
}

func write(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3 else { fail("usage: securestore-interop COMMAND PREFIX NAMESPACE [KEY …]") }

do {
    let store = try SecureStore(servicePrefix: arguments[1])
    let namespace = Namespace(arguments[2])
    switch (arguments[0], arguments.count) {
    case ("set", 4):
        let input = FileHandle.standardInput.readDataToEndOfFile()
        guard let text = String(data: input, encoding: .utf8) else { fail("standard input is not UTF-8") }
        try store.set(text, for: arguments[3], in: namespace)
    case ("get", 4):
        guard let text = try store.string(for: arguments[3], in: namespace) else { exit(44) }
        write(text)
    case ("set-profile", 6):
        try store.set(Profile(nickname: arguments[4], avatar: arguments[5]), for: arguments[3], in: namespace)
    case ("get-profile", 4):
        guard let profile = try store.value(Profile.self, for: arguments[3], in: namespace) else { exit(44) }
        write("\(profile.nickname) \(profile.avatar)")
    case ("keys", 3):
        for key in try store.keys(in: namespace) { write(key + "\n") }
    default:
        fail("unknown command or wrong number of arguments: \(arguments.joined(separator: " "))")
    }
} catch {
    fail("\(error)")
}
