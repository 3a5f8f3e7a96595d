import Foundation

/// Turns a keys file, or environment variables, into Swift source that compiles the keys
/// into the binary, obfuscated: the logic behind `keysmith generate` and the
/// `KeysmithGeneratePlugin` build-tool plugin.
///
/// The keys file is a dictionary of environments, each a dictionary of entries in the
/// same forms as a config file (``ConfigFileKeySource``), with an optional `version` at
/// either level:
///
/// ```json
/// {
///   "version": "2024.06.01",
///   "debug":   { "api_key": "debug-key-text" },
///   "release": { "api_key": { "value": "cmVsZWFzZS1rZXk=", "version": "2024.07.01" } }
/// }
/// ```
///
/// The output has one type per environment (`CompiledKeysDebug`, `CompiledKeysRelease`,
/// ...) holding a ``CompiledKeySource``, and a `CompiledKeys` type that finds them by tag.
/// The `debug` environment is compiled only under `#if DEBUG` and `release` only under
/// `#if !DEBUG`, so a release binary does not carry debug keys. Any other environment
/// (`staging`, `dev`, `prod`, ...) is compiled only under `#if KEYSMITH_KEYS_<TAG>`
/// (``compilationCondition(for:)``): its keys are in no binary unless that build defines
/// the flag (`swiftSettings: [.define("KEYSMITH_KEYS_STAGING")]`, or Xcode's Active
/// Compilation Conditions for the staging configuration).
///
/// Every generation draws a fresh random salt per environment and a nonce per entry, and
/// XORs the bytes with a stream made from them.
///
/// - Important: This is **obfuscation, not secrecy**: the salt is in the same binary.
///   Generate only non-sensitive keys; keep sensitive keys in the keychain. Do not commit
///   generated files that hold real keys.
public enum CompiledKeyGenerator {
    /// One key to compile. Its `description`, `debugDescription` and mirror (`dump`) never
    /// show the bytes.
    public struct Key: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The key name.
        public var name: String
        /// The key version.
        public var version: String
        /// The key bytes.
        public var data: Data

        /// Creates a key to compile.
        /// - Parameters:
        ///   - name: The key name.
        ///   - version: The key version (default `builtin`).
        ///   - data: The key bytes.
        public init(name: String, version: String = KeyVersion.builtin.rawValue, data: Data) {
            self.name = name
            self.version = version
            self.data = data
        }

