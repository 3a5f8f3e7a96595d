#if !canImport(Security)
import Foundation

/// An item's or a query's attributes by tag (`svce`, `acct`, ...): what a
/// `[String: AttributeValue]` would hold, kept as a short list whose tags are compared as
/// one integer each.
///
/// A keychain item has about a dozen attributes and every read looks several of them up
/// (its protection, its access group, the ones the query compares). A dictionary keyed by
/// `String` hashes the tag for every lookup and insertion; here a lookup compares one
/// integer per entry (a lookup by name packs the name first), and decoding a stored item
/// makes no string for the keychain's own tags (short ASCII ones).
///
/// Tags are compared byte for byte, as the keychain compares everything else (Swift's `==`
/// on strings would equate canonically equivalent spellings).
struct AttributeTable: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// An attribute's tag: up to 7 UTF-8 bytes packed with their count into one integer; a
    /// longer tag keeps its string.
    struct Tag: Equatable, Sendable {
        /// The bytes, first byte lowest, and their count in the top byte; `UInt64.max` for a
        /// long tag.
        private let packed: UInt64
        private let long: String?

        private static let longMarker = UInt64.max

        init(_ name: String) {
            var utf8 = name
            if let packed = utf8.withUTF8({ Self.pack(UnsafeRawBufferPointer($0), asciiOnly: false) }) {
                self.packed = packed
                self.long = nil
            } else {
                self.packed = Self.longMarker
                self.long = name
            }
        }

        /// The tag spelled by `bytes`, when they are at most 7 ASCII bytes (the tags the
        /// keychain writes); `nil` otherwise, and the caller makes the tag from a string.
        init?(ascii bytes: UnsafeRawBufferPointer) {
            guard let packed = Self.pack(bytes, asciiOnly: true) else { return nil }
            self.packed = packed
            self.long = nil
        }

        /// `bytes` packed with their count, or `nil` when there are more than 7 (or, with
        /// `asciiOnly`, when one is not ASCII).
        private static func pack(_ bytes: UnsafeRawBufferPointer, asciiOnly: Bool) -> UInt64? {
            guard bytes.count <= 7 else { return nil }
            var packed: UInt64 = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if asciiOnly && byte >= 0x80 { return nil }
                packed |= UInt64(byte) << (8 * UInt64(index))
            }
            return packed | UInt64(bytes.count) << 56
        }

        /// `kSecAttrAccessible`, read for every row a search opens.
        static let protection = Tag("pdmn")
        /// `kSecAttrAccessGroup`, read for every row a search opens.
        static let accessGroup = Tag("agrp")
        /// `kSecAttrSynchronizable`.
        static let synchronizable = Tag("sync")
        /// `kSecAttrAccessControl`, read for every row a search opens.
        static let accessControl = Tag("accc")

        /// The tag as a string.
        var name: String {
            if let long { return long }
            let count = Int(packed >> 56)
            return withUnsafeBytes(of: packed.littleEndian) { bytes in
                String(decoding: UnsafeRawBufferPointer(rebasing: bytes.prefix(count)), as: UTF8.self)
            }
        }

        static func == (lhs: Tag, rhs: Tag) -> Bool {
            guard lhs.packed == rhs.packed else { return false }
            guard let left = lhs.long, let right = rhs.long else { return true }
            return left.hasSameUTF8(as: right)
        }
    }

    /// The attributes in the order they were first set.
    private(set) var entries: ContiguousArray<(tag: Tag, value: AttributeValue)> = []

    /// An empty table.
    init() {}

    /// An empty table with room for `capacity` attributes.
    init(minimumCapacity capacity: Int) {
        entries.reserveCapacity(capacity)
    }

    init(dictionaryLiteral elements: (String, AttributeValue)...) {
        entries.reserveCapacity(elements.count)
        for (name, value) in elements { self[name] = value }
    }

    /// How many attributes the table holds.
    var count: Int { entries.count }

    /// Whether the table holds no attribute.
    var isEmpty: Bool { entries.isEmpty }

    /// The tags, as strings.
    var keys: [String] { entries.map { $0.tag.name } }

    /// The value of `tag`; setting `nil` removes it.
    subscript(tag: Tag) -> AttributeValue? {
        get {
            for entry in entries where entry.tag == tag { return entry.value }
            return nil
        }
        set {
            for index in entries.indices where entries[index].tag == tag {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
                return
            }
            if let newValue { entries.append((tag, newValue)) }
        }
    }

    /// The value of the attribute named `name` (`"svce"`); setting `nil` removes it.
    subscript(name: String) -> AttributeValue? {
        get { self[Tag(name)] }
        set { self[Tag(name)] = newValue }
    }

    /// Every attribute as `(key: tag, value:)`, in the order they were first set (callers that
    /// need an order sort).
    func makeIterator() -> some IteratorProtocol<(key: String, value: AttributeValue)> {
        entries.lazy.map { (key: $0.tag.name, value: $0.value) }.makeIterator()
    }

    /// Equal when both hold the same tags with equal values, in any order (as dictionaries).
    static func == (lhs: AttributeTable, rhs: AttributeTable) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for entry in lhs.entries {
            guard let other = rhs[entry.tag], other == entry.value else { return false }
        }
        return true
    }
}
#endif
