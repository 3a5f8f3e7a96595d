import Foundation
import KeychainServices

// How `keysmith` shows a keychain item: the attribute dictionary SecItemCopyMatching
// returns, turned into aligned text for people or a stable JSON object for scripts. The
// secret is part of the output only when the caller passes it in (`-d`, `-g`).

/// One keychain item as returned by `SecItemCopyMatching` with `kSecReturnAttributes`.
struct ItemPresentation {
    /// The item class code (`genp`, `inet`, `cert`, `keys`).
    let classCode: String
    /// The attributes, by Apple tag (`svce`, `acct`, ...), without the secret.
    let attributes: [String: AnyObject]

    /// Takes a result dictionary apart; the secret (`v_Data`) and the persistent reference
    /// are dropped here, so nothing later can print them by accident.
    /// - Parameters:
    ///   - dictionary: The result dictionary.
    ///   - classCode: The class that was queried.
    init(_ dictionary: NSDictionary, classCode: String) {
        self.classCode = classCode
        var attributes: [String: AnyObject] = [:]
        for (key, value) in dictionary {
            guard let tag = key as? String else { continue }
            if tag == (kSecValueData as String) || tag == (kSecValuePersistentRef as String) || tag == "class" {
                continue
            }
            attributes[tag] = value as AnyObject
        }
        self.attributes = attributes
    }

    /// The class name for people: `generic password`.
    var className: String { ItemClassName.human(classCode) }

    /// A string attribute (or data that is UTF-8), for sorting and messages.
    func text(_ tag: String) -> String? {
        guard let value = attributes[tag] else { return nil }
        if let string = value as? String { return string }
        if let data = value as? Data { return String(data: data, encoding: .utf8) }
        if let number = value as? NSNumber { return number.stringValue }
        return nil
    }

    /// The modification date, if the item has one.
    var modificationDate: Date? { attributes[kSecAttrModificationDate as String] as? Date }

    /// A sort key: class order, then the item's two names, then its access group.
    var sortKey: [String] {
        let names = ItemClassName.lookupNames(classCode)
        return [
            String(ItemClassName.order(classCode)), text(names.first) ?? "", text(names.second) ?? "",
            text(kSecAttrAccessGroup as String) ?? "",
        ]
    }

    /// The attributes as aligned rows, in a fixed order; unknown attributes last, by tag.
    /// - Parameters:
    ///   - includeClass: Whether the first row names the class.
    ///   - dates: The date formatter.
    /// - Returns: The table.
    func table(includeClass: Bool, dates: DateText) -> KeyValueTable {
        var table = KeyValueTable()
        if includeClass { table.add("class", className) }
        for (tag, value) in orderedAttributes() {
            guard let shown = AttributeCatalog.humanValue(tag: tag, value: value, dates: dates) else { continue }
            table.add(AttributeCatalog.entry(tag)?.label ?? tag, shown)
        }
        return table
    }

    /// The item as a JSON object: `class` plus one field per attribute (see
    /// ``AttributeCatalog``).
    /// - Parameter dates: The date formatter.
    /// - Returns: A JSON-compatible dictionary.
    func jsonObject(dates: DateText) -> [String: Any] {
        var object: [String: Any] = ["class": ItemClassName.json(classCode)]
        for (tag, value) in orderedAttributes() {
            guard let json = AttributeCatalog.jsonValue(tag: tag, value: value, dates: dates) else { continue }
            object[AttributeCatalog.entry(tag)?.jsonKey ?? tag] = json
        }
        return object
    }

    /// The item in macOS `security`'s format (`find-generic-password` without `-w`), which
    /// scripts parse: `keychain:`, `version:`, `class:`, then `attributes:` with one line
    /// per attribute, `    "acct"<blob>="deploy"`, in macOS's order; the label is
    /// `0x00000007`, absent attributes are `<NULL>`. The access group, which macOS's file
    /// keychains do not have, is one more line of the same form (`"agrp"<blob>=…`).
    /// - Parameter keychain: The keychain's path, for the first line.
    /// - Returns: The lines.
    func securityToolLines(keychain: String) -> [String] {
        var lines = [
            "keychain: \(SecurityToolFormat.quoted(keychain))", "version: 512", "class: \(SecurityToolFormat.quoted(classCode))",
            "attributes:",
        ]
        for (name, tag, type) in SecurityToolFormat.layout(classCode) {
            let value = tag.flatMap { attributes[$0] }
            lines.append("    \(name)<\(type)>=\(SecurityToolFormat.value(value, type: type, tag: tag))")
        }
        return lines
    }

