import Keysmith

/// An item's lookup attributes: names and values, each compared by its UTF-8 bytes (never with
/// `String` equality), kept in the byte order of their names, one value per name.
public struct ItemAttributes: Sendable, Equatable {
    /// The attributes, in the UTF-8 byte order of their names.
    public private(set) var entries: [(name: ExactName, value: ExactName)]

    /// At most this many attributes per item (libsecret schemas have at most 32).
    public static let maximumCount = 256
    /// At most this many bytes in one attribute name or value.
    public static let maximumFieldBytes = 16 * 1024
    /// At most this many bytes in all names and values together.
    public static let maximumTotalBytes = 64 * 1024

    /// No attributes.
    public init() { entries = [] }

    /// Attributes from name-value pairs; a later pair with the same name replaces an earlier one.
    public init(_ pairs: [(String, String)]) {
        entries = []
        for (name, value) in pairs { self[ExactName(name)] = ExactName(value) }
    }

    /// The value of `name`, if present.
    public subscript(name: ExactName) -> ExactName? {
        get { entries.first { $0.name == name }?.value }
        set {
            if let index = entries.firstIndex(where: { $0.name == name }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                let position = entries.firstIndex { name < $0.name } ?? entries.count
                entries.insert((name, newValue), at: position)
            }
        }
    }

    /// Whether every attribute of `query` is present here with the same bytes.
    public func matches(_ query: ItemAttributes) -> Bool {
        query.entries.allSatisfy { self[$0.name] == $0.value }
    }

    public static func == (lhs: ItemAttributes, rhs: ItemAttributes) -> Bool {
        lhs.entries.count == rhs.entries.count
            && zip(lhs.entries, rhs.entries).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Attributes from a D-Bus `a{ss}` value, checked against the limits.
    /// - Throws: `invalidArguments` for another type or attributes beyond the limits.
    public init(dbus value: DBusValue) throws(SecretServiceError) {
        guard case .dictionary(let key, let valueType, let pairs) = value.unwrapped, key == "s", valueType == "s" else {
            throw .invalidArguments("attributes are a dictionary of strings to strings (a{ss}).")
        }
        guard pairs.count <= Self.maximumCount else {
            throw .invalidArguments("an item has at most \(Self.maximumCount) attributes; this one has \(pairs.count).")
        }
        var total = 0
        var attributes = ItemAttributes()
        for (name, text) in pairs {
            guard let name = name.text, let text = text.text else { throw .invalidArguments("attributes are strings.") }
            let sizes = (name.utf8.count, text.utf8.count)
            guard sizes.0 <= Self.maximumFieldBytes, sizes.1 <= Self.maximumFieldBytes else {
                throw .invalidArguments(
                    "an attribute name or value has at most \(Self.maximumFieldBytes) bytes; shorten it (attributes are for lookups, the secret holds the data).")
            }
            total += sizes.0 + sizes.1
            guard total <= Self.maximumTotalBytes else {
                throw .invalidArguments("an item's attributes have at most \(Self.maximumTotalBytes) bytes in all.")
            }
            attributes[ExactName(name)] = ExactName(text)
        }
        self = attributes
    }

    /// The attributes as a D-Bus `a{ss}` value.
    public var dbusValue: DBusValue {
        .stringDictionary(entries.map { ($0.name.text, $0.value.text) })
    }
}

/// Labels and collection names travel as strings; this many bytes at most.
let maximumLabelBytes = 4096
