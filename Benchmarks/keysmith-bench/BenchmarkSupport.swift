import Foundation
import KeychainServices

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One line of the results table.
struct BenchmarkRow {
    let name: String
    let value: String
    let baseline: String
    let ratio: String
    let target: String
    /// The verdict of a target that is not a ratio bound (such as "within 2 ms"), decided by
    /// the benchmark itself; `nil` lets ``verdict`` read the ratio against the target.
    var met: Bool? = nil

    /// "met" or "not met" where the target is a ratio bound ("≤ 2x", "≥ 1.7x", "≥ 4x faster")
    /// and the ratio was measured (or the benchmark decided, ``met``); empty otherwise
    /// (information rows, skipped rows).
    var verdict: String {
        if let met { return met ? "met" : "not met" }
        func number(_ text: String) -> Double? {
            let digits = text.drop { !$0.isNumber }.prefix { $0.isNumber || $0 == "." }
            return Double(digits)
        }
        guard let bound = number(target), let measured = number(ratio) else { return "" }
        if target.hasPrefix("≤") { return measured <= bound ? "met" : "not met" }
        if target.hasPrefix("≥") && target.hasSuffix("faster") {
            if ratio.hasSuffix("slower") { return "not met" }
            guard ratio.hasSuffix("faster") else { return "" }
            return measured >= bound ? "met" : "not met"
        }
        if target.hasPrefix("≥") { return measured >= bound ? "met" : "not met" }
        return ""
    }
}

/// A row for a measurement that could not be made, saying why.
func skippedRow(_ name: String, _ reason: String, target: String = "") -> BenchmarkRow {
    BenchmarkRow(name: name, value: reason, baseline: "", ratio: "", target: target)
}

/// Wall-clock nanoseconds now (monotonic).
func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// The median of `values`.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Formats nanoseconds for people: "850 ns", "3.4 µs", "1.52 ms".
func formatDuration(_ ns: Double) -> String {
    if ns.isNaN { return "n/a" }
    if ns < 1_000 { return String(format: "%.0f ns", ns) }
    if ns < 1_000_000 { return String(format: "%.2f µs", ns / 1_000) }
    return String(format: "%.2f ms", ns / 1_000_000)
}

func formatRatio(_ value: Double) -> String { value.isNaN ? "n/a" : String(format: "%.2fx", value) }

/// Formats bytes for people: "23.5 MiB".
func formatBytes(_ bytes: Double) -> String {
    bytes.isNaN ? "n/a" : String(format: "%.1f MiB", bytes / 1_048_576)
}

/// How many times faster Keysmith is than another tool: `other / keysmith`, printed as
/// "123x faster" (or "2.00x slower" when it is not faster).
func formatFaster(other: Double, keysmith: Double) -> String {
    let factor = other / keysmith
    if factor.isNaN || factor.isInfinite { return "n/a" }
    if factor < 1 { return String(format: "%.2fx slower", 1 / factor) }
    return factor >= 100 ? String(format: "%.0fx faster", factor) : String(format: "%.1fx faster", factor)
}

/// The path of a helper program: `$variable` if set, else `name` next to this benchmark's
/// own binary, else each of `fallbacks` (relative to the current directory); nil if none is
/// an executable file.
func helperProgram(variable: String, name: String, fallbacks: [String] = []) -> String? {
    var candidates: [String] = []
    if let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty { candidates.append(value) }
    let ownPath = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    candidates.append(ownPath.deletingLastPathComponent().appendingPathComponent(name).path)
    candidates += fallbacks
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// The full path of `name` found in `$PATH`, or nil.
func findInPath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// What a finished child process left: its exit status and its standard output and error.
struct CapturedRun {
    let status: Int32
    let output: String
    let errorOutput: String
}

/// Runs a program to the end and captures its output (for checks, never for timing).
func runCapturing(_ path: String, _ arguments: [String], environment: [String: String]) -> CapturedRun? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = environment
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    do { try process.run() } catch { return nil }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CapturedRun(
        status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
        errorOutput: String(decoding: errorData, as: UTF8.self))
}

/// Starts `path` with `arguments` and `environment` (standard input, output and error on
/// /dev/null), waits for it, and returns the wall time in nanoseconds from just before the
/// spawn to the end of the wait, its exit status and its peak resident memory in bytes
/// (`ru_maxrss`). Used to time whole processes.
func timeProcess(
    _ path: String, _ arguments: [String], environment: [String: String]
) -> (ns: UInt64, status: Int32, peakBytes: Int)? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let start = nanoseconds()
    guard posix_spawn(&pid, path, &actions, nil, argv, envp) == 0 else { return nil }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else { return nil }
    }
    let elapsed = nanoseconds() - start
    let exited = (status & 0x7f) == 0
    return (elapsed, exited ? (status >> 8) & 0xff : -1, Int(usage.ru_maxrss) * 1024)
}

/// The machine, for the docs: CPU model, cores, memory, system, and the file system that
/// holds the temporary directory (durable writes depend on it).
func machineDescription() -> String {
    let info = ProcessInfo.processInfo
    var cpu = "unknown CPU"
    if let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
        let colon = line.firstIndex(of: ":")
    {
        cpu = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    let memory = String(format: "%.1f GiB", Double(info.physicalMemory) / 1_073_741_824)
    var description = "\(cpu), \(info.processorCount) cores, \(memory) memory, \(info.operatingSystemVersionString)"
    let temporary = FileManager.default.temporaryDirectory.resolvingSymlinksInPath().path
    if let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) {
        var best: (point: String, type: String, device: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 3 else { continue }
            let point = fields[1]
            let covers = temporary == point || temporary.hasPrefix(point == "/" ? "/" : point + "/")
            if covers && point.count >= (best?.point.count ?? -1) { best = (point, fields[2], fields[0]) }
        }
        if let best { description += "; temporary files on \(best.type) (\(best.device))" }
    }
    return description
}

