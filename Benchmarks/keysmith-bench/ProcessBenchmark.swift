// A whole process, as a shell script pays it: `keysmith find-generic-password -s S -a A -w`
// (the CLI built next to keysmith-bench) against `secret-tool lookup service S account A`
// under the gnome-keyring session that secret-bench keeps up meanwhile, and /bin/true as
// the floor of starting any process. The three are interleaved run by run; each figure is
// the median wall time (spawn to exit) of its runs.
import Foundation
import KeychainServices

struct ProcessBenchmark {
    let runs: Int
    /// Items in the Keysmith keychain (the same number as in the gnome-keyring it is
    /// compared with).
    let itemCount: Int
    /// The gnome-keyring session (from secret-bench's hold line), if there is one.
    let session: SecretBenchLine?

    private static let service = "com.keysmith.bench"
    private static let group = "com.keysmith.bench"

    func run() -> [BenchmarkRow] {
        let name = "keysmith find-generic-password -w process"
        guard let keysmith = helperProgram(variable: "KEYSMITH_CLI", name: "keysmith") else {
            return [skippedRow(name, "keysmith CLI not built (run make bench)")]
        }
        let directory = temporaryDirectory("process")
        defer { try? FileManager.default.removeItem(at: directory) }
        progress("process benchmark: a keychain of \(itemCount) items for the keysmith CLI")
        let environment = KeychainEnvironment(directory: directory, accessGroups: [Self.group])
        let secret = String(repeating: "k", count: 200)
        KeychainEnvironment.withEnvironment(environment) {
            for index in 0..<max(itemCount, 1) {
                let item: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: Self.service,
                    kSecAttrAccount as String: "account-\(index)",
                    kSecValueData as String: Data(secret.utf8),
                ]
                let status = SecItemAdd(item as CFDictionary, nil)
                precondition(status == errSecSuccess, "populate failed: \(status)")
            }
        }
        let inherited = ProcessInfo.processInfo.environment
        var keysmithEnvironment: [String: String] = [
            "KEYSMITH_HOME": directory.path, "KEYSMITH_ACCESS_GROUPS": Self.group,
            "PATH": inherited["PATH"] ?? "/usr/bin:/bin",
        ]
        if let home = inherited["HOME"] { keysmithEnvironment["HOME"] = home }
        let keysmithArguments = ["find-generic-password", "-s", Self.service, "-a", "account-0", "-w"]

        // Check that the command exists and answers before timing it.
        guard let check = runCapturing(keysmith, keysmithArguments, environment: keysmithEnvironment) else {
            return [skippedRow(name, "keysmith CLI could not be started")]
        }
        guard check.status == 0, check.output.trimmingCharacters(in: .newlines) == secret else {
            let reason = check.errorOutput.split(separator: "\n").first.map(String.init) ?? "no message"
            return [skippedRow(name, "skipped: the CLI's find-generic-password -w is not ready (exit \(check.status): \(reason))")]
        }

        // A keychain in use between writes: the check above folded the WAL into the database
        // file; once that has settled (keychain.verified binds only a file that last changed
        // at least two seconds earlier), one more lookup does the full check and writes the
        // record that the timed lookups use, as lookups made later than two seconds after the
        // last write do (docs/SECURITY.md, "The verification record").
        usleep(2_200_000)
        _ = runCapturing(keysmith, keysmithArguments, environment: keysmithEnvironment)

        var tools: [(label: String, path: String, arguments: [String], environment: [String: String])] = [
            ("keysmith", keysmith, keysmithArguments, keysmithEnvironment)
        ]
        var secretToolProblem: String?
        if let session, let bus = session.fields["bus"], !bus.isEmpty {
            if let secretTool = findInPath("secret-tool") {
                let arguments = [
                    "lookup", "service", session.fields["service"] ?? Self.service, "account",
                    session.fields["account"] ?? "account-0",
                ]
                let environment = ["DBUS_SESSION_BUS_ADDRESS": bus, "PATH": keysmithEnvironment["PATH"]!]
                if let check = runCapturing(secretTool, arguments, environment: environment), check.status == 0,
                    check.output.trimmingCharacters(in: .newlines).count == 200
                {
                    tools.append(("secret-tool", secretTool, arguments, environment))
                } else {
                    secretToolProblem = "secret-tool lookup failed against the gnome-keyring session"
                }
            } else {
                secretToolProblem = "secret-tool not installed (run make bench)"
            }
        } else {
            secretToolProblem = "no gnome-keyring session (libsecret not built, or gnome-keyring failed)"
        }
        // Floors: an empty Swift program built as the CLI is (keysmith-empty, next to it);
        // starting this benchmark's own binary (Swift runtime, Foundation, the keychain
        // libraries) and doing nothing; and starting /bin/true.
        let emptyProgram = helperProgram(variable: "KEYSMITH_EMPTY", name: "keysmith-empty")
        if let emptyProgram {
            tools.append(("empty Swift program", emptyProgram, [], ["PATH": keysmithEnvironment["PATH"]!]))
        }
        let ownPath = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        tools.append(("Swift floor", ownPath, ["--exit-at-once"], ["PATH": keysmithEnvironment["PATH"]!]))
        tools.append(("/bin/true", "/bin/true", [], ["PATH": keysmithEnvironment["PATH"]!]))

