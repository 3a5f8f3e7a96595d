// tpm2-tss (the TCTI loader, ESYS and its marshalling library), loaded on first use (see
// include/load_on_use.h): the calls the TPM key store makes. The definitions are hidden, so
// the libraries themselves (ESYS calls the marshalling library) never bind to them.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#pragma GCC visibility push(hidden)
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_tctildr.h>
#pragma GCC visibility pop
#include "load_on_use.h"

// A library that cannot be loaded: the calls fail as ESYS does for a missing TCTI.
#define TSS2_LIBRARY_MISSING TSS2_ESYS_RC_NOT_IMPLEMENTED

static struct load_on_use_library tctildr_library = LOAD_ON_USE_LIBRARY("libtss2-tctildr.so.0");
static struct load_on_use_library esys_library = LOAD_ON_USE_LIBRARY("libtss2-esys.so.0");
static struct load_on_use_library mu_library = LOAD_ON_USE_LIBRARY("libtss2-mu.so.0");

// tpm2-tss logs every failed command to standard error unless TSS2_LOG says otherwise; the
// key store reports failures itself, so its log stays off unless the user set TSS2_LOG
// (set once, before the libraries are loaded, since they read it on their first message).
static void quiet_tss2_log(void) { setenv("TSS2_LOG", "all+NONE", 0); }

static void open_tctildr(void) {
    quiet_tss2_log();
    tctildr_library.handle = dlopen(tctildr_library.file, RTLD_NOW | RTLD_LOCAL);
}
static void open_esys(void) {
    quiet_tss2_log();
    esys_library.handle = dlopen(esys_library.file, RTLD_NOW | RTLD_LOCAL);
}
static void open_mu(void) { mu_library.handle = dlopen(mu_library.file, RTLD_NOW | RTLD_LOCAL); }

// Whether the three libraries can be loaded (for the key store's error message).
__attribute__((visibility("hidden")))
int load_on_use_tss2_available(void) {
    return load_on_use_symbol(&tctildr_library, open_tctildr, "Tss2_TctiLdr_Initialize") != NULL
        && load_on_use_symbol(&esys_library, open_esys, "Esys_Initialize") != NULL
        && load_on_use_symbol(&mu_library, open_mu, "Tss2_MU_TPM2B_PUBLIC_Marshal") != NULL;
}

__attribute__((visibility("hidden")))
TSS2_RC Tss2_TctiLdr_Initialize(const char *nameConf, TSS2_TCTI_CONTEXT **context) {
    LOAD_ON_USE_RESOLVE(tctildr_library, open_tctildr, Tss2_TctiLdr_Initialize)
    if (resolved_Tss2_TctiLdr_Initialize == NULL) {
        *context = NULL;
        return TSS2_LIBRARY_MISSING;
    }
    return resolved_Tss2_TctiLdr_Initialize(nameConf, context);
}

__attribute__((visibility("hidden")))
void Tss2_TctiLdr_Finalize(TSS2_TCTI_CONTEXT **context) {
    LOAD_ON_USE_RESOLVE(tctildr_library, open_tctildr, Tss2_TctiLdr_Finalize)
    if (resolved_Tss2_TctiLdr_Finalize != NULL) resolved_Tss2_TctiLdr_Finalize(context);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_Initialize(ESYS_CONTEXT **esys_context, TSS2_TCTI_CONTEXT *tcti, TSS2_ABI_VERSION *abiVersion) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_Initialize)
    if (resolved_Esys_Initialize == NULL) {
        *esys_context = NULL;
        return TSS2_LIBRARY_MISSING;
    }
    return resolved_Esys_Initialize(esys_context, tcti, abiVersion);
}

__attribute__((visibility("hidden")))
void Esys_Finalize(ESYS_CONTEXT **context) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_Finalize)
    if (resolved_Esys_Finalize != NULL) resolved_Esys_Finalize(context);
}

