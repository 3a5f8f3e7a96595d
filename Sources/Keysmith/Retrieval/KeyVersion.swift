/// A key version, compared the way people read versions, not the way strings sort.
///
/// The rule, for every scheme people use (dates, semantic versions, `v`-numbers, build
/// numbers):
///
/// 1. A leading `v` or `V` before a digit is ignored: `v2` is `2`.
/// 2. The version is read as segments: runs of digits (numbers) and runs of letters
///    (words). Every other character (`.`, `-`, `_`, `+`, `:`, `/`, a space) only separates
///    segments, so `2024-07-01` and `2024.07.01` are the same version.
/// 3. Segments compare in order, the first difference decides: two numbers by value (any
///    length; leading zeros do not count), two words alphabetically ignoring case, and a
///    number is newer than a word in the same place (`1.0.1` is newer than `1.0.beta`).
/// 4. When one version runs out of segments, it continues with zeros: `2024.7` is
///    `2024.7.0`. A word against nothing is older: `1.0.0-rc.1` is older than `1.0.0`, as
///    pre-releases are.
///
/// ```swift
/// KeyVersion("v10") > KeyVersion("v2")                // true (a string compare says false)
/// KeyVersion("2024.7.1") > KeyVersion("2024.6.30")    // true
/// KeyVersion("2024.07.01") == KeyVersion("2024.7.1")  // true: leading zeros do not count
/// KeyVersion("1.0.0-beta.10") > KeyVersion("1.0.0-beta.2")
/// KeyVersion("1.0.0-rc.1") < KeyVersion("1.0.0")
/// ```
///
/// A version without any digit (`builtin`, `env`, `unknown`, `compiled`, or any other
/// label) sorts below every version that has one; two such labels compare as strings. So
/// a versioned keychain copy always counts as newer than an unversioned fallback. Digits
/// are the ASCII digits `0`-`9`: other scripts' digits (`١٠`, `２`) separate segments, so
/// write versions with ASCII digits. Build metadata after `+` is read like any other
/// segment (`1.0.0+build.7` is a word after `1.0.0`, so it sorts before `1.0.0`); use a
/// number (`1.0.0+7`, after `1.0.0`) or leave it out.
public struct KeyVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// One segment of a version: a number (its digits without leading zeros) or a word
    /// (lowercased).
    enum Segment: Hashable, Sendable {
        case number(String)
        case word(String)
    }

    /// The version as written.
    public let rawValue: String
    /// The numeric segments with trailing zeros removed, when the version is made only of
    /// numbers that each fit 64 bits (`2024.06.01`, `v10`); otherwise `nil`. Comparison
    /// does not depend on it: it is kept for callers that want the numbers.
    public let numericSegments: [UInt64]?
    /// The segments that decide the order, trailing zero numbers removed; `nil` for a label.
    let segments: [Segment]?

    /// The version given to config-file entries that state none.
    public static let builtin = KeyVersion("builtin")
    /// The version given to environment-variable keys.
    public static let environment = KeyVersion("env")
    /// The version given to keychain items that carry no version.
    public static let unknown = KeyVersion("unknown")

    /// Creates a version from its text.
    ///
    /// Any string is accepted: text with digits is a version (see the rule above); text
    /// without digits is a label that sorts below every version.
    /// - Parameter rawValue: The version text, for example `"2024.06.01"` or `"v10"`.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
        let segments = KeyVersion.parse(rawValue)
        self.segments = segments
        self.numericSegments = segments.flatMap { segments in
            var numbers: [UInt64] = []
            for segment in segments {
                guard case .number(let digits) = segment, let value = UInt64(digits) else { return nil }
                numbers.append(value)
            }
            return numbers.isEmpty ? [0] : numbers
        }
    }

    /// Whether the text is a version (it has at least one digit) rather than a label such
    /// as `builtin`.
    public var isNumeric: Bool { segments != nil }

    /// Whether the version is made only of numbers (`2024.07.01`, `v3`, `20240701`), with
    /// no word such as `rc` or `beta`.
    var isMadeOfNumbers: Bool {
        segments?.allSatisfy { if case .number = $0 { true } else { false } } ?? false
    }

    /// The version as written.
    public var description: String { rawValue }

    /// Orders two versions by the rule above; labels below every version, labels among
    /// themselves as strings.
    /// - Parameters:
    ///   - lhs: A version.
    ///   - rhs: Another version.
    /// - Returns: `true` when `lhs` is older than `rhs`.
    public static func < (lhs: KeyVersion, rhs: KeyVersion) -> Bool {
        switch (lhs.segments, rhs.segments) {
        case (let left?, let right?):
            return compare(left, right) < 0
        case (nil, _?):
            return true
        case (_?, nil):
            return false
        case (nil, nil):
            return lhs.rawValue < rhs.rawValue
        }
    }

    /// Whether two versions are the same version (`2024.07.01 == 2024.7.1`, `v2 == 2`).
    /// - Parameters:
    ///   - lhs: A version.
    ///   - rhs: Another version.
    /// - Returns: `true` when neither is older than the other.
    public static func == (lhs: KeyVersion, rhs: KeyVersion) -> Bool {
        switch (lhs.segments, rhs.segments) {
        case (let left?, let right?): return left == right
        case (nil, nil): return lhs.rawValue == rhs.rawValue
        default: return false
        }
    }

    /// Hashes the version consistently with `==` (its segments, or the label).
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        if let segments {
            hasher.combine(true)
            hasher.combine(segments)
        } else {
            hasher.combine(false)
            hasher.combine(rawValue)
        }
    }

    /// -1, 0 or 1 as `left` is older than, the same as, or newer than `right`.
    private static func compare(_ left: [Segment], _ right: [Segment]) -> Int {
        for index in 0..<max(left.count, right.count) {
            let l = index < left.count ? left[index] : nil
            let r = index < right.count ? right[index] : nil
            let order = compare(l, r)
            if order != 0 { return order }
        }
        return 0
    }

    /// One position: a missing segment is a zero against a number, and newer than a word.
    private static func compare(_ left: Segment?, _ right: Segment?) -> Int {
        switch (left, right) {
        case (.number(let l)?, .number(let r)?):
            if l.count != r.count { return l.count < r.count ? -1 : 1 }
            return l == r ? 0 : (l < r ? -1 : 1)
        case (.word(let l)?, .word(let r)?):
            return l == r ? 0 : (l < r ? -1 : 1)
        case (.number?, .word?): return 1
        case (.word?, .number?): return -1
        case (.number(let l)?, nil): return l == "0" ? 0 : 1
        case (nil, .number(let r)?): return r == "0" ? 0 : -1
        case (.word?, nil): return -1
        case (nil, .word?): return 1
        case (nil, nil): return 0
        }
    }

    /// The segments of `text`, trailing zero numbers removed; `nil` when it has no digit.
    static func parse(_ text: String) -> [Segment]? {
        guard text.unicodeScalars.contains(where: isDigit) else { return nil }
        var scalars = Substring(text).unicodeScalars[...]
        if let first = scalars.first, first == "v" || first == "V",
            let second = scalars.dropFirst().first, isDigit(second)
        {
            scalars = scalars.dropFirst()
        }
        var segments: [Segment] = []
        var current = ""
        var currentIsNumber = false
        func finish() {
            guard !current.isEmpty else { return }
            if currentIsNumber {
                let trimmed = current.drop { $0 == "0" }
                segments.append(.number(trimmed.isEmpty ? "0" : String(trimmed)))
            } else {
                segments.append(.word(current.lowercased()))
            }
            current = ""
        }
        for scalar in scalars {
            if isDigit(scalar) {
                if !currentIsNumber { finish() }
                currentIsNumber = true
                current.unicodeScalars.append(scalar)
            } else if scalar.properties.isAlphabetic {
                if currentIsNumber { finish() }
                currentIsNumber = false
                current.unicodeScalars.append(scalar)
            } else {
                finish()
            }
        }
        finish()
        while let last = segments.last, last == .number("0") { segments.removeLast() }
        return segments
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x30 && scalar.value <= 0x39
    }
}