    private func orderedAttributes() -> [(String, AnyObject)] {
        let known = AttributeCatalog.entries.compactMap { entry in attributes[entry.tag].map { (entry.tag, $0) } }
        let unknown = attributes.keys.filter { AttributeCatalog.entry($0) == nil }.sorted().map { ($0, attributes[$0]!) }
        return known + unknown
    }
}

/// The secret of an item, shown only on request.
enum SecretText {
    /// `"text"` for printable UTF-8, else `0x…` (hexadecimal), as macOS `security` prints
    /// passwords.
    static func human(_ secret: Data) -> String {
        if let text = String(data: secret, encoding: .utf8), text.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) }) {
            return "\"\(text)\""
        }
        return "0x" + secret.map { String(format: "%02x", $0) }.joined()
    }

    /// The JSON fields of a secret: `password` (when the bytes are UTF-8) and
    /// `passwordBase64` (always).
    static func jsonFields(_ secret: Data) -> [String: Any] {
        var fields: [String: Any] = ["passwordBase64": secret.base64EncodedString()]
        if let text = String(data: secret, encoding: .utf8) { fields["password"] = text }
        return fields
    }
}

/// Names of item classes.
enum ItemClassName {
    /// The classes `dump-keychain` lists, in order.
    static let dumpOrder = ["genp", "inet", "cert", "keys"]

    static func human(_ code: String) -> String {
        switch code {
        case "genp": return "generic password"
        case "inet": return "internet password"
        case "cert": return "certificate"
        case "keys": return "key"
        default: return code
        }
    }

    static func json(_ code: String) -> String {
        switch code {
        case "genp": return "genericPassword"
        case "inet": return "internetPassword"
        case "cert": return "certificate"
        case "keys": return "key"
        default: return code
        }
    }

    static func order(_ code: String) -> Int { dumpOrder.firstIndex(of: code) ?? dumpOrder.count }

    /// The two attributes that name an item of the class.
    static func lookupNames(_ code: String) -> (first: String, second: String) {
        switch code {
        case "genp": return ("svce", "acct")
        case "inet": return ("srvr", "acct")
        case "cert": return ("labl", "issr")
        default: return ("labl", "atag")
        }
    }
}

/// ISO 8601 dates in UTC with milliseconds: `2025-06-01T12:00:00.123Z`.
final class DateText {
    private let formatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter
    }()

    /// The date as text.
    func string(_ date: Date) -> String { formatter.string(from: date) }
}

/// What `keysmith` knows about each attribute: its label for people, its JSON field, and
/// how to show its value.
enum AttributeCatalog {
    enum Kind {
        case text, number, boolean, date, accessible, protocolCode, authenticationType, accessControl, hidden
        /// A four-character code kept as a number (creator, type): shown as its characters.
        case fourCharacterCode
        /// Bytes that are usually text (the generic attribute).
        case blob
    }

    struct Entry {
        let tag: String
        let label: String
        let jsonKey: String
        let kind: Kind
    }

