#if !canImport(Security)
import Foundation

/// Whether a keychain's protected items can be used now, as a device's lock state on iOS.
///
/// - ``beforeFirstUnlock``: the keychain has a passphrase and has not been unlocked since
///   the machine started (or since `lock(evictingFirstUnlock: true)`): only items
///   accessible `Always…` can be used.
/// - ``locked``: unlocked once, locked since: `AfterFirstUnlock…` and `Always…` items can
///   be used, `WhenUnlocked…` and `WhenPasscodeSetThisDeviceOnly` items cannot.
/// - ``unlocked``: every item can be used. A keychain without a passphrase is always
///   unlocked, as a device without a passcode.
public enum KeychainLockState: Sendable, Equatable {
    /// Not unlocked since the machine started.
    case beforeFirstUnlock
    /// Unlocked once, locked since.
    case locked
    /// Unlocked (or without a passphrase).
    case unlocked
}

extension KeychainEnvironment {
    /// The lock state of the current keychain (`KeychainEnvironment.current.directory`),
    /// as every process of the user sees it. A keychain that does not exist yet is
    /// ``KeychainLockState/unlocked`` (it has no passphrase); one that cannot be opened
    /// reports ``KeychainLockState/beforeFirstUnlock``. Asking creates no keychain.
    public static var lockState: KeychainLockState {
        guard exists else { return .unlocked }
        return (try? KeychainEngine.engine(for: current.directory, creating: false).keys.lockState) ?? .beforeFirstUnlock
    }

    /// Whether the current keychain's database exists (state calls other than
    /// ``setPassphrase(_:old:)`` never create a keychain).
    private static var exists: Bool {
        FileManager.default.fileExists(atPath: current.directory.appendingPathComponent(KeychainEngine.databaseName).path)
    }

    /// Sets (`old: nil`), changes, or removes (`new: nil`) the keychain passphrase.
    ///
    /// Changing it re-wraps the class keys (items are not re-encrypted); removing it
    /// deletes the `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly` items, and only those.
    /// A keychain that just got a passphrase is unlocked. The change is one transaction: an
    /// interrupted call leaves the old or the new passphrase in force.
    /// - Parameters:
    ///   - new: The new passphrase, or `nil` to remove it.
    ///   - old: The current passphrase, or `nil` when the keychain has none.
    /// - Throws: A ``KeychainStateError`` with `errSecAuthFailed` when `old` is wrong (nothing
    ///   changes), `errSecParam` for an empty new passphrase.
    public static func setPassphrase(_ new: String?, old: String?) throws {
        do {
            let engine = try KeychainEngine.engine(for: current.directory, forWriting: true)
            try engine.keys.setPassphrase(new, old: old, timeout: defaultAutoLock, transaction: engine.writeTransaction)
        } catch let failure as KeychainFailure {
            throw KeychainStateError(status: failure.status, reason: failure.reason, recovery: failure.recovery)
        }
    }

    /// Makes class A and C keys available; a wrong passphrase throws and changes nothing.
    /// Class A stays available for ``defaultAutoLock`` seconds (or until ``lock(evictingFirstUnlock:)``).
    /// - Parameter passphrase: The keychain passphrase.
    /// - Throws: A ``KeychainStateError`` with `errSecAuthFailed` for a wrong passphrase.
    public static func unlock(passphrase: String) throws {
        try unlock(passphrase: passphrase, timeout: defaultAutoLock)
    }

    /// Makes class A and C keys available; class A for `timeout` seconds.
    /// - Parameters:
    ///   - passphrase: The keychain passphrase.
    ///   - timeout: Seconds until class A locks again by itself; `nil` or 0: until locked.
    /// - Throws: A ``KeychainStateError`` with `errSecAuthFailed` for a wrong passphrase.
    public static func unlock(passphrase: String, timeout: UInt32?) throws {
        guard exists else { return }  // no keychain yet: no passphrase, always unlocked
        do {
            let engine = try KeychainEngine.engine(for: current.directory)
            try engine.keys.unlock(passphrase: passphrase, timeout: timeout, transaction: engine.writeTransaction)
        } catch let failure as KeychainFailure {
            throw KeychainStateError(status: failure.status, reason: failure.reason, recovery: failure.recovery)
        }
    }

    /// Forgets the class A keys; with `evictingFirstUnlock` also the class C keys (as a
    /// restart does). Affects every process of the user. Changes nothing on a keychain
    /// without a passphrase.
    /// - Parameter evictingFirstUnlock: Also lock `AfterFirstUnlock…` items.
    public static func lock(evictingFirstUnlock: Bool = false) throws {
        guard exists else { return }
        try run { $0.lock(evictingFirstUnlock: evictingFirstUnlock) }
    }

    /// Whether the current keychain has a passphrase.
    public static var hasPassphrase: Bool {
        (try? KeychainEngine.engine(for: current.directory, creating: false).keys.hasPassphrase) ?? false
    }

    /// Where the lock state is shared: `"kernel keyring"` (the user's keyring, shared by the
    /// user's processes) or `"process memory"` (this process only).
    public static var lockStateStore: String { LockStateStore.backend.rawValue }

    /// Where the current keychain's device key is kept, for people: `"key file PATH"`,
    /// `"systemd credential PATH"` or `"TPM 2.0 (TCTI), sealed key PATH"` (chosen with
    /// `KEYSMITH_KEY_STORE`: `auto`, `file`, `systemd-credential`, `tpm2`).
    public static var deviceKeyStore: String {
        DeviceKeyStore.describe(keyFile: current.directory.appendingPathComponent(KeychainEngine.keyFileName))
    }

    /// Seconds after an unlock until class A locks again by itself: `$KEYSMITH_AUTO_LOCK`
    /// when set (0: never), else 900 (15 minutes).
    public static var defaultAutoLock: UInt32? {
        if let text = ProcessInfo.processInfo.environment["KEYSMITH_AUTO_LOCK"], let seconds = UInt32(text) {
            return seconds == 0 ? nil : seconds
        }
        return 900
    }

    /// The number of items per accessibility (`"ak"`, `"dku"`, …) in the current keychain,
    /// plus `"other machine"` for ThisDeviceOnly items written on another machine (they
    /// are invisible here) and `"damaged"` for rows that cannot be classified.
    public static func itemCountsByAccessibility() throws -> [String: Int] {
        guard exists else { return [:] }
        return try run { try $0.itemCounts() }
    }

    private static func run<Result>(_ body: (KeyHierarchy) throws -> Result) throws -> Result {
        do {
            return try body(KeychainEngine.engine(for: current.directory).keys)
        } catch let failure as KeychainFailure {
            throw KeychainStateError(status: failure.status, reason: failure.reason, recovery: failure.recovery)
        }
    }
}

/// Why a lock-state call (unlock, passphrase change) failed: the `OSStatus` and a
/// sentence for people. Never contains the passphrase.
public struct KeychainStateError: Error, Sendable, CustomStringConvertible {
    /// The status: `errSecAuthFailed` for a wrong passphrase, `errSecParam` for bad input,
    /// `errSecNotAvailable` when the keychain or the keyring cannot be used.
    public let status: OSStatus
    /// What happened.
    public let reason: String
    /// What to do about it, if anything.
    public let recovery: String?

    /// The status's name, for example `errSecAuthFailed`.
    public var statusName: String { secErrorName(status) ?? "OSStatus" }

    /// A one-line summary: status, reason and recovery.
    public var description: String {
        var text = "\(statusName) (\(status)): \(reason)"
        if let recovery { text += " \(recovery)" }
        return text
    }
}
#endif
