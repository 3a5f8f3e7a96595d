import Foundation
import KeychainServices

/// When a keychain item can be read: its data-protection class (`kSecAttrAccessible`).
///
/// Keysmith never relies on the platform's implicit default: every store states its
/// accessibility, and ``KeychainStore`` defaults to ``afterFirstUnlockThisDeviceOnly``
/// (readable in the background after the first unlock, never copied to another device).
///
/// | Case | Readable | Leaves the device (backup, iCloud) | Good for |
/// |---|---|---|---|
/// | ``whenUnlocked`` | while unlocked | yes | foreground-only data that may migrate |
/// | ``whenUnlockedThisDeviceOnly`` | while unlocked | no | access tokens, payment PINs (with an ``AccessPolicy``) |
/// | ``afterFirstUnlock`` | after the first unlock until restart | yes | data background work reads |
/// | ``afterFirstUnlockThisDeviceOnly`` | after the first unlock until restart | no | refresh tokens, Bluetooth keys (default) |
/// | ``whenPasscodeSetThisDeviceOnly`` | while unlocked, only with a passcode set | no | the most sensitive data; deleted when the passcode is removed |
///
/// - Note: Apple's `kSecAttrAccessibleAlways` and `…AlwaysThisDeviceOnly` are deprecated and
///   not offered here. An existing item with one of them reports `nil` as its
///   ``KeychainItemAttributes/accessibility`` and is rewritten with the store's accessibility
///   on the next `set`.
public enum Accessibility: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Readable only while the device is unlocked; may migrate through backups.
    case whenUnlocked
    /// Readable only while the device is unlocked; never leaves this device.
    case whenUnlockedThisDeviceOnly
    /// Readable after the first unlock following a restart; may migrate through backups.
    case afterFirstUnlock
    /// Readable after the first unlock following a restart; never leaves this device.
    /// Keysmith's default.
    case afterFirstUnlockThisDeviceOnly
    /// Readable only while unlocked and only while a passcode is set; never leaves this
    /// device. Writing fails with `errSecNotAvailable` when no passcode is set.
    case whenPasscodeSetThisDeviceOnly

    /// The value stored in `kSecAttrAccessible` (one of the `kSecAttrAccessible…` constants):
    /// the one place this enum is mapped to Keychain Services.
    public var secValue: CFString {
        switch self {
        case .whenUnlocked: return kSecAttrAccessibleWhenUnlocked
        case .whenUnlockedThisDeviceOnly: return kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .afterFirstUnlock: return kSecAttrAccessibleAfterFirstUnlock
        case .afterFirstUnlockThisDeviceOnly: return kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .whenPasscodeSetThisDeviceOnly: return kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
        }
    }

    /// The accessibility for a `kSecAttrAccessible` value, as returned in attribute
    /// dictionaries.
    /// - Parameter secValue: A `kSecAttrAccessible…` value (`"ak"`, `"cku"`, …).
    /// - Returns: The case, or `nil` for a value this enum does not offer (the deprecated
    ///   `Always` classes) or does not know.
    public init?(secValue: String) {
        guard let match = Accessibility.allCases.first(where: { ($0.secValue as String) == secValue }) else {
            return nil
        }
        self = match
    }

    /// Whether items with this accessibility never leave the device (the `ThisDeviceOnly`
    /// classes). Such items cannot be synchronizable.
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlocked, .afterFirstUnlock: return false
        case .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: return true
        }
    }

    /// Whether items with this accessibility can be read while the device is locked (after
    /// the first unlock), which background work needs.
    public var isAvailableWhileLocked: Bool {
        self == .afterFirstUnlock || self == .afterFirstUnlockThisDeviceOnly
    }

    /// The case name, for example `afterFirstUnlockThisDeviceOnly`.
    public var description: String { rawValue }
}
