#if !canImport(Security)
import Foundation

extension String {
    /// Whether the two strings have the same UTF-8 bytes: one `memcmp` over contiguous
    /// UTF-8, not an element-by-element walk. Apple's keychain compares names and
    /// attribute strings byte for byte; Swift's `==` would also equate canonically
    /// equivalent spellings such as `é` and `e` + U+0301.
    func hasSameUTF8(as other: String) -> Bool {
        var a = self
        var b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
    }
}

extension Data {
    /// Whether the two values hold the same bytes, compared with one `memcmp` (Foundation's
    /// `==` on Linux costs several hundred instructions for a short value). Not constant
    /// time: for values that are not secret (record bytes, identifiers); secrets use
    /// ``Sodium/constantTimeEqual(_:_:)``.
    func hasSameBytes(as other: Data) -> Bool {
        guard count == other.count else { return false }
        guard count > 0 else { return true }
        return withUnsafeBytes { x in other.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }
}
#endif
