// Open and first read with the TPM key store against the key file store: whole
// `keysmith find-generic-password -w` processes (each opens the keychain, unseals or reads
// its device key, checks the anchor, reads one item), on two keychains of the same size,
// interleaved run by run. A software TPM (swtpm, on loopback) stands in for the chip: a real
// TPM is much slower (its TPM2_CreatePrimary and unseal take milliseconds to hundreds of
// milliseconds), so the row measures Keysmith's own cost of the TPM store plus swtpm's, not
// a chip's.
import Foundation
import KeychainServices

#if canImport(Glibc)
import Glibc
#endif

struct TPM2StoreBenchmark {
    let runs: Int
    let itemCount: Int

    static let name = "open + first read, TPM store (swtpm stands in for the chip) vs key file store, whole process"

    func row() -> BenchmarkRow {
        guard let keysmith = helperProgram(variable: "KEYSMITH_CLI", name: "keysmith") else {
            return skippedRow(Self.name, "keysmith CLI not built (run make bench)")
        }
        guard let swtpm = findInPath("swtpm") else {
            return skippedRow(Self.name, "swtpm is not installed (apt-get install swtpm swtpm-tools)")
        }
        let directory = temporaryDirectory("tpm2")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let tpm = SoftwareTPMProcess(swtpm: swtpm, state: directory.appendingPathComponent("tpm")) else {
            return skippedRow(Self.name, "swtpm did not start")
        }
        defer { tpm.stop() }

        let inherited = ProcessInfo.processInfo.environment
        func environment(_ keychain: URL) -> [String: String] {
            var variables = [
                "KEYSMITH_HOME": keychain.path, "KEYSMITH_TPM2_TCTI": tpm.tcti,
                "PATH": inherited["PATH"] ?? "/usr/bin:/bin",
            ]
            if let home = inherited["HOME"] { variables["HOME"] = home }
            return variables
        }
        let secret = String(repeating: "k", count: 200)
        var keychains: [(label: String, environment: [String: String])] = []
        for (label, store) in [("TPM store", "tpm2"), ("key file store", "file")] {
            let keychain = directory.appendingPathComponent(store)
            var variables = environment(keychain)
            progress("TPM store benchmark: a keychain of \(itemCount) items with the \(label)")
            guard let created = runCapturing(keysmith, ["create", "--no-passphrase", "--key-store", store], environment: variables),
                created.status == 0
            else {
                return skippedRow(Self.name, "keysmith create --key-store \(store) failed")
            }
            variables["KEYSMITH_ACCESS_GROUPS"] = "com.keysmith.bench"
            for index in 0..<max(itemCount, 1) {
                // One process per item would take long at 100 items; the typed API cannot
                // choose the TPM store's TCTI per call, so the CLI adds them.
                guard let added = runCapturingInput(
                    keysmith, ["add-generic-password", "-s", "com.keysmith.bench", "-a", "account-\(index)", "--stdin"],
                    environment: variables, input: secret + "\n"), added.status == 0
                else {
                    return skippedRow(Self.name, "adding items with the \(label) failed")
                }
            }
            keychains.append((label, variables))
        }
        let arguments = ["find-generic-password", "-s", "com.keysmith.bench", "-a", "account-0", "-w"]
        for keychain in keychains {
            guard let check = runCapturing(keysmith, arguments, environment: keychain.environment), check.status == 0,
                check.output.trimmingCharacters(in: .newlines) == secret
            else {
                return skippedRow(Self.name, "the \(keychain.label) keychain does not answer")
            }
        }
        // As in the process benchmark: lookups later than two seconds after the last write
        // use the verification record.
        usleep(2_200_000)
        for keychain in keychains { _ = runCapturing(keysmith, arguments, environment: keychain.environment) }

        progress("TPM store benchmark: \(runs) interleaved runs of each")
        var times = Array(repeating: [Double](), count: keychains.count)
        for _ in 0..<runs {
            for (index, keychain) in keychains.enumerated() {
                guard let result = timeProcess(keysmith, arguments, environment: keychain.environment), result.status == 0 else {
                    return skippedRow(Self.name, "the \(keychain.label) lookup failed during the timed runs")
                }
                times[index].append(Double(result.ns))
            }
        }
        let tpmNs = median(times[0])
        let fileNs = median(times[1])
        return BenchmarkRow(
            name: Self.name + " (\(itemCount) items)", value: formatDuration(tpmNs), baseline: "key file " + formatDuration(fileNs),
            ratio: formatRatio(tpmNs / fileNs), target: "")
    }
}

/// `runCapturing` with `input` on standard input.
private func runCapturingInput(_ path: String, _ arguments: [String], environment: [String: String], input: String) -> CapturedRun? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = environment
    let output = Pipe()
    let errors = Pipe()
    let standardInput = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = standardInput
    do { try process.run() } catch { return nil }
    standardInput.fileHandleForWriting.write(Data(input.utf8))
    try? standardInput.fileHandleForWriting.close()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CapturedRun(
        status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
        errorOutput: String(decoding: errorData, as: UTF8.self))
}

/// swtpm on two loopback ports it picks, its state in `state`; stopped by ``stop()``.
private final class SoftwareTPMProcess {
    let process = Process()
    let port: UInt16
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    init?(swtpm: String, state: URL) {
        try? FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let port = UInt16.random(in: 20_000...60_000)
        self.port = port
        process.executableURL = URL(fileURLWithPath: swtpm)
        process.arguments = [
            "socket", "--tpm2", "--tpmstate", "dir=\(state.path)",
            "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
            "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
            "--flags", "not-need-init,startup-clear",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        for _ in 0..<500 where process.isRunning {
            if Self.accepts(port) { return }
            usleep(10_000)
        }
        stop()
        return nil
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    private static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
