// libsecret, measured by the C program Benchmarks/libsecret/secret-bench.c (built by
// `make bench` into .build/secret-bench; the Swift package never links libsecret), run as a
// subprocess in the same run as Keysmith's own figures:
//   - libsecret's file backend (SECRET_BACKEND=file, no daemon);
//   - gnome-keyring through libsecret, in a private dbus-run-session that secret-bench
//     starts and stops itself.
// Reads are compared with Keysmith's uncached SecItemCopyMatching of the same run.
import Foundation

/// One machine-readable line of secret-bench, e.g.
/// `read backend=file items=100 lookups=200 rounds=5 median_ns=621431 min_ns=… max_ns=…`.
struct SecretBenchLine: Sendable {
    let kind: String
    let fields: [String: String]

    init?(_ line: Substring) {
        let words = line.split(separator: " ")
        guard let first = words.first, !first.contains("=") else { return nil }
        kind = String(first)
        var fields: [String: String] = [:]
        for word in words.dropFirst() {
            guard let equals = word.firstIndex(of: "=") else { continue }
            fields[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        self.fields = fields
    }

    var backend: String { fields["backend"] ?? "" }
    var items: Int { Int(fields["items"] ?? "") ?? 0 }
    var medianNs: Double { Double(fields["median_ns"] ?? "") ?? .nan }
}

/// What one secret-bench run printed, and why it failed if it did.
struct SecretBenchRun {
    var lines: [SecretBenchLine] = []
    var failure: String?

    /// The median ns/op of `kind` ("read", "write") for `backend` at `items`, if measured.
    func median(_ kind: String, _ backend: String, items: Int) -> Double? {
        lines.first { $0.kind == kind && $0.backend == backend && $0.items == items }.map(\.medianNs)
    }

    /// The item counts measured for `backend`, ascending.
    func itemCounts(_ backend: String) -> [Int] {
        Array(Set(lines.filter { $0.kind == "read" && $0.backend == backend }.map(\.items))).sorted()
    }
}

enum SecretBench {
    /// secret-bench: `$SECRET_BENCH`, next to keysmith-bench, or `.build/secret-bench`.
    static func locate() -> String? {
        helperProgram(variable: "SECRET_BENCH", name: "secret-bench", fallbacks: [".build/secret-bench"])
    }

    /// Runs secret-bench with `arguments`, echoing its lines to stderr as progress. When it
    /// prints a `hold` line, `onHold` runs (secret-bench waits meanwhile) and then
    /// secret-bench is told to go on. Its stderr goes to ours.
    static func run(_ path: String, _ arguments: [String], onHold: ((SecretBenchLine) -> Void)? = nil) -> SecretBenchRun {
        var result = SecretBenchRun()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        do {
            try process.run()
        } catch {
            result.failure = "could not start secret-bench: \(error)"
            return result
        }
        var inputOpen = true
        func release() {
            guard inputOpen else { return }
            inputOpen = false
            try? input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
            try? input.fileHandleForWriting.close()
        }
        if onHold == nil { release() }
        var buffer = Data()
        let reader = output.fileHandleForReading
        while true {
            let chunk = reader.availableData
            if chunk.isEmpty { break }  // end of file: secret-bench is done
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                guard let line = SecretBenchLine(text[...]) else { continue }
                progress("secret-bench: \(text)")
                if line.kind == "hold" {
                    onHold?(line)
                    release()
                } else {
                    result.lines.append(line)
                }
            }
        }
        release()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            result.failure = "secret-bench \(arguments.first(where: { !$0.hasPrefix("-") }) ?? "") exited with status \(process.terminationStatus)"
        }
        return result
    }
}

/// Reads through libsecret against Keysmith's reads of the same run.
struct LibsecretBenchmark {
    /// Item counts for the file backend (filled by writing its keyring file directly).
    let fileSizes: [Int]
    /// Item counts for gnome-keyring (filled through the API; slow beyond ~1,000).
    let gnomeKeyringSizes: [Int]
    /// Called while gnome-keyring is up with its first item count, to time whole processes
    /// (`secret-tool lookup`) against it; gets the hold line (bus address, item count).
    let whileGnomeKeyringRuns: (SecretBenchLine) -> Void

    struct Result {
        var file = SecretBenchRun()
        var gnomeKeyring = SecretBenchRun()
        var built = true
    }

