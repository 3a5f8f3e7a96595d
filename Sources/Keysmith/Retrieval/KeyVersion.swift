/// A key version, compared numerically segment by segment.
///
/// Versions are dotted numbers such as `2024.06.01` or `3`. They compare the way people
/// read them, not the way strings sort (seed 000, 5.3):
///
/// ```swift
/// KeyVersion("2024.7.1") > KeyVersion("2024.6.30")    // true (a string compare says false)
/// KeyVersion("2024.07.01") == KeyVersion("2024.7.1")  // true: leading zeros do not count
/// KeyVersion("2024.7") == KeyVersion("2024.7.0")      // true: missing segments are 0
/// ```
///
/// A version that is not made of numbers (`builtin`, `env`, `unknown`, `compiled`, or any
/// other label) sorts below every numeric version; two such labels compare as strings. So
/// a versioned keychain copy always counts as newer than an unversioned fallback.
public struct KeyVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The version as written.
    public let rawValue: String
    /// The numeric segments with trailing zeros removed, or `nil` when the version is a label.
    public let numericSegments: [UInt64]?

    /// The version given to config-file entries that state none.
    public static let builtin = KeyVersion("builtin")
    /// The version given to environment-variable keys.
    public static let environment = KeyVersion("env")
    /// The version given to keychain items that carry no version.
    public static let unknown = KeyVersion("unknown")

    /// Creates a version from its text.
    ///
    /// Any string is accepted: dotted numbers (`2024.06.01`, `1.2`, `7`) compare
    /// numerically; anything else is a label that sorts below every number.
    /// - Parameter rawValue: The version text, for example `"2024.06.01"`.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
        self.numericSegments = KeyVersion.parse(rawValue)
    }

    /// Whether the version is made of numbers (and so compares numerically).
    public var isNumeric: Bool { numericSegments != nil }

    /// The version as written.
    public var description: String { rawValue }

    /// Orders two versions: numeric versions segment by segment (missing segments are 0),
    /// labels below every number, labels among themselves as strings.
    /// - Parameters:
    ///   - lhs: A version.
    ///   - rhs: Another version.
    /// - Returns: `true` when `lhs` is older than `rhs`.
    public static func < (lhs: KeyVersion, rhs: KeyVersion) -> Bool {
        switch (lhs.numericSegments, rhs.numericSegments) {
        case (let left?, let right?):
            let count = max(left.count, right.count)
            for index in 0..<count {
                let l = index < left.count ? left[index] : 0
                let r = index < right.count ? right[index] : 0
                if l != r { return l < r }
            }
            return false
        case (nil, _?):
            return true
        case (_?, nil):
            return false
        case (nil, nil):
            return lhs.rawValue < rhs.rawValue
        }
    }

    /// Whether two versions are the same version (`2024.07.01 == 2024.7.1`).
    /// - Parameters:
    ///   - lhs: A version.
    ///   - rhs: Another version.
    /// - Returns: `true` when neither is older than the other.
    public static func == (lhs: KeyVersion, rhs: KeyVersion) -> Bool {
        switch (lhs.numericSegments, rhs.numericSegments) {
        case (let left?, let right?): return left == right
        case (nil, nil): return lhs.rawValue == rhs.rawValue
        default: return false
        }
    }

    /// Hashes the version consistently with `==` (numeric segments, or the label).
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        if let numericSegments {
            hasher.combine(true)
            hasher.combine(numericSegments)
        } else {
            hasher.combine(false)
            hasher.combine(rawValue)
        }
    }

    /// Splits `text` into numeric segments; `nil` when any segment is not a plain decimal
    /// number that fits 64 bits. Trailing zero segments are dropped so that `2024.7` and
    /// `2024.7.0` are equal and hash alike.
    private static func parse(_ text: String) -> [UInt64]? {
        guard !text.isEmpty else { return nil }
        var segments: [UInt64] = []
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard !part.isEmpty, part.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = UInt64(part)
            else { return nil }
            segments.append(value)
        }
        while segments.count > 1, segments.last == 0 { segments.removeLast() }
        return segments
    }
}
