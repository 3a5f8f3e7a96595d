#if !canImport(Security)
import Foundation

/// A decrypted item: its class, attributes (caller's plus defaults), secret and
/// persistent reference.
struct ItemRecord {
    let rowID: Int64
    let itemClass: ItemClass
    var attributes: [String: AttributeValue]
    var secret: Data?
    let reference: Data

    var protection: ProtectionClass {
        if case .string(let name)? = attributes["pdmn"], let protection = ProtectionClass(rawValue: name) {
            return protection
        }
        return .whenUnlocked
    }

    var accessGroup: String {
        if case .string(let group)? = attributes["agrp"] { return group }
        return ""
    }

    var synchronizable: Bool {
        if case .number(let flag)? = attributes["sync"] { return flag != 0 }
        return false
    }

    var accessControl: SecAccessControl? {
        if case .accessControl(let protection, let flags)? = attributes["accc"] {
            return SecAccessControl(protection: protection, flags: SecAccessControlCreateFlags(rawValue: flags))
        }
        return nil
    }

    /// Whether every attribute of `query` equals this item's (byte-wise, after coercion),
    /// and the host filter, if any, holds.
    func matches(_ query: ItemQuery) -> Bool {
        for (tag, wanted) in query.attributes {
            guard let have = attributes[tag] else { return false }
            if have != wanted && have.matchBytes != wanted.matchBytes { return false }
        }
        if let host = query.hostOrSubdomain {
            let server: String
            switch attributes["srvr"] {
            case .string(let name)?: server = name
            case .data(let bytes)?: server = String(decoding: bytes, as: UTF8.self)
            default: return false
            }
            if server != host && !server.hasSuffix("." + host) { return false }
        }
        return true
    }
}
#endif