    /// The known attributes in display order.
    static let entries: [Entry] = [
        Entry(tag: "svce", label: "service", jsonKey: "service", kind: .text),
        Entry(tag: "srvr", label: "server", jsonKey: "server", kind: .text),
        Entry(tag: "ptcl", label: "protocol", jsonKey: "protocol", kind: .protocolCode),
        Entry(tag: "port", label: "port", jsonKey: "port", kind: .number),
        Entry(tag: "path", label: "path", jsonKey: "path", kind: .text),
        Entry(tag: "sdmn", label: "security domain", jsonKey: "securityDomain", kind: .text),
        Entry(tag: "atyp", label: "authentication type", jsonKey: "authenticationType", kind: .authenticationType),
        Entry(tag: "acct", label: "account", jsonKey: "account", kind: .text),
        Entry(tag: "labl", label: "label", jsonKey: "label", kind: .text),
        Entry(tag: "desc", label: "kind", jsonKey: "kind", kind: .text),
        Entry(tag: "icmt", label: "comment", jsonKey: "comment", kind: .text),
        Entry(tag: "gena", label: "generic", jsonKey: "generic", kind: .blob),
        Entry(tag: "atag", label: "application tag", jsonKey: "applicationTag", kind: .text),
        Entry(tag: "crtr", label: "creator", jsonKey: "creator", kind: .fourCharacterCode),
        Entry(tag: "type", label: "type", jsonKey: "type", kind: .fourCharacterCode),
        Entry(tag: "agrp", label: "access group", jsonKey: "accessGroup", kind: .text),
        Entry(tag: "pdmn", label: "accessible", jsonKey: "accessible", kind: .accessible),
        Entry(tag: "accc", label: "access control", jsonKey: "accessControl", kind: .accessControl),
        Entry(tag: "sync", label: "synchronizable", jsonKey: "synchronizable", kind: .boolean),
        Entry(tag: "invi", label: "invisible", jsonKey: "invisible", kind: .boolean),
        Entry(tag: "nega", label: "negative", jsonKey: "negative", kind: .boolean),
        Entry(tag: "cdat", label: "created", jsonKey: "created", kind: .date),
        Entry(tag: "mdat", label: "modified", jsonKey: "modified", kind: .date),
        // Bookkeeping the keychain keeps for itself.
        Entry(tag: "tomb", label: "tomb", jsonKey: "tomb", kind: .hidden),
        Entry(tag: "musr", label: "musr", jsonKey: "musr", kind: .hidden),
    ]

    private static let byTag: [String: Entry] = Dictionary(uniqueKeysWithValues: entries.map { ($0.tag, $0) })

    static func entry(_ tag: String) -> Entry? { byTag[tag] }

    /// The value for people, or `nil` to leave the row out (bookkeeping attributes, and
    /// attributes left at their empty default: path "", port 0, protocol 0).
    static func humanValue(tag: String, value: AnyObject, dates: DateText) -> String? {
        let kind = entry(tag)?.kind ?? .text
        switch kind {
        case .hidden:
            return nil
        case .date:
            guard let date = value as? Date else { return describe(value) }
            return dates.string(date)
        case .boolean:
            guard let number = value as? NSNumber else { return describe(value) }
            return number.intValue != 0 ? "yes" : "no"
        case .number:
            if tag == "port", let number = value as? NSNumber, number.intValue == 0 { return nil }
            return describe(value)
        case .accessible:
            guard let code = value as? String else { return describe(value) }
            return Accessibility(code: code).map { "\($0.name) (\(code))" } ?? code
        case .protocolCode:
            if let number = value as? NSNumber, number.intValue == 0 { return nil }
            guard let code = value as? String else { return describe(value) }
            return InternetProtocol.name(forCode: code).map { "\($0) (\(code))" } ?? code
        case .authenticationType:
            guard let code = value as? String else { return describe(value) }
            if code.isEmpty { return nil }
            return AuthenticationType.name(forCode: code).map { "\($0) (\(code))" } ?? code
        case .accessControl:
            return accessControlText(value)
        case .fourCharacterCode:
            if let number = value as? NSNumber, number.intValue == 0 { return nil }
            return FourCharacterCode.text(value) ?? describe(value)
        case .text, .blob:
            let text = describe(value)
            return text.isEmpty ? nil : text
        }
    }

