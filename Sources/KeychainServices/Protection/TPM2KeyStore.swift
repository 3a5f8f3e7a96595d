#if !canImport(Security)
import CLoadOnUse
import CSodium
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The TPM key store (`KEYSMITH_KEY_STORE=tpm2`): the device key is sealed by the machine's
/// TPM 2.0, and only the sealed blob, `device.tpm2`, is stored beside the database.
///
/// The key is 32 random bytes sealed in a TPM data object under the TPM's storage primary
/// key (derived inside the TPM from its storage seed, never outside it). The blob opens
/// nothing without the TPM that sealed it: on another machine (or after the TPM was
/// cleared) the primary key differs and the unseal is refused. With
/// `KEYSMITH_TPM2_PCRS` (for example `7`, or `0,7`) at creation, the object also requires the
/// selected SHA-256 PCRs to hold the values they held then. The TPM is reached through
/// `KEYSMITH_TPM2_TCTI`, a TCTI configuration as tpm2-tools takes it (default
/// `device:/dev/tpmrm0`, the kernel's resource manager); tpm2-tss is loaded on first use.
///
/// With `KEYSMITH_TPM2_PIN` at creation (or `keysmith create --tpm-pin`), the object also has
/// an authorization value derived from the PIN: every open then needs the PIN, and wrong
/// PINs count towards the TPM's dictionary-attack lockout (the object is not `noDA`).
///
/// Format of `device.tpm2`: the 8-byte magic `KSTPM201`, then the TPM blob (the PCR mask and
/// whether a PIN is needed, the storage key's name, the sealed object's public and private
/// areas).
enum TPM2KeyStore {
    static let blobFileName = "device.tpm2"
    static let magic = Array("KSTPM201".utf8)
    static let defaultTCTI = "device:/dev/tpmrm0"
    /// The header bit of a blob whose object needs an authorization value.
    static let needsAuthBit = UInt32(KEYSMITH_TPM2_BLOB_NEEDS_AUTH)

    /// The TCTI configuration in force.
    static func tcti(_ variables: [String: String]) -> String {
        guard let value = variables["KEYSMITH_TPM2_TCTI"], !value.isEmpty else { return defaultTCTI }
        return value
    }

    /// The PCRs a new keychain's key is bound to: `KEYSMITH_TPM2_PCRS`, PCR numbers 0 to 23
    /// separated by `,` or `+` (as systemd-cryptenroll takes them); none when unset.
    static func pcrMask(_ variables: [String: String]) throws -> UInt32 {
        guard let text = variables["KEYSMITH_TPM2_PCRS"], !text.isEmpty else { return 0 }
        var mask: UInt32 = 0
        for part in text.split(whereSeparator: { $0 == "," || $0 == "+" }) {
            guard let index = UInt32(part), index < 24 else {
                throw KeychainFailure(
                    errSecParam, "KEYSMITH_TPM2_PCRS=\(text) is not a list of PCR numbers.",
                    recovery: "Give PCR numbers from 0 to 23 separated by commas, for example KEYSMITH_TPM2_PCRS=7.")
            }
            mask |= 1 << index
        }
        return mask
    }

    /// "7" or "0,7" for a mask.
    static func pcrList(_ mask: UInt32) -> String {
        (0..<24).filter { mask & (1 << $0) != 0 }.map(String.init).joined(separator: ",")
    }

    /// The PCR mask recorded in the sealed key file at `url`, or `nil` when it cannot be read.
    static func recordedPCRMask(at url: URL) -> UInt32? {
        guard let blob = try? readBlob(at: url) else { return nil }
        return pcrMask(ofBlob: blob)
    }

    /// The PCR mask in a blob's header (0 for a damaged one).
    static func pcrMask(ofBlob blob: [UInt8]) -> UInt32 {
        guard blob.count >= 4 else { return 0 }
        return blob.prefix(4).reduce(0) { $0 << 8 | UInt32($1) } & 0xFF_FFFF
    }

    /// Whether a blob's object needs the TPM PIN.
    static func needsPIN(_ blob: [UInt8]) -> Bool {
        blob.count >= 4 && blob.prefix(4).reduce(0) { $0 << 8 | UInt32($1) } & needsAuthBit != 0
    }