/// A fresh private temporary directory.
func temporaryDirectory(_ label: String) -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-bench-\(label)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return url
}

/// Prints progress to stderr (so the table on stdout stays clean).
func progress(_ message: String) {
    FileHandle.standardError.write(Data("… \(message)\n".utf8))
}

/// The generated part of docs/BENCHMARKS.md: how it was produced and on what, the table and
/// this run's own figures where they were measured, ending with ``handWrittenMarker``.
/// - Parameters:
///   - keysmithReads: Keysmith's SecItemCopyMatching ns by item count.
///   - cLimitReads: The C baseline's read ns by item count.
func benchmarkDocument(
    command: String, table: String, libsecret: LibsecretBenchmark.Result, keysmithReads: [Int: Double],
    cLimitReads: [Int: Double]
) -> String {
    let date = ISO8601DateFormatter().string(from: Date())
    var facts: [String] = []
    if let small = keysmithReads.keys.min(), let large = keysmithReads.keys.max(), large > small,
        let a = cLimitReads[small], let b = cLimitReads[large], let k = keysmithReads[small], let l = keysmithReads[large]
    {
        facts.append(
            "From \(small) to \(large) items the C limit itself grew \(formatRatio(b / a)) "
                + "(\(formatDuration(a)) to \(formatDuration(b))) and Keysmith \(formatRatio(l / k)).")
    }
    let fileCounts = libsecret.file.itemCounts("file")
    if let first = fileCounts.first, let last = fileCounts.last, last > first,
        let a = libsecret.file.median("read", "file", items: first),
        let b = libsecret.file.median("read", "file", items: last)
    {
        facts.append(
            "A libsecret file-backend lookup cost \(formatDuration(a)) at \(first) items and \(formatDuration(b)) at "
                + "\(last): about \(formatDuration((b - a) / Double(last - first))) more per stored item.")
    }
    let gnomeCounts = libsecret.gnomeKeyring.itemCounts("gnome-keyring")
    if let first = gnomeCounts.first, let a = libsecret.gnomeKeyring.median("read", "gnome-keyring", items: first) {
        var sentence = "A gnome-keyring lookup cost \(formatDuration(a)) at \(first) items"
        if let last = gnomeCounts.last, last > first,
            let b = libsecret.gnomeKeyring.median("read", "gnome-keyring", items: last)
        {
            sentence += " and \(formatDuration(b)) at \(last)"
        }
        if let (count, limit) = LibsecretBenchmark.comparable(cLimitReads, first) {
            sentence += "; the C limit of this design (\(formatDuration(limit)) at \(count) items) is "
                + formatFaster(other: a, keysmith: limit) + " than that, the most any read path of this design "
                + "could show against gnome-keyring on this machine"
        }
        facts.append(sentence + ".")
    }
    let measured = facts.isEmpty ? "" : "\n\nThis run: " + facts.joined(separator: " ")
    return """
        # Benchmarks

        Produced by `make bench`, which runs `\(command)` (release build) and builds the C helper
        `.build/secret-bench` (Benchmarks/libsecret/secret-bench.c, linked with libsecret; the Swift
        package itself never links libsecret).

        - Date: \(date)
        - Machine: \(machineDescription())

        Each figure is the median of several rounds (reads and writes: the per-operation average of
        each round; processes: single runs); each ratio is against a baseline measured in the same
        run. "faster" ratios are the other tool's time divided by Keysmith's; "met" compares the
        ratio with the target. Figures taken on a busy machine are noisy; the ratios, measured side
        by side, much less so.

        \(table)\(measured)

        \(handWrittenMarker)
        """
}

/// The line that ends what `--write-docs` writes: the text after it (how each figure is
/// measured, what limits it, from profiles) is written by hand and kept as it is.
let handWrittenMarker = "<!-- make bench writes everything above this line; the text below is written by hand and kept. -->"

/// The hand-written part of the document at `path`: everything after ``handWrittenMarker``
/// (empty when the file or the marker is missing).
func handWrittenPart(of path: String) -> String {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8),
        let marker = text.range(of: handWrittenMarker)
    else { return "" }
    return String(text[marker.upperBound...])
}

/// Fills the keychain of `environment` with `itemCount` generic passwords
/// (service `com.keysmith.bench`, accounts `account-0…`), through SecItemAdd as apps do.
func populateBenchmarkKeychain(_ environment: KeychainEnvironment, itemCount: Int, secretSize: Int, label: String? = nil) {
    progress("populating a keychain with \(itemCount) items" + (label.map { " (\($0))" } ?? ""))
    KeychainEnvironment.withEnvironment(environment) {
        var secret = Data(count: secretSize)
        for index in 0..<itemCount {
            secret[0] = UInt8(truncatingIfNeeded: index)
            let item: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.keysmith.bench",
                kSecAttrAccount as String: "account-\(index)",
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                kSecValueData as String: secret,
            ]
            let status = SecItemAdd(item as CFDictionary, nil)
            precondition(status == errSecSuccess, "populate failed: \(status)")
        }
    }
}
