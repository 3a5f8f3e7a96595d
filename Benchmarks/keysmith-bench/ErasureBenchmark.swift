// What erasing old data costs a durable write: the same C write loop as the write
// benchmark's baseline (one AEAD encryption and one UPDATE per transaction, synchronous=FULL),
// once as plain SQLite and once as the keychain writes: secure_delete=ON (overwritten and
// deleted rows are zeroed in the file), journal_size_limit=0 and wal_checkpoint(TRUNCATE)
// after each commit (old page versions leave the WAL). Interleaved round by round, in the
// same run, on the same file.
import CBaseline
import Foundation

struct ErasureBenchmark {
    let itemCount: Int
    let rounds = 7
    let writesPerRound = 40
    let secretSize = 200

    /// The row: median ns per write with erasure, against without.
    func row() -> BenchmarkRow {
        let directory = temporaryDirectory("erasure-\(itemCount)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("baseline.db").path
        precondition(keysmith_baseline_prepare(path, Int32(max(itemCount, 100)), Int32(secretSize)) == 0)
        var plain: [Double] = []
        var erasing: [Double] = []
        for _ in 0..<rounds {
            for erase in [Int32(0), 1] {
                let elapsed = keysmith_baseline_write_erasing(path, Int32(writesPerRound), erase, Int32(secretSize))
                precondition(elapsed > 0, "erasure benchmark write failed")
                (erase == 1 ? { erasing.append($0) } : { plain.append($0) })(Double(elapsed) / Double(writesPerRound))
            }
        }
        let withErasure = median(erasing)
        let without = median(plain)
        return BenchmarkRow(
            name: "durable write with secure_delete + WAL truncation, \(itemCount) items", value: formatDuration(withErasure),
            baseline: "same write without " + formatDuration(without), ratio: formatRatio(withErasure / without), target: "(info)")
    }
}