__attribute__((visibility("hidden")))
void Esys_Free(void *__ptr) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_Free)
    if (resolved_Esys_Free != NULL) resolved_Esys_Free(__ptr);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_TR_GetName(ESYS_CONTEXT *esysContext, ESYS_TR handle, TPM2B_NAME **name) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_TR_GetName)
    return resolved_Esys_TR_GetName == NULL ? TSS2_LIBRARY_MISSING : resolved_Esys_TR_GetName(esysContext, handle, name);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_TRSess_SetAttributes(ESYS_CONTEXT *esysContext, ESYS_TR session, TPMA_SESSION flags, TPMA_SESSION mask) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_TRSess_SetAttributes)
    return resolved_Esys_TRSess_SetAttributes == NULL
        ? TSS2_LIBRARY_MISSING : resolved_Esys_TRSess_SetAttributes(esysContext, session, flags, mask);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_StartAuthSession(ESYS_CONTEXT *esysContext, ESYS_TR tpmKey, ESYS_TR bind, ESYS_TR shandle1,
                              ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_NONCE *nonceCaller,
                              TPM2_SE sessionType, const TPMT_SYM_DEF *symmetric, TPMI_ALG_HASH authHash,
                              ESYS_TR *sessionHandle) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_StartAuthSession)
    return resolved_Esys_StartAuthSession == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_StartAuthSession(esysContext, tpmKey, bind, shandle1, shandle2, shandle3, nonceCaller,
                                         sessionType, symmetric, authHash, sessionHandle);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_CreatePrimary(ESYS_CONTEXT *esysContext, ESYS_TR primaryHandle, ESYS_TR shandle1, ESYS_TR shandle2,
                           ESYS_TR shandle3, const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_PUBLIC *inPublic,
                           const TPM2B_DATA *outsideInfo, const TPML_PCR_SELECTION *creationPCR,
                           ESYS_TR *objectHandle, TPM2B_PUBLIC **outPublic, TPM2B_CREATION_DATA **creationData,
                           TPM2B_DIGEST **creationHash, TPMT_TK_CREATION **creationTicket) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_CreatePrimary)
    return resolved_Esys_CreatePrimary == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_CreatePrimary(esysContext, primaryHandle, shandle1, shandle2, shandle3, inSensitive, inPublic,
                                      outsideInfo, creationPCR, objectHandle, outPublic, creationData, creationHash,
                                      creationTicket);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_Create(ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2,
                    ESYS_TR shandle3, const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_PUBLIC *inPublic,
                    const TPM2B_DATA *outsideInfo, const TPML_PCR_SELECTION *creationPCR, TPM2B_PRIVATE **outPrivate,
                    TPM2B_PUBLIC **outPublic, TPM2B_CREATION_DATA **creationData, TPM2B_DIGEST **creationHash,
                    TPMT_TK_CREATION **creationTicket) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_Create)
    return resolved_Esys_Create == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_Create(esysContext, parentHandle, shandle1, shandle2, shandle3, inSensitive, inPublic,
                               outsideInfo, creationPCR, outPrivate, outPublic, creationData, creationHash,
                               creationTicket);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_Load(ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2,
                  ESYS_TR shandle3, const TPM2B_PRIVATE *inPrivate, const TPM2B_PUBLIC *inPublic,
                  ESYS_TR *objectHandle) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_Load)
    return resolved_Esys_Load == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_Load(esysContext, parentHandle, shandle1, shandle2, shandle3, inPrivate, inPublic, objectHandle);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_Unseal(ESYS_CONTEXT *esysContext, ESYS_TR itemHandle, ESYS_TR shandle1, ESYS_TR shandle2,
                    ESYS_TR shandle3, TPM2B_SENSITIVE_DATA **outData) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_Unseal)
    return resolved_Esys_Unseal == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_Unseal(esysContext, itemHandle, shandle1, shandle2, shandle3, outData);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_PolicyPCR(ESYS_CONTEXT *esysContext, ESYS_TR policySession, ESYS_TR shandle1, ESYS_TR shandle2,
                       ESYS_TR shandle3, const TPM2B_DIGEST *pcrDigest, const TPML_PCR_SELECTION *pcrs) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_PolicyPCR)
    return resolved_Esys_PolicyPCR == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_PolicyPCR(esysContext, policySession, shandle1, shandle2, shandle3, pcrDigest, pcrs);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_PolicyGetDigest(ESYS_CONTEXT *esysContext, ESYS_TR policySession, ESYS_TR shandle1, ESYS_TR shandle2,
                             ESYS_TR shandle3, TPM2B_DIGEST **policyDigest) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_PolicyGetDigest)
    return resolved_Esys_PolicyGetDigest == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_PolicyGetDigest(esysContext, policySession, shandle1, shandle2, shandle3, policyDigest);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_PolicyAuthValue(ESYS_CONTEXT *esysContext, ESYS_TR policySession, ESYS_TR shandle1, ESYS_TR shandle2,
                             ESYS_TR shandle3) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_PolicyAuthValue)
    return resolved_Esys_PolicyAuthValue == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_PolicyAuthValue(esysContext, policySession, shandle1, shandle2, shandle3);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_TR_SetAuth(ESYS_CONTEXT *esysContext, ESYS_TR handle, TPM2B_AUTH const *authValue) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_TR_SetAuth)
    return resolved_Esys_TR_SetAuth == NULL ? TSS2_LIBRARY_MISSING : resolved_Esys_TR_SetAuth(esysContext, handle, authValue);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_FlushContext(ESYS_CONTEXT *esysContext, ESYS_TR flushHandle) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_FlushContext)
    return resolved_Esys_FlushContext == NULL ? TSS2_LIBRARY_MISSING : resolved_Esys_FlushContext(esysContext, flushHandle);
}

#define MU_FORWARD(type) \
    __attribute__((visibility("hidden"))) \
    TSS2_RC Tss2_MU_##type##_Marshal(type const *src, uint8_t buffer[], size_t buffer_size, size_t *offset) { \
        LOAD_ON_USE_RESOLVE(mu_library, open_mu, Tss2_MU_##type##_Marshal) \
        return resolved_Tss2_MU_##type##_Marshal == NULL ? TSS2_LIBRARY_MISSING \
            : resolved_Tss2_MU_##type##_Marshal(src, buffer, buffer_size, offset); \
    } \
    __attribute__((visibility("hidden"))) \
    TSS2_RC Tss2_MU_##type##_Unmarshal(uint8_t const buffer[], size_t buffer_size, size_t *offset, type *dest) { \
        LOAD_ON_USE_RESOLVE(mu_library, open_mu, Tss2_MU_##type##_Unmarshal) \
        return resolved_Tss2_MU_##type##_Unmarshal == NULL ? TSS2_LIBRARY_MISSING \
            : resolved_Tss2_MU_##type##_Unmarshal(buffer, buffer_size, offset, dest); \
    }

