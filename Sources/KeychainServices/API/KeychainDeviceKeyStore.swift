#if !canImport(Security)
import Foundation
import Synchronization

/// Moving the device key into the TPM, and sealing it again after a PCR change.
extension KeychainEnvironment {
    /// What ``moveDeviceKeyToTPM(passphrase:)`` did.
    public enum DeviceKeyMoveOutcome: Sendable, Equatable {
        /// The key was sealed by the TPM and the key file erased.
        case moved
        /// A move interrupted before was finished: the key file was erased.
        case finished
        /// The key was in the TPM already; nothing was left to do.
        case alreadyInTPM
    }

    /// The variables the TPM key store reads.
    private static var tpmVariables: [String: String] {
        ProcessVariables.named("KEYSMITH_TPM2_TCTI", "KEYSMITH_TPM2_PCRS", "KEYSMITH_TPM2_PIN", "KEYSMITH_KDF_PROFILE")
    }

    /// Whether moving the current keychain's key into the TPM needs its passphrase: the key
    /// is to be bound to PCRs (`KEYSMITH_TPM2_PCRS`) and the keychain has a passphrase (the
    /// passphrase makes the recovery seal that ``resealDeviceKey(passphrase:)`` opens).
    public static var deviceKeyMoveNeedsPassphrase: Bool {
        get throws {
            let sealed = current.directory.appendingPathComponent(TPM2KeyStore.blobFileName)
            let mask: UInt32
            if FileManager.default.fileExists(atPath: sealed.path) {
                mask = TPM2KeyStore.recordedPCRMask(at: sealed) ?? 0
                if FileManager.default.fileExists(atPath: TPM2RecoverySeal.url(besides: sealed).path) { return false }
            } else {
                do {
                    mask = try TPM2KeyStore.pcrMask(tpmVariables)
                } catch let failure as KeychainFailure {
                    throw KeychainStateError(status: failure.status, reason: failure.reason, recovery: failure.recovery)
                }
            }
            return try mask != 0 && passphraseIsSet()
        }
    }

    /// Moves the current keychain's device key from its key file (`device.key`) into the TPM
    /// (`KEYSMITH_TPM2_TCTI`; bound to `KEYSMITH_TPM2_PCRS`, with `KEYSMITH_TPM2_PIN` when
    /// set) and erases the key file (overwritten, synced, unlinked, the directory synced).
    /// A crash at any step leaves a keychain that opens with all its items; calling this
    /// again finishes an interrupted move.
    /// - Parameter passphrase: The keychain passphrase when ``deviceKeyMoveNeedsPassphrase``.
    /// - Throws: A ``KeychainStateError``: the TPM's errors with cause and fix,
    ///   errSecAuthFailed for a wrong passphrase (nothing changes).
    @discardableResult
    public static func moveDeviceKeyToTPM(passphrase: String? = nil) throws -> DeviceKeyMoveOutcome {
        do {
            switch try DeviceKeyMove.moveToTPM(directory: current.directory, passphrase: passphrase, variables: tpmVariables) {
            case .moved: return .moved
            case .finished: return .finished
            case .alreadyInTPM: return .alreadyInTPM
            }
        } catch let failure as KeychainFailure {
            throw KeychainStateError(status: failure.status, reason: failure.reason, recovery: failure.recovery)
        }
    }

    /// Seals the current keychain's device key again to the PCRs' current values, after a
    /// firmware or boot change made the TPM refuse it: the keychain passphrase opens the
    /// recovery seal made with it (the TPM checks the passphrase, and counts wrong ones
    /// towards its dictionary-attack lockout). A wrong passphrase changes nothing.
    /// - Returns: The PCR numbers the key is bound to, as text (`"7"`, `"0,7"`).
    /// - Throws: A ``KeychainStateError``: errSecAuthFailed for a wrong passphrase,
    ///   errSecItemNotFound when the keychain has no recovery seal.
    @discardableResult
    public static func resealDeviceKey(passphrase: String) throws -> String {
        do {
            return TPM2KeyStore.pcrList(try DeviceKeyMove.reseal(directory: current.directory, passphrase: passphrase, variables: tpmVariables))
        } catch let failure as KeychainFailure {
            throw KeychainStateError(status: failure.status, reason: failure.reason, recovery: failure.recovery)
        }
    }

