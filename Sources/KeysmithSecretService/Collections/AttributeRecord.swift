import Foundation
import Keysmith

/// What the Secret Service keeps of an item beyond the keychain's own attributes (service,
/// account, label, dates), in the item's `kSecAttrGeneric`: the client's lookup attributes and
/// the secret's content type. The engine seals `kSecAttrGeneric` with the rest of the item, so
/// none of it is stored in plaintext.
///
/// Layout: `KSSS1`, then the content type, then a 32-bit count of attributes and each name and
/// value, every string as a 32-bit big-endian length followed by its UTF-8 bytes.
struct AttributeRecord: Equatable {
    static let magic: [UInt8] = Array("KSSS1".utf8)

    var attributes: ItemAttributes
    var contentType: String

    init(attributes: ItemAttributes, contentType: String) {
        self.attributes = attributes
        self.contentType = contentType
    }

    /// The record encoded.
    var encoded: Data {
        var bytes = Self.magic
        func put(_ text: String) {
            let utf8 = Array(text.utf8)
            put32(UInt32(utf8.count))
            bytes += utf8
        }
        func put32(_ value: UInt32) {
            bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]
        }
        put(contentType)
        put32(UInt32(attributes.entries.count))
        for entry in attributes.entries {
            put(entry.name.text)
            put(entry.value.text)
        }
        return Data(bytes)
    }

    /// Decodes a record; `nil` for data that is not one (an item's `kSecAttrGeneric` written by
    /// another program).
    init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.starts(with: Self.magic) else { return nil }
        var offset = Self.magic.count
        func get32() -> UInt32? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        func get() -> String? {
            guard let length = get32().map(Int.init), offset + length <= bytes.count else { return nil }
            defer { offset += length }
            return String(validating: bytes[offset..<offset + length], as: UTF8.self)
        }
        guard let contentType = get(), let count = get32(), count <= UInt32(ItemAttributes.maximumCount) else { return nil }
        var attributes = ItemAttributes()
        for _ in 0..<count {
            guard let name = get(), let value = get() else { return nil }
            attributes[ExactName(name)] = ExactName(value)
        }
        guard offset == bytes.count else { return nil }
        self.attributes = attributes
        self.contentType = contentType
    }
}
