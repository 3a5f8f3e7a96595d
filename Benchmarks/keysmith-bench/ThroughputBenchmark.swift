// Read throughput with two readers against one: the same keychain (1,000 items), read by
// one thread and then by two threads at once, each thread reading its own half of the
// items; then the same with processes (this binary started with --read-worker). The ratio
// is the total reads per second of two against one (2.0x: perfect scaling), measured
// round by round in the same run. The C limit's own scaling is measured beside it (CBaseline:
// the same number of readers, each with its own SQLite connection, doing the hand-written
// read of the C-limit row): two readers of one database share SQLite's per-file locks and
// the machine's two cores, so the C limit itself does not reach 2.0x, and the keychain's
// ratio is read against it.
import CBaseline
import Foundation
import KeychainServices

enum ThroughputBenchmark {
    static let itemCount = 1_000
    static let readsPerReader = 40_000
    static let rounds = 5
    static let group = "com.keysmith.bench"

    static func rows() -> [BenchmarkRow] {
        let directory = temporaryDirectory("throughput")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = KeychainEnvironment(directory: directory, accessGroups: [group])
        populateBenchmarkKeychain(environment, itemCount: itemCount, secretSize: 200, label: "throughput")

        let baselinePath = directory.appendingPathComponent("baseline.db").path
        precondition(keysmith_baseline_prepare(baselinePath, Int32(itemCount), 200) == 0)

        progress("read throughput: 1 thread against 2 threads, \(readsPerReader) reads each")
        var threadRatios: [Double] = []
        var oneThread: [Double] = []
        var limitThreadRatios: [Double] = []
        for _ in 0..<rounds {
            let one = runThreads(environment, readers: 1)
            let two = runThreads(environment, readers: 2)
            oneThread.append(one / Double(readsPerReader))
            threadRatios.append(2 * one / two)
            let limitOne = keysmith_baseline_read_threads(baselinePath, Int32(itemCount), Int32(readsPerReader), 1)
            let limitTwo = keysmith_baseline_read_threads(baselinePath, Int32(itemCount), Int32(readsPerReader), 2)
            precondition(limitOne > 0 && limitTwo > 0, "the C-limit readers failed")
            limitThreadRatios.append(2 * Double(limitOne) / Double(limitTwo))
        }
        var rows = [
            BenchmarkRow(
                name: "read throughput, 2 threads vs 1 (\(itemCount) items, \(readsPerReader) reads each)",
                value: formatRatio(median(threadRatios)),
                baseline: "C limit " + formatRatio(median(limitThreadRatios)) + "; 1 thread " + formatDuration(median(oneThread)) + " per read",
                ratio: formatRatio(median(threadRatios)), target: "≥ 1.7x"),
            BenchmarkRow(
                name: "  C limit: read throughput, 2 threads vs 1 (own connections)",
                value: formatRatio(median(limitThreadRatios)), baseline: "", ratio: "", target: "informational"),
        ]
        progress("read throughput: 1 process against 2 processes")
        var processRatios: [Double] = []
        var limitProcessRatios: [Double] = []
        for _ in 0..<rounds {
            guard let one = runProcesses(directory, readers: 1), let two = runProcesses(directory, readers: 2) else {
                rows.append(skippedRow("read throughput, 2 processes vs 1", "a reader process failed"))
                return rows
            }
            processRatios.append(2 * one / two)
            let limitOne = keysmith_baseline_read_processes(baselinePath, Int32(itemCount), Int32(readsPerReader), 1)
            let limitTwo = keysmith_baseline_read_processes(baselinePath, Int32(itemCount), Int32(readsPerReader), 2)
            precondition(limitOne > 0 && limitTwo > 0, "the C-limit reader processes failed")
            limitProcessRatios.append(2 * Double(limitOne) / Double(limitTwo))
        }
        rows.append(BenchmarkRow(
            name: "read throughput, 2 processes vs 1", value: formatRatio(median(processRatios)),
            baseline: "C limit " + formatRatio(median(limitProcessRatios)),
            ratio: formatRatio(median(processRatios)), target: "≥ 1.7x"))
        rows.append(BenchmarkRow(
            name: "  C limit: read throughput, 2 processes vs 1",
            value: formatRatio(median(limitProcessRatios)), baseline: "", ratio: "", target: "informational"))
        return rows
    }

