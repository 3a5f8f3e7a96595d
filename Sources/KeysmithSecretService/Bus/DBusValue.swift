/// A D-Bus value as this service reads and writes it: the basic types it uses, byte arrays
/// (`ay`, kept as bytes), arrays, dictionaries, structures and variants.
///
/// Strings keep their bytes exactly as sent (D-Bus strings are UTF-8); code that compares
/// names compares those bytes, never `String` equality.
public indirect enum DBusValue: Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// `ay`.
    case bytes([UInt8])
    /// `a` of any other element type (given as its signature, so empty arrays have a type too).
    case array(elementSignature: String, [DBusValue])
    /// `a{KV}`, entries in order.
    case dictionary(keySignature: String, valueSignature: String, [(DBusValue, DBusValue)])
    /// `(…)`.
    case structure([DBusValue])
    /// `v`.
    case variant(DBusValue)

    /// The value's D-Bus signature.
    public var signature: String {
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .bytes: return "ay"
        case .array(let element, _): return "a" + element
        case .dictionary(let key, let value, _): return "a{" + key + value + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .variant: return "v"
        }
    }

    /// An array of object paths (`ao`).
    public static func objectPaths(_ paths: [String]) -> DBusValue {
        .array(elementSignature: "o", paths.map { .objectPath($0) })
    }

    /// A string-to-string dictionary (`a{ss}`), entries in the order given.
    public static func stringDictionary(_ entries: [(name: String, value: String)]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "s", entries.map { (.string($0.name), .string($0.value)) })
    }

    /// A property dictionary (`a{sv}`).
    public static func properties(_ entries: [(name: String, value: DBusValue)]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v", entries.map { (.string($0.name), .variant($0.value)) })
    }

    /// The string of a `s`, `o` or `g` value.
    public var text: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): return text
        default: return nil
        }
    }

    /// The value inside a variant (or the value itself).
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }
}
