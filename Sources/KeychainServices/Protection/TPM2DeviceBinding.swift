#if !canImport(Security)
import CLoadOnUse
import Foundation

/// What binds ThisDeviceOnly items to this machine when the TPM holds the device key: an
/// HMAC of the machine identity computed inside the TPM, under a key the TPM derives from
/// its storage seed (a keyed-hash primary key with a fixed template, so the same key on this
/// TPM every time and another on every other TPM; it never leaves the TPM).
///
/// The same `/etc/machine-id` text on another machine gives another value there, and so do
/// the device key and the keychain's files: without this TPM, ThisDeviceOnly items stay
/// closed. Input: `keysmith.this-device-only.v1` followed by the machine identity.
enum TPM2DeviceBinding {
    private static let domain = Array("keysmith.this-device-only.v1".utf8)

    /// The 32-byte binding secret of this TPM and `machineID`.
    /// - Throws: ``KeychainFailure`` when the TPM cannot be reached or refuses.
    static func secret(tcti: String, machineID: Data) throws -> SecretKey {
        let input = domain + [UInt8](machineID)
        let secret = SecretKey(uninitializedCount: Sodium.keyLength)
        let outcome = secret.withUnsafeMutableBytes { out in
            tcti.withCString { tpm2_device_binding($0, input, input.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        }
        switch outcome.failure {
        case KEYSMITH_TPM2_NV_SUCCESS:
            return secret
        case KEYSMITH_TPM2_NV_LIBRARY_MISSING, KEYSMITH_TPM2_NV_CONNECT_FAILED:
            throw TPM2KeyStore.failure(
                tpm2_sealed_key_outcome(
                    failure: outcome.failure == KEYSMITH_TPM2_NV_LIBRARY_MISSING ? KEYSMITH_TPM2_LIBRARY_MISSING : KEYSMITH_TPM2_CONNECT_FAILED,
                    code: outcome.code, step: outcome.step),
                tcti: tcti, file: URL(fileURLWithPath: "/"), pcrMask: 0)
        default:
            let step = outcome.step.map { String(cString: $0) } ?? "the TPM"
            throw KeychainFailure(
                errSecNotAvailable,
                "The TPM refused \(step) for the key that binds ThisDeviceOnly items to this machine (response code 0x\(String(outcome.code, radix: 16))).",
                recovery: "Check the TPM with tpm2_getcap properties-variable (tpm2-tools); the TPM's owner hierarchy must have no password.")
        }
    }
}
#endif
