#if !canImport(Security)
import Foundation

/// A stored attribute value, after coercion (see ``AttributeKind``).
enum AttributeValue: Hashable, Sendable {
    case string(String)
    case data(Data)
    case number(Int64)
    /// Seconds since 2001-01-01 00:00:00 UTC (CFAbsoluteTime), as Apple stores dates.
    case date(Double)
    /// A ``SecAccessControl`` in stored form.
    case accessControl(protection: String, flags: UInt)

    /// The bytes that equality matching compares (Apple's `copyData` rule): a string's
    /// UTF-8, data as is, a number as a 4-byte little-endian int32 when it fits (else 8
    /// bytes). Matching is exact and byte-wise: `"bob"` and `Data("bob".utf8)` match.
    var matchBytes: Data {
        switch self {
        case .string(let string): return Data(string.utf8)
        case .data(let data): return data
        case .number(let number):
            if let small = Int32(exactly: number) {
                return withUnsafeBytes(of: small.littleEndian) { Data($0) }
            }
            return withUnsafeBytes(of: number.littleEndian) { Data($0) }
        case .date(let seconds):
            return withUnsafeBytes(of: seconds.bitPattern.littleEndian) { Data($0) }
        case .accessControl(let protection, let flags):
            return Data(protection.utf8) + withUnsafeBytes(of: UInt64(flags).littleEndian) { Data($0) }
        }
    }

    /// Equality is byte-exact (strings by their UTF-8), never Swift's canonical
    /// equivalence: the keychain must not treat `é` and `e` + U+0301 as the same name.
    static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a.hasSameUTF8(as: b)
        case (.data(let a), .data(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.date(let a), .date(let b)): return a.bitPattern == b.bitPattern
        case (.accessControl(let p1, let f1), .accessControl(let p2, let f2)): return p1.hasSameUTF8(as: p2) && f1 == f2
        default: return false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let string): hasher.combine(0); hasher.combine(Data(string.utf8))
        case .data(let data): hasher.combine(1); hasher.combine(data)
        case .number(let number): hasher.combine(2); hasher.combine(number)
        case .date(let seconds): hasher.combine(3); hasher.combine(seconds.bitPattern)
        case .accessControl(let protection, let flags): hasher.combine(4); hasher.combine(Data(protection.utf8)); hasher.combine(flags)
        }
    }

    /// Which case the value is, for comparisons across kinds.
    var kind: Int {
        switch self {
        case .string: return 0
        case .data: return 1
        case .number: return 2
        case .date: return 3
        case .accessControl: return 4
        }
    }

    /// Appends ``matchBytes`` to `bytes` without building an intermediate `Data`.
    func appendMatchBytes(to bytes: inout [UInt8]) {
        switch self {
        case .string(let string): bytes.append(contentsOf: string.utf8)
        case .data(let data): bytes.append(contentsOf: data)
        case .number(let number):
            if let small = Int32(exactly: number) {
                withUnsafeBytes(of: small.littleEndian) { bytes.append(contentsOf: $0) }
            } else {
                withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) }
            }
        default: bytes.append(contentsOf: matchBytes)
        }
    }

    /// The Foundation object handed back to callers in attribute dictionaries.
    var object: Any {
        switch self {
        case .string(let string): return string
        case .data(let data): return data
        case .number(let number): return NSNumber(value: number)
        case .date(let seconds): return Date(timeIntervalSinceReferenceDate: seconds)
        case .accessControl(let protection, let flags):
            return SecAccessControl(protection: protection, flags: SecAccessControlCreateFlags(rawValue: flags))
        }
    }
}
#endif
