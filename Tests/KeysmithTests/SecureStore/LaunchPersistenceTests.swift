// Preferences written by SecureStore must be on disk when the app exits: the reinstall
// marker (or every later launch looks like a reinstall and wipes the store) and the removal
// of migrated plaintext (or the secret stays in the preferences file). Only real process
// launches can show this, so these tests run the `securestore-launch` program several times
// on one temporary home directory (preferences) and one temporary keychain.
#if os(Linux)
import Foundation
import Testing

/// The `securestore-launch` executable built next to the test binary.
func launchExecutable() -> URL {
    let products = Bundle.main.executableURL?.deletingLastPathComponent()
        ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var candidate = products
    for _ in 0..<4 {
        let url = candidate.appendingPathComponent("securestore-launch")
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        candidate.deleteLastPathComponent()
    }
    return products.appendingPathComponent("securestore-launch")
}

/// A temporary user: a home directory (with its preferences) and a keychain.
private struct TemporaryUser {
    let home: URL

    init() throws {
        home = FileManager.default.temporaryDirectory
            .appendingPathComponent("keysmith-launch-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    }

    var keychain: URL { home.appendingPathComponent("keychain", isDirectory: true) }

    func remove() { try? FileManager.default.removeItem(at: home) }

    /// Runs one launch to its end; returns its exit status and standard output.
    func launch(_ arguments: [String], executable: URL = launchExecutable()) throws
        -> (status: Int32, output: String, errors: String)
    {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        environment["KEYSMITH_HOME"] = keychain.path
        environment["KEYSMITH_ACCESS_GROUPS"] = nil
        environment["KEYSMITH_ENTITLEMENTS"] = nil
        environment["CFFIXED_USER_HOME"] = nil
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData, as: UTF8.self)
        )
    }

    /// The files of the home directory outside the keychain that contain `needle`.
    func filesContaining(_ needle: String) -> [String] {
        guard let walker = FileManager.default.enumerator(at: home, includingPropertiesForKeys: nil) else { return [] }
        var found: [String] = []
        for case let url as URL in walker where !url.path.hasPrefix(keychain.path) {
            if let data = try? Data(contentsOf: url), data.range(of: Data(needle.utf8)) != nil {
                found.append(url.path)
            }
        }
        return found
    }
}

@Suite(.serialized) struct LaunchPersistenceTests {
    @Test func test_reinstallMarker_survivesTheProcess_laterLaunchesRemoveNothing() throws {
        let user = try TemporaryUser()
        defer { user.remove() }
        let prefix = "com.example.tests.launch.\(UUID().uuidString.prefix(8))"

        let first = try user.launch(["cleanup", prefix])
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.contains("outcome firstRun"), "\(first.output)")
        #expect(first.output.contains("token new"), "\(first.output)")
        for launch in 2...3 {
            let later = try user.launch(["cleanup", prefix])
            #expect(later.status == 0, "launch \(launch): \(later.errors)")
            #expect(later.output.contains("outcome notFirstLaunch"), "launch \(launch) cleaned up: \(later.output)")
            #expect(later.output.contains("token kept"), "launch \(launch) lost the value: \(later.output)")
        }
    }

    @Test func test_migratedDefaults_areGoneFromThePreferencesFile_afterExit() throws {
        let user = try TemporaryUser()
        defer { user.remove() }
        let prefix = "com.example.tests.launch.\(UUID().uuidString.prefix(8))"
        let canary = "plaintext-canary-\(UUID().uuidString)"

        let setup = try user.launch(["set-default", "auth_token", canary])
        #expect(setup.status == 0, "\(setup.errors)")
        // The setup really left the plaintext on disk, where the migration must remove it from.
        #expect(!user.filesContaining(canary).isEmpty)

        let migrate = try user.launch(["migrate", prefix, "auth_token"])
        #expect(migrate.status == 0, "\(migrate.errors)")
        #expect(migrate.output.contains("report migrated 1"), "\(migrate.output)")

        let shown = try user.launch(["show-default", "auth_token"])
        #expect(shown.output.contains("default absent"), "the plaintext came back in the next launch: \(shown.output)")
        #expect(user.filesContaining(canary) == [], "the plaintext value is still on disk")

        let again = try user.launch(["migrate", prefix, "auth_token"])
        #expect(again.output.contains("report migrated 0, already present 0"), "\(again.output)")
    }

    /// The same app under another executable name (a renamed binary, a versioned name, a
    /// second program of the app that uses the same store) is not a reinstall: on Linux the
    /// standard preferences are named after the executable, so the marker must not be.
    @Test func test_anotherExecutableName_forTheSameStore_removesNothing() throws {
        let user = try TemporaryUser()
        defer { user.remove() }
        let prefix = "com.example.tests.launch.\(UUID().uuidString.prefix(8))"
        let renamed = user.home.appendingPathComponent("myapp-2.0")
        try FileManager.default.copyItem(at: launchExecutable(), to: renamed)

        let first = try user.launch(["cleanup", prefix])
        #expect(first.output.contains("outcome firstRun"), "\(first.output) \(first.errors)")
        let other = try user.launch(["cleanup", prefix], executable: renamed)
        #expect(other.status == 0, "\(other.errors)")
        #expect(other.output.contains("outcome notFirstLaunch"), "the renamed program wiped the store: \(other.output)")
        #expect(other.output.contains("token kept"), "\(other.output)")
    }

    /// A store adopted by a version that kept the marker in the standard preferences keeps
    /// recognizing that marker.
    @Test func test_aMarkerInTheStandardPreferences_stillCounts() throws {
        let user = try TemporaryUser()
        defer { user.remove() }
        let prefix = "com.example.tests.launch.\(UUID().uuidString.prefix(8))"

        let first = try user.launch(["cleanup", prefix])
        #expect(first.output.contains("outcome firstRun"), "\(first.output) \(first.errors)")
        // Only the standard preferences' marker is left, as an earlier version left it.
        let config = user.home.appendingPathComponent(".config")
        for file in try FileManager.default.contentsOfDirectory(atPath: config.path) where file.hasPrefix(prefix) {
            try FileManager.default.removeItem(at: config.appendingPathComponent(file))
        }
        let setup = try user.launch(["set-flag", "\(prefix).installed"])
        #expect(setup.status == 0, "\(setup.errors)")
        let later = try user.launch(["cleanup", prefix])
        #expect(later.output.contains("outcome notFirstLaunch"), "\(later.output) \(later.errors)")
        #expect(later.output.contains("token kept"), "\(later.output)")
    }
}
#endif
