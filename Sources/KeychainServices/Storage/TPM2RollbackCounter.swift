#if !canImport(Security)
import CLoadOnUse
import CSodium
import Foundation
import Synchronization

/// The TPM 2.0 NV monotonic counter that a TPM keychain's rollback anchor is bound to
/// (the key store `tpm2`): the anchor records the counter's value, and an anchor that
/// records less than the TPM holds is an older copy, whatever the files say.
///
/// One counter per keychain: an NV index of type `TPM_NT_COUNTER` in the owner range, at
/// one of 16 handles derived from the keychain's tag (``candidateHandles``), defined with the
/// owner hierarchy's empty authorization. Its public area carries the tag (as its unused
/// authPolicy), so a handle held by another program's index or another keychain's counter is
/// recognised and skipped, and two keychains on one TPM have two counters. The anchor records
/// the handle it was bound to (see ``RollbackAnchor/CounterBinding``).
///
/// TPM NV memory wears with writes, so the counter is not incremented at every commit but
/// once an *epoch*: at the first write after ``epochSeconds`` have passed since the anchor's
/// last increment, at every write that changes the protection records (a passphrase set or
/// changed), when the anchor is first bound, and when a restore is accepted on purpose
/// (`keychain.anchor.reset`). docs/SECURITY.md states what this leaves undetected.
final class TPM2RollbackCounter: @unchecked Sendable {
    /// Seconds an epoch lasts: a write later than this after the last increment increments
    /// again. (A debug build takes `KEYSMITH_TPM2_COUNTER_EPOCH` instead, for tests.)
    static let defaultEpochSeconds: Int64 = 600
    static var epochSeconds: Int64 {
        #if DEBUG
        if let text = ProcessInfo.processInfo.environment["KEYSMITH_TPM2_COUNTER_EPOCH"], let value = Int64(text), value >= 0 {
            return value
        }
        #endif
        return defaultEpochSeconds
    }

    /// NV writes (definitions and increments) this process made, for tests and `keysmith-bench`.
    static let nvWrites = Atomic<Int>(0)

    let tcti: String
    /// This keychain's tag: BLAKE2b of its id under a key derived from its device key.
    let tag: [UInt8]

    init(tcti: String, deviceKey: SecretKey, keychainID: Data) {
        self.tcti = tcti
        let key = Sodium.deriveKey(from: deviceKey, id: 3, context: "ksnvctr1")
        var tag = [UInt8](repeating: 0, count: Int(KEYSMITH_TPM2_NV_TAG_SIZE))
        key.withUnsafeBytes { keyBytes in
            keychainID.withUnsafeBytes { id in
                _ = crypto_generichash(
                    &tag, tag.count, id.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(id.count),
                    keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes.count)
            }
        }
        self.tag = tag
    }

    /// The 16 handles this keychain's counter may have: a group of 16 consecutive handles in
    /// 0x01200000...0x013FFFFF chosen by the tag, tried in order.
    var candidateHandles: [UInt32] {
        let groups = (KEYSMITH_TPM2_NV_LAST_HANDLE - KEYSMITH_TPM2_NV_FIRST_HANDLE + 1) / 16
        let number = tag.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let first = KEYSMITH_TPM2_NV_FIRST_HANDLE + (number % groups) * 16
        return (0..<16).map { first + $0 }
    }

    static func hexadecimal(_ handle: UInt32) -> String { "0x" + String(handle, radix: 16, uppercase: false) }

    /// The counter's value at `handle`.
    /// - Throws: ``KeychainFailure`` when the TPM cannot be reached, or no counter of this
    ///   keychain is at `handle` (removed, or replaced by another index).
    func read(handle: UInt32) throws -> UInt64 {
        var value: UInt64 = 0
        let outcome = tcti.withCString { tpm2_nv_counter_read($0, handle, tag, &value) }
        try check(outcome, handle: handle)
        return value
    }

    /// Increments the counter at `handle`; returns its new value.
    func increment(handle: UInt32) throws -> UInt64 {
        var value: UInt64 = 0
        let outcome = tcti.withCString { tpm2_nv_counter_increment($0, handle, tag, &value) }
        if outcome.failure == KEYSMITH_TPM2_NV_SUCCESS { Self.nvWrites.add(1, ordering: .relaxed) }
        try check(outcome, handle: handle)
        return value
    }

    /// Removes this keychain's counter from the TPM, when there is one (the keychain is being
    /// deleted). Failures are ignored: a keychain must be deletable without its TPM.
    func removeFromTPM() {
        guard let (handle, _) = try? find() else { return }
        _ = tcti.withCString { tpm2_nv_counter_undefine($0, handle, tag) }
    }

