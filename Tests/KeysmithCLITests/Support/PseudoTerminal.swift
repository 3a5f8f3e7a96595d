import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pseudo-terminal pair for prompt tests: the child gets the secondary side as its
/// standard input (a real terminal, so termios works), the test reads the prompts and types
/// on the primary side.
final class PseudoTerminal {
    let primary: Int32
    let secondary: Int32
    private(set) var transcript: [UInt8] = []

    init() throws {
        let functions = try PseudoTerminalFunctions()
        primary = functions.openPrimary(O_RDWR | O_NOCTTY)
        guard primary >= 0, functions.grant(primary) == 0, functions.unlock(primary) == 0,
            let name = functions.name(primary)
        else {
            throw PseudoTerminalUnavailable(reason: "posix_openpt failed (errno \(errno))")
        }
        secondary = open(name, O_RDWR | O_NOCTTY)
        guard secondary >= 0 else { throw PseudoTerminalUnavailable(reason: "open secondary failed (errno \(errno))") }
    }

    deinit {
        close(primary)
        closeSecondary()
    }

    private var secondaryClosed = false

    /// Closes the test's copy of the secondary side (after the child has started), so reads
    /// on the primary side end when the child exits.
    func closeSecondary() {
        guard !secondaryClosed else { return }
        secondaryClosed = true
        close(secondary)
    }

    /// Reads what the child wrote to the terminal until `text` appears (or `seconds` pass).
    /// - Returns: Whether `text` appeared.
    @discardableResult
    func waitFor(_ text: String, seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !String(decoding: transcript, as: UTF8.self).contains(text) {
            guard Date() < deadline else { return false }
            var descriptor = pollfd(fd: primary, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 1024)
            let count = read(primary, &buffer, buffer.count)
            if count <= 0 { return String(decoding: transcript, as: UTF8.self).contains(text) }
            transcript.append(contentsOf: buffer[0..<count])
        }
        return true
    }

    /// Reads whatever else the child writes until it closes the terminal.
    func drain(seconds: Double = 5) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var descriptor = pollfd(fd: primary, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 1024)
            let count = read(primary, &buffer, buffer.count)
            if count <= 0 { return }
            transcript.append(contentsOf: buffer[0..<count])
        }
    }

    /// Types text as a person would (the child reads it from its terminal).
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(primary, $0.baseAddress!, $0.count) }
    }

    /// Everything the child wrote to the terminal so far.
    var text: String { String(decoding: transcript, as: UTF8.self) }
}

/// posix_openpt, grantpt, unlockpt and ptsname, looked up at run time: Swift's Glibc module
/// does not import them (they are declared only under _XOPEN_SOURCE).
private struct PseudoTerminalFunctions {
    let openPrimary: @convention(c) (Int32) -> Int32
    let grant: @convention(c) (Int32) -> Int32
    let unlock: @convention(c) (Int32) -> Int32
    let name: @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

    init() throws {
        let library = dlopen(nil, RTLD_NOW)
        func lookup<Function>(_ symbol: String, as type: Function.Type) throws -> Function {
            guard let address = dlsym(library, symbol) else {
                throw PseudoTerminalUnavailable(reason: "\(symbol) not found")
            }
            return unsafeBitCast(address, to: type)
        }
        openPrimary = try lookup("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
        grant = try lookup("grantpt", as: (@convention(c) (Int32) -> Int32).self)
        unlock = try lookup("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
        name = try lookup("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
    }
}

struct PseudoTerminalUnavailable: Error, CustomStringConvertible {
    let reason: String
    var description: String { "no pseudo-terminal: \(reason)" }
}

/// Starts `keysmith` with a pseudo-terminal as standard input; stdout and stderr go to files
/// in the temporary home. The caller talks to it through `terminal`, then calls `finish`.
final class TerminalSession {
    let terminal: PseudoTerminal
    let process = Process()
    private let outputURL: URL
    private let errorURL: URL

    init(_ arguments: [String], home: TemporaryHome) throws {
        terminal = try PseudoTerminal()
        let token = UUID().uuidString
        outputURL = home.url.appendingPathComponent("pty-stdout-\(token)")
        errorURL = home.url.appendingPathComponent("pty-stderr-\(token)")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.executableURL = keysmithExecutable()
        process.arguments = ["--keychain", home.keychain.path] + arguments
        process.environment = subprocessEnvironment(home: home)
        process.standardInput = FileHandle(fileDescriptor: terminal.secondary, closeOnDealloc: false)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
        terminal.closeSecondary()
    }

    /// Waits for the child and returns its result (stdout and stderr from the files).
    func finish() throws -> RunResult {
        terminal.drain()
        try waitForExit(process, seconds: 30)
        defer {
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: errorURL)
        }
        return RunResult(
            status: process.terminationStatus, standardOutput: try Data(contentsOf: outputURL),
            standardError: try Data(contentsOf: errorURL))
    }
}
