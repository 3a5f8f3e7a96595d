// keysmith-bench: the speed evidence. Every figure is a median of several rounds, and
// every comparison is a ratio against a baseline measured in the same run (the machine
// is noisy). `make bench` runs it in release mode; the table goes to stdout and, with
// --write-docs, to docs/BENCHMARKS.md.
//
//   keysmith-bench [--sizes 100,10000,100000] [--write-sizes 100,10000]
//                  [--libsecret-sizes 100,10000] [--gnome-keyring-sizes 100,1000]
//                  [--process-runs 30] [--no-libsecret] [--write-docs PATH]
//   keysmith-bench --fleet-only   (only the fleet rows, against etcd on loopback)
//   keysmith-bench --only erasure|write|node   one benchmark: erasing old data on a write,
//                                         the durable SecItemUpdate at 100 items, or a get
//                                         from Node against the Swift KeychainStore read
//   keysmith-bench --only reads [N] | typed | throughput | protection | protection-calls a|d [COUNT] | passwd [N] | process [RUNS] | tpm2 [RUNS]
//                  one group of rows: reads at N items against the C limit; KeychainStore
//                  and KeyRetriever against SecItemCopyMatching; 2 readers against 1; class A
//                  against class D; the CLI as a whole process (without secret-tool)
//                  [--only-protection]
//   keysmith-bench --only read-calls prebuilt|app-style [COUNT]   COUNT untimed reads of one
//                  kind, for a per-call instruction count under callgrind
//   keysmith-bench --only typed-calls data|string|retrieve|prebuilt [COUNT]   the same for
//                  the typed reads (KeychainStore, an uncached KeyRetriever) and the
//                  SecItemCopyMatching call they are compared with
//
// libsecret and gnome-keyring are measured by .build/secret-bench (a C program built by
// `make bench`; path from $SECRET_BENCH or next to this binary); the CLI by the `keysmith`
// binary next to this one (or $KEYSMITH_CLI). Missing helpers give a row saying so.
import Foundation

// The whole-process benchmark starts this binary with --exit-at-once: the cost of starting a
// Swift program that links Foundation and the keychain, doing nothing.
if CommandLine.arguments.dropFirst().first == "--exit-at-once" { exit(0) }

// A reader process of the throughput benchmark.
if CommandLine.arguments.dropFirst().first == "--read-worker" {
    ThroughputBenchmark.worker(Array(CommandLine.arguments.dropFirst(2)))
}

// One benchmark alone, printed as a table row.
if CommandLine.arguments.dropFirst().first == "--only" {
    let selected: [BenchmarkRow]
    switch CommandLine.arguments.dropFirst(2).first {
    case "erasure": selected = [ErasureBenchmark(itemCount: 100).row()]
    case "write": selected = WriteBenchmark.rows(sizes: [100], libsecret: LibsecretBenchmark.Result(built: false))
    case "node": selected = [NodeGetBenchmark().row()]
    case "reads":
        let size = Int(CommandLine.arguments.dropFirst(3).first ?? "") ?? 10_000
        selected = KeychainReadBenchmark(itemCount: size).run().rows
    case "read-calls":
        // Untimed, for callgrind: COUNT SecItemCopyMatching calls of one kind.
        let kind = CommandLine.arguments.dropFirst(3).first ?? "prebuilt"
        runReadCalls(appStyle: kind == "app-style", count: Int(CommandLine.arguments.dropFirst(4).first ?? "") ?? 1_000)
        exit(0)
    case "typed": selected = StoreReadBenchmark(itemCount: 100).rows()
    case "typed-calls":
        // Untimed, for callgrind: COUNT calls of one typed read (or of the prebuilt
        // SecItemCopyMatching they are compared with).
        runTypedCalls(
            kind: CommandLine.arguments.dropFirst(3).first ?? "retrieve",
            count: Int(CommandLine.arguments.dropFirst(4).first ?? "") ?? 1_000)
        exit(0)
    case "throughput": selected = ThroughputBenchmark.rows()
    case "protection": selected = ProtectionBenchmark.rows()
    case "passwd":
        selected = [PassphraseChangeBenchmark(itemCount: Int(CommandLine.arguments.dropFirst(3).first ?? "") ?? 10_000).row()]
    case "protection-calls":
        // Untimed, for callgrind: COUNT reads of a class A (a) or class D (d) item.
        ProtectionBenchmark.runCalls(
            classA: CommandLine.arguments.dropFirst(3).first != "d",
            count: Int(CommandLine.arguments.dropFirst(4).first ?? "") ?? 1_000)
        exit(0)
    case "tpm2":
        // Open and first read with the TPM key store (swtpm standing in for the chip)
        // against the key file store.
        selected = [TPM2StoreBenchmark(runs: Int(CommandLine.arguments.dropFirst(3).first ?? "") ?? 30, itemCount: 100).row()]
    case "process":
        selected = ProcessBenchmark(
            runs: Int(CommandLine.arguments.dropFirst(3).first ?? "") ?? 30, itemCount: 100, session: nil
        ).run()
    default:
        FileHandle.standardError.write(Data(
            "usage: keysmith-bench --only erasure|write|node|reads [N]|read-calls prebuilt|app-style [COUNT]|typed|typed-calls data|string|retrieve|prebuilt [COUNT]|throughput|protection|protection-calls a|d [COUNT]|passwd [N]|process [RUNS]|tpm2 [RUNS]\n".utf8))
        exit(2)
    }
    for row in selected {
        print("| \(row.name) | \(row.value) | \(row.baseline) | \(row.ratio) | \(row.target) | \(row.verdict) |")
    }
    exit(0)
}

