import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Runs the built helpers, `keysmith` and `git` as subprocesses in a temporary home. Nothing
// here changes the test process's own environment, so suites run in parallel.

/// The directory of the tools under test: `KEYSMITH_TEST_TOOLS` when set (`make test` sets it to
/// the `bin` directory `make install` filled, to run these tests against the installed,
/// statically linked release tools), else the products directory (where `swift build` puts the
/// executables).
func productsDirectory() -> URL {
    if let installed = ProcessInfo.processInfo.environment["KEYSMITH_TEST_TOOLS"], !installed.isEmpty {
        return URL(fileURLWithPath: installed)
    }
    let start = Bundle.main.executableURL?.deletingLastPathComponent()
        ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var candidate = start
    // On Linux the test binary sits in the products directory; on macOS inside an .xctest bundle.
    for _ in 0..<4 {
        if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("git-credential-keysmith").path) {
            return candidate
        }
        candidate.deleteLastPathComponent()
    }
    return start
}

/// A built executable of the package.
func product(_ name: String) -> String { productsDirectory().appendingPathComponent(name).path }

/// A temporary directory for one test: HOME of every subprocess, with the keychain in
/// `keychain/`, so nothing can reach a real keychain or a real git configuration.
final class HelperHome: @unchecked Sendable {
    let url: URL

    init() {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).standardizedFileURL.path
        var template = Array((base + "/keysmith-helpers-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        url = URL(fileURLWithPath: String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The keychain directory (`KEYSMITH_HOME`).
    var keychain: String { url.appendingPathComponent("keychain").path }

    /// A path inside the home.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The environment for a subprocess: this process's without anything that could reach
    /// a real keychain or git configuration, HOME and KEYSMITH_HOME here, the products
    /// directory first on PATH, plus `extra`.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { key, _ in
            !key.hasPrefix("KEYSMITH_") && !key.hasPrefix("GIT_") && key != "XDG_DATA_HOME" && key != "XDG_CONFIG_HOME"
                && key != "SSH_ASKPASS"
        }
        environment["HOME"] = url.path
        environment["KEYSMITH_HOME"] = keychain
        environment["LC_ALL"] = "C.UTF-8"
        environment["PATH"] = productsDirectory().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        environment["GIT_TERMINAL_PROMPT"] = "0"
        for (key, value) in extra { environment[key] = value }
        return environment
    }
}

/// What a subprocess produced.
struct Run: CustomStringConvertible {
    let status: Int32
    let standardOutput: Data
    let standardError: Data

    var stdout: String { String(decoding: standardOutput, as: UTF8.self) }
    var stderr: String { String(decoding: standardError, as: UTF8.self) }

    /// Exit status and standard error only: output may hold a test secret, which need not
    /// be repeated in failure messages.
    var description: String { "exit \(status), stderr: \(stderr)" }

    /// `key=value` lines of standard output as a dictionary (git's credential format).
    var fields: [String: String] {
        var result: [String: String] = [:]
        for line in stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            result[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return result
    }
}

/// Runs `executable` with `arguments`, `input` on standard input, in `home`'s environment
/// plus `environment`, and waits for it (at most 120 s).
@discardableResult
func run(
    _ executable: String, _ arguments: [String] = [], input: String = "", home: HelperHome,
    environment: [String: String] = [:], directory: String? = nil
) throws -> Run {
    let token = UUID().uuidString
    let outputPath = home.path("stdout-\(token)")
    let errorPath = home.path("stderr-\(token)")
    let inputPath = home.path("stdin-\(token)")
    _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    _ = FileManager.default.createFile(atPath: inputPath, contents: Data(input.utf8))
    defer { for path in [outputPath, errorPath, inputPath] { try? FileManager.default.removeItem(atPath: path) } }
    let outputHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
    let errorHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
    let inputHandle = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
    defer {
        try? outputHandle.close()
        try? errorHandle.close()
        try? inputHandle.close()
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
    process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
    process.environment = home.environment(environment)
    process.currentDirectoryURL = URL(fileURLWithPath: directory ?? home.url.path)
    process.standardInput = inputHandle
    process.standardOutput = outputHandle
    process.standardError = errorHandle
    try process.run()
    let deadline = Date().addingTimeInterval(120)
    while process.isRunning {
        if Date() > deadline {
            process.terminate()
            process.waitUntilExit()
            throw SubprocessTimedOut()
        }
        usleep(5_000)
    }
    process.waitUntilExit()
    return Run(
        status: process.terminationStatus, standardOutput: try Data(contentsOf: URL(fileURLWithPath: outputPath)),
        standardError: try Data(contentsOf: URL(fileURLWithPath: errorPath)))
}

struct SubprocessTimedOut: Error {}

/// Runs `keysmith` (the built CLI) in `home`.
@discardableResult
func keysmith(_ arguments: [String], home: HelperHome, environment: [String: String] = [:]) throws -> Run {
    try run(product("keysmith"), arguments, home: home, environment: environment)
}

/// A unique test secret (never a real one).
func testSecret(_ name: String = "pw") -> String { "\(name)-\(UUID().uuidString.prefix(12))" }