        progress("process benchmark: \(runs) interleaved runs of \(tools.map(\.label).joined(separator: ", "))")
        var times = Array(repeating: [Double](), count: tools.count)
        var peaks = Array(repeating: [Double](), count: tools.count)
        for _ in 0..<runs {
            for (index, tool) in tools.enumerated() {
                guard let result = timeProcess(tool.path, tool.arguments, environment: tool.environment),
                    result.status == 0
                else {
                    return [skippedRow(name, "\(tool.label) failed during the timed runs")]
                }
                times[index].append(Double(result.ns))
            }
        }
        func column(_ label: String) -> Int? { tools.firstIndex { $0.label == label } }
        let keysmithNs = median(times[0])
        let swiftFloorNs = median(times[column("Swift floor")!])
        let floorNs = median(times[column("/bin/true")!])
        var rows: [BenchmarkRow] = []
        if let secretTool = column("secret-tool") {
            let secretToolNs = median(times[secretTool])
            rows.append(BenchmarkRow(
                name: "keysmith find-generic-password -w vs secret-tool lookup (whole process, \(itemCount) items)",
                value: formatDuration(keysmithNs), baseline: "secret-tool " + formatDuration(secretToolNs),
                ratio: formatFaster(other: secretToolNs, keysmith: keysmithNs), target: "≥ 3x faster"))
        } else {
            rows.append(BenchmarkRow(
                name: "keysmith find-generic-password -w (whole process, \(itemCount) items)", value: formatDuration(keysmithNs),
                baseline: "", ratio: "", target: "(info)"))
            rows.append(skippedRow("secret-tool lookup (whole process)", secretToolProblem ?? "not measured", target: "≥ 3x faster"))
        }
        if let empty = column("empty Swift program") {
            let emptyNs = median(times[empty])
            rows.append(BenchmarkRow(
                name: "  keysmith find-generic-password -w vs an empty Swift program built the same way",
                value: formatDuration(keysmithNs), baseline: "empty program " + formatDuration(emptyNs),
                ratio: "+" + formatDuration(keysmithNs - emptyNs), target: "within 2 ms",
                met: keysmithNs - emptyNs <= 2_000_000))
        } else {
            rows.append(skippedRow(
                "  keysmith vs an empty Swift program built the same way", "keysmith-empty not built (run make bench)",
                target: "within 2 ms"))
        }
        // Peak memory through GNU time: a child of this (large) process would carry this
        // process's own peak in its ru_maxrss across exec; one forked by `time` does not.
        for index in peaks.indices { peaks[index] = [] }
        if let timeTool = ["/usr/bin/time", "/bin/time"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            let report = directory.appendingPathComponent("peak-rss").path
            for _ in 0..<5 {
                for (index, tool) in tools.enumerated() where tool.label == "keysmith" || tool.label == "secret-tool" {
                    guard let result = timeProcess(
                        timeTool, ["-f", "%M", "-o", report, tool.path] + tool.arguments, environment: tool.environment),
                        result.status == 0,
                        let text = try? String(contentsOfFile: report, encoding: .utf8),
                        let kilobytes = Double(text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last ?? "")
                    else { continue }
                    peaks[index].append(kilobytes * 1024)
                }
            }
        }
        if peaks[0].isEmpty {
            rows.append(skippedRow(
                "  peak resident memory of the CLI", "GNU time (/usr/bin/time) not installed (run make bench)", target: "≤ 1x"))
        } else if let secretTool = column("secret-tool"), !peaks[secretTool].isEmpty {
            let keysmithPeak = median(peaks[0]), secretToolPeak = median(peaks[secretTool])
            rows.append(BenchmarkRow(
                name: "  peak resident memory: keysmith find-generic-password -w vs secret-tool lookup",
                value: formatBytes(keysmithPeak), baseline: "secret-tool " + formatBytes(secretToolPeak),
                ratio: formatRatio(keysmithPeak / secretToolPeak), target: "≤ 1x"))
        } else {
            rows.append(BenchmarkRow(
                name: "  peak resident memory of keysmith find-generic-password -w", value: formatBytes(median(peaks[0])),
                baseline: "", ratio: "", target: "(info)"))
        }
        rows.append(BenchmarkRow(
            name: "  start-up floors: this benchmark doing nothing (dynamic; Foundation with its networking part), /bin/true",
            value: formatDuration(swiftFloorNs),
            baseline: "/bin/true " + formatDuration(floorNs), ratio: formatRatio(swiftFloorNs / floorNs), target: "(info)"))
        // The tool no longer links what this benchmark links (the etcd client, libcurl), so its
        // own work is measured above the empty program built as it is, when there is one.
        let ownFloorNs = column("empty Swift program").map { median(times[$0]) } ?? swiftFloorNs
        rows.append(BenchmarkRow(
            name: column("empty Swift program") == nil
                ? "  keysmith's own work (process minus this benchmark's floor)"
                : "  keysmith's own work (process minus the empty program built the same way)",
            value: formatDuration(max(0, keysmithNs - ownFloorNs)),
            baseline: "", ratio: "", target: "(info)"))
        return rows
    }
}