    /// The value for JSON, or `nil` to leave the field out.
    static func jsonValue(tag: String, value: AnyObject, dates: DateText) -> Any? {
        let kind = entry(tag)?.kind ?? .text
        switch kind {
        case .hidden:
            return nil
        case .date:
            guard let date = value as? Date else { return jsonScalar(value) }
            return dates.string(date)
        case .boolean:
            guard let number = value as? NSNumber else { return jsonScalar(value) }
            return number.intValue != 0
        case .accessControl:
            return accessControlText(value)
        case .protocolCode:
            // Left at its default (0 or ""): absent. A known code by its name ("https").
            if let number = value as? NSNumber, number.intValue == 0 { return nil }
            guard let code = value as? String else { return jsonScalar(value) }
            if code.isEmpty { return nil }
            return InternetProtocol.name(forCode: code) ?? code
        case .authenticationType:
            guard let code = value as? String else { return jsonScalar(value) }
            if code.isEmpty { return nil }
            return AuthenticationType.name(forCode: code) ?? code
        case .accessible:
            guard let code = value as? String else { return jsonScalar(value) }
            return Accessibility(code: code)?.name ?? code
        case .number:
            if tag == "port", let number = value as? NSNumber, number.intValue == 0 { return nil }
            return jsonScalar(value)
        case .fourCharacterCode:
            if let number = value as? NSNumber, number.intValue == 0 { return nil }
            return FourCharacterCode.text(value) ?? jsonScalar(value)
        case .blob:
            if let data = value as? Data, let text = String(data: data, encoding: .utf8) { return text }
            return jsonScalar(value)
        case .text:
            // Internet passwords carry path and security domain as "" when not given.
            if tag == "path" || tag == "sdmn", let string = value as? String, string.isEmpty { return nil }
            return jsonScalar(value)
        }
    }

    private static func accessControlText(_ value: AnyObject) -> String {
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        return "present"
        #else
        guard let control = value as? SecAccessControl else { return "present" }
        let protection = Accessibility(code: control.protection)?.name ?? control.protection
        return "\(protection), flags 0x\(String(control.flags.rawValue, radix: 16))"
        #endif
    }

    /// Text for any attribute value: strings as they are, numbers in decimal, printable
    /// UTF-8 data as text, other data in hexadecimal.
    static func describe(_ value: AnyObject) -> String {
        if let string = value as? String { return TerminalText.escaped(string) }
        if let data = value as? Data {
            if let text = String(data: data, encoding: .utf8),
                text.unicodeScalars.allSatisfy({ !TerminalText.isControl($0) })
            {
                return text
            }
            return "0x" + data.map { String(format: "%02x", $0) }.joined()
        }
        if let date = value as? Date { return DateText().string(date) }
        if let number = value as? NSNumber { return number.stringValue }
        return String(describing: type(of: value))
    }

    /// A JSON scalar: strings, numbers; data as `{"base64": "..."}`.
    static func jsonScalar(_ value: AnyObject) -> Any {
        if let string = value as? String { return string }
        if let data = value as? Data { return ["base64": data.base64EncodedString()] }
        if let number = value as? NSNumber { return number }
        if let date = value as? Date { return DateText().string(date) }
        return String(describing: type(of: value))
    }
}

/// The accessibility (protection) classes, by the names `--accessible` takes.
enum Accessibility: CaseIterable {
    case whenUnlocked, afterFirstUnlock, always, whenUnlockedThisDeviceOnly, afterFirstUnlockThisDeviceOnly,
        alwaysThisDeviceOnly, whenPasscodeSetThisDeviceOnly

    /// The `kSecAttrAccessible…` value.
    var code: String {
        switch self {
        case .whenUnlocked: return kSecAttrAccessibleWhenUnlocked as String
        case .afterFirstUnlock: return kSecAttrAccessibleAfterFirstUnlock as String
        case .always: return kSecAttrAccessibleAlways as String
        case .whenUnlockedThisDeviceOnly: return kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String
        case .afterFirstUnlockThisDeviceOnly: return kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String
        case .alwaysThisDeviceOnly: return kSecAttrAccessibleAlwaysThisDeviceOnly as String
        case .whenPasscodeSetThisDeviceOnly: return kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly as String
        }
    }

    /// The name, for example `whenUnlocked`. (Spelled out rather than `"\(self)"`: the
    /// help of `add-*` lists every name, and reflecting an enum case costs a noticeable part
    /// of the tool's start-up.)
    var name: String {
        switch self {
        case .whenUnlocked: return "whenUnlocked"
        case .afterFirstUnlock: return "afterFirstUnlock"
        case .always: return "always"
        case .whenUnlockedThisDeviceOnly: return "whenUnlockedThisDeviceOnly"
        case .afterFirstUnlockThisDeviceOnly: return "afterFirstUnlockThisDeviceOnly"
        case .alwaysThisDeviceOnly: return "alwaysThisDeviceOnly"
        case .whenPasscodeSetThisDeviceOnly: return "whenPasscodeSetThisDeviceOnly"
        }
    }

