// The TPM key store's seal and unseal (see include/tpm2_sealed_key.h), over ESYS.
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_tctildr.h>
#include "include/tpm2_sealed_key.h"
#include "load_on_use.h"

// Blob format: 4 bytes (big-endian) holding the PCR mask in bits 0 to 23 and
// KEYSMITH_TPM2_BLOB_NEEDS_AUTH in bit 24, then the marshalled TPM2B_NAME of the storage
// primary key, TPM2B_PUBLIC and TPM2B_PRIVATE of the sealed object.

struct tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
    ESYS_TR primary;
    ESYS_TR session;
    ESYS_TR object;
};

static tpm2_sealed_key_outcome succeeded(void) { return (tpm2_sealed_key_outcome){KEYSMITH_TPM2_SUCCESS, 0, NULL}; }

static tpm2_sealed_key_outcome failed(tpm2_sealed_key_failure failure, TSS2_RC code, const char *step) {
    if (failure == KEYSMITH_TPM2_COMMAND_FAILED && code == TSS2_ESYS_RC_NOT_IMPLEMENTED)
        failure = KEYSMITH_TPM2_LIBRARY_MISSING;
    return (tpm2_sealed_key_outcome){failure, code, step};
}

// Flushes what was loaded (there may be no resource manager, as with a TPM simulator, and
// the TPM has room for only a few objects) and closes the connection.
static void close_tpm(struct tpm *tpm) {
    if (tpm->esys != NULL) {
        if (tpm->object != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, tpm->object);
        if (tpm->session != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, tpm->session);
        if (tpm->primary != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, tpm->primary);
        Esys_Finalize(&tpm->esys);
    }
    if (tpm->tcti != NULL) Tss2_TctiLdr_Finalize(&tpm->tcti);
}

// Connects, and creates the storage primary key from the fixed template.
static tpm2_sealed_key_outcome open_tpm(struct tpm *tpm, const char *tcti) {
    tpm->tcti = NULL;
    tpm->esys = NULL;
    tpm->primary = tpm->session = tpm->object = ESYS_TR_NONE;
    TSS2_RC rc = Tss2_TctiLdr_Initialize(tcti, &tpm->tcti);
    if (rc == TSS2_ESYS_RC_NOT_IMPLEMENTED) return failed(KEYSMITH_TPM2_LIBRARY_MISSING, rc, "Tss2_TctiLdr_Initialize");
    if (rc != TSS2_RC_SUCCESS) return failed(KEYSMITH_TPM2_CONNECT_FAILED, rc, "Tss2_TctiLdr_Initialize");
    rc = Esys_Initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc == TSS2_ESYS_RC_NOT_IMPLEMENTED) return failed(KEYSMITH_TPM2_LIBRARY_MISSING, rc, "Esys_Initialize");
    if (rc != TSS2_RC_SUCCESS) return failed(KEYSMITH_TPM2_CONNECT_FAILED, rc, "Esys_Initialize");

    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_ECC,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
                | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
            .parameters.eccDetail = {
                .symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB},
                .scheme = {.scheme = TPM2_ALG_NULL},
                .curveID = TPM2_ECC_NIST_P256,
                .kdf = {.scheme = TPM2_ALG_NULL},
            },
        },
    };
    TPM2B_SENSITIVE_CREATE no_sensitive = {0};
    TPM2B_DATA no_outside_info = {0};
    TPML_PCR_SELECTION no_pcrs = {0};
    // The owner hierarchy's authorization is empty on a TPM nobody took ownership of (what
    // systemd and tpm2-tools assume too); a set one fails here with TPM_RC_BAD_AUTH.
    rc = Esys_CreatePrimary(tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                            &no_sensitive, &template, &no_outside_info, &no_pcrs, &tpm->primary,
                            NULL, NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) return failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_CreatePrimary");
    return succeeded();
}

// Starts a session salted with the primary key (so its session key, and the parameter
// encryption key derived from it, is known only to this process and the TPM).
static tpm2_sealed_key_outcome start_session(struct tpm *tpm, TPM2_SE type, ESYS_TR *session) {
    TPMT_SYM_DEF aes = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB};
    TSS2_RC rc = Esys_StartAuthSession(tpm->esys, tpm->primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                       ESYS_TR_NONE, NULL, type, &aes, TPM2_ALG_SHA256, session);
    if (rc != TSS2_RC_SUCCESS) return failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_StartAuthSession");
    return succeeded();
}

