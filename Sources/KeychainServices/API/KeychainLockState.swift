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
    /// Setting, changing or removing it replaces the keys it protects (the class keys of the
    /// items accessible when unlocked and after the first unlock, and the passcode key of
    /// access control) and encrypts those items again under the new keys, so a copy of the
    /// keychain from before the change opens nothing written after it. Removing it
    /// deletes the `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly` items, and only those.
    /// The lock state stays as it was (a locked keychain stays locked); a keychain that
    /// just got its first passphrase is unlocked. The change is one transaction: an
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
            try updateRecoverySeal(deviceKey: engine.keys.deviceKey, passphrase: new)
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

    /// Deletes the current keychain: its unlock state in the kernel keyring (both secrets,
    /// in every process of the user), then its files (`keychain.db` with its WAL and
    /// shared-memory files, `device.key` or the TPM-sealed `device.tpm2` and
    /// `device.recovery.tpm2`, `keychain.anchor`, `keychain.verified`), then the
    /// directory when nothing else is left in it. A TPM keychain's rollback counter is removed
    /// from the TPM. Its items are gone for good. Nothing
    /// happens when there is no keychain.
    /// - Returns: whether a keychain was deleted.
    /// - Throws: A ``KeychainStateError`` when a file cannot be removed (what was removed
    ///   before stays removed).
    @discardableResult
    public static func deleteKeychain() throws -> Bool {
        let directory = current.directory
        guard exists else { return false }
        KeychainEngine.close(directory: directory)
        // The keychain id from the database itself (an engine would check the whole
        // database first, and a damaged keychain must be deletable too).
        if let database = try? Database(path: directory.appendingPathComponent(KeychainEngine.databaseName).path, create: false),
            let statement = try? database.cachedStatement("SELECT value FROM meta WHERE key = 'keychain-id'"),
            (try? statement.step()) == true
        {
            let keychainID = statement.data(at: 0)
            statement.reset()
            LockStateStore.removeAll(keychainID: keychainID)
            // A TPM keychain's rollback counter is removed from the TPM's NV memory (the
            // device key, unsealed by the TPM, names it; a keychain whose key cannot be had
            // is deleted all the same).
            let keyFile = directory.appendingPathComponent(KeychainEngine.keyFileName)
            if let tcti = DeviceKeyStore.tpm2Configuration(keyFile: keyFile),
                let deviceKey = try? DeviceKeyStore.load(keyFile: keyFile, create: false)
            {
                TPM2RollbackCounter(tcti: tcti, deviceKey: deviceKey, keychainID: keychainID).removeFromTPM()
            }
        }
        let names = [
            KeychainEngine.databaseName, KeychainEngine.databaseName + "-wal", KeychainEngine.databaseName + "-shm",
            KeychainEngine.keyFileName, RollbackAnchor.fileName, RollbackAnchor.resetFileName, VerificationRecord.fileName,
            TPM2KeyStore.blobFileName, TPM2RecoverySeal.fileName,
        ]
        for name in names {
            let path = directory.appendingPathComponent(name).path
            if unlink(path) != 0 && errno != ENOENT {
                throw KeychainStateError(
                    status: errSecIO, reason: "Cannot remove \(path): \(String(cString: strerror(errno))).",
                    recovery: "Check the permissions of the keychain directory, then delete the keychain again.")
            }
        }
        rmdir(directory.path)  // only when empty
        return true
    }

    /// Whether the current keychain has a passphrase (`false` also when there is no keychain
    /// or it cannot be opened; ``passphraseIsSet()`` tells those apart).
    public static var hasPassphrase: Bool {
        (try? KeychainEngine.engine(for: current.directory, creating: false).keys.hasPassphrase) ?? false
    }

    /// Whether the current keychain has a passphrase, read afresh.
    /// - Throws: errSecItemNotFound when there is no keychain; the error that keeps it from
    ///   being read otherwise (errSecDecode for a database refused as rolled back or changed
    ///   outside Keysmith), which a keychain without a passphrase must not be taken for.
    public static func passphraseIsSet() throws -> Bool {
        try KeychainEngine.engine(for: current.directory, creating: false).keys.passphraseIsSet()
    }

    /// Where the lock state is shared: `"kernel keyring"` (the user's keyring, shared by the
    /// user's processes) or `"process memory"` (this process only).
    public static var lockStateStore: String { LockStateStore.backend.rawValue }

    /// Whether the lock state is kept for the processes of this user namespace only (the
    /// kernel keyring, in a user namespace other than the machine's first one: `unshare
    /// --user`, a rootless container): a lock or unlock here does not reach processes
    /// outside it, which keep their own state.
    public static var lockStateIsLocalToUserNamespace: Bool {
        LockStateStore.backend == .kernelKeyring && LockStateStore.isInNestedUserNamespace
    }

    /// Where the current keychain's device key is kept, for people: `"key file PATH"`,
    /// `"systemd credential PATH"` or `"TPM 2.0 (TCTI), sealed key PATH"` (chosen with
    /// `KEYSMITH_KEY_STORE`: `auto`, `file`, `systemd-credential`, `tpm2`).
    public static var deviceKeyStore: String {
        DeviceKeyStore.describe(keyFile: current.directory.appendingPathComponent(KeychainEngine.keyFileName))
    }

    /// The TPM NV monotonic counter the current keychain's rollback anchor is bound to (TPM
    /// key store only): its NV index (`0x…`) and the value the anchor records (the TPM's, or
    /// one more while an increment is under way). `nil` for other key stores, or before the
    /// first open with the TPM store bound it.
    public static var rollbackCounter: (nvIndex: String, value: UInt64)? {
        guard exists, let engine = try? KeychainEngine.engine(for: current.directory),
            let binding = (try? engine.writer.storage.anchor?.read())?.counter
        else { return nil }
        return (TPM2RollbackCounter.hexadecimal(binding.handle), binding.value)
    }

    /// Seconds after an unlock until class A locks again by itself: `$KEYSMITH_AUTO_LOCK`
    /// when set (0: never), else the keychain's own setting (``setAutoLock(_:)``), else 900
    /// (15 minutes).
    public static var defaultAutoLock: UInt32? {
        if let text = ProcessInfo.processInfo.environment["KEYSMITH_AUTO_LOCK"], let seconds = UInt32(text) {
            return seconds == 0 ? nil : seconds
        }
        switch autoLockSetting {
        case .never?: return nil
        case .after(let seconds)?: return seconds
        case nil: return 900
        }
    }

    /// When an unlocked keychain locks itself again (its items accessible only when unlocked).
    public enum AutoLock: Sendable, Equatable {
        /// Only on `lock` (or a restart).
        case never
        /// This many seconds after the unlock.
        case after(UInt32)
    }

    /// The file in the keychain directory that holds its auto-lock setting (seconds, `0` for never).
    static let autoLockFileName = "auto-lock"

    /// The current keychain's own auto-lock setting, if one was made with ``setAutoLock(_:)``.
    public static var autoLockSetting: AutoLock? {
        let url = current.directory.appendingPathComponent(autoLockFileName)
        guard let text = try? String(contentsOf: url, encoding: .utf8),
            let seconds = UInt32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        return seconds == 0 ? .never : .after(seconds)
    }

    /// Sets when the current keychain locks itself after an unlock (as macOS's
    /// `set-keychain-settings -t`): kept with the keychain for the next unlocks (unless
    /// `KEYSMITH_AUTO_LOCK` or an explicit timeout says otherwise), and applied now to an
    /// unlocked keychain, counted from now.
    /// - Parameter setting: The new setting.
    /// - Returns: Whether the keychain was unlocked, so that the setting applies now too.
    /// - Throws: A ``KeychainStateError`` when the keychain does not exist (errSecNoSuchKeychain)
    ///   or the setting cannot be written.
    @discardableResult
    public static func setAutoLock(_ setting: AutoLock) throws -> Bool {
        guard exists else {
            throw KeychainStateError(
                status: errSecNoSuchKeychain, reason: "There is no keychain in \(current.directory.path).",
                recovery: "Create one first (keysmith create).")
        }
        let seconds: UInt32
        switch setting {
        case .never: seconds = 0
        case .after(let value): seconds = value
        }
        do {
            let url = current.directory.appendingPathComponent(autoLockFileName)
            try Data("\(seconds)\n".utf8).write(to: url, options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        } catch {
            throw KeychainStateError(
                status: errSecIO, reason: "The auto-lock setting could not be written: \(error.localizedDescription).",
                recovery: "Check the keychain directory's permissions.")
        }
        guard lockState == .unlocked, hasPassphrase,
            let keychainID = try? KeychainEngine.engine(for: current.directory, creating: false).keys.keychainID
        else { return false }
        return LockStateStore.setTimeout(.a, keychainID: keychainID, timeout: seconds)
    }

    /// How long the current keychain stays unlocked.
    public enum AutoLockTimeLeft: Sendable, Equatable {
        /// It is not unlocked (locked, or no keychain), or has no passphrase (always unlocked).
        case notCounting
        /// Unlocked until `lock` (or a restart).
        case untilLocked
        /// Unlocked for about this many more seconds (whole minutes above a minute, rounded
        /// down, where the lock state is kept in the kernel keyring).
        case seconds(UInt64)
    }

    /// How long the current keychain, unlocked, stays so before it locks itself.
    public static var autoLockTimeLeft: AutoLockTimeLeft {
        guard exists, hasPassphrase, lockState == .unlocked,
            let keychainID = try? KeychainEngine.engine(for: current.directory, creating: false).keys.keychainID
        else { return .notCounting }
        switch LockStateStore.timeLeft(.a, keychainID: keychainID) {
        case .none: return .notCounting
        case .unlimited: return .untilLocked
        case .seconds(let seconds): return .seconds(seconds)
        }
    }

    /// Creates the current keychain without a passphrase, if it does not exist yet (as the
    /// first item added would); an existing keychain is left as it is.
    /// - Throws: A ``KeychainStateError`` when the directory or its files cannot be made.
    public static func createWithoutPassphrase() throws {
        guard !exists else { return }
        do {
            _ = try KeychainEngine.engine(for: current.directory, forWriting: true)
        } catch let failure as KeychainFailure {
            throw KeychainStateError(status: failure.status, reason: failure.reason, recovery: failure.recovery)
        }
    }

    /// Whether the current keychain exists (its database is there).
    public static var keychainExists: Bool { exists }

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
