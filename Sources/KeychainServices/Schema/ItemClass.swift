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
}
#endif