static tpm2_sealed_key_outcome set_attributes(struct tpm *tpm, ESYS_TR session, TPMA_SESSION attributes) {
    TSS2_RC rc = Esys_TRSess_SetAttributes(tpm->esys, session, attributes | TPMA_SESSION_CONTINUESESSION, 0xff);
    if (rc != TSS2_RC_SUCCESS) return failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "Esys_TRSess_SetAttributes");
    return succeeded();
}

static TPML_PCR_SELECTION pcr_selection(uint32_t mask) {
    TPML_PCR_SELECTION selection = {.count = 1};
    selection.pcrSelections[0].hash = TPM2_ALG_SHA256;
    selection.pcrSelections[0].sizeofSelect = 3;
    for (int byte = 0; byte < 3; byte++) selection.pcrSelections[0].pcrSelect[byte] = (uint8_t)(mask >> (8 * byte));
    return selection;
}

// Runs TPM2_PolicyAuthValue in `session`: the object's authorization value is then part of
// the session's HMAC (ESYS takes it from Esys_TR_SetAuth).
static tpm2_sealed_key_outcome policy_auth_value(struct tpm *tpm, ESYS_TR session) {
    TSS2_RC rc = Esys_PolicyAuthValue(tpm->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE);
    if (rc != TSS2_RC_SUCCESS) return failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_PolicyAuthValue");
    return succeeded();
}

// Runs TPM2_PolicyPCR in `session` (a trial or a policy session): the TPM takes the PCRs'
// current values.
static tpm2_sealed_key_outcome policy_pcr(struct tpm *tpm, ESYS_TR session, uint32_t mask) {
    TPM2B_DIGEST current = {0};
    TPML_PCR_SELECTION selection = pcr_selection(mask);
    TSS2_RC rc = Esys_PolicyPCR(tpm->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &current, &selection);
    if (rc != TSS2_RC_SUCCESS) return failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_PolicyPCR");
    return succeeded();
}

// The policy digest of "the selected PCRs hold their current values" (and, with
// `with_auth`, "the authorization value is given"), from a trial session.
static tpm2_sealed_key_outcome pcr_policy_digest(struct tpm *tpm, uint32_t mask, int with_auth, TPM2B_DIGEST *digest) {
    ESYS_TR trial = ESYS_TR_NONE;
    TPMT_SYM_DEF none = {.algorithm = TPM2_ALG_NULL};
    TSS2_RC rc = Esys_StartAuthSession(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                       ESYS_TR_NONE, NULL, TPM2_SE_TRIAL, &none, TPM2_ALG_SHA256, &trial);
    if (rc != TSS2_RC_SUCCESS) return failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_StartAuthSession");
    tpm2_sealed_key_outcome outcome = policy_pcr(tpm, trial, mask);
    if (outcome.failure == KEYSMITH_TPM2_SUCCESS && with_auth) outcome = policy_auth_value(tpm, trial);
    if (outcome.failure == KEYSMITH_TPM2_SUCCESS) {
        TPM2B_DIGEST *result = NULL;
        rc = Esys_PolicyGetDigest(tpm->esys, trial, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &result);
        if (rc != TSS2_RC_SUCCESS) {
            outcome = failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_PolicyGetDigest");
        } else {
            *digest = *result;
            Esys_Free(result);
        }
    }
    Esys_FlushContext(tpm->esys, trial);
    return outcome;
}

tpm2_sealed_key_outcome tpm2_sealed_key_seal(const char *tcti, const uint8_t *secret, size_t secret_length,
                                         uint32_t pcr_mask, uint8_t *blob, size_t *blob_length) {
    return tpm2_sealed_key_seal_with_auth(tcti, secret, secret_length, pcr_mask, NULL, 0, blob, blob_length);
}