    /// The prebuilt queries of reader `index` of `readers` (its own share of the items).
    static func queries(reader index: Int, of readers: Int) -> [CFDictionary] {
        let share = itemCount / readers
        return (0..<share).map { offset in
            [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.keysmith.bench",
                kSecAttrAccount as String: "account-\(index * share + offset)",
                kSecReturnData as String: true,
            ] as CFDictionary
        }
    }

    /// Reads `readsPerReader` times, cycling through `queries`.
    static func readLoop(_ queries: [CFDictionary]) {
        var next = 0
        for _ in 0..<readsPerReader {
            var result: CFTypeRef?
            let status = SecItemCopyMatching(queries[next], &result)
            precondition(status == errSecSuccess, "read failed: \(status)")
            next = next + 1 == queries.count ? 0 : next + 1
        }
    }

    /// Wall-clock ns for `readers` threads to do their reads at once.
    private static func runThreads(_ environment: KeychainEnvironment, readers: Int) -> Double {
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<readers {
            done.enter()
            let thread = Thread {
                let queries = queries(reader: index, of: readers)
                KeychainEnvironment.withEnvironment(environment) {
                    var warm: CFTypeRef?
                    _ = SecItemCopyMatching(queries[0], &warm)
                    ready.signal()
                    go.wait()
                    readLoop(queries)
                }
                done.leave()
            }
            thread.start()
        }
        for _ in 0..<readers { ready.wait() }
        let start = nanoseconds()
        for _ in 0..<readers { go.signal() }
        done.wait()
        return Double(nanoseconds() - start)
    }

    /// Wall-clock ns for `readers` processes to do their reads at once (from the moment all
    /// are ready), or nil when one failed.
    private static func runProcesses(_ directory: URL, readers: Int) -> Double? {
        let ownPath = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        var workers: [(process: Process, input: Pipe, output: Pipe)] = []
        for index in 0..<readers {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ownPath)
            process.arguments = ["--read-worker", directory.path, String(index), String(readers)]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            guard (try? process.run()) != nil else { return nil }
            workers.append((process, input, output))
        }
        for worker in workers {
            guard readLine(worker.output.fileHandleForReading) == "ready" else { return nil }
        }
        let start = nanoseconds()
        for worker in workers { worker.input.fileHandleForWriting.write(Data("go\n".utf8)) }
        for worker in workers {
            guard readLine(worker.output.fileHandleForReading) == "done" else { return nil }
        }
        let elapsed = Double(nanoseconds() - start)
        for worker in workers {
            worker.process.waitUntilExit()
            guard worker.process.terminationStatus == 0 else { return nil }
        }
        return elapsed
    }

    private static func readLine(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while true {
            let chunk = handle.readData(ofLength: 1)
            guard let byte = chunk.first else { return nil }
            if byte == 10 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    /// The worker side (`--read-worker DIRECTORY INDEX READERS`): warms up, says "ready",
    /// waits for "go" on standard input, reads, says "done".
    static func worker(_ arguments: [String]) -> Never {
        guard arguments.count == 3, let index = Int(arguments[1]), let readers = Int(arguments[2]) else { exit(2) }
        let environment = KeychainEnvironment(directory: URL(fileURLWithPath: arguments[0]), accessGroups: [group])
        KeychainEnvironment.withEnvironment(environment) {
            let queries = queries(reader: index, of: readers)
            var warm: CFTypeRef?
            precondition(SecItemCopyMatching(queries[0], &warm) == errSecSuccess)
            FileHandle.standardOutput.write(Data("ready\n".utf8))
            _ = Swift.readLine()
            readLoop(queries)
            FileHandle.standardOutput.write(Data("done\n".utf8))
        }
        exit(0)
    }
}
