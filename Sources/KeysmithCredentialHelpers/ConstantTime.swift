import Foundation

/// Comparisons of secrets whose time does not depend on where they differ.
enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes; the time depends only on the lengths.
    static func equal<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count) | (a.count == b.count ? 0 : 1)
        var left = a.makeIterator()
        var right = b.makeIterator()
        // Walk the longer one fully so the time does not reveal a common prefix.
        for _ in 0..<max(a.count, b.count) {
            let x = left.next() ?? 0
            let y = right.next() ?? 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
