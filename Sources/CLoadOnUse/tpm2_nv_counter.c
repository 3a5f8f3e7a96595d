// The rollback anchor's TPM NV counter and the ThisDeviceOnly device binding (see
// include/tpm2_nv_counter.h), over ESYS.
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include "include/tpm2_nv_counter.h"
#include "load_on_use.h"

struct nv_tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
    ESYS_TR index;
    ESYS_TR key;
};

static tpm2_nv_counter_outcome nv_succeeded(void) { return (tpm2_nv_counter_outcome){KEYSMITH_TPM2_NV_SUCCESS, 0, NULL}; }

static tpm2_nv_counter_outcome nv_failed(tpm2_nv_counter_failure failure, TSS2_RC code, const char *step) {
    if (failure == KEYSMITH_TPM2_NV_COMMAND_FAILED && code == TSS2_ESYS_RC_NOT_IMPLEMENTED)
        failure = KEYSMITH_TPM2_NV_LIBRARY_MISSING;
    return (tpm2_nv_counter_outcome){failure, code, step};
}

// The response code without the handle, session or parameter number (format-one codes).
static TSS2_RC base_code(TSS2_RC code) {
    if ((code & 0xFFFF0000u) != 0) return code;
    return (code & 0x80u) != 0 ? (code & 0xBFu) : (code & 0xFFFu);
}

static void nv_close(struct nv_tpm *tpm) {
    if (tpm->esys != NULL) {
        // An NV index is not loaded (nothing to flush): only ESYS's record of it is closed.
        if (tpm->index != ESYS_TR_NONE) Esys_TR_Close(tpm->esys, &tpm->index);
        if (tpm->key != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, tpm->key);
        Esys_Finalize(&tpm->esys);
    }
    if (tpm->tcti != NULL) Tss2_TctiLdr_Finalize(&tpm->tcti);
}

static tpm2_nv_counter_outcome nv_open(struct nv_tpm *tpm, const char *tcti) {
    tpm->tcti = NULL;
    tpm->esys = NULL;
    tpm->index = tpm->key = ESYS_TR_NONE;
    TSS2_RC rc = Tss2_TctiLdr_Initialize(tcti, &tpm->tcti);
    if (rc == TSS2_ESYS_RC_NOT_IMPLEMENTED) return nv_failed(KEYSMITH_TPM2_NV_LIBRARY_MISSING, rc, "Tss2_TctiLdr_Initialize");
    if (rc != TSS2_RC_SUCCESS) return nv_failed(KEYSMITH_TPM2_NV_CONNECT_FAILED, rc, "Tss2_TctiLdr_Initialize");
    rc = Esys_Initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc == TSS2_ESYS_RC_NOT_IMPLEMENTED) return nv_failed(KEYSMITH_TPM2_NV_LIBRARY_MISSING, rc, "Esys_Initialize");
    if (rc != TSS2_RC_SUCCESS) return nv_failed(KEYSMITH_TPM2_NV_CONNECT_FAILED, rc, "Esys_Initialize");
    return nv_succeeded();
}

// The attributes of a keychain's counter: a counter (TPM_NT_COUNTER), read and incremented
// with its authorization value (empty), which never counts towards dictionary-attack lockout.
static const TPMA_NV counter_attributes =
    ((TPM2_NT_COUNTER << TPMA_NV_TPM2_NT_SHIFT) & TPMA_NV_TPM2_NT_MASK) | TPMA_NV_AUTHREAD | TPMA_NV_AUTHWRITE
    | TPMA_NV_NO_DA;

// The attributes the TPM sets by itself (not part of what was defined).
static const TPMA_NV state_attributes = TPMA_NV_WRITTEN | TPMA_NV_READLOCKED | TPMA_NV_WRITELOCKED;

