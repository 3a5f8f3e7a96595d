import Foundation
import Keysmith
import KeychainServices

// Every test runs in its own temporary keychain on Linux (a task-local KeychainEnvironment,
// so parallel tests never share state), and with unique service names everywhere.

/// The access groups every test keychain is entitled to; the first is the default.
let testAccessGroups = ["com.example.tests", "com.example.shared"]

/// A service name no other test uses.
func uniqueService(_ name: String = #function) -> String {
    let cleaned = name.filter { $0.isLetter || $0.isNumber }
    return "com.example.tests.\(cleaned).\(UUID().uuidString.prefix(8))"
}

#if os(Linux)
private func makeEnvironment() -> (KeychainEnvironment, URL) {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("keysmith-store-tests-\(UUID().uuidString)", isDirectory: true)
    return (KeychainEnvironment(directory: directory, accessGroups: testAccessGroups), directory)
}

/// The authenticators of a test keychain: a scripted fingerprint reader with an enrolled
/// finger and no scripted answers, so biometric items can be stored (their key binds the
/// enrolled set) and reading their data fails unless a test scripts an answer.
private func testAuthenticators() -> KeychainAuthenticators {
    KeychainAuthenticators([ScriptedAuthenticator(factor: .biometry)])
}

/// Runs `body` in a fresh temporary keychain, removed afterwards.
func withTemporaryKeychain<Result>(_ body: () throws -> Result) rethrows -> Result {
    let (environment, directory) = makeEnvironment()
    defer { try? FileManager.default.removeItem(at: directory) }
    return try KeychainEnvironment.withEnvironment(environment) {
        try KeychainAuthenticators.withAuthenticators(testAuthenticators(), body)
    }
}

/// Runs the asynchronous `body` in a fresh temporary keychain, removed afterwards.
func withTemporaryKeychain<Result: Sendable>(_ body: () async throws -> Result) async rethrows -> Result {
    let (environment, directory) = makeEnvironment()
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await KeychainEnvironment.withEnvironment(environment) {
        try await KeychainAuthenticators.withAuthenticators(testAuthenticators(), body)
    }
}
#else
/// Runs `body` against the real keychain (tests use unique services).
func withTemporaryKeychain<Result>(_ body: () throws -> Result) rethrows -> Result {
    try body()
}

/// Runs the asynchronous `body` against the real keychain (tests use unique services).
func withTemporaryKeychain<Result: Sendable>(_ body: () async throws -> Result) async rethrows -> Result {
    try await body()
}
#endif

/// A `UserDefaults` suite of its own, removed when `body` returns.
func withTemporaryDefaults<Result>(_ body: (UserDefaults) throws -> Result) rethrows -> Result {
    let name = "com.example.tests.defaults.\(UUID().uuidString)"
    let defaults = UserDefaults(suiteName: name)!
    defer { defaults.removePersistentDomain(forName: name) }
    return try body(defaults)
}

/// A `Codable` value with a few field types, like an app's profile or token.
struct Profile: Codable, Equatable, Sendable {
    var nickname: String
    var avatar: URL
    var age: Int
    var tags: [String]
}

let sampleProfile = Profile(
    nickname: "Ada", avatar: URL(string: "https://example.com/ada.png")!, age: 36, tags: ["admin", "beta"])
