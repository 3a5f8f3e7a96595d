#ifndef KEYSMITH_TPM2_NV_COUNTER_H
#define KEYSMITH_TPM2_NV_COUNTER_H
// A TPM 2.0 NV monotonic counter for a keychain's rollback anchor, and the TPM-held key
// that ThisDeviceOnly items are bound to (the TPM key store of KeychainServices). tpm2-tss
// is loaded on first use (load_on_use_tss2.c).
//
// The counter is an NV index of type TPM_NT_COUNTER in the owner range, defined with the
// owner hierarchy's (empty) authorization: attributes AUTHREAD | AUTHWRITE | NO_DA, an empty
// authorization value, an 8-byte count. Its authPolicy field holds the keychain's 32-byte
// tag: the policy is never used (POLICYREAD and POLICYWRITE are clear) and cannot be
// satisfied, but it makes the index's public area say which keychain it belongs to, so an
// index another program (or another keychain) defined at the same handle is never taken for
// this keychain's. A counter only goes up: TPM2_NV_Increment adds one, and a counter index
// defined again starts at the highest count any counter of this TPM ever held.
//
// The device binding is an HMAC computed inside the TPM with a keyed-hash key the TPM derives
// from its storage seed with a fixed template (a primary key: the same on this TPM every
// time, another on every other TPM, never outside it).
//
// The functions are hidden: linked into the programs that use KeychainServices, never
// exported from them.
#include <stddef.h>
#include <stdint.h>

/// Why a counter operation failed.
typedef enum {
    KEYSMITH_TPM2_NV_SUCCESS = 0,
    /// libtss2-esys, libtss2-tctildr or libtss2-mu could not be loaded.
    KEYSMITH_TPM2_NV_LIBRARY_MISSING = 1,
    /// The TCTI could not be opened (no TPM, no permission, nothing listening).
    KEYSMITH_TPM2_NV_CONNECT_FAILED = 2,
    /// The TPM refused a command (`code` is its response code).
    KEYSMITH_TPM2_NV_COMMAND_FAILED = 3,
    /// No NV index is defined at the handle.
    KEYSMITH_TPM2_NV_MISSING = 4,
    /// An NV index is defined at the handle, but it is not this keychain's counter (another
    /// type, other attributes, another keychain's tag, or an authorization value other than
    /// the empty one: the tag is public, so a copy of it proves nothing).
    KEYSMITH_TPM2_NV_NOT_OURS = 5,
    /// An argument is out of range (a handle outside the owner range, a wrong tag size).
    KEYSMITH_TPM2_NV_BAD_ARGUMENT = 6,
} tpm2_nv_counter_failure;

/// The outcome of a counter operation.
typedef struct {
    tpm2_nv_counter_failure failure;
    /// The TSS2 response code of the call that failed (0 on success).
    uint32_t code;
    /// The name of the TPM command (or library call) that failed, NULL on success.
    const char *step;
} tpm2_nv_counter_outcome;

/// The size of a keychain's counter tag (the authPolicy of its index, SHA-256 sized).
#define KEYSMITH_TPM2_NV_TAG_SIZE 32

/// The owner range of NV index handles (TCG handle registry: 0x01000000 to 0x013FFFFF
/// are for the TPM owner); Keysmith's counters use its upper half, 0x01200000 to 0x013FFFFF.
#define KEYSMITH_TPM2_NV_FIRST_HANDLE 0x01200000u
#define KEYSMITH_TPM2_NV_LAST_HANDLE 0x013FFFFFu

/// Reads the counter at `handle` into `*value` after checking that the index there is this
/// keychain's counter (`tag`, KEYSMITH_TPM2_NV_TAG_SIZE bytes). A counter that was defined
/// but never incremented reads as 0.
__attribute__((visibility("hidden")))
tpm2_nv_counter_outcome tpm2_nv_counter_read(const char *tcti, uint32_t handle, const uint8_t *tag, uint64_t *value);

/// Defines this keychain's counter at `handle` and increments it once (a counter has no value
/// before its first increment), writing its value to `*value`. When an index is defined there
/// already, it is used when it is this keychain's counter (an earlier definition that was
/// interrupted, say); otherwise the outcome is KEYSMITH_TPM2_NV_NOT_OURS and the caller tries
/// another handle.
__attribute__((visibility("hidden")))
tpm2_nv_counter_outcome tpm2_nv_counter_define(const char *tcti, uint32_t handle, const uint8_t *tag, uint64_t *value);

/// Increments the counter at `handle` (after checking it as tpm2_nv_counter_read does) and
/// writes its new value to `*value`.
__attribute__((visibility("hidden")))
tpm2_nv_counter_outcome tpm2_nv_counter_increment(const char *tcti, uint32_t handle, const uint8_t *tag, uint64_t *value);

/// Removes this keychain's counter at `handle` (after checking it as tpm2_nv_counter_read
/// does), with the owner hierarchy's empty authorization: when the keychain is deleted, so
/// that deleted keychains do not fill the TPM's NV memory.
__attribute__((visibility("hidden")))
tpm2_nv_counter_outcome tpm2_nv_counter_undefine(const char *tcti, uint32_t handle, const uint8_t *tag);

/// HMAC-SHA256 of `input` (at most 1024 bytes) under the TPM's device-binding key (a
/// keyed-hash primary key of the owner hierarchy, derived from the TPM's storage seed with a
/// fixed template), into `mac` (32 bytes).
__attribute__((visibility("hidden")))
tpm2_nv_counter_outcome tpm2_device_binding(const char *tcti, const uint8_t *input, size_t input_length, uint8_t *mac);
#endif
