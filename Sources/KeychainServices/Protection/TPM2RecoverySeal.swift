#if !canImport(Security)
import CLoadOnUse
import CSodium
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The second TPM seal of a PCR-bound device key, opened by the keychain passphrase instead
/// of the PCRs: what lets `keysmith reseal-device-key` seal the key again after a firmware
/// or boot change, once the passphrase has proved the user.
///
/// It exists only for a keychain whose device key is sealed by the TPM, bound to PCRs
/// (`KEYSMITH_TPM2_PCRS`), and that has a passphrase. The device key is sealed a second
/// time by the same TPM, under the same storage primary key, in an object without a PCR
/// policy whose authorization value is derived from the passphrase (Argon2id with the
/// parameters and salt stored in the file, then `crypto_kdf`). So:
///
/// - a copy of the directory opens nothing anywhere else, passphrase or not: the object
///   is bound to this TPM like `device.tpm2`;
/// - on this machine, the passphrase alone (without the PCR values) gives the device key,
///   and with it the class D items: the PCR binding stops whoever boots another system
///   without the passphrase, not whoever knows it;
/// - guessing the passphrase is up to the TPM: the object is under its dictionary-attack
///   protection (not `noDA`), so wrong passphrases lock the TPM out for a while after a few
///   tries; the value never crosses the bus in the clear (salted sessions).
///
/// When the device key is sealed with a TPM PIN too, so is the recovery seal: its
/// authorization value is then a keyed BLAKE2b hash of the passphrase's value under the
/// PIN's (``TPM2KeyStore/pinAuth(_:)``), so the passphrase alone does not get round the PIN
/// (sealing again asks for the PIN anyway, to keep it on the new seal).
///
/// A passphrase change seals it again for the new passphrase (``update(sealedKeyFile:deviceKey:passphrase:variables:)``);
/// removing the passphrase removes it.
///
/// Format of `device.recovery.tpm2`: the 8-byte magic `KSTPMR01` (`KSTPMR02`: the PIN is
/// part of the authorization value), the 33-byte Argon2id record (``PassphraseKey/record``),
/// then the TPM blob (as in `device.tpm2`).
enum TPM2RecoverySeal {
    static let fileName = "device.recovery.tpm2"
    static let magic = Array("KSTPMR01".utf8)
    /// The magic of a recovery seal whose authorization value needs the TPM PIN too.
    static let magicWithPIN = Array("KSTPMR02".utf8)
    static let recordLength = 33

    /// The recovery seal beside the sealed key file `sealedKeyFile` (`device.tpm2`).
    static func url(besides sealedKeyFile: URL) -> URL {
        sealedKeyFile.deletingLastPathComponent().appendingPathComponent(fileName)
    }