tpm2_sealed_key_outcome tpm2_sealed_key_seal_with_auth(const char *tcti, const uint8_t *secret, size_t secret_length,
                                                   uint32_t pcr_mask, const uint8_t *auth, size_t auth_length,
                                                   uint8_t *blob, size_t *blob_length) {
    if (secret_length == 0 || secret_length > 128 || pcr_mask >= (1u << 24) || auth_length > 32
        || (auth_length > 0 && auth == NULL))
        return failed(KEYSMITH_TPM2_BAD_ARGUMENT, 0, "arguments");
    struct tpm tpm;
    tpm2_sealed_key_outcome outcome = open_tpm(&tpm, tcti);
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PRIVATE *private = NULL;
    TPM2B_PUBLIC *public = NULL;
    TPM2B_NAME *primary_name = NULL;
    if (outcome.failure != KEYSMITH_TPM2_SUCCESS) goto done;

    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_KEYEDHASH,
            .nameAlg = TPM2_ALG_SHA256,
            // A sealed data object: neither a signing nor a decryption key, bound to this TPM
            // and this parent; with a PCR policy, usable only through it. An object with an
            // authorization value (a PIN, a passphrase) is under the TPM's dictionary-attack
            // protection: wrong values count towards its lockout. One without has nothing
            // to guess (noDA), so it never locks the TPM out.
            .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
                | (auth_length == 0 ? TPMA_OBJECT_NODA : 0)
                | (pcr_mask == 0 ? TPMA_OBJECT_USERWITHAUTH : 0),
            .parameters.keyedHashDetail.scheme = {.scheme = TPM2_ALG_NULL},
        },
    };
    if (pcr_mask != 0) {
        outcome = pcr_policy_digest(&tpm, pcr_mask, auth_length > 0, &template.publicArea.authPolicy);
        if (outcome.failure != KEYSMITH_TPM2_SUCCESS) goto done;
    }
    outcome = start_session(&tpm, TPM2_SE_HMAC, &tpm.session);
    if (outcome.failure != KEYSMITH_TPM2_SUCCESS) goto done;
    // The secret is the command's first parameter: encrypted on its way to the TPM.
    outcome = set_attributes(&tpm, tpm.session, TPMA_SESSION_DECRYPT);
    if (outcome.failure != KEYSMITH_TPM2_SUCCESS) goto done;
    sensitive.sensitive.data.size = (UINT16)secret_length;
    memcpy(sensitive.sensitive.data.buffer, secret, secret_length);
    if (auth_length > 0) {
        sensitive.sensitive.userAuth.size = (UINT16)auth_length;
        memcpy(sensitive.sensitive.userAuth.buffer, auth, auth_length);
    }
    TPM2B_DATA no_outside_info = {0};
    TPML_PCR_SELECTION no_pcrs = {0};
    TSS2_RC rc = Esys_Create(tpm.esys, tpm.primary, tpm.session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template,
                             &no_outside_info, &no_pcrs, &private, &public, NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_Create");
        goto done;
    }
    rc = Esys_TR_GetName(tpm.esys, tpm.primary, &primary_name);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "Esys_TR_GetName");
        goto done;
    }
    size_t offset = 4;
    uint32_t header = pcr_mask | (auth_length > 0 ? KEYSMITH_TPM2_BLOB_NEEDS_AUTH : 0);
    blob[0] = (uint8_t)(header >> 24);
    blob[1] = (uint8_t)(header >> 16);
    blob[2] = (uint8_t)(header >> 8);
    blob[3] = (uint8_t)header;
    rc = Tss2_MU_TPM2B_NAME_Marshal(primary_name, blob, KEYSMITH_TPM2_BLOB_CAPACITY, &offset);
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PUBLIC_Marshal(public, blob, KEYSMITH_TPM2_BLOB_CAPACITY, &offset);
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PRIVATE_Marshal(private, blob, KEYSMITH_TPM2_BLOB_CAPACITY, &offset);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = failed(KEYSMITH_TPM2_BAD_ARGUMENT, rc, "marshalling the blob");
        goto done;
    }
    *blob_length = offset;
done:
    explicit_bzero(&sensitive, sizeof sensitive);
    if (private != NULL) Esys_Free(private);
    if (public != NULL) Esys_Free(public);
    if (primary_name != NULL) Esys_Free(primary_name);
    close_tpm(&tpm);
    return outcome;
}

struct parsed_blob {
    uint32_t pcr_mask;
    int needs_auth;
    TPM2B_NAME primary_name;
    TPM2B_PUBLIC public;
    TPM2B_PRIVATE private;
};

