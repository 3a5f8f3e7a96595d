import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Runs the built `keysmith` binary as a subprocess in a temporary home. Nothing here changes
// the test process's own environment, so the tests can run in parallel.

/// The directory of the tools under test when it is not the products directory:
/// `KEYSMITH_TEST_TOOLS`, which `make test` sets to the `bin` directory `make install` filled, to
/// run the command tests against the installed (statically linked, release) tools.
func installedToolsDirectory() -> URL? {
    guard let directory = ProcessInfo.processInfo.environment["KEYSMITH_TEST_TOOLS"], !directory.isEmpty else { return nil }
    return URL(fileURLWithPath: directory)
}

/// The `keysmith` executable under test: the installed one (``installedToolsDirectory()``), else
/// the one next to the test binary (the products directory).
func keysmithExecutable() -> URL {
    if let installed = installedToolsDirectory() { return installed.appendingPathComponent("keysmith") }
    let products = Bundle.main.executableURL?.deletingLastPathComponent()
        ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var candidate = products
    // On Linux the test binary sits in the products directory; on macOS inside an .xctest bundle.
    for _ in 0..<4 {
        let url = candidate.appendingPathComponent("keysmith")
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
            FileManager.default.isExecutableFile(atPath: url.path)
        {
            return url
        }
        candidate.deleteLastPathComponent()
    }
    return products.appendingPathComponent("keysmith")
}

/// A temporary directory for one test: the keychain lives in `keychain/` inside it, and it
/// is also the subprocess's HOME, so nothing can reach a real keychain.
final class TemporaryHome {
    let url: URL

    init() {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).standardizedFileURL.path
        var template = Array((base + "/keysmith-cli-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        url = URL(fileURLWithPath: String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The keychain directory tests pass with `--keychain`.
    var keychain: URL { url.appendingPathComponent("keychain") }
}

/// What a run of `keysmith` produced.
struct RunResult: CustomStringConvertible {
    let status: Int32
    let standardOutput: Data
    let standardError: Data

    var stdout: String { String(decoding: standardOutput, as: UTF8.self) }
    var stderr: String { String(decoding: standardError, as: UTF8.self) }

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    /// Standard output parsed as a JSON object.
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: standardOutput)
        return try #require(object as? [String: Any], "not a JSON object: \(stdout)")
    }
}

/// The environment for a subprocess: this process's, without anything that could point the
/// tool at a real keychain, with HOME set to the temporary home, plus `extra`.
func subprocessEnvironment(home: TemporaryHome, extra: [String: String] = [:]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment.filter { key, _ in
        !key.hasPrefix("KEYSMITH_") && key != "XDG_DATA_HOME"
    }
    environment["HOME"] = home.url.path
    environment["LC_ALL"] = "C.UTF-8"
    for (key, value) in extra { environment[key] = value }
    return environment
}

/// Runs `keysmith` with `--keychain HOME/keychain` (unless `useKeychainFlag` is false),
/// feeding `standardInput` (empty when `nil`; `standardInputBytes` instead, when given), and
/// waits for it (at most 60 s).
/// `standardOutputPath` sends standard output to that file instead of capturing it (for
/// example `/dev/full`, to see what the tool does when its output cannot be written).
@discardableResult
func keysmith(
    _ arguments: [String], home: TemporaryHome, standardInput: String? = nil, standardInputBytes: Data? = nil,
    environment extra: [String: String] = [:], useKeychainFlag: Bool = true, launcher: [String] = [],
    standardOutputPath: String? = nil
) throws -> RunResult {
    let directory = home.url
    let token = UUID().uuidString
    let outputURL = directory.appendingPathComponent("stdout-\(token)")
    let errorURL = directory.appendingPathComponent("stderr-\(token)")
    let inputURL = directory.appendingPathComponent("stdin-\(token)")
    _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: inputURL.path, contents: standardInputBytes ?? Data((standardInput ?? "").utf8))
    defer {
        for url in [outputURL, errorURL, inputURL] { try? FileManager.default.removeItem(at: url) }
    }
    let outputHandle = try FileHandle(forWritingTo: standardOutputPath.map { URL(fileURLWithPath: $0) } ?? outputURL)
    let errorHandle = try FileHandle(forWritingTo: errorURL)
    let inputHandle = try FileHandle(forReadingFrom: inputURL)
    defer {
        try? outputHandle.close()
        try? errorHandle.close()
        try? inputHandle.close()
    }

    let process = Process()
    var words = useKeychainFlag ? ["--keychain", home.keychain.path] + arguments : arguments
    if let launcherPath = launcher.first {
        process.executableURL = URL(fileURLWithPath: launcherPath)
        words = Array(launcher.dropFirst()) + [keysmithExecutable().path] + words
    } else {
        process.executableURL = keysmithExecutable()
    }
    process.arguments = words
    process.environment = subprocessEnvironment(home: home, extra: extra)
    process.currentDirectoryURL = directory
    process.standardInput = inputHandle
    process.standardOutput = outputHandle
    process.standardError = errorHandle
    try process.run()
    try waitForExit(process, seconds: 60)
    return RunResult(
        status: process.terminationStatus, standardOutput: try Data(contentsOf: outputURL),
        standardError: try Data(contentsOf: errorURL))
}

struct SubprocessTimedOut: Error {}

/// Waits for a subprocess, killing it after `seconds`.
func waitForExit(_ process: Process, seconds: Double) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while process.isRunning {
        if Date() > deadline {
            process.terminate()
            process.waitUntilExit()
            throw SubprocessTimedOut()
        }
        usleep(5_000)
    }
    process.waitUntilExit()
}

/// Stores a generic password through `--stdin`, expecting success.
func storeGenericPassword(
    _ secret: String, service: String, account: String, home: TemporaryHome, extra: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let result = try keysmith(
        ["add-generic-password", "-s", service, "-a", account, "--stdin"] + extra, home: home, standardInput: secret)
    #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
}