    /// Whether the sealed key file at `url` needs the TPM PIN (false when it cannot be read).
    static func needsPIN(at url: URL) -> Bool {
        guard let blob = try? readBlob(at: url) else { return false }
        return needsPIN(blob)
    }

    /// The authorization value for the TPM PIN in force (given in this process, else
    /// `KEYSMITH_TPM2_PIN`; `nil` when there is none): a keyed BLAKE2b hash of the PIN's
    /// bytes, so a PIN of any length fits the TPM's 32 bytes. Guessing is left to the TPM,
    /// which limits it (dictionary-attack lockout); the value itself crosses the bus only
    /// inside salted session HMACs.
    static func pinAuth(_ variables: [String: String]) -> SecretKey? {
        guard let pin = KeychainEnvironment.tpmPIN(variables) else { return nil }
        return authValue(Array(pin.utf8), purpose: "keysmith tpm2 pin")
    }

    /// A 32-byte authorization value: BLAKE2b of `secret` keyed with `purpose`.
    static func authValue(_ secret: [UInt8], purpose: String) -> SecretKey {
        var secret = secret
        defer { secret.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
        let key = Array(purpose.utf8)
        let value = SecretKey(uninitializedCount: Sodium.keyLength)
        value.withUnsafeMutableBytes { out in
            secret.withUnsafeBytes { input in
                key.withUnsafeBytes { k in
                    _ = crypto_generichash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
                        input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
                }
            }
        }
        return value
    }

    /// Seals `key` with the TPM at `tcti`, bound to the PCRs of `pcrMask` and, with `auth`,
    /// to that authorization value. `file` names the key file in errors.
    static func seal(_ key: SecretKey, tcti: String, pcrMask: UInt32, auth: SecretKey?, file: URL, authName: String = "TPM PIN") throws -> [UInt8] {
        var blob = [UInt8](repeating: 0, count: Int(KEYSMITH_TPM2_BLOB_CAPACITY))
        var length = 0
        let outcome = key.withUnsafeBytes { secret in
            withAuth(auth) { authPointer, authLength in
                tcti.withCString {
                    tpm2_sealed_key_seal_with_auth(
                        $0, secret.baseAddress!.assumingMemoryBound(to: UInt8.self), secret.count, pcrMask, authPointer, authLength,
                        &blob, &length)
                }
            }
        }
        guard outcome.failure == KEYSMITH_TPM2_SUCCESS else {
            throw failure(outcome, tcti: tcti, file: file, pcrMask: pcrMask, authName: authName)
        }
        return Array(blob[0..<length])
    }

    private static func withAuth<Result>(_ auth: SecretKey?, _ body: (UnsafePointer<UInt8>?, Int) -> Result) -> Result {
        guard let auth else { return body(nil, 0) }
        return auth.withUnsafeBytes { body($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }
    }

    /// The device key sealed in `url`, sealing a new one when there is none and `create` is
    /// true. Two processes that create at once agree on one key (the first blob installed).
    static func loadOrCreate(at url: URL, create: Bool, variables: [String: String]) throws -> SecretKey {
        let tcti = tcti(variables)
        let pin = pinAuth(variables)
        if let blob = try readBlob(at: url) {
            DeviceKeyFile.removeInterruptedCopies(of: url)
            return try unseal(blob, from: url, tcti: tcti, auth: needsPIN(blob) ? pin : nil)
        }
        guard create else {
            throw KeychainFailure(
                errSecNotAvailable,
                "The keychain's TPM-sealed key file \(url.path) is missing, so its items cannot be decrypted.",
                recovery: "Restore the file from the backup made with the keychain (it opens only with this machine's TPM), or move the keychain aside and start a new one.")
        }
        let pcrMask = try pcrMask(variables)
        let key = SecretKey.random()
        let blob = try seal(key, tcti: tcti, pcrMask: pcrMask, auth: pin, file: url)
        try install(magic + blob, at: url)
        // Another process may have installed its blob first: everybody uses the one in place.
        guard let installed = try readBlob(at: url) else {
            throw KeychainFailure(errSecIO, "The TPM-sealed key file \(url.path) vanished right after it was created.")
        }
        if installed == blob { return key }
        return try unseal(installed, from: url, tcti: tcti, auth: needsPIN(installed) ? pin : nil)
    }

    /// The secret sealed in `blob` (read from `url`, named in errors), with the authorization
    /// value `auth` when the object needs one (`authName` says what it is, for errors).
    static func unseal(_ blob: [UInt8], from url: URL, tcti: String, auth: SecretKey?, authName: String = "TPM PIN") throws -> SecretKey {
        let key = SecretKey(uninitializedCount: Sodium.keyLength)
        var length = 0
        let outcome = key.withUnsafeMutableBytes { out in
            withAuth(auth) { authPointer, authLength in
                tcti.withCString {
                    tpm2_sealed_key_unseal_with_auth(
                        $0, blob, blob.count, authPointer, authLength, out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
                        &length)
                }
            }
        }
        guard outcome.failure == KEYSMITH_TPM2_SUCCESS else {
            throw failure(outcome, tcti: tcti, file: url, pcrMask: pcrMask(ofBlob: blob), authName: authName)
        }
        guard length == Sodium.keyLength else {
            throw KeychainFailure(
                errSecDecode, "The TPM-sealed key file \(url.path) holds a key of the wrong size.",
                recovery: "Restore it from the backup made with the keychain.")
        }
        return key
    }

    /// The blob in `url` (without the magic), or `nil` when there is no file.
    static func readBlob(at url: URL) throws -> [UInt8]? {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw KeychainFailure(
                errSecNotAvailable, "Cannot open the TPM-sealed key file \(url.path): \(String(cString: strerror(errno))).",
                recovery: "Check that the file belongs to this user and is not a symbolic link.")
        }
        defer { close(fd) }
        try KeychainFiles.requirePrivate(fd: fd, path: url.path, kind: "TPM-sealed key file")
        var buffer = [UInt8](repeating: 0, count: magic.count + Int(KEYSMITH_TPM2_BLOB_CAPACITY) + 1)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > magic.count, count <= magic.count + Int(KEYSMITH_TPM2_BLOB_CAPACITY), Array(buffer[0..<magic.count]) == magic else {
            throw KeychainFailure(
                errSecDecode, "The TPM-sealed key file \(url.path) is damaged (wrong size or header).",
                recovery: "Restore it from the backup made with the keychain; without it the keychain's items cannot be decrypted.")
        }
        return Array(buffer[magic.count..<count])
    }

    /// Writes `bytes` to a new file and links it to `url` unless a file is there already.
    static func install(_ bytes: [UInt8], at url: URL) throws {
        try KeychainFiles.installUnlessPresent(bytes, at: url, naming: "the TPM-sealed key file")
    }

    /// Whether the TPM's lockout hierarchy has an authorization value (`nil` when the TPM
    /// cannot tell). Without one, any program that may use the TPM resets its
    /// dictionary-attack counter, and the few guesses a PIN or the recovery seal's
    /// passphrase get become as many as the TPM answers.
    static func lockoutAuthorizationIsSet(tcti: String) -> Bool? {
        var isSet: Int32 = 0
        let outcome = tcti.withCString { tpm2_sealed_key_lockout_auth_is_set($0, &isSet) }
        return outcome.failure == KEYSMITH_TPM2_SUCCESS ? isSet != 0 : nil
    }

    // MARK: - Errors

    /// The response code without the session or parameter number (format-one codes) or the
    /// TSS layer.
    private static func baseCode(_ code: UInt32) -> UInt32 {
        guard code & 0xFFFF_0000 == 0 else { return code }
        return code & 0x80 != 0 ? code & 0xBF : code & 0xFFF
    }

    /// What a failed seal or unseal means, with the cause and the fix.
    static func failure(
        _ outcome: tpm2_sealed_key_outcome, tcti: String, file: URL, pcrMask: UInt32, authName: String = "TPM PIN"
    ) -> KeychainFailure {
        let step = outcome.step.map { String(cString: $0) } ?? "the TPM"
        let code = "0x" + String(outcome.code, radix: 16)
        let otherStore = "To keep the device key in a file instead, create the keychain with KEYSMITH_KEY_STORE=file."
        switch outcome.failure {
        case KEYSMITH_TPM2_LIBRARY_MISSING:
            return KeychainFailure(
                errSecNotAvailable,
                "The TPM key store needs tpm2-tss (libtss2-esys.so.0, libtss2-tctildr.so.0, libtss2-mu.so.0), which cannot be loaded.",
                recovery: "Install it (Debian and Ubuntu: apt-get install libtss2-esys-3.0.2-0 libtss2-tctildr0 libtss2-tcti-device0). \(otherStore)")
        case KEYSMITH_TPM2_CONNECT_FAILED:
            return connectFailure(tcti: tcti, code: code, otherStore: otherStore)
        case KEYSMITH_TPM2_OTHER_TPM:
            return KeychainFailure(
                errSecNotAvailable,
                "The keychain's device key (\(file.path)) was sealed by another TPM: the keychain was copied from another machine, or this machine's TPM was cleared since it was created. A TPM-sealed keychain opens only on the machine that created it.",
                recovery: "Open the keychain on the machine that created it and move its items with 'keysmith export' and 'keysmith import'; a copy opens nothing anywhere else.")
        case KEYSMITH_TPM2_AUTH_NEEDED:
            return KeychainFailure(
                errSecInteractionNotAllowed,
                "The keychain's device key (\(file.path)) is sealed with a \(authName), and none was given.",
                recovery: authName == "TPM PIN"
                    ? "Set KEYSMITH_TPM2_PIN to the PIN chosen at creation, or run keysmith from a terminal, where it asks for the PIN."
                    : "Give the \(authName).")
        case KEYSMITH_TPM2_BLOB_DAMAGED:
            return KeychainFailure(
                errSecDecode, "The TPM-sealed key file \(file.path) is damaged.",
                recovery: "Restore it from the backup made with the keychain; without it the keychain's items cannot be decrypted.")
        case KEYSMITH_TPM2_COMMAND_FAILED:
            break
        default:
            return KeychainFailure(errSecInternalComponent, "The TPM key store failed at \(step).")
        }
        switch baseCode(outcome.code) {
        case 0x921:  // TPM_RC_LOCKOUT
            return KeychainFailure(
                errSecNotAvailable,
                "The TPM refuses to work (\(step)): it is in dictionary-attack lockout after too many failed authorizations (wrong PINs or passphrases given to it, by Keysmith or any other program).",
                recovery: "Wait until the TPM's lockout time has passed (each failure is forgotten after the TPM's recovery time; tpm2_getcap properties-variable shows TPM2_PT_LOCKOUT_COUNTER and TPM2_PT_LOCKOUT_INTERVAL), or have the TPM's owner clear it (tpm2_dictionarylockout --clear-lockout).")
        case 0x9D, 0x128:  // TPM_RC_POLICY_FAIL, TPM_RC_PCR_CHANGED
            let recoverySeal = TPM2RecoverySeal.url(besides: file)
            let resealable = FileManager.default.fileExists(atPath: recoverySeal.path)
            return KeychainFailure(
                errSecAuthFailed,
                "The TPM refuses to unseal the device key: PCR \(pcrList(pcrMask)) no longer holds the value it held when the keychain was sealed (a firmware update, another boot loader or boot configuration).",
                recovery: resealable
                    ? "If you made this change, run 'keysmith reseal-device-key': it asks for the keychain passphrase and seals the key again to the PCRs' current values. Otherwise boot the configuration the keychain was sealed under."
                    : "Boot the configuration the keychain was sealed under, then 'keysmith export' its items and 'keysmith import' them into a new keychain; or import an export made before the change into a new keychain. (A keychain with a passphrase can be sealed again with 'keysmith reseal-device-key' instead.)")
        case 0x8E where outcome.step.map({ String(cString: $0) }) == "TPM2_Unseal":  // TPM_RC_AUTH_FAIL on the sealed object
            return KeychainFailure(
                errSecAuthFailed,
                "The TPM refused the \(authName) for the keychain's device key (\(file.path)): it is wrong. Nothing was changed, but the TPM counts the failure towards its dictionary-attack lockout.",
                recovery: "Give the right \(authName). After several wrong ones in a row the TPM refuses every PIN and passphrase for a while (lockout); each failure is forgotten after the TPM's recovery time.")
        case 0x8E, 0xA2:  // TPM_RC_AUTH_FAIL, TPM_RC_BAD_AUTH
            return KeychainFailure(
                errSecNotAvailable,
                "The TPM refused the authorization for \(step): the TPM's owner hierarchy has a password, and Keysmith uses the storage hierarchy without one.",
                recovery: "Remove the owner password (tpm2_changeauth -c owner -p OLD), or \(otherStore.prefix(1).lowercased() + otherStore.dropFirst())")
        case 0x9F, 0xA5, 0x155:  // TPM_RC_INTEGRITY, TPM_RC_BINDING, TPM_RC_SENSITIVE (wrong or damaged blob)
            return KeychainFailure(
                errSecNotAvailable,
                "The TPM rejects the keychain's sealed key \(file.path) (\(step), response code \(code)): it is damaged, or it was sealed by another TPM.",
                recovery: "Open the keychain on the machine that created it, or restore the file from the backup made with the keychain.")
        case 0x902, 0x903:  // TPM_RC_OBJECT_MEMORY, TPM_RC_SESSION_MEMORY
            return KeychainFailure(
                errSecNotAvailable,
                "The TPM has no room for another object or session (\(step)): without a resource manager, programs that ended early left theirs loaded.",
                recovery: "Use the kernel's resource manager (KEYSMITH_TPM2_TCTI=device:/dev/tpmrm0), or flush the TPM's transient objects (tpm2_flushcontext -t; tpm2_flushcontext -s).")
        default:
            return KeychainFailure(
                errSecNotAvailable, "The TPM refused \(step) (response code \(code)).",
                recovery: "Check the TPM with tpm2_getcap properties-variable (tpm2-tools). \(otherStore)")
        }
    }

    /// Why the TPM could not be reached: no device, no permission on it, or nothing at the
    /// configured address.
    private static func connectFailure(tcti: String, code: String, otherStore: String) -> KeychainFailure {
        var device: String?
        if tcti == "device" {
            device = "/dev/tpmrm0"
        } else if tcti.hasPrefix("device:") {
            device = String(tcti.dropFirst("device:".count))
        }
        if let device {
            var info = stat()
            if stat(device, &info) != 0 {
                return KeychainFailure(
                    errSecNotAvailable,
                    "No TPM: \(device) does not exist (KEYSMITH_TPM2_TCTI=\(tcti)).",
                    recovery: "Enable the TPM 2.0 in the firmware settings (for a virtual machine, add a virtual TPM), or point KEYSMITH_TPM2_TCTI at the TPM. \(otherStore)")
            }
            if access(device, R_OK | W_OK) != 0 {
                let group = getgrgid(info.st_gid).flatMap { $0.pointee.gr_name.map { String(cString: $0) } } ?? "gid \(info.st_gid)"
                return KeychainFailure(
                    errSecNotAvailable,
                    "No permission to use the TPM: \(device) belongs to \(KeychainFiles.userName(info.st_uid)):\(group) (mode \(String(info.st_mode & 0o777, radix: 8))) and this user may not open it.",
                    recovery: "Add the user to the group \(group) (usermod -aG \(group) \(KeychainFiles.userName(geteuid()))) and log in again.")
            }
        }
        return KeychainFailure(
            errSecNotAvailable,
            "Cannot reach the TPM through KEYSMITH_TPM2_TCTI=\(tcti) (response code \(code)).",
            recovery: "Check KEYSMITH_TPM2_TCTI (device:/dev/tpmrm0 for the machine's TPM, swtpm:host=127.0.0.1,port=2321 for a software TPM) and that the TPM or simulator is running. \(otherStore)")
    }
}
#endif
