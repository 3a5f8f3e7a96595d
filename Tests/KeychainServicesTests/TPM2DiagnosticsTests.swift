#if os(Linux)
import CLoadOnUse
import Foundation
import Testing

@testable import KeychainServices

/// What the TPM key store tells people when the TPM refuses: the cause and the fix for each
/// response code a user can meet (the ones a software TPM cannot be brought to give here, such
/// as a dictionary-attack lockout, are checked on the mapping itself).
struct TPM2DiagnosticsTests {
    let file = URL(fileURLWithPath: "/home/u/.local/share/keysmith/device.tpm2")

    func explain(_ failure: tpm2_sealed_key_failure, _ code: UInt32, pcrMask: UInt32 = 0, tcti: String = "swtpm:port=1") -> KeychainFailure {
        "TPM2_Unseal".withCString { step in
            TPM2KeyStore.failure(tpm2_sealed_key_outcome(failure: failure, code: code, step: step), tcti: tcti, file: file, pcrMask: pcrMask)
        }
    }

    @Test func lockoutNamesTheWaitAndTheOwnersReset() {
        let failure = explain(KEYSMITH_TPM2_COMMAND_FAILED, 0x921)
        #expect(failure.reason.contains("dictionary-attack lockout"))
        #expect(failure.recovery?.contains("tpm2_dictionarylockout --clear-lockout") == true)
    }

    @Test func pcrMismatchNamesThePCRsAndTheRecoveryPath() {
        // TPM_RC_POLICY_FAIL for session 1 (0x99D), and TPM_RC_PCR_CHANGED.
        for code: UInt32 in [0x99D, 0x128] {
            let failure = explain(KEYSMITH_TPM2_COMMAND_FAILED, code, pcrMask: 1 << 7 | 1)
            #expect(failure.status == errSecAuthFailed)
            #expect(failure.reason.contains("PCR 0,7 no longer holds the value"), "\(failure)")
            #expect(failure.recovery?.contains("'keysmith export'") == true && failure.recovery?.contains("'keysmith import'") == true)
        }
    }

    @Test func ownerPasswordAndFullTPMAndDamagedBlobEachSaySo() {
        #expect(explain(KEYSMITH_TPM2_COMMAND_FAILED, 0x9A2).reason.contains("owner hierarchy has a password"))
        #expect(explain(KEYSMITH_TPM2_COMMAND_FAILED, 0x902).recovery?.contains("tpm2_flushcontext") == true)
        #expect(explain(KEYSMITH_TPM2_COMMAND_FAILED, 0x1DF).reason.contains("damaged, or it was sealed by another TPM"))
        #expect(explain(KEYSMITH_TPM2_BLOB_DAMAGED, 0).reason.contains("\(file.path) is damaged"))
        let other = explain(KEYSMITH_TPM2_COMMAND_FAILED, 0x1234)
        #expect(other.reason.contains("TPM2_Unseal (response code 0x1234)"), "\(other)")
    }

    @Test func missingLibraryNamesThePackages() {
        let failure = explain(KEYSMITH_TPM2_LIBRARY_MISSING, 0)
        #expect(failure.reason.contains("libtss2-esys.so.0"))
        #expect(failure.recovery?.contains("apt-get install libtss2-esys-3.0.2-0") == true)
    }

    @Test func missingDeviceIsNoTPM() {
        let failure = explain(KEYSMITH_TPM2_CONNECT_FAILED, 0xA000A, tcti: "device:/nonexistent/tpmrm0")
        #expect(failure.reason.contains("No TPM: /nonexistent/tpmrm0 does not exist"))
        #expect(failure.recovery?.contains("virtual TPM") == true)
    }

    @Test func pcrListAcceptsCommasAndPlusesAndRefusesTheRest() throws {
        #expect(try TPM2KeyStore.pcrMask(["KEYSMITH_TPM2_PCRS": "7"]) == 1 << 7)
        #expect(try TPM2KeyStore.pcrMask(["KEYSMITH_TPM2_PCRS": "0,7+16"]) == 1 | 1 << 7 | 1 << 16)
        #expect(try TPM2KeyStore.pcrMask([:]) == 0)
        for bad in ["24", "seven", "7,,x", "-1"] {
            #expect(throws: KeychainFailure.self) { try TPM2KeyStore.pcrMask(["KEYSMITH_TPM2_PCRS": bad]) }
        }
    }
}
#endif