static TPM2B_NV_PUBLIC counter_template(uint32_t handle, const uint8_t *tag) {
    TPM2B_NV_PUBLIC public = {
        .nvPublic = {
            .nvIndex = handle,
            .nameAlg = TPM2_ALG_SHA256,
            .attributes = counter_attributes,
            .dataSize = 8,
        },
    };
    public.nvPublic.authPolicy.size = KEYSMITH_TPM2_NV_TAG_SIZE;
    memcpy(public.nvPublic.authPolicy.buffer, tag, KEYSMITH_TPM2_NV_TAG_SIZE);
    return public;
}

// Finds the index at `handle` (tpm->index) and checks that it is this keychain's counter;
// `*written`: whether it was incremented at least once.
static tpm2_nv_counter_outcome find_counter(struct nv_tpm *tpm, uint32_t handle, const uint8_t *tag, int *written) {
    TSS2_RC rc = Esys_TR_FromTPMPublic(tpm->esys, handle, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &tpm->index);
    if (rc != TSS2_RC_SUCCESS) {
        tpm->index = ESYS_TR_NONE;
        if (base_code(rc) == TPM2_RC_HANDLE) return nv_failed(KEYSMITH_TPM2_NV_MISSING, rc, "TPM2_NV_ReadPublic");
        return nv_failed(KEYSMITH_TPM2_NV_COMMAND_FAILED, rc, "TPM2_NV_ReadPublic");
    }
    TPM2B_NV_PUBLIC *public = NULL;
    rc = Esys_NV_ReadPublic(tpm->esys, tpm->index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &public, NULL);
    if (rc != TSS2_RC_SUCCESS) return nv_failed(KEYSMITH_TPM2_NV_COMMAND_FAILED, rc, "TPM2_NV_ReadPublic");
    TPMS_NV_PUBLIC *found = &public->nvPublic;
    int ours = found->nvIndex == handle && found->nameAlg == TPM2_ALG_SHA256
        && (found->attributes & ~state_attributes) == counter_attributes && found->dataSize == 8
        && found->authPolicy.size == KEYSMITH_TPM2_NV_TAG_SIZE
        && memcmp(found->authPolicy.buffer, tag, KEYSMITH_TPM2_NV_TAG_SIZE) == 0;
    *written = (found->attributes & TPMA_NV_WRITTEN) != 0;
    Esys_Free(public);
    if (!ours) return nv_failed(KEYSMITH_TPM2_NV_NOT_OURS, 0, "comparing the NV index with the keychain's counter");
    return nv_succeeded();
}

// Whether the TPM refused the index's authorization value: a keychain's counter has an empty
// one, so an index that wants another (with the right tag and attributes, which anyone can read
// from the public area and copy) was defined by someone else.
static int refused_authorization(TSS2_RC rc) {
    TSS2_RC base = base_code(rc);
    return base == TPM2_RC_AUTH_FAIL || base == TPM2_RC_BAD_AUTH;
}

static tpm2_nv_counter_outcome read_value(struct nv_tpm *tpm, uint64_t *value) {
    TPM2B_MAX_NV_BUFFER *data = NULL;
    TSS2_RC rc = Esys_NV_Read(tpm->esys, tpm->index, tpm->index, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, 8, 0, &data);
    if (refused_authorization(rc)) return nv_failed(KEYSMITH_TPM2_NV_NOT_OURS, rc, "TPM2_NV_Read");
    if (base_code(rc) == TPM2_RC_NV_UNINITIALIZED) {
        // Defined but never incremented (the authorization was accepted before the TPM said so).
        *value = 0;
        return nv_succeeded();
    }
    if (rc != TSS2_RC_SUCCESS) return nv_failed(KEYSMITH_TPM2_NV_COMMAND_FAILED, rc, "TPM2_NV_Read");
    if (data->size != 8) {
        Esys_Free(data);
        return nv_failed(KEYSMITH_TPM2_NV_NOT_OURS, 0, "the counter's size");
    }
    uint64_t result = 0;
    for (int byte = 0; byte < 8; byte++) result = (result << 8) | data->buffer[byte];
    Esys_Free(data);
    *value = result;
    return nv_succeeded();
}