MU_FORWARD(TPM2B_PUBLIC)
MU_FORWARD(TPM2B_PRIVATE)
MU_FORWARD(TPM2B_NAME)

// The rollback anchor's NV counter and the device binding (tpm2_nv_counter.c).

__attribute__((visibility("hidden")))
TSS2_RC Esys_TR_FromTPMPublic(ESYS_CONTEXT *esysContext, TPM2_HANDLE tpm_handle, ESYS_TR optionalSession1,
                              ESYS_TR optionalSession2, ESYS_TR optionalSession3, ESYS_TR *object) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_TR_FromTPMPublic)
    return resolved_Esys_TR_FromTPMPublic == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_TR_FromTPMPublic(esysContext, tpm_handle, optionalSession1, optionalSession2, optionalSession3, object);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_TR_Close(ESYS_CONTEXT *esys_context, ESYS_TR *rsrc_handle) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_TR_Close)
    return resolved_Esys_TR_Close == NULL ? TSS2_LIBRARY_MISSING : resolved_Esys_TR_Close(esys_context, rsrc_handle);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_NV_DefineSpace(ESYS_CONTEXT *esysContext, ESYS_TR authHandle, ESYS_TR shandle1, ESYS_TR shandle2,
                            ESYS_TR shandle3, const TPM2B_AUTH *auth, const TPM2B_NV_PUBLIC *publicInfo, ESYS_TR *nvHandle) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_NV_DefineSpace)
    return resolved_Esys_NV_DefineSpace == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_NV_DefineSpace(esysContext, authHandle, shandle1, shandle2, shandle3, auth, publicInfo, nvHandle);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_NV_ReadPublic(ESYS_CONTEXT *esysContext, ESYS_TR nvIndex, ESYS_TR shandle1, ESYS_TR shandle2,
                           ESYS_TR shandle3, TPM2B_NV_PUBLIC **nvPublic, TPM2B_NAME **nvName) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_NV_ReadPublic)
    return resolved_Esys_NV_ReadPublic == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_NV_ReadPublic(esysContext, nvIndex, shandle1, shandle2, shandle3, nvPublic, nvName);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_NV_Read(ESYS_CONTEXT *esysContext, ESYS_TR authHandle, ESYS_TR nvIndex, ESYS_TR shandle1,
                     ESYS_TR shandle2, ESYS_TR shandle3, UINT16 size, UINT16 offset, TPM2B_MAX_NV_BUFFER **data) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_NV_Read)
    return resolved_Esys_NV_Read == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_NV_Read(esysContext, authHandle, nvIndex, shandle1, shandle2, shandle3, size, offset, data);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_NV_Increment(ESYS_CONTEXT *esysContext, ESYS_TR authHandle, ESYS_TR nvIndex, ESYS_TR shandle1,
                          ESYS_TR shandle2, ESYS_TR shandle3) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_NV_Increment)
    return resolved_Esys_NV_Increment == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_NV_Increment(esysContext, authHandle, nvIndex, shandle1, shandle2, shandle3);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_HMAC(ESYS_CONTEXT *esysContext, ESYS_TR handle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
                  const TPM2B_MAX_BUFFER *buffer, TPMI_ALG_HASH hashAlg, TPM2B_DIGEST **outHMAC) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_HMAC)
    return resolved_Esys_HMAC == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_HMAC(esysContext, handle, shandle1, shandle2, shandle3, buffer, hashAlg, outHMAC);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_NV_UndefineSpace(ESYS_CONTEXT *esysContext, ESYS_TR authHandle, ESYS_TR nvIndex, ESYS_TR shandle1,
                              ESYS_TR shandle2, ESYS_TR shandle3) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_NV_UndefineSpace)
    return resolved_Esys_NV_UndefineSpace == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_NV_UndefineSpace(esysContext, authHandle, nvIndex, shandle1, shandle2, shandle3);
}

__attribute__((visibility("hidden")))
TSS2_RC Esys_GetCapability(ESYS_CONTEXT *esysContext, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3,
                           TPM2_CAP capability, UINT32 property, UINT32 propertyCount, TPMI_YES_NO *moreData,
                           TPMS_CAPABILITY_DATA **capabilityData) {
    LOAD_ON_USE_RESOLVE(esys_library, open_esys, Esys_GetCapability)
    return resolved_Esys_GetCapability == NULL ? TSS2_LIBRARY_MISSING
        : resolved_Esys_GetCapability(esysContext, shandle1, shandle2, shandle3, capability, property, propertyCount,
                                      moreData, capabilityData);
}
