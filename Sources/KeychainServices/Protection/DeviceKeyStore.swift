#if !canImport(Security)
import CSodium
import Foundation

/// Where the device key comes from, chosen with `KEYSMITH_KEY_STORE`:
///
/// - `systemd-credential`: the credential `keysmith-device-key` in
///   `$CREDENTIALS_DIRECTORY` (systemd's `LoadCredential=` / `LoadCredentialEncrypted=`,
///   a read-only directory only the service can read, kept off the keychain's disk). It
///   must hold at least 32 random bytes (`head -c 32 /dev/urandom`); the key is their
///   BLAKE2b hash. No `device.key` is written.
/// - `tpm2`: sealed by the machine's TPM 2.0; only the sealed blob, `device.tpm2`, is
///   beside the database (see ``TPM2KeyStore``; `KEYSMITH_TPM2_TCTI`, `KEYSMITH_TPM2_PCRS`).
/// - `file`: `device.key` beside the database (0600), created on first use.
/// - `auto` (the default): the systemd credential when it exists, else the TPM when the
///   keychain was created with it or its key was moved into it (`device.tpm2` exists), else
///   the file.
///
/// A keychain with both `device.tpm2` and `device.key` (a move into the TPM interrupted
/// before the key file was erased, see ``DeviceKeyMove``) opens through the TPM, with
/// `auto` and `tpm2`: `device.tpm2` is installed only once it was checked to unseal to the
/// key file's key.
///
/// The Secret Service (libsecret) is not supported yet; asking for it is an error that says
/// so. A keychain keeps the store it was created with: its check value fails with a key
/// from another store (move items between stores with `keysmith export` / `import`).
enum DeviceKeyStore {
    static let credentialName = "keysmith-device-key"

    /// The store in force and where it is, for `keysmith status`.
    static func describe(keyFile: URL, _ variables: [String: String] = ProcessInfo.processInfo.environment) -> String {
        switch try? chosen(keyFile: keyFile, variables) {
        case .credential(let url)?: return "systemd credential \(url.path)"
        case .file?: return "key file \(keyFile.path)"
        case .tpm2(let blob)?:
            var text = "TPM 2.0 (\(TPM2KeyStore.tcti(variables))), sealed key \(blob.path)"
            if let mask = FileManager.default.fileExists(atPath: blob.path) ? TPM2KeyStore.recordedPCRMask(at: blob) : (try? TPM2KeyStore.pcrMask(variables)),
                mask != 0
            {
                text += ", bound to PCR \(TPM2KeyStore.pcrList(mask))"
                if FileManager.default.fileExists(atPath: TPM2RecoverySeal.url(besides: blob).path) {
                    text += " (the passphrase can seal it again: keysmith reseal-device-key)"
                }
            }
            if TPM2KeyStore.needsPIN(at: blob) { text += ", with a TPM PIN" }
            if FileManager.default.fileExists(atPath: keyFile.path) {
                text += "; the key file \(keyFile.path) is left over from an interrupted move: run 'keysmith move-device-key --to tpm2' again to erase it"
            }
            return text
        case nil: return "unavailable (KEYSMITH_KEY_STORE=\(variables["KEYSMITH_KEY_STORE"] ?? ""))"
        }
    }

    private enum Choice {
        case credential(URL)
        case file
        /// The TPM, with the sealed blob at this URL.
        case tpm2(URL)
    }

    /// The TPM-sealed key file of the keychain whose key file would be `keyFile`.
    static func sealedKeyFile(besides keyFile: URL) -> URL {
        keyFile.deletingLastPathComponent().appendingPathComponent(TPM2KeyStore.blobFileName)
    }

