#if os(Linux)
import Foundation
import Glibc
import Testing

/// A software TPM 2.0 (swtpm) of its own for one test: another "machine" per instance, on
/// loopback ports it picks, stopped (and its state removed) by ``stop()``. With `logging`, swtpm
/// writes every command and response it exchanges to ``logURL`` (in hex), so a test can check
/// what crossed the bus.
final class SoftwareTPM {
    static let swtpm = "/usr/bin/swtpm"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: swtpm) }

    let stateDirectory: URL
    private(set) var port: UInt16 = 0
    private var process: Process?
    var logURL: URL { stateDirectory.appendingPathComponent("io.log") }

    /// The TCTI configuration that reaches it.
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    init(in home: TemporaryHome, name: String, logging: Bool = false) throws {
        stateDirectory = home.url.appendingPathComponent("tpm-\(name)")
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        var lastError: Error?
        for _ in 0..<20 {
            let candidate = UInt16.random(in: 20_000...60_000)
            guard Self.isFree(candidate), Self.isFree(candidate + 1) else { continue }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.swtpm)
            process.arguments = [
                "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory.path)",
                "--server", "type=tcp,port=\(candidate),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(candidate + 1),bindaddr=127.0.0.1",
                "--flags", "not-need-init,startup-clear",
            ] + (logging ? ["--log", "file=\(stateDirectory.path)/io.log,level=20"] : [])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                lastError = error
                continue
            }
            self.process = process
            port = candidate
            // Ready once it accepts a connection (or gone, when another program took the port).
            for _ in 0..<500 where process.isRunning {
                if Self.accepts(candidate) { return }
                usleep(10_000)
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw SoftwareTPMDidNotStart(reason: "swtpm did not listen on port \(candidate)")
        }
        throw SoftwareTPMDidNotStart(reason: "no free port pair found (\(String(describing: lastError)))")
    }

    func stop() {
        if let process, process.isRunning {
            // SIGKILL: swtpm may have inherited a blocked SIGTERM from the test's thread, and
            // its state is thrown away anyway.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    /// The bytes swtpm logged as exchanged with its clients, in order.
    func loggedBytes() throws -> [UInt8] {
        let text = try String(contentsOf: logURL, encoding: .utf8)
        var bytes: [UInt8] = []
        for line in text.split(separator: "\n") {
            // Data lines are pairs of hex digits separated by spaces: " 80 01 00 00 ...".
            let words = line.split(separator: " ")
            guard !words.isEmpty, words.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { continue }
            bytes += words.compactMap { UInt8($0, radix: 16) }
        }
        return bytes
    }

    private static func isFree(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

struct SoftwareTPMDidNotStart: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
#endif