var sizes = [100, 10_000, 100_000]
var writeSizes: [Int]?
var libsecretFileSizes: [Int]?
var gnomeKeyringSizes: [Int]?
var processRuns = 30
var measureLibsecret = true
var docsPath: String?
var arguments = CommandLine.arguments.dropFirst()

func sizeList(_ option: String, _ value: String?) -> [Int] {
    guard let value else { fatalError("\(option) needs a list, e.g. 100,10000") }
    return value.split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
}

while let argument = arguments.popFirst() {
    switch argument {
    case "--sizes": sizes = sizeList(argument, arguments.popFirst())
    case "--write-sizes": writeSizes = sizeList(argument, arguments.popFirst())
    case "--libsecret-sizes": libsecretFileSizes = sizeList(argument, arguments.popFirst())
    case "--gnome-keyring-sizes": gnomeKeyringSizes = sizeList(argument, arguments.popFirst())
    case "--process-runs": processRuns = max(1, Int(arguments.popFirst() ?? "") ?? 30)
    case "--no-libsecret": measureLibsecret = false
    case "--only-protection":
        // Just the data-protection rows (unlock time, class A vs class D reads).
        let table = ProtectionBenchmark.rows().map { "| \($0.name) | \($0.value) | \($0.baseline) | \($0.ratio) | \($0.target) | \($0.verdict) |" }
        print(table.joined(separator: "\n"))
        exit(0)
    case "--fleet-only":
        printFleetTable(fleetBenchmarkRows())
        exit(0)
    case "--write-docs":
        docsPath = arguments.popFirst()
    default:
        FileHandle.standardError.write(Data("""
            usage: keysmith-bench [--sizes 100,10000,100000] [--write-sizes 100,10000]
                                  [--libsecret-sizes 100,10000] [--gnome-keyring-sizes 100,1000]
                                  [--process-runs 30] [--no-libsecret] [--write-docs PATH]

            """.utf8))
        exit(2)
    }
}

// 1. A cached KeyRetriever.retrieve against a dictionary behind a lock.
progress("measuring cached KeyRetriever.retrieve")
var rows: [BenchmarkRow] = retrieverBenchmarkRows()

// 2. Uncached reads against the C limit of this design, at each size.
var readTimes: [Int: Double] = [:]
var appStyleReadTimes: [Int: Double] = [:]
var cLimitReadTimes: [Int: Double] = [:]
for size in sizes {
    let result = KeychainReadBenchmark(itemCount: size).run()
    rows += result.rows
    readTimes[size] = result.keychainNs
    appStyleReadTimes[size] = result.appStyleNs
    cLimitReadTimes[size] = result.baselineNs
}
if let small = readTimes[sizes.min() ?? 0], let large = readTimes[sizes.max() ?? 0], sizes.count > 1 {
    rows.append(BenchmarkRow(
        name: "read time at \(sizes.max()!) vs \(sizes.min()!) items", value: formatDuration(large),
        baseline: formatDuration(small), ratio: formatRatio(large / small), target: "≤ 1.5x"))
}

// 2. libsecret (file backend, gnome-keyring) reads; 4. whole processes, while gnome-keyring
// is up. libsecret's own call builds its attribute table on every call, so Keysmith's
// figure here is the app-style one (query dictionary built and bridged on every call).
let comparison = compareWithLibsecret(
    fileSizes: measureLibsecret ? (libsecretFileSizes ?? sizes.filter { $0 <= 10_000 }) : [],
    gnomeKeyringSizes: measureLibsecret
        ? (gnomeKeyringSizes ?? [100, 1_000].filter { $0 <= (sizes.max() ?? 100) || $0 == 100 }) : [],
    processRuns: processRuns, keysmithReads: appStyleReadTimes, cLimitReads: cLimitReadTimes)
rows += comparison.readRows

// 3. Durable upsert, and how it grows with the number of items.
rows += WriteBenchmark.rows(
    sizes: writeSizes ?? {
        let small = sizes.filter { $0 <= 10_000 }
        return small.isEmpty ? [100] : small
    }(), libsecret: comparison.libsecret)

rows.append(ErasureBenchmark(itemCount: 100).row())

rows += comparison.processRows
// Open and first read with the TPM key store (swtpm standing in for the chip) vs the key file.
rows.append(TPM2StoreBenchmark(runs: processRuns, itemCount: 100).row())

// The JavaScript package: a get from Node against the Swift KeychainStore read.
rows.append(NodeGetBenchmark().row())

// 5. The fleet source on etcd (loopback): rotation propagation and lookups.
rows += fleetBenchmarkRows()

// 6. The typed layer against the call it makes; two readers against one.
rows += StoreReadBenchmark(itemCount: 100).rows()
rows += ThroughputBenchmark.rows()

// 7. Data protection: unlock time, and a class A read against a class D read.
progress("measuring unlock and class A vs class D reads")
rows += ProtectionBenchmark.rows()
// A passphrase change seals every item again.
rows.append(PassphraseChangeBenchmark(itemCount: 10_000).row())

let header = "| benchmark | Keysmith | baseline (same run) | ratio | target | met |\n|---|---:|---:|---:|---|---|"
let table = ([header] + rows.map { "| \($0.name) | \($0.value) | \($0.baseline) | \($0.ratio) | \($0.target) | \($0.verdict) |" })
    .joined(separator: "\n")
print(table)

if let docsPath {
    let command = (["keysmith-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
    let text = benchmarkDocument(
        command: command, table: table, libsecret: comparison.libsecret, keysmithReads: readTimes,
        cLimitReads: cLimitReadTimes)
    let kept = handWrittenPart(of: docsPath)
    if kept.isEmpty { progress("\(docsPath) has no hand-written part after the marker line; writing the table alone") }
    try (text + kept).write(toFile: docsPath, atomically: true, encoding: .utf8)
    progress("wrote \(docsPath)")
}
