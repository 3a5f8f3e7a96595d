import Foundation

/// One line of the results table.
struct BenchmarkRow {
    let name: String
    let value: String
    let baseline: String
    let ratio: String
    let target: String
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
