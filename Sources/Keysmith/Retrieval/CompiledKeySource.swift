import Foundation

/// Keys compiled into the binary by `keysmith generate`, obfuscated.
///
/// You do not write this type's initializer yourself: the generator (``CompiledKeyGenerator``,
/// run by `keysmith generate` or the `KeysmithGeneratePlugin` build-tool plugin) turns a keys
/// file into Swift source with one type per environment, each holding a
/// `CompiledKeySource` whose values are XOR-ed with a random salt chosen at generation time:
///
/// ```swift
/// let retriever = KeyRetriever(sources: [
///     KeychainKeySource(service: "com.example.keys"),
///     CompiledKeys.source(for: "debug")!,
/// ])
/// ```
///
/// - Important: This is **obfuscation, not secrecy**. The salt ships in the same binary
///   as the values; anyone who has the app can recover every key (a `strings` dump will
///   not show them, a debugger will). Use compiled keys for environment seeds and
///   non-sensitive keys only; ``KeyPolicy`` treats this source as plaintext.
public struct CompiledKeySource: KeySource, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// One obfuscated version of one key, as written by the generator.
    /// Its descriptions and mirror show the name and version only, never the nonce or bytes.
    public struct Entry: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The key name.
        public let name: String
        /// The key version.
        public let version: String
        /// A per-entry random nonce mixed into the obfuscation.
        public let nonce: [UInt8]
        /// The obfuscated bytes.
        public let bytes: [UInt8]

        /// Creates an entry (generated code calls this).
        /// - Parameters:
        ///   - name: The key name.
        ///   - version: The key version.
        ///   - nonce: The per-entry nonce.
        ///   - bytes: The obfuscated bytes.
        public init(name: String, version: String, nonce: [UInt8], bytes: [UInt8]) {
            self.name = name
            self.version = version
            self.nonce = nonce
            self.bytes = bytes
        }

        /// `api_key@2024.06.01`: never the nonce or the bytes.
        public var description: String { "\(name)@\(version)" }
        /// The same as ``description``.
        public var debugDescription: String { description }
        /// Name, version and length only.
        public var customMirror: Mirror {
            Mirror(self, children: ["name": name, "version": version, "byteCount": bytes.count], displayStyle: .struct)
        }
    }

    /// `CompiledKeySource(debug, 2 keys, 3 versions)`: never the salt, nonces or bytes.
    public var description: String {
        "CompiledKeySource(\(environmentTag), \(entries.count) keys, \(entries.values.reduce(0) { $0 + $1.count }) versions)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The environment tag and the key names with their versions; never the salt, nonces
    /// or bytes.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "environmentTag": environmentTag,
                "keys": entries.keys.sorted().map { name in
                    "\(name.text)@" + (entries[name] ?? []).map(\.version).joined(separator: ",")
                },
            ], displayStyle: .struct)
    }

    /// Always ``KeySourceKind/compiled``.
    public var kind: KeySourceKind { .compiled }
    /// `Compiled(<environment tag>)`.
    public var sourceDescription: String { "Compiled(\(environmentTag))" }
    /// The environment these keys were generated for (`debug`, `release`, ...).
    public let environmentTag: String

    private let salt: [UInt8]
    /// By key name, byte for byte: names that differ only in Unicode form are two keys.
    private let entries: [ExactName: [Entry]]

    /// Creates a source from generated tables (generated code calls this).
    /// - Parameters:
    ///   - environmentTag: The environment the keys belong to.
    ///   - salt: The generation-time random salt.
    ///   - entries: The obfuscated entries.
    public init(environmentTag: String, salt: [UInt8], entries: [Entry]) {
        self.environmentTag = environmentTag
        self.salt = salt
        var table: [ExactName: [Entry]] = [:]
        for entry in entries { table[ExactName(entry.name), default: []].append(entry) }
        self.entries = table
    }

    /// Every version compiled in under exactly `name`, de-obfuscated.
    /// - Parameter name: The exact key name.
    /// - Returns: One record per version; empty when there is none.
    public func lookup(_ name: String) -> [KeyInfo] {
        guard let versions = entries[ExactName(name)] else { return [] }
        return versions.map { entry in
            KeyInfo(
                identifier: name, matchedName: name, version: entry.version,
                data: Data(CompiledKeySource.transform(entry.bytes, salt: salt, nonce: entry.nonce)),
                source: .compiled, sourceDescription: sourceDescription,
                location: "compiled constants (\(environmentTag)), key \"\(name)\"")
        }
    }

    /// Every compiled key name, in UTF-8 byte order.
    /// - Returns: The names.
    public func identifiers() -> [String] {
        entries.keys.sorted().map(\.text)
    }

    /// XOR with a key stream made from the salt, the nonce and the position. The same call
    /// obfuscates and de-obfuscates.
    static func transform(_ input: [UInt8], salt: [UInt8], nonce: [UInt8]) -> [UInt8] {
        var output = input
        for index in output.indices {
            var mask = UInt8(truncatingIfNeeded: index &* 167 &+ 13)
            if !salt.isEmpty { mask ^= salt[index % salt.count] }
            if !nonce.isEmpty { mask ^= nonce[(index &+ Int(nonce[0])) % nonce.count] }
            output[index] ^= mask
        }
        return output
    }
}
