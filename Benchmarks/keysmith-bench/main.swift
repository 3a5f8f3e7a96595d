// keysmith-bench: the speed evidence. Every figure is a median of several rounds, and
// every comparison is a ratio against a baseline measured in the same run (the machine
// is noisy). `make bench` runs it in release mode; the table goes to stdout and, with
// --write-docs, to docs/BENCHMARKS.md.
//
//   keysmith-bench [--sizes 100,10000,100000] [--write-docs PATH]
import Foundation

var sizes = [100, 10_000, 100_000]
var docsPath: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--sizes":
        guard let list = arguments.popFirst() else { fatalError("--sizes needs a list, e.g. 100,10000") }
        sizes = list.split(separator: ",").compactMap { Int($0) }
    case "--write-docs":
        docsPath = arguments.popFirst()
    default:
        FileHandle.standardError.write(Data("usage: keysmith-bench [--sizes 100,10000] [--write-docs PATH]\n".utf8))
        exit(2)
    }
}

var rows: [BenchmarkRow] = []
var readTimes: [Int: Double] = [:]
for size in sizes {
    let result = KeychainReadBenchmark(itemCount: size).run()
    rows += result.rows
    readTimes[size] = result.keychainNs
}
if let small = readTimes[sizes.min() ?? 0], let large = readTimes[sizes.max() ?? 0], sizes.count > 1 {
    rows.append(BenchmarkRow(
        name: "read time at \(sizes.max()!) vs \(sizes.min()!) items", value: formatDuration(large),
        baseline: formatDuration(small), ratio: formatRatio(large / small), target: "≤ 1.5x"))
}

let header = "| benchmark | Keysmith | baseline (same run) | ratio | target |\n|---|---:|---:|---:|---|"
let table = ([header] + rows.map { "| \($0.name) | \($0.value) | \($0.baseline) | \($0.ratio) | \($0.target) |" })
    .joined(separator: "\n")
print(table)

if let docsPath {
    let machine = "\(ProcessInfo.processInfo.processorCount) cores, \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB, \(ProcessInfo.processInfo.operatingSystemVersionString)"
    let text = """
        # Benchmarks

        Produced by `make bench` (`keysmith-bench --write-docs docs/BENCHMARKS.md`, release build)
        on \(ISO8601DateFormatter().string(from: Date())), machine: \(machine).
        Each figure is the median of several rounds; each ratio is against a baseline measured
        in the same run.

        \(table)

        """
    try text.write(toFile: docsPath, atomically: true, encoding: .utf8)
}
