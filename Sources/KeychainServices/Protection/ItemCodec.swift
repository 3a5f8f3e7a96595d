#if !canImport(Security)
import Foundation

/// The plaintext layout of an item before encryption: its attributes and its secret.
///
/// Layout (version 1): `01`, a 16-bit attribute count, then per attribute a 1-byte tag
/// length, the tag, a 1-byte type and the value (strings and data with a 32-bit length,
/// numbers and dates in 8 bytes, access control as protection + flags); then `00` (no
/// secret), `01` with a 32-bit length and the secret, or `02` with a 32-bit length and the
/// secret sealed by its access control (``AccessControlEnvelope``). All integers
/// little-endian.
/// The buffer is zeroed after use by ``SecretBuffer``.
enum ItemCodec {
    private enum TypeCode: UInt8 {
        case string = 1, data = 2, number = 3, date = 4, accessControl = 5
    }

    /// Encodes `attributes` and `secret` into a zeroing buffer.
    /// - Parameter sealedForAccessControl: Whether `secret` is an ``AccessControlEnvelope``.
    static func encode(attributes: AttributeTable, secret: SecretData?, sealedForAccessControl: Bool = false) -> SecretBuffer {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + (secret?.length ?? 0))
        bytes.append(1)
        appendInteger(UInt16(attributes.count), to: &bytes)
        for (tag, value) in attributes.sorted(by: { $0.key < $1.key }) {
            let tagBytes = Array(tag.utf8)
            bytes.append(UInt8(tagBytes.count))
            bytes.append(contentsOf: tagBytes)
            switch value {
            case .string(let string):
                bytes.append(TypeCode.string.rawValue)
                appendBlob(Array(string.utf8), to: &bytes)
            case .data(let data):
                bytes.append(TypeCode.data.rawValue)
                appendBlob(Array(data), to: &bytes)
            case .number(let number):
                bytes.append(TypeCode.number.rawValue)
                appendInteger(UInt64(bitPattern: number), to: &bytes)
            case .date(let seconds):
                bytes.append(TypeCode.date.rawValue)
                appendInteger(seconds.bitPattern, to: &bytes)
            case .accessControl(let protection, let flags):
                bytes.append(TypeCode.accessControl.rawValue)
                appendBlob(Array(protection.utf8), to: &bytes)
                appendInteger(UInt64(flags), to: &bytes)
            }
        }
        if let secret {
            bytes.append(sealedForAccessControl ? 2 : 1)
            appendInteger(UInt32(secret.length), to: &bytes)
            secret.withUnsafeBytes { bytes.append(contentsOf: $0) }
        } else {
            bytes.append(0)
        }
        let buffer = SecretBuffer(count: bytes.count)
        buffer.withUnsafeMutableBytes { out in
            bytes.withUnsafeBytes { out.copyMemory(from: $0) }
        }
        bytes.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) }
        return buffer
    }

    /// Decodes what ``encode(attributes:secret:)`` wrote.
    /// - Throws: errSecDecode when the bytes are not a valid item (the caller has already
    ///   authenticated them, so this means a bug or a format from a newer version).
    static func decode(
        _ buffer: SecretBuffer
    ) throws -> (attributes: AttributeTable, secret: SecretData?, sealedForAccessControl: Bool) {
        try buffer.withUnsafeBytes { raw in
            var reader = Reader(bytes: raw)
            guard try reader.byte() == 1 else {
                throw KeychainFailure(errSecDecode, "An item was written in an unknown format version.",
                                      recovery: "Use the Keysmith version that wrote this keychain, or a newer one.")
            }
            let count = Int(try reader.integer(UInt16.self))
            var attributes = AttributeTable(minimumCapacity: count)
            for _ in 0..<count {
                let tagLength = Int(try reader.byte())
                let tagBytes = try reader.bytes(tagLength)
                // The keychain's tags are short ASCII: packed without making a string.
                let tag = AttributeTable.Tag(ascii: tagBytes) ?? AttributeTable.Tag(String(decoding: tagBytes, as: UTF8.self))
                guard let type = TypeCode(rawValue: try reader.byte()) else { throw reader.damaged }
                switch type {
                case .string:
                    attributes[tag] = .string(try reader.string(Int(try reader.integer(UInt32.self))))
                case .data:
                    attributes[tag] = .data(Data(try reader.blob()))
                case .number:
                    attributes[tag] = .number(Int64(bitPattern: try reader.integer(UInt64.self)))
                case .date:
                    attributes[tag] = .date(Double(bitPattern: try reader.integer(UInt64.self)))
                case .accessControl:
                    let protection = try reader.string(Int(try reader.integer(UInt32.self)))
                    attributes[tag] = .accessControl(protection: protection, flags: UInt(try reader.integer(UInt64.self)))
                }
            }
            var secret: SecretData?
            let marker = try reader.byte()
            guard marker <= 2 else { throw reader.damaged }
            if marker != 0 {
                secret = SecretData(copying: try reader.blob())
            }
            return (attributes, secret, marker == 2)
        }
    }

    private static func appendInteger<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendBlob(_ blob: [UInt8], to bytes: inout [UInt8]) {
        appendInteger(UInt32(blob.count), to: &bytes)
        bytes.append(contentsOf: blob)
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        var damaged: KeychainFailure { KeychainFailure(errSecDecode, "An item's contents are damaged.") }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw damaged }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
            let size = MemoryLayout<T>.size
            guard offset + size <= bytes.count else { throw damaged }
            let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
            offset += size
            return T(littleEndian: value)
        }

        /// The next `count` bytes, in place (a view of the buffer, not a copy).
        mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer {
            guard count >= 0, offset + count <= bytes.count else { throw damaged }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        }

        /// UTF-8 text (written by ``encode(attributes:secret:)`` from Swift strings, and
        /// authenticated before decoding, so it is valid).
        mutating func string(_ count: Int) throws -> String {
            String(decoding: try bytes(count), as: UTF8.self)
        }

        mutating func blob() throws -> UnsafeRawBufferPointer {
            try bytes(Int(try integer(UInt32.self)))
        }
    }
}
#endif