static int parse_blob(const uint8_t *blob, size_t blob_length, struct parsed_blob *parsed) {
    memset(parsed, 0, sizeof *parsed);
    if (blob_length < 4) return 0;
    uint32_t header = ((uint32_t)blob[0] << 24) | ((uint32_t)blob[1] << 16) | ((uint32_t)blob[2] << 8) | blob[3];
    if ((header & ~(KEYSMITH_TPM2_BLOB_NEEDS_AUTH | 0xFFFFFFu)) != 0) return 0;
    parsed->pcr_mask = header & 0xFFFFFFu;
    parsed->needs_auth = (header & KEYSMITH_TPM2_BLOB_NEEDS_AUTH) != 0;
    size_t offset = 4;
    if (Tss2_MU_TPM2B_NAME_Unmarshal(blob, blob_length, &offset, &parsed->primary_name) != TSS2_RC_SUCCESS) return 0;
    if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(blob, blob_length, &offset, &parsed->public) != TSS2_RC_SUCCESS) return 0;
    if (Tss2_MU_TPM2B_PRIVATE_Unmarshal(blob, blob_length, &offset, &parsed->private) != TSS2_RC_SUCCESS) return 0;
    return offset == blob_length;
}

int64_t tpm2_sealed_key_blob_pcr_mask(const uint8_t *blob, size_t blob_length) {
    struct parsed_blob parsed;
    return parse_blob(blob, blob_length, &parsed) ? (int64_t)parsed.pcr_mask : -1;
}

int tpm2_sealed_key_blob_needs_auth(const uint8_t *blob, size_t blob_length) {
    struct parsed_blob parsed;
    if (!parse_blob(blob, blob_length, &parsed)) return -1;
    return parsed.needs_auth;
}

tpm2_sealed_key_outcome tpm2_sealed_key_unseal(const char *tcti, const uint8_t *blob, size_t blob_length,
                                           uint8_t *secret, size_t secret_capacity, size_t *secret_length) {
    return tpm2_sealed_key_unseal_with_auth(tcti, blob, blob_length, NULL, 0, secret, secret_capacity, secret_length);
}

tpm2_sealed_key_outcome tpm2_sealed_key_unseal_with_auth(const char *tcti, const uint8_t *blob, size_t blob_length,
                                                     const uint8_t *auth, size_t auth_length, uint8_t *secret,
                                                     size_t secret_capacity, size_t *secret_length) {
    struct parsed_blob parsed;
    if (!parse_blob(blob, blob_length, &parsed)) {
        if (!load_on_use_tss2_available()) return failed(KEYSMITH_TPM2_LIBRARY_MISSING, 0, "loading tpm2-tss");
        return failed(KEYSMITH_TPM2_BLOB_DAMAGED, 0, "reading the blob");
    }
    if (auth_length > 32 || (auth_length > 0 && auth == NULL)) return failed(KEYSMITH_TPM2_BAD_ARGUMENT, 0, "arguments");
    if (parsed.needs_auth && auth_length == 0) return failed(KEYSMITH_TPM2_AUTH_NEEDED, 0, "the authorization value");
    struct tpm tpm;
    TPM2B_NAME *primary_name = NULL;
    TPM2B_SENSITIVE_DATA *unsealed = NULL;
    tpm2_sealed_key_outcome outcome = open_tpm(&tpm, tcti);
    if (outcome.failure != KEYSMITH_TPM2_SUCCESS) goto done;
    TSS2_RC rc = Esys_TR_GetName(tpm.esys, tpm.primary, &primary_name);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "Esys_TR_GetName");
        goto done;
    }
    // Another storage primary key: another TPM, or this one after TPM2_Clear.
    if (primary_name->size != parsed.primary_name.size
        || memcmp(primary_name->name, parsed.primary_name.name, primary_name->size) != 0) {
        outcome = failed(KEYSMITH_TPM2_OTHER_TPM, 0, "comparing the storage key");
        goto done;
    }
    outcome = start_session(&tpm, parsed.pcr_mask == 0 ? TPM2_SE_HMAC : TPM2_SE_POLICY, &tpm.session);
    if (outcome.failure != KEYSMITH_TPM2_SUCCESS) goto done;
    // The primary key's authorization is empty, and TPM2_Load carries nothing secret (the
    // private area is encrypted by the TPM's own key): a password session with no password.
    rc = Esys_Load(tpm.esys, tpm.primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &parsed.private, &parsed.public,
                   &tpm.object);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_Load");
        goto done;
    }
    if (parsed.needs_auth) {
        TPM2B_AUTH value = {.size = (UINT16)auth_length};
        memcpy(value.buffer, auth, auth_length);
        rc = Esys_TR_SetAuth(tpm.esys, tpm.object, &value);
        explicit_bzero(&value, sizeof value);
        if (rc != TSS2_RC_SUCCESS) {
            outcome = failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "Esys_TR_SetAuth");
            goto done;
        }
    }
    if (parsed.pcr_mask != 0) {
        outcome = policy_pcr(&tpm, tpm.session, parsed.pcr_mask);
        if (outcome.failure != KEYSMITH_TPM2_SUCCESS) goto done;
        if (parsed.needs_auth) {
            outcome = policy_auth_value(&tpm, tpm.session);
            if (outcome.failure != KEYSMITH_TPM2_SUCCESS) goto done;
        }
    }
    // The secret is the response's first parameter: encrypted on its way back.
    outcome = set_attributes(&tpm, tpm.session, TPMA_SESSION_ENCRYPT);
    if (outcome.failure != KEYSMITH_TPM2_SUCCESS) goto done;
    rc = Esys_Unseal(tpm.esys, tpm.object, tpm.session, ESYS_TR_NONE, ESYS_TR_NONE, &unsealed);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_Unseal");
        goto done;
    }
    if (unsealed->size > secret_capacity) {
        outcome = failed(KEYSMITH_TPM2_BAD_ARGUMENT, 0, "the unsealed secret's size");
        goto done;
    }
    memcpy(secret, unsealed->buffer, unsealed->size);
    *secret_length = unsealed->size;