    func run() -> Result {
        var result = Result()
        guard let path = SecretBench.locate() else {
            result.built = false
            return result
        }
        if !fileSizes.isEmpty {
            progress("libsecret file backend at \(fileSizes.map(String.init).joined(separator: ", ")) items")
            result.file = SecretBench.run(path, [
                "--backend", "file", "--items", fileSizes.map(String.init).joined(separator: ","),
                "--lookups", "200", "--rounds", "5", "--writes", "20", "--budget-ms", "1500",
            ])
        }
        if !gnomeKeyringSizes.isEmpty {
            progress("gnome-keyring at \(gnomeKeyringSizes.map(String.init).joined(separator: ", ")) items (private D-Bus session)")
            result.gnomeKeyring = SecretBench.run(
                path,
                [
                    "--backend", "gnome-keyring", "--items", gnomeKeyringSizes.map(String.init).joined(separator: ","),
                    "--lookups", "200", "--rounds", "5", "--writes", "20", "--budget-ms", "1500", "--hold",
                ], onHold: whileGnomeKeyringRuns)
        }
        return result
    }

    /// The read rows: for each libsecret item count, Keysmith's read at the smallest measured
    /// item count at or above it (so the comparison never favours Keysmith), as a factor.
    /// - Parameter keysmithReads: Keysmith's SecItemCopyMatching ns by item count (this run).
    /// With the C limit of this design against gnome-keyring as well: the best ratio any
    /// implementation of this design could reach on this machine.
    /// - Parameter cLimitReads: The C baseline's read ns by item count (this run).
    static func readRows(_ result: Result, keysmithReads: [Int: Double], cLimitReads: [Int: Double]) -> [BenchmarkRow] {
        let fileTarget = "≥ 4x faster"
        let gnomeTarget = "≥ 150x faster"
        guard result.built else {
            return [
                skippedRow("libsecret file backend reads", "libsecret … not built (run make bench)", target: fileTarget),
                skippedRow("gnome-keyring reads (libsecret)", "libsecret … not built (run make bench)", target: gnomeTarget),
            ]
        }
        var rows: [BenchmarkRow] = []
        for (run, backend, label, target) in [
            (result.file, "file", "libsecret file backend", fileTarget),
            (result.gnomeKeyring, "gnome-keyring", "gnome-keyring", gnomeTarget),
        ] {
            let counts = run.itemCounts(backend)
            if counts.isEmpty {
                rows.append(skippedRow("\(label) reads", run.failure ?? "not measured", target: target))
                continue
            }
            for items in counts {
                guard let other = run.median("read", backend, items: items),
                    let (keysmithItems, keysmith) = comparable(keysmithReads, items)
                else { continue }
                let name = keysmithItems == items
                    ? "SecItemCopyMatching app-style vs \(label), \(items) items"
                    : "SecItemCopyMatching app-style (\(keysmithItems) items) vs \(label) (\(items) items)"
                rows.append(BenchmarkRow(
                    name: name, value: formatDuration(keysmith), baseline: "\(label) " + formatDuration(other),
                    ratio: formatFaster(other: other, keysmith: keysmith), target: target))
                if backend == "gnome-keyring", let limit = cLimitReads[keysmithItems] {
                    rows.append(BenchmarkRow(
                        name: "  ceiling: C limit of this design (\(keysmithItems) items) vs \(label)",
                        value: "C limit " + formatDuration(limit), baseline: "\(label) " + formatDuration(other),
                        ratio: formatFaster(other: other, keysmith: limit), target: "(info)"))
                }
            }
            if let failure = run.failure { rows.append(skippedRow("\(label): incomplete", failure)) }
        }
        return rows
    }

    /// Keysmith's figure at the smallest item count ≥ `items`, else at the largest below it.
    static func comparable(_ figures: [Int: Double], _ items: Int) -> (Int, Double)? {
        if let count = figures.keys.filter({ $0 >= items }).min() { return (count, figures[count]!) }
        if let count = figures.keys.max() { return (count, figures[count]!) }
        return nil
    }
}

/// Runs the libsecret measurements and, while gnome-keyring is up, the whole-process
/// benchmark against it (or without secret-tool when there is no gnome-keyring session).
/// - Returns: The read rows, the raw libsecret results (for the write rows) and the process
///   rows.
func compareWithLibsecret(
    fileSizes: [Int], gnomeKeyringSizes: [Int], processRuns: Int, keysmithReads: [Int: Double],
    cLimitReads: [Int: Double]
) -> (readRows: [BenchmarkRow], libsecret: LibsecretBenchmark.Result, processRows: [BenchmarkRow]) {
    var processRows: [BenchmarkRow]?
    let benchmark = LibsecretBenchmark(
        fileSizes: fileSizes, gnomeKeyringSizes: gnomeKeyringSizes,
        whileGnomeKeyringRuns: { session in
            processRows = ProcessBenchmark(runs: processRuns, itemCount: session.items, session: session).run()
        })
    let result = benchmark.run()
    let readRows = LibsecretBenchmark.readRows(result, keysmithReads: keysmithReads, cLimitReads: cLimitReads)
    let process = processRows ?? ProcessBenchmark(runs: processRuns, itemCount: gnomeKeyringSizes.min() ?? 100, session: nil).run()
    return (readRows, result, process)
}
