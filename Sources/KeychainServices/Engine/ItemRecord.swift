#if !canImport(Security)
import Foundation

/// A decrypted item: its class, attributes (caller's plus defaults), secret and
/// persistent reference.
struct ItemRecord {
    let rowID: Int64
    let itemClass: ItemClass
    var attributes: AttributeTable
    /// The secret, in a buffer that is zeroed when the last reference goes (handed to the
    /// caller as is when the data is asked for).
    var secret: SecretData?
    let reference: Data
    /// Whether ``secret`` is sealed by the item's access control (an
    /// ``AccessControlEnvelope``) rather than the secret itself.
    var sealedForAccessControl = false
    /// For a ThisDeviceOnly item read from its row: what the row is bound to (its item key
    /// depends on it); `nil`: the binding new rows get.
    var deviceBinding: KeyHierarchy.DeviceBinding?

    /// Whether handing out the secret needs an evaluation of the item's access control: it
    /// has constraints and a secret.
    var needsAuthentication: Bool {
        secret != nil && accessControl?.requiresAuthentication == true
    }

    var protection: ProtectionClass {
        if case .string(let name)? = attributes[.protection], let protection = ProtectionClass(nameBytes: name.utf8) {
            return protection
        }
        return .whenUnlocked
    }

    var accessGroup: String {
        if case .string(let group)? = attributes[.accessGroup] { return group }
        return ""
    }

    var synchronizable: Bool {
        if case .number(let flag)? = attributes[.synchronizable] { return flag != 0 }
        return false
    }

    var accessControl: SecAccessControl? {
        if case .accessControl(let protection, let flags)? = attributes[.accessControl] {
            return SecAccessControl(protection: protection, flags: SecAccessControlCreateFlags(rawValue: flags))
        }
        return nil
    }

    /// Whether every attribute of `query` equals this item's (byte-wise, after coercion),
    /// and the host filter, if any, holds.
    func matches(_ query: ItemQuery) -> Bool {
        for (tag, wanted) in query.attributes.entries {
            guard let have = attributes[tag] else { return false }
            // Byte-wise, as Apple matches (AttributeValue's `==` compares bytes, never Swift's
            // canonical equivalence); values of different kinds compare by their match bytes
            // (a string query matches the same bytes stored as data).
            if have == wanted { continue }
            if have.kind == wanted.kind || have.matchBytes != wanted.matchBytes { return false }
        }
        if let host = query.hostOrSubdomain {
            guard let server = attributes["srvr"]?.matchBytes else { return false }
            let exact = Array(host.utf8)
            let subdomain = Array(("." + host).utf8)
            if !server.elementsEqual(exact) && !server.reversed().starts(with: subdomain.reversed()) { return false }
        }
        return true
    }
}
#endif