static tpm2_nv_counter_outcome increment(struct nv_tpm *tpm, uint64_t *value) {
    TSS2_RC rc = Esys_NV_Increment(tpm->esys, tpm->index, tpm->index, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
    if (refused_authorization(rc)) return nv_failed(KEYSMITH_TPM2_NV_NOT_OURS, rc, "TPM2_NV_Increment");
    if (rc != TSS2_RC_SUCCESS) return nv_failed(KEYSMITH_TPM2_NV_COMMAND_FAILED, rc, "TPM2_NV_Increment");
    return read_value(tpm, value);
}

static int in_range(uint32_t handle, const uint8_t *tag) {
    return tag != NULL && handle >= KEYSMITH_TPM2_NV_FIRST_HANDLE && handle <= KEYSMITH_TPM2_NV_LAST_HANDLE;
}

tpm2_nv_counter_outcome tpm2_nv_counter_read(const char *tcti, uint32_t handle, const uint8_t *tag, uint64_t *value) {
    if (!in_range(handle, tag)) return nv_failed(KEYSMITH_TPM2_NV_BAD_ARGUMENT, 0, "arguments");
    struct nv_tpm tpm;
    tpm2_nv_counter_outcome outcome = nv_open(&tpm, tcti);
    int written = 0;
    if (outcome.failure == KEYSMITH_TPM2_NV_SUCCESS) outcome = find_counter(&tpm, handle, tag, &written);
    // Read even when never written: the read checks the index's (empty) authorization.
    if (outcome.failure == KEYSMITH_TPM2_NV_SUCCESS) outcome = read_value(&tpm, value);
    nv_close(&tpm);
    return outcome;
}

tpm2_nv_counter_outcome tpm2_nv_counter_define(const char *tcti, uint32_t handle, const uint8_t *tag, uint64_t *value) {
    if (!in_range(handle, tag)) return nv_failed(KEYSMITH_TPM2_NV_BAD_ARGUMENT, 0, "arguments");
    struct nv_tpm tpm;
    tpm2_nv_counter_outcome outcome = nv_open(&tpm, tcti);
    if (outcome.failure != KEYSMITH_TPM2_NV_SUCCESS) goto done;
    TPM2B_AUTH no_auth = {0};
    TPM2B_NV_PUBLIC public = counter_template(handle, tag);
    // The owner hierarchy's authorization is empty (as the TPM key store assumes).
    TSS2_RC rc = Esys_NV_DefineSpace(tpm.esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &no_auth,
                                     &public, &tpm.index);
    int written = 0;
    if (rc == TSS2_RC_SUCCESS) {
        written = 0;
    } else if (base_code(rc) == TPM2_RC_NV_DEFINED) {
        tpm.index = ESYS_TR_NONE;
        outcome = find_counter(&tpm, handle, tag, &written);
        if (outcome.failure != KEYSMITH_TPM2_NV_SUCCESS) goto done;
    } else {
        tpm.index = ESYS_TR_NONE;
        outcome = nv_failed(KEYSMITH_TPM2_NV_COMMAND_FAILED, rc, "TPM2_NV_DefineSpace");
        goto done;
    }
    outcome = written ? read_value(&tpm, value) : increment(&tpm, value);
done:
    nv_close(&tpm);
    return outcome;
}

tpm2_nv_counter_outcome tpm2_nv_counter_increment(const char *tcti, uint32_t handle, const uint8_t *tag, uint64_t *value) {
    if (!in_range(handle, tag)) return nv_failed(KEYSMITH_TPM2_NV_BAD_ARGUMENT, 0, "arguments");
    struct nv_tpm tpm;
    tpm2_nv_counter_outcome outcome = nv_open(&tpm, tcti);
    int written = 0;
    if (outcome.failure == KEYSMITH_TPM2_NV_SUCCESS) outcome = find_counter(&tpm, handle, tag, &written);
    if (outcome.failure == KEYSMITH_TPM2_NV_SUCCESS) outcome = increment(&tpm, value);
    nv_close(&tpm);
    return outcome;
}

tpm2_nv_counter_outcome tpm2_nv_counter_undefine(const char *tcti, uint32_t handle, const uint8_t *tag) {
    if (!in_range(handle, tag)) return nv_failed(KEYSMITH_TPM2_NV_BAD_ARGUMENT, 0, "arguments");
    struct nv_tpm tpm;
    tpm2_nv_counter_outcome outcome = nv_open(&tpm, tcti);
    int written = 0;
    if (outcome.failure == KEYSMITH_TPM2_NV_SUCCESS) outcome = find_counter(&tpm, handle, tag, &written);
    if (outcome.failure == KEYSMITH_TPM2_NV_SUCCESS) {
        TSS2_RC rc = Esys_NV_UndefineSpace(tpm.esys, ESYS_TR_RH_OWNER, tpm.index, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                                           ESYS_TR_NONE);
        if (rc != TSS2_RC_SUCCESS) {
            outcome = nv_failed(KEYSMITH_TPM2_NV_COMMAND_FAILED, rc, "TPM2_NV_UndefineSpace");
        } else {
            // ESYS closed its record of the index with it.
            tpm.index = ESYS_TR_NONE;
        }
    }
    nv_close(&tpm);
    return outcome;
}

tpm2_nv_counter_outcome tpm2_device_binding(const char *tcti, const uint8_t *input, size_t input_length, uint8_t *mac) {
    TPM2B_MAX_BUFFER buffer = {0};
    if (input_length > sizeof buffer.buffer) return nv_failed(KEYSMITH_TPM2_NV_BAD_ARGUMENT, 0, "arguments");
    struct nv_tpm tpm;
    tpm2_nv_counter_outcome outcome = nv_open(&tpm, tcti);
    TPM2B_DIGEST *result = NULL;
    if (outcome.failure != KEYSMITH_TPM2_NV_SUCCESS) goto done;
    static const char label[] = "keysmith.device-binding.v1";
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_KEYEDHASH,
            .nameAlg = TPM2_ALG_SHA256,
            // An HMAC key derived from the storage seed, never leaving the TPM.
            .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
                | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_SIGN_ENCRYPT,
            .parameters.keyedHashDetail.scheme = {.scheme = TPM2_ALG_HMAC, .details.hmac.hashAlg = TPM2_ALG_SHA256},
        },
    };
    // The label makes this template (and so the key) Keysmith's own.
    template.publicArea.unique.keyedHash.size = sizeof label - 1;
    memcpy(template.publicArea.unique.keyedHash.buffer, label, sizeof label - 1);
    TPM2B_SENSITIVE_CREATE no_sensitive = {0};
    TPM2B_DATA no_outside_info = {0};
    TPML_PCR_SELECTION no_pcrs = {0};
    TSS2_RC rc = Esys_CreatePrimary(tpm.esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                    &no_sensitive, &template, &no_outside_info, &no_pcrs, &tpm.key, NULL, NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        tpm.key = ESYS_TR_NONE;
        outcome = nv_failed(KEYSMITH_TPM2_NV_COMMAND_FAILED, rc, "TPM2_CreatePrimary");
        goto done;
    }
    buffer.size = (UINT16)input_length;
    memcpy(buffer.buffer, input, input_length);
    rc = Esys_HMAC(tpm.esys, tpm.key, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &buffer, TPM2_ALG_SHA256, &result);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = nv_failed(KEYSMITH_TPM2_NV_COMMAND_FAILED, rc, "TPM2_HMAC");
        goto done;
    }
    if (result->size != 32) {
        outcome = nv_failed(KEYSMITH_TPM2_NV_COMMAND_FAILED, 0, "the HMAC's size");
        goto done;
    }
    memcpy(mac, result->buffer, 32);
done:
    if (result != NULL) {
        explicit_bzero(result, sizeof *result);
        Esys_Free(result);
    }
    explicit_bzero(&buffer, sizeof buffer);
    nv_close(&tpm);
    return outcome;
}
