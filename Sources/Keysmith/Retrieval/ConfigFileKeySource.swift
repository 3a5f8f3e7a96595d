import Foundation

/// Keys from a configuration file bundled with the app: a property list or JSON.
///
/// The file is a dictionary from key name to entry. Four entry forms are accepted; the
/// nested form is the recommended one because it carries a version:
///
/// ```xml
/// <key>version</key>      <string>2024.06.01</string>  <!-- file-level default version -->
/// <key>api_key</key>                                    <!-- nested: base64 value + version -->
/// <dict>
///     <key>value</key>    <string>c2stbGl2ZS0xMjM0</string>
///     <key>version</key>  <string>2024.06.01</string>
/// </dict>
/// <key>maps_key</key>     <string>plain text key</string>   <!-- bare string: UTF-8 text -->
/// <key>pinning_seed</key> <data>AAECAw==</data>             <!-- plist data: raw bytes -->
/// ```
///
/// - Nested `{value, version, encoding}`: `value` is **strict, canonical base64** (padded,
///   no whitespace; anything else is an error naming the file and key; it is never
///   silently read as text) unless `encoding` is `"utf8"`; in a plist, `value` may also be
///   `<data>`. `version` is a string (or a whole number, never a boolean). Any other field
///   (a misspelt `encodng`, `Encoding`, `vesion`) is an error.
/// - An array of nested entries: several versions of one key, side by side.
/// - A bare string: the key's UTF-8 text.
/// - A plist `<data>`: the key's raw bytes.
///
/// A top-level `version` string is the file's default version for entries that state
/// none (so `version` cannot be used as a key name); without one, entries get `builtin`.
/// The file is read and checked once, when the source is created: a malformed file is an
/// error then, never a silent miss later.
///
/// - Important: A bundled file is plaintext to anyone who has the app. Keep only
///   non-sensitive keys here (API keys you can rotate, environment flags, certificate
///   fingerprints); mark sensitive keys in ``KeyPolicy`` so they are never served from it.
public struct ConfigFileKeySource: KeySource, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The file format.
    public enum Format: String, Sendable, Hashable {
        /// An XML or binary property list.
        case plist
        /// A JSON object.
        case json
    }

    /// A decoded entry: one version of one key.
    struct Entry: Sendable {
        let name: String
        let version: String
        let data: Data
    }

    /// Always ``KeySourceKind/configFile``.
    public var kind: KeySourceKind { .configFile }
    /// `ConfigFile(plist)` or `ConfigFile(json)`.
    public var sourceDescription: String { "ConfigFile(\(format.rawValue))" }
    /// The file's format.
    public let format: Format
    /// The file's path (or the name given to in-memory content), for messages and audits.
    public let path: String

    /// By key name, byte for byte: names that differ only in Unicode form are two keys.
    private let entries: [ExactName: [Entry]]

    /// Reads and checks a key file.
    /// - Parameters:
    ///   - url: The file. Its extension (`plist` or `json`) picks the format; other
    ///     extensions are recognised by content.
    ///   - format: The format, when the extension does not tell.
    /// - Throws: ``KeyRetrievalError/unreadableFile(path:reason:)`` when the file cannot be
    ///   read; ``KeyRetrievalError/malformedFile(path:key:reason:)`` when its content is not
    ///   a valid key file.
    public init(url: URL, format: Format? = nil) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw KeyRetrievalError.unreadableFile(path: url.path, reason: error.localizedDescription)
        }
        let extensionFormat = Format(rawValue: url.pathExtension.lowercased())
        try self.init(data: data, format: format ?? extensionFormat, path: url.path)
    }

    /// Reads and checks key-file content already in memory.
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - format: The format; `nil` recognises it by content (`{` starts JSON).
    ///   - path: A name for the content in messages and audits (default `"<memory>"`).
    /// - Throws: ``KeyRetrievalError/malformedFile(path:key:reason:)`` when the content is
    ///   not a valid key file.
    public init(data: Data, format: Format? = nil, path: String = "<memory>") throws {
        let format = format ?? ConfigFileKeySource.sniff(data)
        self.format = format
        self.path = path
        let object = try ConfigFileKeySource.deserialize(data, format: format, path: path)
        guard let dictionary = object as? [String: Any] else {
            throw KeyRetrievalError.malformedFile(
                path: path, key: nil, reason: "the top level must be a dictionary of key names to entries")
        }
        // Foundation's parser reads names that differ only in Unicode form as one name with
        // one of the two values; a JSON file is checked against its names as spelt.
        if format == .json {
            let twins = PlaintextKeyNames.twins(in: data, parsed: dictionary, isJSON: true)
            if !twins.isEmpty {
                throw KeyRetrievalError.malformedFile(
                    path: path, key: nil,
                    reason: "the key names \(twins.joined(separator: ", ")) differ only in Unicode form; they are two names, "
                        + "which this file's parser would read as one: give each key one spelling")
            }
        }
        var table: [ExactName: [Entry]] = [:]
        for entry in try ConfigFileKeySource.parseEntries(dictionary, path: path, defaultVersion: nil) {
            table[ExactName(entry.name), default: []].append(entry)
        }
        self.entries = table
    }

    /// Reads the key file `name.plist` (or else `name.json`) from an app bundle.
    /// - Parameters:
    ///   - name: The resource name without extension (default `Keys`).
    ///   - bundle: The bundle (default `Bundle.main`).
    /// - Throws: ``KeyRetrievalError/unreadableFile(path:reason:)`` when neither file is in
    ///   the bundle; ``KeyRetrievalError/malformedFile(path:key:reason:)`` when it is invalid.
    public init(bundleResource name: String = "Keys", bundle: Bundle = .main) throws {
        guard let url = ConfigFileKeySource.bundledURL(name, bundle: bundle) else {
            throw KeyRetrievalError.unreadableFile(
                path: "\(bundle.bundlePath)/\(name).plist",
                reason: "neither \(name).plist nor \(name).json is in the bundle")
        }
        try self.init(url: url)
    }

    /// The URL of `name.plist`, or else `name.json`, in `bundle`, if either exists.
    static func bundledURL(_ name: String, bundle: Bundle) -> URL? {
        bundle.url(forResource: name, withExtension: "plist") ?? bundle.url(forResource: name, withExtension: "json")
    }

    /// Every version stored under exactly `name`.
    /// - Parameter name: The exact key name.
    /// - Returns: One record per version; empty when the file has no such key.
    public func lookup(_ name: String) -> [KeyInfo] {
        guard let versions = entries[ExactName(name)] else { return [] }
        return versions.map { entry in
            KeyInfo(
                identifier: name, matchedName: name, version: entry.version, data: entry.data,
                source: .configFile, sourceDescription: sourceDescription,
                location: "file \(path), key \"\(name)\"")
        }
    }

    /// Every key name in the file, in UTF-8 byte order.
    /// - Returns: The names.
    public func identifiers() -> [String] {
        entries.keys.sorted().map(\.text)
    }

    // MARK: Descriptions (never key bytes)

    /// `ConfigFileKeySource(plist, /path/Keys.plist, 3 keys, 4 versions)`: never a value.
    public var description: String {
        let versions = entries.values.reduce(0) { $0 + $1.count }
        return "ConfigFileKeySource(\(format.rawValue), \(path), \(entries.count) keys, \(versions) versions)"
    }

    /// The same as ``description``: never a value.
    public var debugDescription: String { description }

    /// Format, path and the key names with their versions; never the bytes.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "format": format.rawValue, "path": path,
                "keys": entries.keys.sorted().map { name in
                    "\(name.text)@" + (entries[name] ?? []).map(\.version).joined(separator: ",")
                },
            ], displayStyle: .struct)
    }

    // MARK: Parsing (shared with CompiledKeyGenerator)

    /// JSON when the first non-blank byte is `{`, else a property list.
    static func sniff(_ data: Data) -> Format {
        let first = data.first {
            !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF)
        }
        return first == UInt8(ascii: "{") ? .json : .plist
    }

    /// Decodes the file into Foundation objects, with a clear error on syntax errors.
    static func deserialize(_ data: Data, format: Format, path: String) throws -> Any {
        do {
            switch format {
            case .json:
                return try JSONSerialization.jsonObject(with: data, options: [])
            case .plist:
                return try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            }
        } catch {
            throw KeyRetrievalError.malformedFile(
                path: path, key: nil, reason: "not a valid \(format.rawValue) file (\(error.localizedDescription))")
        }
    }

    /// Decodes a dictionary of entries. A top-level `version` string becomes the default
    /// version of the entries that state none.
    static func parseEntries(_ dictionary: [String: Any], path: String, defaultVersion: String?) throws -> [Entry] {
        var fileVersion = defaultVersion
        if let version = dictionary["version"] {
            fileVersion = try versionText(version, path: path, key: "version")
        }
        var result: [Entry] = []
        for name in dictionary.keys.sorted() where name != "version" {
            guard !name.isEmpty else {
                throw KeyRetrievalError.malformedFile(path: path, key: name, reason: "a key name is empty")
            }
            let value = dictionary[name]!
            let inherited = fileVersion ?? KeyVersion.builtin.rawValue
            if let list = value as? [Any] {
                guard !list.isEmpty else {
                    throw KeyRetrievalError.malformedFile(
                        path: path, key: name, reason: "the list of versions is empty")
                }
                var seen: Set<KeyVersion> = []
                for item in list {
                    guard let nested = item as? [String: Any] else {
                        throw KeyRetrievalError.malformedFile(
                            path: path, key: name,
                            reason: "a list must hold only nested {value, version} dictionaries")
                    }
                    let entry = try parseNested(nested, name: name, path: path, inheritedVersion: inherited)
                    guard seen.insert(KeyVersion(entry.version)).inserted else {
                        throw KeyRetrievalError.malformedFile(
                            path: path, key: name, reason: "version \(entry.version) appears twice")
                    }
                    result.append(entry)
                }
            } else {
                result.append(try parseValue(value, name: name, path: path, inheritedVersion: inherited))
            }
        }
        return result
    }

    private static func parseValue(_ value: Any, name: String, path: String, inheritedVersion: String) throws -> Entry {
        if let nested = value as? [String: Any] {
            return try parseNested(nested, name: name, path: path, inheritedVersion: inheritedVersion)
        }
        if let text = value as? String {
            return try entry(name, inheritedVersion, Data(text.utf8), path: path)
        }
        if let data = value as? Data {
            return try entry(name, inheritedVersion, data, path: path)
        }
        throw KeyRetrievalError.malformedFile(
            path: path, key: name,
            reason: "the value must be a string, data, or a {value, version} dictionary, not \(typeName(value))")
    }

    /// The only fields a nested entry may have (case-sensitive).
    static let nestedFields: Set<String> = ["value", "version", "encoding"]

    private static func parseNested(_ nested: [String: Any], name: String, path: String, inheritedVersion: String)
        throws -> Entry
    {
        // A misspelt field ("encodng", "Encoding", "vesion") would otherwise be ignored and
        // the value silently read the wrong way or under the wrong version.
        if let unknown = nested.keys.sorted().first(where: { !nestedFields.contains($0) }) {
            throw KeyRetrievalError.malformedFile(
                path: path, key: name,
                reason: "the nested entry has an unknown field \"\(unknown)\" (allowed: \"value\", \"version\", "
                    + "\"encoding\"; field names are case-sensitive)")
        }
        let version = try nested["version"].map { try versionText($0, path: path, key: name) } ?? inheritedVersion
        let encoding =
            try nested["encoding"].map { value -> String in
                guard let text = value as? String, ["base64", "utf8", "utf-8"].contains(text.lowercased()) else {
                    throw KeyRetrievalError.malformedFile(
                        path: path, key: name, reason: "encoding must be \"base64\" (the default) or \"utf8\"")
                }
                return text.lowercased()
            } ?? "base64"
        guard let value = nested["value"] else {
            throw KeyRetrievalError.malformedFile(path: path, key: name, reason: "the nested entry has no \"value\"")
        }
        if let data = value as? Data {
            return try entry(name, version, data, path: path)
        }
        guard let text = value as? String else {
            throw KeyRetrievalError.malformedFile(
                path: path, key: name, reason: "\"value\" must be a string or data, not \(typeName(value))")
        }
        if encoding == "base64" {
            // Canonical base64 only: decode, re-encode and compare, so extra padding
            // ("YWJj===="), missing padding, whitespace or stray bits are all errors.
            guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else {
                throw KeyRetrievalError.malformedFile(
                    path: path, key: name,
                    reason: "\"value\" is not canonical base64 (check for missing or extra padding, spaces or "
                        + "line breaks; add \"encoding\": \"utf8\" if the value is plain text)")
            }
            return try entry(name, version, data, path: path)
        }
        return try entry(name, version, Data(text.utf8), path: path)
    }

    private static func entry(_ name: String, _ version: String, _ data: Data, path: String) throws -> Entry {
        guard !data.isEmpty else {
            throw KeyRetrievalError.malformedFile(path: path, key: name, reason: "the value is empty")
        }
        return Entry(name: name, version: version, data: data)
    }

    private static func versionText(_ value: Any, path: String, key: String) throws -> String {
        if let text = value as? String, !text.isEmpty, !text.contains("@") {
            return text
        }
        if !(value is String), !isBoolean(value), let number = value as? NSNumber {
            let double = number.doubleValue
            if double >= 0, double < 1e15, double == double.rounded() {
                return String(Int64(double))
            }
        }
        throw KeyRetrievalError.malformedFile(
            path: path, key: key,
            reason: "version must be a non-empty string without \"@\" such as \"2024.06.01\" (or a whole number; "
                + "not a boolean)")
    }

    /// Whether a decoded value is a boolean (`true`/`false` in JSON, `<true/>` in a plist),
    /// which Foundation also bridges to `NSNumber` and `Int`.
    static func isBoolean(_ value: Any) -> Bool {
        if type(of: value) == Bool.self { return true }
        #if canImport(Darwin)
            if let number = value as? NSNumber, CFGetTypeID(number) == CFBooleanGetTypeID() { return true }
        #endif
        if let number = value as? NSNumber, String(cString: number.objCType) == "c" { return true }
        return false
    }

    private static func typeName(_ value: Any) -> String {
        switch value {
        case is NSNumber: return "a number or boolean"
        case is Date: return "a date"
        case is [Any]: return "a list"
        default: return "\(type(of: value))"
        }
    }
}