    /// This keychain's counter, when one is defined on the TPM: its handle and value.
    func find() throws -> (handle: UInt32, value: UInt64)? {
        for handle in candidateHandles {
            var value: UInt64 = 0
            let outcome = tcti.withCString { tpm2_nv_counter_read($0, handle, tag, &value) }
            switch outcome.failure {
            case KEYSMITH_TPM2_NV_SUCCESS: return (handle, value)
            case KEYSMITH_TPM2_NV_MISSING, KEYSMITH_TPM2_NV_NOT_OURS: continue
            default: try check(outcome, handle: handle)
            }
        }
        return nil
    }

    /// This keychain's counter, defined at the first free candidate handle when there is
    /// none yet: its handle and value.
    func bind() throws -> (handle: UInt32, value: UInt64) {
        if let found = try find() { return found }
        for handle in candidateHandles {
            var value: UInt64 = 0
            let outcome = tcti.withCString { tpm2_nv_counter_define($0, handle, tag, &value) }
            switch outcome.failure {
            case KEYSMITH_TPM2_NV_SUCCESS:
                // The definition and its first increment.
                Self.nvWrites.add(2, ordering: .relaxed)
                return (handle, value)
            case KEYSMITH_TPM2_NV_NOT_OURS: continue
            default: try check(outcome, handle: handle)
            }
        }
        let handles = candidateHandles
        throw KeychainFailure(
            errSecNotAvailable,
            "Every NV index this keychain's TPM counter may use (\(Self.hexadecimal(handles.first!)) to \(Self.hexadecimal(handles.last!))) is taken by another program's index.",
            recovery: "List the TPM's NV indices (tpm2_getcap handles-nv-index) and remove ones nobody needs (tpm2_nvundefine), or create the keychain with KEYSMITH_KEY_STORE=file.")
    }

    private func check(_ outcome: tpm2_nv_counter_outcome, handle: UInt32) throws {
        let index = Self.hexadecimal(handle)
        switch outcome.failure {
        case KEYSMITH_TPM2_NV_SUCCESS:
            return
        case KEYSMITH_TPM2_NV_LIBRARY_MISSING:
            throw TPM2KeyStore.failure(
                tpm2_sealed_key_outcome(failure: KEYSMITH_TPM2_LIBRARY_MISSING, code: outcome.code, step: outcome.step),
                tcti: tcti, file: URL(fileURLWithPath: "/"), pcrMask: 0)
        case KEYSMITH_TPM2_NV_CONNECT_FAILED:
            throw TPM2KeyStore.failure(
                tpm2_sealed_key_outcome(failure: KEYSMITH_TPM2_CONNECT_FAILED, code: outcome.code, step: outcome.step),
                tcti: tcti, file: URL(fileURLWithPath: "/"), pcrMask: 0)
        case KEYSMITH_TPM2_NV_MISSING, KEYSMITH_TPM2_NV_NOT_OURS:
            throw CounterUnusable(
                handle: handle,
                reason: outcome.failure == KEYSMITH_TPM2_NV_MISSING
                    ? "the TPM has no NV index \(index) (the keychain's rollback counter was removed)"
                    : "NV index \(index) is no longer the keychain's rollback counter (it was removed and the handle reused)")
        default:
            let step = outcome.step.map { String(cString: $0) } ?? "the TPM"
            let code = outcome.code
            let base = code & 0xFFFF_0000 != 0 ? code : (code & 0x80 != 0 ? code & 0xBF : code & 0xFFF)
            if base == 0x920 {  // TPM_RC_NV_RATE
                throw KeychainFailure(
                    errSecNotAvailable,
                    "The TPM refuses to write its NV memory now (\(step)): too many NV writes in a short time (TPM_RC_NV_RATE); nothing was changed.",
                    recovery: "Try again in a few seconds.")
            }
            if base == 0x921 {  // TPM_RC_LOCKOUT
                throw KeychainFailure(
                    errSecNotAvailable, "The TPM refuses to work (\(step)): it is in dictionary-attack lockout.",
                    recovery: "Wait until the TPM's lockout time has passed, or have the TPM's owner clear it (tpm2_dictionarylockout --clear-lockout).")
            }
            if base == 0x14B || base == 0xA2 || base == 0x8E {  // TPM_RC_NV_SPACE, TPM_RC_BAD_AUTH, TPM_RC_AUTH_FAIL
                throw KeychainFailure(
                    errSecNotAvailable,
                    "The TPM refused \(step) for the keychain's rollback counter (NV index \(index), response code 0x\(String(code, radix: 16))): its NV memory is full, or the owner hierarchy has a password.",
                    recovery: "Free NV space (tpm2_getcap handles-nv-index; tpm2_nvundefine what nobody needs) or remove the owner password; or create the keychain with KEYSMITH_KEY_STORE=file.")
            }
            throw KeychainFailure(
                errSecNotAvailable,
                "The TPM refused \(step) for the keychain's rollback counter (NV index \(index), response code 0x\(String(code, radix: 16))).",
                recovery: "Check the TPM with tpm2_getcap properties-variable (tpm2-tools).")
        }
    }

    /// The counter the anchor names is not (or no longer) this keychain's.
    struct CounterUnusable: Error {
        let handle: UInt32
        let reason: String
    }
}
#endif
