import Foundation

/// The serialization rules of ``SecureStore``, in one place:
///
/// - `nil` (an empty `Optional`, or a value that encodes to JSON `null`) is rejected:
///   delete with `remove` instead.
/// - A `String` is stored raw, as its UTF-8 bytes, never JSON-quoted, so values written as
///   plain strings by older code read back unchanged, and reading a `String` returns the
///   stored text as it is.
/// - Anything else is stored as JSON (keys sorted). Reading decodes the JSON; if the data is
///   not JSON, it is read as a raw string value, so a `String`-backed type (a `URL`, a
///   `String` enum) still reads text that older code stored raw.
/// - The serialized text must not exceed the size limit: at most `sizeLimit` characters
///   (user-perceived characters, as `String.count` counts them: an emoji is one), and at most
///   four UTF-8 bytes per character of the limit (``byteLimit(for:)``), so that one
///   "character" of many combining marks cannot carry megabytes.
enum ValueCoding {
    /// The UTF-8 bytes allowed per character of the size limit: the size of the longest
    /// single code point, so text of any script fits in full.
    static let bytesPerCharacter = 4

    /// The most UTF-8 bytes a value may have under a size limit of `sizeLimit` characters.
    /// - Parameter sizeLimit: The size limit, in characters.
    /// - Returns: `sizeLimit` × ``bytesPerCharacter`` (`Int.max` when that overflows).
    static func byteLimit(for sizeLimit: Int) -> Int {
        let (bytes, overflow) = sizeLimit.multipliedReportingOverflow(by: bytesPerCharacter)
        return overflow ? Int.max : bytes
    }

    /// By how much a serialized text is over a size limit.
    enum Excess: Equatable {
        /// More characters than the limit: the number of characters.
        case characters(Int)
        /// More UTF-8 bytes than ``byteLimit(for:)``: the number of bytes.
        case bytes(Int)
    }

    /// By how much `text` is over `sizeLimit`, or `nil` when it fits.
    /// - Parameters:
    ///   - text: The serialized text.
    ///   - sizeLimit: The size limit, in characters.
    /// - Returns: The excess, or `nil`.
    static func excess(of text: String, sizeLimit: Int) -> Excess? {
        // Bytes first: counting the characters of a huge text is the expensive part.
        let bytes = text.utf8.count
        if bytes > byteLimit(for: sizeLimit) { return .bytes(bytes) }
        // A character is at least one byte: a text of no more bytes than the limit fits.
        if bytes <= sizeLimit { return nil }
        let characters = text.count
        return characters > sizeLimit ? .characters(characters) : nil
    }

    /// The bytes to store for `value`.
    static func encode<Value: Encodable>(
        _ value: Value, key: String, namespace: String, sizeLimit: Int
    ) throws(SecureStoreError) -> Data {
        if let optional = value as? any OptionalValue, optional.isNone {
            throw .nilValue(key: key, namespace: namespace)
        }
        let text: String
        if let string = (value as? any OptionalValue)?.wrappedValue as? String ?? value as? String {
            text = string
        } else {
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                let json = try encoder.encode(value)
                text = String(decoding: json, as: UTF8.self)
            } catch {
                throw SecureStoreError(
                    .invalidValue,
                    message: "A value of type \(Value.self) could not be encoded as JSON "
                        + "(\(KeychainStore.summary(of: error))).",
                    key: key, namespace: namespace)
            }
            if text == "null" { throw .nilValue(key: key, namespace: namespace) }
        }
        switch excess(of: text, sizeLimit: sizeLimit) {
        case .characters(let size):
            throw .limitExceeded(key: key, namespace: namespace, size: size, limit: sizeLimit)
        case .bytes(let bytes):
            throw .limitExceeded(
                key: key, namespace: namespace, bytes: bytes, limit: sizeLimit, byteLimit: byteLimit(for: sizeLimit))
        case nil:
            break
        }
        return Data(text.utf8)
    }

    /// The value of type `Value` in `data`.
    static func decode<Value: Decodable>(
        _ type: Value.Type, from data: Data, key: String, namespace: String
    ) throws(SecureStoreError) -> Value {
        if Value.self == String.self || Value.self == String?.self {
            guard let string = String(data: data, encoding: .utf8) else {
                throw SecureStoreError(
                    .decodingFailed, message: "The stored \(data.count) bytes are not UTF-8 text.", key: key,
                    namespace: namespace)
            }
            return string as! Value
        }
        let decoder = JSONDecoder()
        let firstError: any Error
        do {
            return try decoder.decode(type, from: data)
        } catch {
            firstError = error
        }
        // Text stored raw (not JSON) by older code: read it as a JSON string value.
        if let text = String(data: data, encoding: .utf8),
            let quoted = try? JSONEncoder().encode(text),
            let value = try? decoder.decode(type, from: quoted)
        {
            return value
        }
        throw SecureStoreError(
            .decodingFailed,
            message: "The stored value is not a \(Value.self) (\(KeychainStore.summary(of: firstError))).",
            key: key, namespace: namespace)
    }
}

/// Lets generic code see whether a value is an empty `Optional`.
protocol OptionalValue {
    var isNone: Bool { get }
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    var isNone: Bool { self == nil }
    var wrappedValue: Any? { self.map { $0 as Any } }
}
