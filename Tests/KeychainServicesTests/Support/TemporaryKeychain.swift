import Foundation
import KeychainServices

/// A keychain in a fresh temporary directory, used for the duration of one test and then
/// removed. Every SecItem call made inside ``run(_:)`` goes to it (task-scoped), so tests
/// can run in parallel and never touch a real keychain.
struct TemporaryKeychain {
    let directory: URL
    let accessGroups: [String]

    init(accessGroups: [String] = ["com.example.app", "com.example.shared"]) {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("keysmith-tests-\(UUID().uuidString)", isDirectory: true)
        self.accessGroups = accessGroups
    }

    var environment: KeychainEnvironment {
        KeychainEnvironment(directory: directory, accessGroups: accessGroups)
    }

    /// The same keychain seen by a process with other entitlements.
    func withGroups(_ groups: [String]) -> TemporaryKeychain {
        TemporaryKeychain(directory: directory, accessGroups: groups)
    }

    private init(directory: URL, accessGroups: [String]) {
        self.directory = directory
        self.accessGroups = accessGroups
    }

    /// Runs `body` against this keychain.
    func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        try KeychainEnvironment.withEnvironment(environment, body)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Creates a keychain, runs `body` with it, and removes it afterwards.
    static func with<Result>(
        accessGroups: [String] = ["com.example.app", "com.example.shared"],
        _ body: (TemporaryKeychain) throws -> Result
    ) rethrows -> Result {
        let keychain = TemporaryKeychain(accessGroups: accessGroups)
        defer { keychain.remove() }
        return try keychain.run { try body(keychain) }
    }
}

/// Shorthand used across the conformance suite.
func genp(_ service: String = "com.example.service", _ account: String = "alice") -> [String: Any] {
    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
}

extension Dictionary where Key == String, Value == Any {
    func with(_ extra: [String: Any]) -> [String: Any] { merging(extra) { _, new in new } }
    func with(_ key: CFString, _ value: Any) -> [String: Any] { with([key as String: value]) }
}
