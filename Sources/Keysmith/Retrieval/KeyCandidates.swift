/// The candidate names tried for one identifier, in order.
///
/// Callers and stores rarely agree on spelling: code asks for `apiKey`, the plist says
/// `api_key`; a test build asks for `apple_pay_secret_test`, the keychain holds
/// `apple_pay_secret`. The retriever therefore tries a short, fixed list of spellings
/// in this order, keeping the first of any duplicates:
///
/// 1. the identifier itself;
/// 2. the identifier without a trailing `_test` or `_prod` (either case), if it had one;
/// 3. the identifier lower-cased;
/// 4. the identifier upper-cased;
/// 5. snake_case turned into camelCase (`api_key` → `apiKey`), or camelCase turned into
///    snake_case (`apiKey` → `api_key`, `userID` → `user_id`).
///
/// ```swift
/// KeyCandidates.names(for: "apiKey")  // ["apiKey", "apikey", "APIKEY", "api_key"]
/// KeyCandidates.names(for: "api")     // ["api", "API"]
/// ```
///
/// The rules are deliberately conservative: no substring matching, no edit distance, no
/// transliteration. A fuzzy match that picks an unrelated entry is how a test key ends up in
/// production. Suffixes are only ever removed from the requested
/// identifier, never added: asking for `api_key` never finds `api_key_test`.
public enum KeyCandidates {
    /// The environment suffixes removed by rule 2, lower-cased.
    public static let environmentSuffixes = ["_test", "_prod"]

    /// The candidate names for `identifier`, in lookup order, without duplicates.
    /// - Parameter identifier: The identifier the caller asked for.
    /// - Returns: The names to try; the first is always `identifier` itself (an empty
    ///   identifier gives an empty list).
    public static func names(for identifier: String) -> [String] {
        var lazy = LazyNames(identifier)
        var index = 0
        while lazy.name(at: index) != nil { index += 1 }
        return lazy.computed
    }

    /// The candidate names of one identifier, in the order of ``names(for:)``, each worked
    /// out only when a lookup first asks for it: a lookup that finds the key under the
    /// identifier itself (the common case) never lowercases, uppercases or converts it.
    struct LazyNames {
        /// The identifier the caller asked for.
        let identifier: String
        /// The names worked out so far, without duplicates.
        private(set) var computed: [String] = []
        /// The next rule to apply (1 to 4; rule 0, the identifier itself, is applied at once).
        private var nextRule = 1

        init(_ identifier: String) {
            self.identifier = identifier
            if !identifier.isEmpty {
                computed.reserveCapacity(5)
                computed.append(identifier)
            }
        }

        /// The candidate at `index` (0 is the identifier itself), or `nil` past the last one.
        mutating func name(at index: Int) -> String? {
            while index >= computed.count {
                guard !identifier.isEmpty, nextRule <= 4 else { return nil }
                let rule = nextRule
                nextRule += 1
                let name: String?
                switch rule {
                case 1: name = KeyCandidates.strippingEnvironmentSuffix(identifier)
                case 2: name = identifier.lowercased()
                case 3: name = identifier.uppercased()
                default: name = KeyCandidates.convertingCase(identifier)
                }
                if let name, !name.isEmpty, !computed.contains(name) { computed.append(name) }
            }
            return computed[index]
        }
    }

    /// The identifier without a trailing `_test` or `_prod` (compared case-insensitively).
    /// - Parameter identifier: An identifier.
    /// - Returns: The identifier without the suffix, or `nil` when it has none (or is only
    ///   the suffix).
    public static func strippingEnvironmentSuffix(_ identifier: String) -> String? {
        let lowered = identifier.lowercased()
        for suffix in environmentSuffixes where lowered.hasSuffix(suffix) {
            let kept = identifier.utf8.count - suffix.utf8.count
            guard kept > 0 else { return nil }
            return String(decoding: identifier.utf8.prefix(kept), as: UTF8.self)
        }
        return nil
    }

    /// Whether `name` ends in `_test` or `_prod` (either case).
    /// - Parameter name: A stored or requested name.
    /// - Returns: `true` when the name carries an environment suffix.
    public static func hasEnvironmentSuffix(_ name: String) -> Bool {
        strippingEnvironmentSuffix(name) != nil
    }

    /// snake_case → camelCase when the identifier contains an underscore, otherwise
    /// camelCase → snake_case.
    /// - Parameter identifier: An identifier.
    /// - Returns: The converted spelling, or `nil` when the rule does not apply.
    public static func convertingCase(_ identifier: String) -> String? {
        // A Character search (as `split` below reads words), not Foundation's `range(of:)`.
        identifier.contains("_" as Character) ? camelCase(fromSnakeCase: identifier) : snakeCase(fromCamelCase: identifier)
    }

    /// `api_key` → `apiKey`, `API_KEY` → `apiKey`.
    /// - Parameter identifier: A snake_case identifier.
    /// - Returns: The camelCase spelling, or `nil` when there are fewer than two words.
    public static func camelCase(fromSnakeCase identifier: String) -> String? {
        let words = identifier.split(separator: "_", omittingEmptySubsequences: true)
        guard words.count >= 2 else { return nil }
        var result = words[0].lowercased()
        for word in words.dropFirst() {
            result += word.prefix(1).uppercased() + word.dropFirst().lowercased()
        }
        return result
    }

    /// `apiKey` → `api_key`, `APIKey` → `api_key`, `userID` → `user_id`.
    /// - Parameter identifier: A camelCase identifier.
    /// - Returns: The snake_case spelling, or `nil` when the identifier does not mix upper-
    ///   and lower-case letters (so there are no word boundaries to find).
    public static func snakeCase(fromCamelCase identifier: String) -> String? {
        let characters = Array(identifier)
        guard characters.contains(where: \.isUppercase), characters.contains(where: \.isLowercase) else {
            return nil
        }
        var result = ""
        for (index, character) in characters.enumerated() {
            if index > 0, character.isUppercase {
                let previous = characters[index - 1]
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) {
                    result.append("_")
                }
            }
            result += character.lowercased()
        }
        return result == identifier ? nil : result
    }
}