    private static func chosen(keyFile: URL, _ variables: [String: String]) throws -> Choice {
        let credential = variables["CREDENTIALS_DIRECTORY"].flatMap { $0.isEmpty ? nil : $0 }
            .map { URL(fileURLWithPath: $0).appendingPathComponent(credentialName) }
        let sealed = sealedKeyFile(besides: keyFile)
        switch variables["KEYSMITH_KEY_STORE"] ?? "auto" {
        case "", "auto":
            if let credential, FileManager.default.fileExists(atPath: credential.path) { return .credential(credential) }
            if FileManager.default.fileExists(atPath: sealed.path) { return .tpm2(sealed) }
            return .file
        case "file":
            if FileManager.default.fileExists(atPath: sealed.path), !FileManager.default.fileExists(atPath: keyFile.path) {
                throw KeychainFailure(
                    errSecNotAvailable, "KEYSMITH_KEY_STORE=file, but this keychain's device key is sealed by the TPM (\(sealed.path)).",
                    recovery: "Unset KEYSMITH_KEY_STORE (or set it to tpm2).")
            }
            return .file
        case "tpm2":
            // Both files: a move into the TPM that was interrupted before the key file was
            // erased; the sealed key was checked before it was installed, and is used.
            if FileManager.default.fileExists(atPath: keyFile.path), !FileManager.default.fileExists(atPath: sealed.path) {
                throw KeychainFailure(
                    errSecNotAvailable, "KEYSMITH_KEY_STORE=tpm2, but this keychain's device key is in the key file \(keyFile.path).",
                    recovery: "Move it into the TPM with 'keysmith move-device-key --to tpm2', or unset KEYSMITH_KEY_STORE to keep using the key file.")
            }
            return .tpm2(sealed)
        case "systemd-credential":
            guard let credential else {
                throw KeychainFailure(
                    errSecNotAvailable, "KEYSMITH_KEY_STORE=systemd-credential, but $CREDENTIALS_DIRECTORY is not set.",
                    recovery: "Run under a systemd unit with LoadCredential=\(credentialName):PATH, or choose KEYSMITH_KEY_STORE=file.")
            }
            return .credential(credential)
        case "secret-service":
            throw KeychainFailure(
                errSecNotAvailable, "The Secret Service key store is not supported by this version of Keysmith.",
                recovery: "Use KEYSMITH_KEY_STORE=tpm2, systemd-credential or file (or leave it unset).")
        case let other:
            throw KeychainFailure(
                errSecParam, "KEYSMITH_KEY_STORE=\(other) is not a key store.",
                recovery: "Use auto, tpm2, systemd-credential or file.")
        }
    }

    /// The TCTI configuration of the TPM that holds the device key of the keychain whose key
    /// file would be `keyFile`, or `nil` when another store holds it (for the rollback
    /// anchor's TPM counter and the ThisDeviceOnly binding).
    static func tpm2Configuration(
        keyFile: URL,
        _ variables: [String: String] = ProcessVariables.named("CREDENTIALS_DIRECTORY", "KEYSMITH_KEY_STORE", "KEYSMITH_TPM2_TCTI")
    ) -> String? {
        guard case .tpm2? = try? chosen(keyFile: keyFile, variables) else { return nil }
        return TPM2KeyStore.tcti(variables)
    }

    /// The device key of the keychain whose key file would be `keyFile`.
    /// - Parameter create: Whether a missing key file may be created (a new keychain).
    static func load(
        keyFile: URL, create: Bool,
        _ variables: [String: String] = ProcessVariables.named(
            "CREDENTIALS_DIRECTORY", "KEYSMITH_KEY_STORE", "KEYSMITH_TPM2_TCTI", "KEYSMITH_TPM2_PCRS", "KEYSMITH_TPM2_PIN")
    ) throws -> SecretKey {
        switch try chosen(keyFile: keyFile, variables) {
        case .file:
            return try DeviceKeyFile.loadOrCreate(at: keyFile, create: create)
        case .tpm2(let sealed):
            return try TPM2KeyStore.loadOrCreate(at: sealed, create: create, variables: variables)
        case .credential(let url):
            guard var contents = FileManager.default.contents(atPath: url.path) else {
                throw KeychainFailure(
                    errSecNotAvailable, "Cannot read the systemd credential \(url.path).",
                    recovery: "Check LoadCredential=\(credentialName):PATH in the unit.")
            }
            defer { contents.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
            guard contents.count >= Sodium.keyLength else {
                throw KeychainFailure(
                    errSecDecode, "The systemd credential \(url.path) holds \(contents.count) bytes; the device key needs at least 32 random bytes.",
                    recovery: "Create it with: head -c 32 /dev/urandom > FILE")
            }
            let key = SecretKey(uninitializedCount: Sodium.keyLength)
            key.withUnsafeMutableBytes { out in
                contents.withUnsafeBytes { input in
                    _ = crypto_generichash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
                        input.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(input.count), nil, 0)
                }
            }
            return key
        }
    }
}
#endif
