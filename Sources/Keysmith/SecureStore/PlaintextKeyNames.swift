import Foundation

/// The key names of a plaintext file as the file spells them, to find keys that Foundation's
/// parsers merged.
///
/// `JSONSerialization` and `PropertyListSerialization` return a `[String: Any]`, keyed by
/// Swift's `String`, which takes `"jos\u{E9}"` and `"jose\u{301}"` for one key: a file that
/// holds both yields one entry, with one of the two values under one of the two names.
/// Migrating it would store one name's value under the other name, and rewriting the file
/// from the dictionary would lose the other value. ``twins(in:parsed:isJSON:)`` finds such
/// keys so the migration can refuse and change nothing.
enum PlaintextKeyNames {
    /// The names of the file's top-level keys that have another key of the same text in
    /// another Unicode form, or that may have one; empty when every key is its own.
    ///
    /// - JSON: the top-level member names are read from the text itself, each decoded from
    ///   its JSON string byte for byte; twins are the names that share their canonical form
    ///   with another name.
    /// - Property lists (XML or binary): the parsed names are all there is, so every name
    ///   whose UTF-8 bytes differ from one of its Unicode normalization forms (NFC or NFD) is
    ///   reported: such a file may have held its twin.
    /// - Parameters:
    ///   - contents: The file's bytes.
    ///   - parsed: The dictionary Foundation parsed from them.
    ///   - isJSON: Whether the file is JSON.
    /// - Returns: The names, sorted in UTF-8 byte order.
    static func twins(in contents: Data, parsed: [String: Any], isJSON: Bool) -> [String] {
        if isJSON, let names = topLevelJSONNames(contents) {
            let distinct = ExactName.distinctSorted(names)
            guard distinct.count > parsed.count else { return [] }
            // Group by canonical form (NFD), byte for byte: a group of two or more is twins.
            var byForm: [ExactName: [String]] = [:]
            for name in distinct { byForm[ExactName(name.decomposedStringWithCanonicalMapping), default: []].append(name) }
            return ExactName.distinctSorted(byForm.values.filter { $0.count > 1 }.flatMap { $0 })
        }
        return ExactName.distinctSorted(parsed.keys.filter(hasOtherForms))
    }

    /// Whether `name` has bytes other than those of one of its normalization forms.
    private static func hasOtherForms(_ name: String) -> Bool {
        let exact = ExactName(name)
        return exact != ExactName(name.precomposedStringWithCanonicalMapping)
            || exact != ExactName(name.decomposedStringWithCanonicalMapping)
    }

    /// The member names of a JSON object's top level, in file order (repeats included), each
    /// decoded from its JSON string; `nil` when the text is not a JSON object.
    static func topLevelJSONNames(_ contents: Data) -> [String]? {
        let bytes = [UInt8](contents)
        var index = 0

        func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        /// Moves past a JSON string starting at `index` (its opening quote); returns its
        /// range, quotes included.
        func skipString() -> Range<Int>? {
            let start = index
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    return start..<index
                default: index += 1
                }
            }
            return nil
        }
        /// Moves past one JSON value.
        func skipValue() -> Bool {
            skipSpace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return skipString() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        guard skipString() != nil else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                    default: break
                    }
                    index += 1
                    if depth == 0 { return true }
                }
                return false
            default:
                // A number, true, false or null.
                while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
                    .contains(bytes[index])
                {
                    index += 1
                }
                return true
            }
        }

        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }  // a UTF-8 byte order mark
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var names: [String] = []
        while true {
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return names }
            guard bytes[index] == UInt8(ascii: "\""), let range = skipString(),
                let name = try? JSONSerialization.jsonObject(with: Data(bytes[range]), options: .fragmentsAllowed) as? String
            else { return nil }
            names.append(name)
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard skipValue() else { return nil }
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] != UInt8(ascii: "}") {
                return nil
            }
        }
    }
}