done:
    if (unsealed != NULL) {
        explicit_bzero(unsealed, sizeof *unsealed);
        Esys_Free(unsealed);
    }
    if (primary_name != NULL) Esys_Free(primary_name);
    explicit_bzero(&parsed, sizeof parsed);
    close_tpm(&tpm);
    return outcome;
}

tpm2_sealed_key_outcome tpm2_sealed_key_lockout_auth_is_set(const char *tcti, int *is_set) {
    struct tpm tpm = {.tcti = NULL, .esys = NULL, .primary = ESYS_TR_NONE, .session = ESYS_TR_NONE, .object = ESYS_TR_NONE};
    TPMS_CAPABILITY_DATA *data = NULL;
    tpm2_sealed_key_outcome outcome = succeeded();
    TSS2_RC rc = Tss2_TctiLdr_Initialize(tcti, &tpm.tcti);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = failed(rc == TSS2_ESYS_RC_NOT_IMPLEMENTED ? KEYSMITH_TPM2_LIBRARY_MISSING : KEYSMITH_TPM2_CONNECT_FAILED, rc,
                         "Tss2_TctiLdr_Initialize");
        goto done;
    }
    rc = Esys_Initialize(&tpm.esys, tpm.tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = failed(rc == TSS2_ESYS_RC_NOT_IMPLEMENTED ? KEYSMITH_TPM2_LIBRARY_MISSING : KEYSMITH_TPM2_CONNECT_FAILED, rc,
                         "Esys_Initialize");
        goto done;
    }
    TPMI_YES_NO more = 0;
    rc = Esys_GetCapability(tpm.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES, TPM2_PT_PERMANENT, 1,
                            &more, &data);
    if (rc != TSS2_RC_SUCCESS) {
        outcome = failed(KEYSMITH_TPM2_COMMAND_FAILED, rc, "TPM2_GetCapability");
        goto done;
    }
    if (data->data.tpmProperties.count < 1 || data->data.tpmProperties.tpmProperty[0].property != TPM2_PT_PERMANENT) {
        outcome = failed(KEYSMITH_TPM2_COMMAND_FAILED, 0, "TPM2_GetCapability");
        goto done;
    }
    *is_set = (data->data.tpmProperties.tpmProperty[0].value & TPMA_PERMANENT_LOCKOUTAUTHSET) != 0;
done:
    if (data != NULL) Esys_Free(data);
    close_tpm(&tpm);
    return outcome;
}
