import Foundation

/// Keys from environment variables: for debugging and CI, never for production secrets.
///
/// A lookup of `name` reads the variable `name` exactly, then `PREFIX_NAME` (the prefix,
/// an underscore, and the name upper-cased):
///
/// ```swift
/// // API_KEY=... or XY_API_KEY=... in the Xcode scheme or the CI job
/// let source = EnvironmentKeySource(prefix: "XY")
/// source.lookup("api_key")  // reads "api_key", then "XY_API_KEY"
/// ```
///
/// The value is the key's UTF-8 text; empty variables count as absent. Every key from
/// this source has version `env`. The variables are read once, when the source is
/// created.
///
/// Its `description`, `debugDescription` and mirror (`dump`) show the prefix and how many
/// variables it holds, never a value: the process environment holds more than keys (tokens,
/// passwords), and printing the source must not print them.
///
/// - Note: ``KeyRetriever`` consults this source in debug builds only, unless the app
///   allows it in release (`allowsEnvironmentInRelease`). On iOS devices environment
///   variables exist only when the app is launched from Xcode.
public struct EnvironmentKeySource: KeySource, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// Always ``KeySourceKind/environment``.
    public var kind: KeySourceKind { .environment }
    /// `Environment`.
    public var sourceDescription: String { "Environment" }
    /// The prefix for the second spelling (`XY` reads `XY_API_KEY`), without the trailing
    /// underscore; `nil` for none.
    public let prefix: String?

    private let variables: [String: String]

    /// Creates a source over a set of environment variables.
    /// - Parameters:
    ///   - prefix: The prefix of the upper-cased spelling, such as `XY` (a trailing `_` is
    ///     optional); `nil` reads exact names only.
    ///   - environment: The variables (default: this process's environment, read now).
    ///     Tests pass a dictionary instead of changing the process environment.
    public init(prefix: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        var trimmed = prefix
        while let value = trimmed, value.hasSuffix("_") { trimmed = String(value.dropLast()) }
        self.prefix = (trimmed?.isEmpty ?? true) ? nil : trimmed
        self.variables = environment
    }

    /// `EnvironmentKeySource(prefix: XY, 42 variables, 2 prefixed)`: never a value.
    public var description: String {
        "EnvironmentKeySource(prefix: \(prefix ?? "none"), \(variables.count) variables, "
            + "\(prefixedVariableCount) prefixed)"
    }

    /// The same as ``description``: never a value.
    public var debugDescription: String { description }

    /// The prefix and counts only; the variables (and their values) are not children.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "prefix": prefix as Any, "variableCount": variables.count, "prefixedVariableCount": prefixedVariableCount,
            ], displayStyle: .struct)
    }

    private var prefixedVariableCount: Int {
        guard let prefix else { return 0 }
        return variables.keys.reduce(0) { $0 + ($1.hasPrefix(prefix + "_") ? 1 : 0) }
    }

    /// The variable names tried for `name`: the name, then `PREFIX_NAME`.
    /// - Parameter name: A key name.
    /// - Returns: One or two variable names.
    public func variableNames(for name: String) -> [String] {
        guard let prefix else { return [name] }
        let prefixed = "\(prefix)_\(name.uppercased())"
        return prefixed == name ? [name] : [name, prefixed]
    }

    /// The key stored under `name` (exact variable, then the prefixed one).
    /// - Parameter name: The key name.
    /// - Returns: One record with version `env`, or none.
    public func lookup(_ name: String) -> [KeyInfo] {
        guard !name.isEmpty else { return [] }
        for variable in variableNames(for: name) {
            if let value = variables[variable], !value.isEmpty {
                return [
                    KeyInfo(
                        identifier: name, matchedName: name, version: KeyVersion.environment.rawValue,
                        data: Data(value.utf8), source: .environment, sourceDescription: sourceDescription,
                        location: "environment variable \(variable)")
                ]
            }
        }
        return []
    }

    /// The keys this source can name: with a prefix, every non-empty `PREFIX_NAME`
    /// variable as `name` (lower-cased); without a prefix, none (the process environment
    /// holds far more than keys, so it cannot be enumerated honestly).
    /// - Returns: The names, sorted.
    public func identifiers() -> [String] {
        guard let prefix else { return [] }
        let head = prefix + "_"
        return variables.compactMap { name, value -> String? in
            guard name.hasPrefix(head), name.count > head.count, !value.isEmpty else { return nil }
            return String(name.dropFirst(head.count)).lowercased()
        }.sorted()
    }
}
