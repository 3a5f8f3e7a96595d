/// The object paths this service answers on, parsed.
///
/// - `/org/freedesktop/secrets`: the service
/// - `/org/freedesktop/secrets/collection/ID` and `/org/freedesktop/secrets/aliases/ALIAS`: a collection
/// - `…/collection/ID/ITEM` and `…/aliases/ALIAS/ITEM`: an item
/// - `/org/freedesktop/secrets/session/N`: a session; `/org/freedesktop/secrets/prompt/N`: a prompt
/// - `/`, `/org`, `/org/freedesktop`, `…/collection`, `…/aliases`, `…/session`, `…/prompt`: nodes
///   that only introspect (to show what is below them).
enum ObjectPath: Equatable {
    case service
    case collection(collectionPart: String, name: String)
    case item(collectionPart: String, name: String, item: String)
    case session(Int)
    case prompt(Int)
    case node([String])
    case unknown

    static let servicePath = "/org/freedesktop/secrets"

    /// Parses a path.
    init(_ path: String) {
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        // A path starts with "/": parts[0] is empty.
        guard parts.count >= 2, parts[0].isEmpty else { self = .unknown; return }
        let rest = Array(parts.dropFirst())
        if rest == [""] { self = .node([]); return }
        let prefix = ["org", "freedesktop", "secrets"]
        if rest.count < 3 {
            self = rest.elementsEqual(prefix.prefix(rest.count), by: Self.same) ? .node(rest) : .unknown
            return
        }
        guard rest.prefix(3).elementsEqual(prefix, by: Self.same) else { self = .unknown; return }
        let below = Array(rest.dropFirst(3))
        switch below.count {
        case 0: self = .service
        case 1:
            self = ["collection", "aliases", "session", "prompt"].contains { Self.same($0, below[0]) } ? .node(rest) : .unknown
        case 2:
            if Self.same(below[0], "collection") || Self.same(below[0], "aliases") {
                self = .collection(collectionPart: below[0], name: below[1])
            } else if Self.same(below[0], "session"), let number = Self.number(below[1]) {
                self = .session(number)
            } else if Self.same(below[0], "prompt"), let number = Self.number(below[1]) {
                self = .prompt(number)
            } else {
                self = .unknown
            }
        case 3 where Self.same(below[0], "collection") || Self.same(below[0], "aliases"):
            self = .item(collectionPart: below[0], name: below[1], item: below[2])
        default: self = .unknown
        }
    }

    private static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(text)
    }

    static func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    static func collectionPath(_ identifier: String) -> String { "\(servicePath)/collection/\(identifier)" }
    static func itemPath(_ collection: String, _ item: String) -> String { "\(servicePath)/collection/\(collection)/\(item)" }
    static func sessionPath(_ number: Int) -> String { "\(servicePath)/session/\(number)" }
    static func promptPath(_ number: Int) -> String { "\(servicePath)/prompt/\(number)" }
    /// The path that means "no object" (no prompt needed, no alias).
    static let none = "/"
}