        /// `api_key@2024.06.01`; never the bytes.
        public var description: String { "\(name)@\(version)" }
        /// The same as ``description``.
        public var debugDescription: String { description }
        /// Name, version and length; never the bytes.
        public var customMirror: Mirror {
            Mirror(self, children: ["name": name, "version": version, "byteCount": data.count], displayStyle: .struct)
        }
    }

    /// The keys of one environment. Its descriptions list key names and versions only.
    public struct Environment: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The environment tag (`debug`, `release`, `staging`, ...).
        public var tag: String
        /// Its keys.
        public var keys: [Key]

        /// Creates an environment table.
        /// - Parameters:
        ///   - tag: The environment tag.
        ///   - keys: Its keys.
        public init(tag: String, keys: [Key]) {
            self.tag = tag
            self.keys = keys
        }

        /// `Environment(debug: api_key@builtin, seed@7)`; never the bytes.
        public var description: String {
            "Environment(\(tag): \(keys.map(\.description).joined(separator: ", ")))"
        }
        /// The same as ``description``.
        public var debugDescription: String { description }
    }

    /// How the generated source looks.
    public struct Options: Sendable {
        /// The access level of the generated types: `internal` (default) or `public`.
        public var accessLevel: String
        /// The prefix of the generated type names (default `CompiledKeys`).
        public var typeNamePrefix: String
        /// The module to import for ``CompiledKeySource`` (default `Keysmith`; `nil` for none).
        public var importModule: String?
        /// Whether tables are wrapped in compilation conditions: `debug` in `#if DEBUG`,
        /// `release` in `#if !DEBUG`, any other tag in `#if KEYSMITH_KEYS_<TAG>`. When off,
        /// every environment is compiled into every build (the output says so in a warning).
        public var conditionalCompilation: Bool
        /// The salt length in bytes (default 32).
        public var saltLength: Int
        /// What produced the input, for the header comment (a file name, never contents).
        public var inputDescription: String

        /// Creates options.
        /// - Parameters:
        ///   - accessLevel: `internal` or `public`.
        ///   - typeNamePrefix: The prefix of the generated type names.
        ///   - importModule: The module that defines `CompiledKeySource`.
        ///   - conditionalCompilation: Wrap each table in its compilation condition.
        ///   - saltLength: The salt length in bytes.
        ///   - inputDescription: What produced the input, for the header comment.
        public init(
            accessLevel: String = "internal", typeNamePrefix: String = "CompiledKeys",
            importModule: String? = "Keysmith", conditionalCompilation: Bool = true, saltLength: Int = 32,
            inputDescription: String = "a keys file"
        ) {
            self.accessLevel = accessLevel
            self.typeNamePrefix = typeNamePrefix
            self.importModule = importModule
            self.conditionalCompilation = conditionalCompilation
            self.saltLength = saltLength
            self.inputDescription = inputDescription
        }
    }

    // MARK: Input

    /// Reads a keys file: a dictionary of environment tags to entry dictionaries.
    /// - Parameters:
    ///   - data: The file's bytes (JSON or property list).
    ///   - path: The file's name, for error messages.
    ///   - format: The format; `nil` recognises it by content.
    /// - Returns: The environments, sorted by tag.
    /// - Throws: ``KeyRetrievalError/malformedFile(path:key:reason:)`` when the file is not a
    ///   valid keys file.
    public static func environments(
        fromKeysFile data: Data, path: String, format: ConfigFileKeySource.Format? = nil
    ) throws -> [Environment] {
        let format = format ?? ConfigFileKeySource.sniff(data)
        let object = try ConfigFileKeySource.deserialize(data, format: format, path: path)
        guard let top = object as? [String: Any] else {
            throw KeyRetrievalError.malformedFile(
                path: path, key: nil, reason: "the top level must be a dictionary of environment tags")
        }
        var defaultVersion: String?
        if let version = top["version"] {
            guard let text = version as? String, !text.isEmpty else {
                throw KeyRetrievalError.malformedFile(path: path, key: "version", reason: "version must be a string")
            }
            defaultVersion = text
        }
        var result: [Environment] = []
        for tag in top.keys.sorted() where tag != "version" {
            guard let entries = top[tag] as? [String: Any] else {
                throw KeyRetrievalError.malformedFile(
                    path: path, key: tag,
                    reason: "each top-level key is an environment tag whose value is a dictionary of keys")
            }
            let parsed = try ConfigFileKeySource.parseEntries(
                entries, path: "\(path) [\(tag)]", defaultVersion: defaultVersion)
            result.append(
                Environment(tag: tag, keys: parsed.map { Key(name: $0.name, version: $0.version, data: $0.data) }))
        }
        guard !result.isEmpty else {
            throw KeyRetrievalError.malformedFile(path: path, key: nil, reason: "the file names no environment")
        }
        return result
    }

    /// Collects keys from environment variables named `PREFIX_NAME` (name lower-cased),
    /// for CI jobs that inject keys as variables.
    /// - Parameters:
    ///   - variables: The variables (for example `ProcessInfo.processInfo.environment`).
    ///   - prefix: The prefix, such as `KEYSMITH_KEY` (a trailing `_` is optional).
    ///   - tag: The environment tag to file them under.
    ///   - version: The version to give them (default `builtin`).
    /// - Returns: The environment table (possibly with no keys).
    public static func environment(
        fromVariables variables: [String: String], prefix: String, tag: String,
        version: String = KeyVersion.builtin.rawValue
    ) -> Environment {
        let source = EnvironmentKeySource(prefix: prefix, environment: variables)
        let keys = source.identifiers().flatMap { name in
            source.lookup(name).map { Key(name: name, version: version, data: $0.data) }
        }
        return Environment(tag: tag, keys: keys)
    }

    // MARK: Output

    /// Generates Swift source with a fresh random salt (the system random generator).
    /// - Parameters:
    ///   - environments: The environments to compile.
    ///   - options: How the source looks.
    /// - Returns: The Swift source text.
    /// - Throws: ``KeyRetrievalError/malformedFile(path:key:reason:)`` when two environment
    ///   tags map to the same type name or an option is invalid.
    public static func generateSource(_ environments: [Environment], options: Options = Options()) throws -> String {
        var generator = SystemRandomNumberGenerator()
        return try generateSource(environments, options: options, using: &generator)
    }

    /// Generates Swift source, drawing salts and nonces from `generator` (tests pass a
    /// seeded generator for reproducible output).
    /// - Parameters:
    ///   - environments: The environments to compile.
    ///   - options: How the source looks.
    ///   - generator: The random number generator.
    /// - Returns: The Swift source text.
    /// - Throws: ``KeyRetrievalError/malformedFile(path:key:reason:)`` when two environment
    ///   tags map to the same type name or an option is invalid.
    public static func generateSource(
        _ environments: [Environment], options: Options = Options(), using generator: inout some RandomNumberGenerator
    ) throws -> String {
        guard options.accessLevel == "internal" || options.accessLevel == "public" else {
            throw KeyRetrievalError.malformedFile(
                path: options.inputDescription, key: nil, reason: "access level must be \"internal\" or \"public\"")
        }
        guard isIdentifier(options.typeNamePrefix), options.saltLength > 0 else {
            throw KeyRetrievalError.malformedFile(
                path: options.inputDescription, key: nil,
                reason: "the type name prefix must be a Swift identifier and the salt length positive")
        }
        let access = options.accessLevel
        let sorted = environments.sorted { $0.tag < $1.tag }
        var typeNames: [String: String] = [:]
        for environment in sorted {
            let name = options.typeNamePrefix + typeSuffix(environment.tag)
            if let other = typeNames.first(where: { $0.value == name }) {
                throw KeyRetrievalError.malformedFile(
                    path: options.inputDescription, key: environment.tag,
                    reason:
                        "environments \"\(other.key)\" and \"\(environment.tag)\" both become type \(name); rename one")
            }
            typeNames[environment.tag] = name
        }

        var out = """
            // Generated by `keysmith generate` from \(options.inputDescription.split(whereSeparator: \.isNewline).joined(separator: " ")). Do not edit.
            //
            // The keys below are obfuscated (XOR with a random salt drawn at generation time).
            // Obfuscation is not secrecy: anyone with this binary can recover them. Only
            // non-sensitive keys belong here; keep sensitive keys in the keychain. Do not commit
            // this file if it holds real keys.

            """
        let custom = sorted.filter { isCustomTag($0.tag) }
        if options.conditionalCompilation, !custom.isEmpty {
            out += "//\n"
            out += "// WARNING: custom environments are compiled only when their flag is defined; define it\n"
            out += "// only in the builds that should carry those keys (never in App Store builds):\n"
            for environment in custom {
                let flag = compilationCondition(for: environment.tag)
                out += "//   \(environment.tag.split(whereSeparator: \.isNewline).joined(separator: " ")): "
                out += "\(flag)  (swiftSettings: [.define(\"\(flag)\")], or Xcode's Active Compilation Conditions)\n"
            }
        } else if !custom.isEmpty {
            out += "//\n"
            out += "// WARNING: conditional compilation is off: every environment below, including\n"
            out += "// \(custom.map { $0.tag.split(whereSeparator: \.isNewline).joined(separator: " ") }.joined(separator: ", ")), "
            out += "is compiled into debug AND release binaries.\n"
        }
        if let module = options.importModule { out += "import \(module)\n" }
        for environment in sorted {
            let typeName = typeNames[environment.tag]!
            let salt = randomBytes(options.saltLength, using: &generator)
            let condition = options.conditionalCompilation ? compilationCondition(environment.tag) : nil
            out += "\n"
            if let condition { out += "#if \(condition)\n" }
            out += "/// Compiled keys for the \(literal(environment.tag)) environment (obfuscated, not secret).\n"
            out += "\(access) enum \(typeName) {\n"
            out += "    /// The key source for this environment.\n"
            out += "    \(access) static let source = CompiledKeySource(\n"
            out += "        environmentTag: \(literal(environment.tag)),\n"
            out += "        salt: \(byteArray(salt, indent: 8)),\n"
            out += "        entries: ["
            let keys = environment.keys.sorted { ($0.name, $0.version) < ($1.name, $1.version) }
            if keys.isEmpty { out += ":" }
            out += "\n"
            for key in keys {
                let nonce = randomBytes(8, using: &generator)
                let bytes = CompiledKeySource.transform(Array(key.data), salt: salt, nonce: nonce)
                out += "            CompiledKeySource.Entry(\n"
                out += "                name: \(literal(key.name)), version: \(literal(key.version)),\n"
                out += "                nonce: \(byteArray(nonce, indent: 16)),\n"
                out += "                bytes: \(byteArray(bytes, indent: 16))),\n"
            }
            out += "        ]\n"
            out += "    )\n"
            out += "}\n"
            if condition != nil { out += "#endif\n" }
        }
        out += """

            /// The compiled key sources of this build, by environment tag.
            \(access) enum \(options.typeNamePrefix) {
                /// The sources compiled into this build, by environment tag.
                \(access) static let sources: [String: CompiledKeySource] = {
                    var sources: [String: CompiledKeySource] = [:]

            """
        for environment in sorted {
            let condition = options.conditionalCompilation ? compilationCondition(environment.tag) : nil
            if let condition { out += "        #if \(condition)\n" }
            out += "        sources[\(literal(environment.tag))] = \(typeNames[environment.tag]!).source\n"
            if condition != nil { out += "        #endif\n" }
        }
        out += """
                    return sources
                }()

                /// The source for an environment tag, if that environment is compiled into this build.
                /// - Parameter environmentTag: The tag, such as `debug` or `release`.
                /// - Returns: The source, or `nil`.
                \(access) static func source(for environmentTag: String) -> CompiledKeySource? {
                    sources[environmentTag]
                }
            }

            """
        return out
    }

    /// The obfuscated sources, exactly as the generated code would build them (used by
    /// tests and by tools that embed keys without generating code).
    /// - Parameters:
    ///   - environments: The environments.
    ///   - saltLength: The salt length in bytes.
    ///   - generator: The random number generator.
    /// - Returns: One source per environment, by tag.
    public static func makeSources(
        _ environments: [Environment], saltLength: Int = 32, using generator: inout some RandomNumberGenerator
    ) -> [String: CompiledKeySource] {
        var result: [String: CompiledKeySource] = [:]
        for environment in environments {
            let salt = randomBytes(max(1, saltLength), using: &generator)
            let entries = environment.keys.map { key -> CompiledKeySource.Entry in
                let nonce = randomBytes(8, using: &generator)
                return .init(
                    name: key.name, version: key.version, nonce: nonce,
                    bytes: CompiledKeySource.transform(Array(key.data), salt: salt, nonce: nonce))
            }
            result[environment.tag] = CompiledKeySource(environmentTag: environment.tag, salt: salt, entries: entries)
        }
        return result
    }

    // MARK: Helpers

    private static func randomBytes(_ count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The compilation condition an environment's table is wrapped in: `DEBUG` for
    /// `debug`, `!DEBUG` for `release`, and `KEYSMITH_KEYS_<TAG>` (the tag upper-cased, other
    /// characters as `_`: `staging-eu` → `KEYSMITH_KEYS_STAGING_EU`) for any other tag, so a
    /// custom environment's keys are in a binary only when the build defines that flag.
    /// - Parameter tag: The environment tag.
    /// - Returns: The condition, as written after `#if`.
    public static func compilationCondition(for tag: String) -> String {
        switch tag.lowercased() {
        case "debug": return "DEBUG"
        case "release": return "!DEBUG"
        default: return "KEYSMITH_KEYS_" + conditionSuffix(tag)
        }
    }

    private static func compilationCondition(_ tag: String) -> String? {
        compilationCondition(for: tag)
    }

    /// `staging` → `STAGING`, `eu-west` → `EU_WEST`, `ci.2` → `CI_2`.
    static func conditionSuffix(_ tag: String) -> String {
        let words = tag.split(whereSeparator: { !($0.isLetter || $0.isNumber) || !$0.isASCII })
        let result = words.map { $0.uppercased() }.joined(separator: "_")
        return result.isEmpty ? "UNNAMED" : result
    }

    /// Whether a tag is a custom environment (neither `debug` nor `release`).
    static func isCustomTag(_ tag: String) -> Bool {
        !["debug", "release"].contains(tag.lowercased())
    }

    /// `debug` → `Debug`, `staging-eu` → `StagingEu`, `2fa` → `_2fa`.
    static func typeSuffix(_ tag: String) -> String {
        let words = tag.split(whereSeparator: { !($0.isLetter || $0.isNumber) || !$0.isASCII })
        var result = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        if result.isEmpty { result = "Unnamed" }
        if let first = result.first, first.isNumber { result = "_" + result }
        return result
    }

    private static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic)
        else {
            return false
        }
        return text.unicodeScalars.allSatisfy {
            $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
        }
    }

    /// A Swift string literal for any text (escapes quotes, backslashes, control characters).
    static func literal(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || !scalar.isASCII:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `[0x01, 0x02]`; longer arrays wrap every 16 bytes, indented by `indent` spaces.
    private static func byteArray(_ bytes: [UInt8], indent: Int) -> String {
        let hex = bytes.map { "0x" + (($0 < 16) ? "0" : "") + String($0, radix: 16) }
        guard hex.count > 16 else { return "[" + hex.joined(separator: ", ") + "]" }
        let pad = String(repeating: " ", count: indent)
        let rows = stride(from: 0, to: hex.count, by: 16).map { start in
            pad + "    " + hex[start..<min(start + 16, hex.count)].joined(separator: ", ") + ","
        }
        return "[\n" + rows.joined(separator: "\n") + "\n" + pad + "]"
    }
}
