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
/// - The serialized text must not exceed the size limit (characters).
enum ValueCoding {
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
        let size = text.count
        if size > sizeLimit {
            throw .limitExceeded(key: key, namespace: namespace, size: size, limit: sizeLimit)
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
