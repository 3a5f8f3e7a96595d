import Foundation

/// A name as the keychain compares it: by its UTF-8 bytes.
///
/// Services, keys (accounts), access groups and namespaces are bytes to the keychain, so
/// `"jos\u{E9}"` (é as one code point) and `"jose\u{301}"` (e and a combining accent) are two
/// different names that hold two different items. Swift's `String` compares and hashes by
/// canonical equivalence and would take them for one name: a dictionary keyed by `String`
/// serves one name's item for the other, and a `Set<String>` drops one from a listing.
/// Hold a name as an `ExactName` wherever it is a dictionary key, a set member, or compared.
///
/// ```swift
/// let alice = ExactName("account_jose\u{301}")
/// let bob = ExactName("account_jos\u{E9}")
/// alice == bob                                   // false: different bytes
/// ExactName("com.example.app.auth").hasPrefix(ExactName("com.example.app."))   // true
/// ```
///
/// - Equality and hashing use the UTF-8 bytes.
/// - Order is the order of the UTF-8 bytes (the order of Unicode scalar values), the same on
///   every platform and in every language binding.
/// - ``hasPrefix(_:)`` and ``droppingPrefix(_:)`` work on bytes too (`String.hasPrefix` is
///   canonical-equivalence based, and also refuses a prefix that ends inside a character).
public struct ExactName: Sendable, Hashable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name as text.
    public let text: String

    /// Holds `text` as a name.
    /// - Parameter text: The name.
    public init(_ text: String) {
        self.text = text
    }

    /// Holds a string literal as a name.
    /// - Parameter value: The name.
    public init(stringLiteral value: String) {
        self.text = value
    }

    /// The name's UTF-8 bytes.
    public var utf8: String.UTF8View { text.utf8 }

    /// The name as text.
    public var description: String { text }

    /// Whether the two names have the same UTF-8 bytes.
    public static func == (lhs: ExactName, rhs: ExactName) -> Bool {
        let count = lhs.text.utf8.count
        guard count == rhs.text.utf8.count else { return false }
        // Native strings hold their UTF-8 contiguously: one memcmp, as for a cache hit.
        let compared = lhs.text.utf8.withContiguousStorageIfAvailable { left in
            rhs.text.utf8.withContiguousStorageIfAvailable { right in
                count == 0 || memcmp(left.baseAddress!, right.baseAddress!, count) == 0
            }
        }
        if let compared = compared ?? nil { return compared }
        return lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    /// Hashes the UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        let hashed: Void? = text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil {
            // A bridged string without contiguous UTF-8: the same bytes, copied.
            Array(text.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
        }
        hasher.combine(text.utf8.count)
    }

    /// Whether `lhs` comes before `rhs` in UTF-8 byte order.
    public static func < (lhs: ExactName, rhs: ExactName) -> Bool {
        lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
    }

    /// Whether the name's bytes start with `prefix`'s bytes.
    /// - Parameter prefix: The prefix.
    /// - Returns: Whether it does.
    public func hasPrefix(_ prefix: ExactName) -> Bool {
        text.utf8.starts(with: prefix.text.utf8)
    }

    /// The rest of the name after `prefix`'s bytes, or `nil` when it does not start with them.
    /// - Parameter prefix: The prefix.
    /// - Returns: The rest (empty when the name is the prefix), or `nil`.
    public func droppingPrefix(_ prefix: ExactName) -> String? {
        guard hasPrefix(prefix) else { return nil }
        // A whole UTF-8 string that is a byte prefix ends on a code point boundary.
        return String(decoding: text.utf8.dropFirst(prefix.text.utf8.count), as: UTF8.self)
    }

    /// `names` without repeats (byte for byte) in UTF-8 byte order.
    /// - Parameter names: The names.
    /// - Returns: Each distinct name once, sorted.
    public static func distinctSorted(_ names: some Sequence<String>) -> [String] {
        Set(names.map { ExactName($0) }).sorted().map(\.text)
    }

    /// Whether two optional names (an access group, say) are the same, byte for byte.
    /// - Parameters:
    ///   - lhs: A name, or `nil`.
    ///   - rhs: A name, or `nil`.
    /// - Returns: Whether both are `nil`, or both hold the same bytes.
    public static func same(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case (let lhs?, let rhs?): return ExactName(lhs) == ExactName(rhs)
        default: return false
        }
    }
}