    /// The class a stored code stands for.
    init?(code: String) {
        guard let match = Accessibility.allCases.first(where: { $0.code == code }) else { return nil }
        self = match
    }

    /// The class named on the command line: a name in any case, with or without dashes
    /// or underscores (`after-first-unlock`), or Apple's code (`ck`).
    init?(commandLineFlag text: String) {
        let folded = text.lowercased().filter { $0 != "-" && $0 != "_" }
        guard let match = Accessibility.allCases.first(where: { $0.name.lowercased() == folded || $0.code == text })
        else { return nil }
        self = match
    }

    /// The accepted names, for help and errors.
    static var namesList: String { allCases.map(\.name).joined(separator: ", ") }
}

/// Internet protocols for `-r`: a friendly name or the four-character code.
enum InternetProtocol {
    /// Friendly name → Apple's four-character code.
    static let codes: [(name: String, code: String)] = [
        ("ftp", "ftp "), ("ftpaccount", "ftpa"), ("http", "http"), ("irc", "irc "), ("nntp", "nntp"),
        ("pop3", "pop3"), ("smtp", "smtp"), ("socks", "sox "), ("imap", "imap"), ("ldap", "ldap"),
        ("appletalk", "atlk"), ("afp", "afp "), ("telnet", "teln"), ("ssh", "ssh "), ("ftps", "ftps"),
        ("https", "htps"), ("httpproxy", "htpx"), ("httpsproxy", "htsx"), ("ftpproxy", "ftpx"), ("smb", "smb "),
        ("rtsp", "rtsp"), ("rtspproxy", "rtsx"), ("daap", "daap"), ("eppc", "eppc"), ("ipp", "ipp "),
        ("nntps", "ntps"), ("ldaps", "ldps"), ("telnets", "tels"), ("imaps", "imps"), ("ircs", "ircs"),
        ("pop3s", "pops"),
    ]

    /// The code for a command-line value: a friendly name (any case) or a code of exactly
    /// four characters (as `security -r` takes).
    static func code(forCommandLineFlag text: String) -> String? {
        if let match = codes.first(where: { $0.name == text.lowercased() }) { return match.code }
        if text.count == 4 { return text }
        if let match = codes.first(where: { $0.code.trimmingCharacters(in: .whitespaces) == text }) { return match.code }
        return nil
    }

    static func name(forCode code: String) -> String? {
        codes.first { $0.code == code }?.name
    }

    static var namesList: String { codes.map(\.name).joined(separator: ", ") }
}

/// Internet authentication types for `-t`: a friendly name or the four-character code.
enum AuthenticationType {
    static let codes: [(name: String, code: String)] = [
        ("ntlm", "ntlm"), ("msn", "msna"), ("dpa", "dpaa"), ("rpa", "rpaa"), ("httpbasic", "http"),
        ("httpdigest", "httd"), ("htmlform", "form"), ("default", "dflt"),
    ]

    static func code(forCommandLineFlag text: String) -> String? {
        if let match = codes.first(where: { $0.name == text.lowercased() }) { return match.code }
        if text.count == 4 { return text }
        return nil
    }

    static func name(forCode code: String) -> String? {
        codes.first { $0.code == code }?.name
    }

    static var namesList: String { codes.map(\.name).joined(separator: ", ") }
}

