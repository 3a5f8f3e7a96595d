#ifndef KEYSMITH_TPM2_SEALED_KEY_H
#define KEYSMITH_TPM2_SEALED_KEY_H
// A secret sealed by a TPM 2.0 (the TPM key store of KeychainServices). tpm2-tss is loaded
// on first use (load_on_use_tss2.c), so a program that never seals or unseals starts
// without it.
//
// The secret is sealed in a data object under the TPM's storage primary key, which the TPM
// derives from its own storage seed with a fixed template (ECC P-256, AES-128-CFB): the same
// key on the same TPM every time, another one on any other TPM (or after the TPM is
// cleared), and never present outside the TPM. The blob (the object's public and private
// areas, and the primary key's name) opens nothing without that TPM. Every command runs in
// a session salted with the primary key, with parameter encryption, so the secret does not
// cross the bus to the TPM in the clear. With a PCR mask, the object's policy requires the
// selected SHA-256 PCRs to hold the values they held at sealing. With an authorization value
// (a PIN, or a passphrase-derived value for the recovery seal), the object needs it too
// (with PCRs: TPM2_PolicyPCR then TPM2_PolicyAuthValue) and is under the TPM's
// dictionary-attack protection.
//
// The functions are hidden: linked into the programs and libraries that use KeychainServices,
// never exported from them (libkeysmith.so exports only its C interface).
#include <stddef.h>
#include <stdint.h>

/// Why a seal or unseal failed.
typedef enum {
    KEYSMITH_TPM2_SUCCESS = 0,
    /// libtss2-esys, libtss2-tctildr or libtss2-mu could not be loaded.
    KEYSMITH_TPM2_LIBRARY_MISSING = 1,
    /// The TCTI could not be opened (no TPM, no permission, nothing listening).
    KEYSMITH_TPM2_CONNECT_FAILED = 2,
    /// The TPM refused a command (`code` is its response code).
    KEYSMITH_TPM2_COMMAND_FAILED = 3,
    /// The blob was sealed by another TPM (or before this TPM was cleared).
    KEYSMITH_TPM2_OTHER_TPM = 4,
    /// The blob is damaged (cannot be parsed).
    KEYSMITH_TPM2_BLOB_DAMAGED = 5,
    /// An output buffer is too small, or an argument is out of range.
    KEYSMITH_TPM2_BAD_ARGUMENT = 6,
    /// The sealed object needs an authorization value (a PIN or passphrase) and none was given.
    KEYSMITH_TPM2_AUTH_NEEDED = 7,
} tpm2_sealed_key_failure;

/// The outcome of a seal or unseal.
typedef struct {
    tpm2_sealed_key_failure failure;
    /// The TSS2 response code of the call that failed (0 on success).
    uint32_t code;
    /// The name of the TPM command (or library call) that failed, NULL on success.
    const char *step;
} tpm2_sealed_key_outcome;

/// Bit 24 of a blob's header: the sealed object needs an authorization value.
#define KEYSMITH_TPM2_BLOB_NEEDS_AUTH (1u << 24)

/// The largest blob tpm2_sealed_key_seal writes.
#define KEYSMITH_TPM2_BLOB_CAPACITY 1024

/// Seals `secret` (at most 128 bytes) with the TPM reached through the TCTI configuration
/// `tcti` (as tpm2-tools takes it, e.g. "device:/dev/tpmrm0"), bound to the SHA-256 PCRs whose
/// bits are set in `pcr_mask` (bit n: PCR n; 0: none). Writes the blob to `blob`
/// (KEYSMITH_TPM2_BLOB_CAPACITY bytes) and its length to `*blob_length`.
__attribute__((visibility("hidden")))
tpm2_sealed_key_outcome tpm2_sealed_key_seal(const char *tcti, const uint8_t *secret, size_t secret_length,
                                         uint32_t pcr_mask, uint8_t *blob, size_t *blob_length);

/// tpm2_sealed_key_seal with an authorization value `auth` (at most 32 bytes; none when
/// `auth_length` is 0): then the object can be used only by who gives it (with a PCR mask,
/// the policy requires both the PCRs and the value), and it is under the TPM's
/// dictionary-attack protection (no noDA): wrong values count towards the TPM's lockout.
__attribute__((visibility("hidden")))
tpm2_sealed_key_outcome tpm2_sealed_key_seal_with_auth(const char *tcti, const uint8_t *secret, size_t secret_length,
                                                   uint32_t pcr_mask, const uint8_t *auth, size_t auth_length,
                                                   uint8_t *blob, size_t *blob_length);

/// tpm2_sealed_key_unseal with the authorization value of an object sealed with one (a
/// wrong one fails with TPM_RC_AUTH_FAIL, and counts towards the TPM's lockout).
__attribute__((visibility("hidden")))
tpm2_sealed_key_outcome tpm2_sealed_key_unseal_with_auth(const char *tcti, const uint8_t *blob, size_t blob_length,
                                                     const uint8_t *auth, size_t auth_length, uint8_t *secret,
                                                     size_t secret_capacity, size_t *secret_length);

/// Whether a blob's object needs an authorization value (1, 0), or -1 when it is damaged.
__attribute__((visibility("hidden")))
int tpm2_sealed_key_blob_needs_auth(const uint8_t *blob, size_t blob_length);

/// Unseals the secret in `blob` into `secret` (capacity `secret_capacity`), its length to
/// `*secret_length`. The PCR mask is read from the blob.
__attribute__((visibility("hidden")))
tpm2_sealed_key_outcome tpm2_sealed_key_unseal(const char *tcti, const uint8_t *blob, size_t blob_length,
                                           uint8_t *secret, size_t secret_capacity, size_t *secret_length);

/// Whether the TPM's lockout hierarchy has an authorization value (TPMA_PERMANENT's
/// lockoutAuthSet), into `*is_set`. Without one, any program that may use the TPM can reset
/// its dictionary-attack counter (TPM2_DictionaryAttackLockReset), so a PIN or passphrase
/// the TPM checks gets as many guesses as the TPM answers.
__attribute__((visibility("hidden")))
tpm2_sealed_key_outcome tpm2_sealed_key_lockout_auth_is_set(const char *tcti, int *is_set);

/// The PCR mask a blob is bound to, or -1 when the blob is damaged.
__attribute__((visibility("hidden")))
int64_t tpm2_sealed_key_blob_pcr_mask(const uint8_t *blob, size_t blob_length);
#endif
