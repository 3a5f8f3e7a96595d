#if !canImport(Security)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// ThisDeviceOnly rows: what binds them to this machine (the machine identity, or the TPM with
/// the TPM key store), their item keys and their `pdmn` labels.
extension KeyHierarchy {
    /// What a ThisDeviceOnly row is bound to besides its class key.
    enum DeviceBinding: Sendable {
        /// The machine identity (`/etc/machine-id`): the key file and credential stores, and
        /// rows a TPM keychain wrote before it bound them through the TPM.
        case machineIdentity
        /// The TPM: an HMAC of the machine identity under a key that never leaves the TPM.
        case tpm
    }

    /// The binding new ThisDeviceOnly rows get: the TPM's with the TPM key store.
    var newRowBinding: DeviceBinding { tpmTCTI == nil ? .machineIdentity : .tpm }

    /// The TPM binding's secret and the tag of rows bound with it (computed once, by the TPM).
    func tpmBinding() throws -> (secret: SecretKey, tag: [UInt8]) {
        bindingLock.lock()
        defer { bindingLock.unlock() }
        if let tpmBindingValue { return tpmBindingValue }
        guard let tpmTCTI else { throw KeychainFailure(errSecInternalComponent, "This keychain's device key is not held by a TPM.") }
        let secret = try TPM2DeviceBinding.secret(tcti: tpmTCTI, machineID: machineID)
        let tagHash = Self.hash(key: indexKey, parts: [Data("tpm-tag".utf8), secret.withUnsafeBytes { Data($0) }], length: 16)
        let tag = Array(("tpm." + tagHash.withUnsafeBytes { Self.hexadecimal($0.prefix(8)) }).utf8)
        tpmBindingValue = (secret, tag)
        return (secret, tag)
    }

    /// The key that encrypts items of `protection` under `classKey`.
    /// - Parameter binding: a ThisDeviceOnly row's binding; `nil`: the one new rows get.
    func derivedItemKey(_ protection: ProtectionClass, classKey: SecretKey, binding: DeviceBinding? = nil) throws -> SecretKey {
        if protection.isThisDeviceOnly {
            switch binding ?? newRowBinding {
            case .machineIdentity:
                return Self.hash(key: classKey, parts: [Data("machine".utf8), machineID, Data(protection.rawValue.utf8)])
            case .tpm:
                let secret = try tpmBinding().secret
                return Self.hash(
                    key: classKey, parts: [Data("tpm-device".utf8), secret.withUnsafeBytes { Data($0) }, Data(protection.rawValue.utf8)])
            }
        }
        return Sodium.deriveKey(from: classKey, id: protection.keyNumber, context: "ksitem02")
    }

    // MARK: Row labels

    /// What the `pdmn` column holds for an item of `protection` (bound as `binding` says
    /// when it is ThisDeviceOnly; `nil`: as new rows are).
    func label(for protection: ProtectionClass, binding: DeviceBinding? = nil) throws -> String {
        guard protection.isThisDeviceOnly else { return protection.rawValue }
        switch binding ?? newRowBinding {
        case .machineIdentity: return protection.rawValue + "@" + machineTag
        case .tpm: return protection.rawValue + "@" + String(decoding: try tpmBinding().tag, as: UTF8.self)
        }
    }

    /// The protection class a `pdmn` column names.
    /// - Throws: ``ForeignItem`` for a ThisDeviceOnly row of another machine.
    /// - Returns: `nil` when the label is not valid (a damaged row).
    func protection(forLabel label: String) throws -> ProtectionClass? {
        try protectionAndBinding(forLabel: label)?.protection
    }

    /// The protection class a `pdmn` column names, and for a ThisDeviceOnly row what it is
    /// bound to (`nil` for other rows).
    /// - Throws: ``ForeignItem`` for a ThisDeviceOnly row of another machine.
    /// - Returns: `nil` when the label is not valid (a damaged row).
    func protectionAndBinding(forLabel label: String) throws -> (protection: ProtectionClass, binding: DeviceBinding?)? {
        // Read from the label's contiguous UTF-8 bytes in place (it is read for every row a
        // search opens): the accessibility's name up to the first "@", then the machine tag,
        // compared byte for byte.
        var label = label
        return try label.withUTF8 { bytes throws -> (protection: ProtectionClass, binding: DeviceBinding?)? in
            guard let at = bytes.firstIndex(of: UInt8(ascii: "@")) else {
                guard let protection = ProtectionClass(nameBytes: bytes) else { return nil }
                return protection.isThisDeviceOnly ? nil : (protection, nil)
            }
            guard let protection = ProtectionClass(nameBytes: bytes[..<at]), protection.isThisDeviceOnly else { return nil }
            let tag = UnsafeBufferPointer(rebasing: bytes[(at + 1)...])
            func matches(_ ours: [UInt8]) -> Bool {
                ours.withUnsafeBufferPointer { ours in
                    tag.count == ours.count && memcmp(tag.baseAddress!, ours.baseAddress!, ours.count) == 0
                }
            }
            if matches(machineTagBytes) { return (protection, .machineIdentity) }
            // A TPM-bound row's tag starts with "tpm.": only those ask the TPM (once).
            if tpmTCTI != nil, tag.count > 4, tag.prefix(4).elementsEqual("tpm.".utf8), matches(try tpmBinding().tag) {
                return (protection, .tpm)
            }
            throw ForeignItem()
        }
    }

    /// Whether a label names a ThisDeviceOnly row of another machine.
    func isForeign(label: String) -> Bool {
        do {
            return try protection(forLabel: label) == nil && label.contains("@")
        } catch is ForeignItem {
            return true
        } catch {
            // The TPM could not say (unreachable): not taken for another machine's row.
            return false
        }
    }

    /// Deletes the ThisDeviceOnly row of another machine that holds `primaryKey`, if
    /// there is one, through the engine's `storage` (inside its transaction).
    /// - Returns: whether a row was deleted (so an add can be retried).
    func removeForeignRow(primaryKey: Data, in storage: KeychainDatabase) throws -> Bool {
        let select = try storage.database.cachedStatement("SELECT id, pdmn FROM items WHERE pk = ?")
        select.bind(primaryKey, at: 1)
        var foreign: Int64?
        if try select.step(), let label = select.string(at: 1), isForeign(label: label) { foreign = select.int64(at: 0) }
        select.reset()
        guard let foreign else { return false }
        try storage.delete(id: foreign)
        return true
    }
}
#endif