    /// The authorization value of the passphrase under `parameters`, and of the PIN's value
    /// `pin` when the device key is sealed with a PIN.
    private static func authValue(_ passphrase: String, _ parameters: PassphraseKey, pin: SecretKey?) throws -> SecretKey {
        let stretched = try parameters.stretch(passphrase.utf8)
        let value = Sodium.deriveKey(from: stretched, id: 1, context: "kstpmrc1")
        guard let pin else { return value }
        let combined = SecretKey(uninitializedCount: Sodium.keyLength)
        combined.withUnsafeMutableBytes { out in
            value.withUnsafeBytes { input in
                pin.withUnsafeBytes { key in
                    _ = crypto_generichash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
                        input.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                        key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count)
                }
            }
        }
        return combined
    }

    /// The PIN's value when the sealed key file `sealedKeyFile` needs a PIN (`nil` when it
    /// does not). - Throws: errSecInteractionNotAllowed when it needs one and none is given.
    private static func pinIfNeeded(_ sealedKeyFile: URL, _ variables: [String: String]) throws -> SecretKey? {
        guard TPM2KeyStore.needsPIN(at: sealedKeyFile) else { return nil }
        guard let pin = TPM2KeyStore.pinAuth(variables) else {
            throw KeychainFailure(
                errSecInteractionNotAllowed,
                "The device key is sealed with a TPM PIN: its recovery seal needs the PIN too, with the keychain passphrase.",
                recovery: "Set KEYSMITH_TPM2_PIN, or run keysmith from a terminal, where it asks for the PIN.")
        }
        return pin
    }

    /// Seals `deviceKey` for `passphrase` into the recovery seal beside `sealedKeyFile`,
    /// replacing the one there (atomically: a crash leaves the old seal or the new one).
    static func write(sealedKeyFile: URL, deviceKey: SecretKey, passphrase: String, variables: [String: String]) throws {
        let parameters = PassphraseKey.fresh(variables)
        let pin = try pinIfNeeded(sealedKeyFile, variables)
        let auth = try authValue(passphrase, parameters, pin: pin)
        let file = url(besides: sealedKeyFile)
        let blob = try TPM2KeyStore.seal(
            deviceKey, tcti: TPM2KeyStore.tcti(variables), pcrMask: 0, auth: auth, file: file,
            authName: pin == nil ? "keychain passphrase" : "keychain passphrase or TPM PIN")
        try DeviceKeyMove.replace((pin == nil ? magic : magicWithPIN) + [UInt8](parameters.record) + blob, at: file, naming: "the TPM recovery seal")
    }

    /// Keeps the recovery seal in step with a passphrase change: sealed again for `passphrase`
    /// when the keychain's key is sealed by the TPM and bound to PCRs, removed when the
    /// passphrase was removed (`nil`).
    static func update(sealedKeyFile: URL, deviceKey: SecretKey, passphrase: String?, variables: [String: String]) throws {
        let file = url(besides: sealedKeyFile)
        guard let passphrase, let mask = TPM2KeyStore.recordedPCRMask(at: sealedKeyFile), mask != 0 else {
            remove(file)
            return
        }
        do {
            try write(sealedKeyFile: sealedKeyFile, deviceKey: deviceKey, passphrase: passphrase, variables: variables)
        } catch let failure as KeychainFailure {
            // The old seal would still open with the old passphrase: it goes.
            remove(file)
            throw KeychainFailure(
                failure.status,
                "The passphrase was changed, but the TPM recovery seal could not be made for it: \(failure.reason) Until it is, a PCR change can be recovered from only with an export.",
                recovery: "Fix the cause, then run 'keysmith passwd' again (the same passphrase may be given as the new one).")
        }
    }

    /// The device key from the recovery seal beside `sealedKeyFile`, opened with `passphrase`.
    /// - Throws: errSecAuthFailed for a wrong passphrase (the TPM counts it towards its
    ///   lockout); errSecItemNotFound when there is no recovery seal.
    static func recover(sealedKeyFile: URL, passphrase: String, variables: [String: String]) throws -> SecretKey {
        let file = url(besides: sealedKeyFile)
        let fd = open(file.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT {
                throw KeychainFailure(
                    errSecItemNotFound,
                    "This keychain has no TPM recovery seal (\(file.path)): it is made only for a keychain with a passphrase whose device key is bound to PCRs.",
                    recovery: "Boot the configuration the keychain was sealed under and move its items with 'keysmith export' and 'keysmith import', or import an export made before.")
            }
            throw KeychainFailure(errSecNotAvailable, "Cannot open the TPM recovery seal \(file.path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        try KeychainFiles.requirePrivate(fd: fd, path: file.path, kind: "TPM recovery seal")
        let capacity = magic.count + recordLength + Int(KEYSMITH_TPM2_BLOB_CAPACITY) + 1
        var buffer = [UInt8](repeating: 0, count: capacity)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        let withPIN = Array(buffer[0..<magic.count]) == magicWithPIN
        guard count > magic.count + recordLength, count < capacity, Array(buffer[0..<magic.count]) == magic || withPIN,
            let parameters = PassphraseKey(record: Data(buffer[magic.count..<(magic.count + recordLength)]))
        else {
            throw KeychainFailure(
                errSecDecode, "The TPM recovery seal \(file.path) is damaged.",
                recovery: "Recover with an export made before ('keysmith import' into a new keychain).")
        }
        let blob = Array(buffer[(magic.count + recordLength)..<count])
        let pin: SecretKey?
        if withPIN {
            guard let given = TPM2KeyStore.pinAuth(variables) else {
                throw KeychainFailure(
                    errSecInteractionNotAllowed, "The TPM recovery seal \(file.path) needs the TPM PIN too, with the keychain passphrase.",
                    recovery: "Set KEYSMITH_TPM2_PIN, or run keysmith from a terminal, where it asks for the PIN.")
            }
            pin = given
        } else {
            pin = nil
        }
        let auth = try authValue(passphrase, parameters, pin: pin)
        return try TPM2KeyStore.unseal(
            blob, from: file, tcti: TPM2KeyStore.tcti(variables), auth: auth,
            authName: pin == nil ? "keychain passphrase" : "keychain passphrase or TPM PIN")
    }

    /// Removes the recovery seal (when there is one) and syncs the directory.
    static func remove(_ file: URL) {
        if unlink(file.path) == 0 { KeychainFiles.syncDirectory(file.deletingLastPathComponent()) }
    }
}
#endif
