import Foundation

/// Looks for a key's bytes in generated Swift source, in every form source can hold bytes
/// in: text, base64 (padded or not), unbroken hex (either case), integer lists (`0xNN`,
/// `0XNN` or decimal, separated by commas, spaces and line breaks, as the generator wraps
/// long arrays), and string literals with `\u{NN}` escapes.
enum GeneratedSourceScan {
    /// The names of the forms in which `secret` appears in `source` (empty: none). Never
    /// the matching text itself, so a failure message cannot print the key.
    static func forms(of secret: Data, foundIn source: String) -> [String] {
        guard !secret.isEmpty else { return [] }
        var found: [String] = []
        if let text = String(data: secret, encoding: .utf8) {
            if source.contains(text) { found.append("text") }
            if unescaped(source).contains(text), !source.contains(text) { found.append("escaped string literal") }
        }
        let base64 = secret.base64EncodedString()
        if source.contains(base64) || source.contains(base64.replacingOccurrences(of: "=", with: "")) {
            found.append("base64")
        }
        let hex = secret.map { String(format: "%02x", $0) }.joined()
        if source.lowercased().contains(hex) { found.append("hex") }
        let wanted = Array(secret)
        if integerRuns(in: source).contains(where: { run in contains(run, wanted) }) { found.append("integer list") }
        return found
    }

    /// Every run of integer literals (0-255) separated only by commas and white space.
    static func integerRuns(in source: String) -> [[UInt8]] {
        var runs: [[UInt8]] = []
        var current: [UInt8] = []
        let scalars = Array(source.unicodeScalars)
        var index = 0
        func flush() {
            if current.count > 1 { runs.append(current) }
            current = []
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "," || scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\r" {
                index += 1
                continue
            }
            if ("0"..."9").contains(scalar) {
                var end = index
                var radix = 10
                if scalar == "0", index + 1 < scalars.count, scalars[index + 1] == "x" || scalars[index + 1] == "X" {
                    radix = 16
                    end = index + 2
                }
                let digitsStart = end
                while end < scalars.count,
                    radix == 16 ? scalars[end].properties.isASCIIHexDigit : ("0"..."9").contains(scalars[end])
                {
                    end += 1
                }
                let digits = String(String.UnicodeScalarView(scalars[digitsStart..<end]))
                if let value = UInt8(digits, radix: radix) {
                    current.append(value)
                } else {
                    flush()
                }
                index = max(end, index + 1)
                continue
            }
            flush()
            index += 1
        }
        flush()
        return runs
    }

    /// The source with every `\u{NN}` escape replaced by its character.
    static func unescaped(_ source: String) -> String {
        var result = ""
        var rest = Substring(source)
        while let start = rest.range(of: "\\u{") {
            result += rest[..<start.lowerBound]
            let after = rest[start.upperBound...]
            if let close = after.firstIndex(of: "}"), let value = UInt32(after[..<close], radix: 16),
                let scalar = Unicode.Scalar(value)
            {
                result.unicodeScalars.append(scalar)
                rest = after[after.index(after: close)...]
            } else {
                result += "\\u{"
                rest = after
            }
        }
        return result + rest
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
