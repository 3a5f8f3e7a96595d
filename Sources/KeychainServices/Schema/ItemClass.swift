#if !canImport(Security)
import Foundation

/// The keychain item classes of the data-protection keychain (`kSecClass` values).
enum ItemClass: String, CaseIterable, Sendable {
    case genericPassword = "genp"
    case internetPassword = "inet"
    case certificate = "cert"
    case key = "keys"
    /// Identities are a certificate paired with its private key; they are never stored as
    /// such, so this class is accepted in queries and finds nothing (see docs/ENGINE.md).
    case identity = "idnt"

    /// The schema of stored classes (`nil` for identities).
    var schema: ClassSchema? { ClassSchema.schema(for: self) }
}

/// The data-protection class of an item (`kSecAttrAccessible`).
enum ProtectionClass: String, CaseIterable, Sendable {
    case whenUnlocked = "ak"
    case afterFirstUnlock = "ck"
    case always = "dk"
    case whenUnlockedThisDeviceOnly = "aku"
    case afterFirstUnlockThisDeviceOnly = "cku"
    case alwaysThisDeviceOnly = "dku"
    case whenPasscodeSetThisDeviceOnly = "akpu"
    /// `kSecAttrAccessibleUntilReboot` (Apple SPI): readable until the machine restarts.
    case untilReboot = "f"

    /// The number of this class's key in the key hierarchy.
    var keyNumber: UInt64 {
        switch self {
        case .whenUnlocked: return 1
        case .afterFirstUnlock: return 2
        case .always: return 3
        case .whenUnlockedThisDeviceOnly: return 4
        case .afterFirstUnlockThisDeviceOnly: return 5
        case .alwaysThisDeviceOnly: return 6
        case .whenPasscodeSetThisDeviceOnly: return 7
        case .untilReboot: return 8
        }
    }

    /// Whether items of this class must never leave this machine.
    var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .alwaysThisDeviceOnly,
            .whenPasscodeSetThisDeviceOnly, .untilReboot:
            return true
        default: return false
        }
    }

    /// The class whose name (`rawValue`) is `bytes`, byte for byte, or `nil` (for these
    /// ASCII names the same answer as `init(rawValue:)`), found by comparing the name packed
    /// into one integer with each class's instead of comparing strings (it runs for every row
    /// a search opens).
    init?<Bytes: Collection<UInt8>>(nameBytes bytes: Bytes) {
        var length = 0
        var packed: UInt64 = 0
        for byte in bytes {
            length += 1
            if length > 8 { return nil }
            packed = packed << 8 | UInt64(byte)
        }
        for name in Self.packedNames where name.length == length && name.packed == packed {
            self = name.protection
            return
        }
        return nil
    }

    /// Every class's name as its UTF-8 bytes packed into an integer, with its length.
    private static let packedNames: [(length: Int, packed: UInt64, protection: ProtectionClass)] =
        allCases.map { protection in
            let name = protection.rawValue.utf8
            precondition(name.count <= 8, "an accessibility's name is packed into 8 bytes")
            return (name.count, name.reduce(0) { $0 << 8 | UInt64($1) }, protection)
        }
}
#endif