/// Four-character codes (`'aapl'`) kept as 32-bit numbers, as `kSecAttrCreator` and
/// `kSecAttrType` are.
enum FourCharacterCode {
    /// The number for a code of four ASCII characters, or `nil`.
    static func number(_ text: String) -> NSNumber? {
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return NSNumber(value: bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// The characters of a number whose four bytes are printable ASCII, or `nil`.
    static func text(_ value: AnyObject) -> String? {
        guard let number = value as? NSNumber else { return nil }
        let raw = number.uint32Value
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: raw >> (24 - 8 * $0)) }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// macOS `security`'s way of printing attributes.
enum SecurityToolFormat {
    /// The attribute lines of a class, in macOS's order: printed name, tag (`nil`: an
    /// attribute this keychain does not keep, always `<NULL>`), type.
    static func layout(_ classCode: String) -> [(name: String, tag: String?, type: String)] {
        var rows: [(String, String?, String)] = [
            ("0x00000007 ", "labl", "blob"), ("0x00000008 ", nil, "blob"), ("\"acct\"", "acct", "blob"),
            ("\"agrp\"", "agrp", "blob"),
        ]
        if classCode == "inet" { rows.append(("\"atyp\"", "atyp", "blob")) }
        rows += [
            ("\"cdat\"", "cdat", "timedate"), ("\"crtr\"", "crtr", "uint32"), ("\"cusi\"", nil, "sint32"),
            ("\"desc\"", "desc", "blob"),
        ]
        if classCode == "genp" { rows.append(("\"gena\"", "gena", "blob")) }
        rows += [
            ("\"icmt\"", "icmt", "blob"), ("\"invi\"", "invi", "sint32"), ("\"mdat\"", "mdat", "timedate"),
            ("\"nega\"", "nega", "sint32"),
        ]
        if classCode == "inet" {
            rows += [("\"path\"", "path", "blob"), ("\"port\"", "port", "uint32")]
        }
        rows.append(("\"prot\"", nil, "blob"))
        if classCode == "inet" { rows.append(("\"ptcl\"", "ptcl", "uint32")) }
        rows.append(("\"scrp\"", nil, "sint32"))
        if classCode == "inet" { rows += [("\"sdmn\"", "sdmn", "blob"), ("\"srvr\"", "srvr", "blob")] }
        if classCode == "genp" { rows.append(("\"svce\"", "svce", "blob")) }
        rows.append(("\"type\"", "type", "uint32"))
        return rows.map { (name: $0.0, tag: $0.1, type: $0.2) }
    }

    /// A value as macOS prints it: `"text"`, `0xHEX  "octal-escaped text"` for bytes that
    /// are not printable, `0x0000ABCD ` for numbers, `"htps"` for four-character codes,
    /// `<NULL>` when absent or empty.
    static func value(_ value: AnyObject?, type: String, tag: String?) -> String {
        guard let value else { return "<NULL>" }
        switch type {
        case "timedate":
            guard let date = value as? Date else { return "<NULL>" }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyyMMddHHmmss'Z'"
            return bytes(Data(formatter.string(from: date).utf8) + Data([0]))
        case "uint32", "sint32":
            if let code = value as? String {
                // Four-character codes such as the protocol are stored as text.
                return code.isEmpty ? "<NULL>" : quoted(code)
            }
            guard let number = value as? NSNumber else { return "<NULL>" }
            if type == "uint32", tag != "port", number.uint32Value != 0, let code = FourCharacterCode.text(number) {
                return quoted(code)
            }
            if tag == "ptcl" && number.intValue == 0 { return "<NULL>" }
            let hex = String(number.uint32Value, radix: 16, uppercase: true)
            return "0x" + String(repeating: "0", count: max(0, 8 - hex.count)) + hex + " "
        default:
            if let string = value as? String {
                if string.isEmpty { return "<NULL>" }
                return string.unicodeScalars.contains(where: TerminalText.isControl) ? bytes(Data(string.utf8)) : quoted(string)
            }
            if let data = value as? Data {
                if data.isEmpty { return "<NULL>" }
                if let text = String(data: data, encoding: .utf8), !text.unicodeScalars.contains(where: TerminalText.isControl) {
                    return quoted(text)
                }
                return bytes(data)
            }
            if let number = value as? NSNumber { return quoted(number.stringValue) }
            return "<NULL>"
        }
    }

    /// `"text"`, with `"` and `\` escaped as macOS does.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// `0xHEX  "text"`, the text with every byte outside printable ASCII as a three-digit
    /// octal escape (`\012`), as macOS prints bytes that are not plain text.
    static func bytes(_ data: Data) -> String {
        let hex = data.map { String(format: "%02X", $0) }.joined()
        var text = ""
        for byte in data {
            switch byte {
            case 0x22: text += "\\\""
            case 0x5C: text += "\\\\"
            case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let octal = String(byte, radix: 8)
                text += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        return "0x\(hex)  \"\(text)\""
    }
}