    /// The TPM PIN given in this process (``useTPMPIN(_:)``).
    private static let givenTPMPIN = Mutex<String?>(nil)

    /// Sets the TPM PIN this process uses, instead of `KEYSMITH_TPM2_PIN`: for a keychain
    /// whose device key is sealed with a PIN, and for one created now (a new keychain in
    /// the TPM key store gets the PIN). `nil` goes back to the variable.
    public static func useTPMPIN(_ pin: String?) {
        givenTPMPIN.withLock { $0 = pin.flatMap { $0.isEmpty ? nil : $0 } }
    }

    /// The TPM PIN in force: the one given with ``useTPMPIN(_:)``, else `KEYSMITH_TPM2_PIN`.
    static func tpmPIN(_ variables: [String: String]) -> String? {
        if let given = givenTPMPIN.withLock({ $0 }) { return given }
        guard let pin = variables["KEYSMITH_TPM2_PIN"], !pin.isEmpty else { return nil }
        return pin
    }

    /// Whether a TPM PIN is in force (given, or in `KEYSMITH_TPM2_PIN`).
    public static var tpmPINIsGiven: Bool { tpmPIN(ProcessVariables.named("KEYSMITH_TPM2_PIN")) != nil }

    /// Whether the current keychain's device key is sealed with a TPM PIN.
    public static var deviceKeyNeedsTPMPIN: Bool {
        TPM2KeyStore.needsPIN(at: current.directory.appendingPathComponent(TPM2KeyStore.blobFileName))
    }

    /// A warning for the current keychain when the TPM's dictionary-attack lockout is all
    /// that limits guessing its TPM PIN or, through the recovery seal, its passphrase, and
    /// the TPM's lockout hierarchy has no authorization value (the state of a TPM nobody
    /// configured): then any program that may use the TPM resets the lockout counter
    /// (`tpm2_dictionarylockout --clear-lockout`) and keeps guessing. `nil` when there is
    /// nothing to guess, the lockout hierarchy has a value, or the TPM cannot tell.
    public static var tpmLockoutWarning: String? {
        let sealed = current.directory.appendingPathComponent(TPM2KeyStore.blobFileName)
        guard FileManager.default.fileExists(atPath: sealed.path) else { return nil }
        var guessed: [String] = []
        if TPM2KeyStore.needsPIN(at: sealed) { guessed.append("the TPM PIN") }
        if FileManager.default.fileExists(atPath: TPM2RecoverySeal.url(besides: sealed).path) {
            guessed.append("the keychain passphrase (against the recovery seal)")
        }
        guard !guessed.isEmpty, TPM2KeyStore.lockoutAuthorizationIsSet(tcti: TPM2KeyStore.tcti(tpmVariables)) == false else { return nil }
        return "the TPM's lockout hierarchy has no authorization value, so any program that may use the TPM can reset its "
            + "dictionary-attack counter (tpm2_dictionarylockout --clear-lockout) and go on guessing "
            + guessed.joined(separator: " and ") + ". To make the lockout hold, give the lockout hierarchy a secret and keep "
            + "it offline: tpm2_changeauth -c lockout NEW-SECRET (it is then needed to clear a lockout, and to clear the TPM)."
    }

    /// After a passphrase change: the recovery seal of a PCR-bound TPM key follows the
    /// passphrase (sealed again for the new one, removed with it).
    static func updateRecoverySeal(deviceKey: SecretKey, passphrase: String?) throws {
        let sealed = current.directory.appendingPathComponent(TPM2KeyStore.blobFileName)
        guard FileManager.default.fileExists(atPath: sealed.path) else { return }
        try TPM2RecoverySeal.update(sealedKeyFile: sealed, deviceKey: deviceKey, passphrase: passphrase, variables: tpmVariables)
    }
}
#endif
