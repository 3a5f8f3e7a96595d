/*
 * keysmith.h: Keysmith's keychain from C (and from anything that can call C: Node-API
 * addons, Python's ctypes, Rust, Go).
 *
 * The items are generic passwords, the same items the Swift KeychainStore and SecureStore
 * and the keysmith tool see: a service (for a SecureStore namespace, "PREFIX.NAMESPACE")
 * and a key (the account). Values are bytes; a SecureStore stores text as its UTF-8 bytes
 * and anything else as JSON, and so should a caller that wants the Swift store to read its
 * values.
 *
 * Conventions:
 *   - Every call returns an OSStatus: 0 (KEYSMITH_OK) on success, a negative keychain
 *     status otherwise (KEYSMITH_ERR_NOT_FOUND, KEYSMITH_ERR_PARAM, ...).
 *   - Every call takes an optional keysmith_error (NULL is allowed) that receives the
 *     status, a cross-platform code ("ITEM_NOT_FOUND", "INVALID_VALUE", ...) and a
 *     readable message with the cause and the fix. Messages name services and keys,
 *     never a value.
 *   - Strings are NUL-terminated UTF-8. Values are (pointer, length) byte ranges.
 *   - Names (services, keys, prefixes, namespaces, access groups) are compared byte for
 *     byte, never by Unicode equivalence: "jos\xc3\xa9" (precomposed) and "jose\xcc\x81"
 *     (e and a combining accent) are two names with their own items.
 *   - keysmith_set succeeds whatever a concurrent keysmith_remove of the same key does.
 *   - Buffers the library returns (values, key lists, reports) are freed with
 *     keysmith_free, which zeroes them first. Never pass them to free().
 *   - Every function may be called from any thread at the same time; a keysmith_store is
 *     immutable once opened and may be shared between threads.
 *   - The keychain is the one named by KEYSMITH_HOME (else ~/.local/share/keysmith), as
 *     for every Keysmith program.
 */
#ifndef KEYSMITH_H
#define KEYSMITH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this interface; keysmith_abi_version() returns the library's. */
#define KEYSMITH_ABI_VERSION 2

/** Success. */
#define KEYSMITH_OK 0
/** errSecParam: a NULL pointer, an empty service or key, an unknown accessibility. */
#define KEYSMITH_ERR_PARAM (-50)
/** errSecUserCanceled: the user canceled an authentication prompt. */
#define KEYSMITH_ERR_USER_CANCELED (-128)
/** errSecAuthFailed: authentication failed (or biometry is locked out). */
#define KEYSMITH_ERR_AUTH_FAILED (-25293)
/** errSecItemNotFound: no such item (keysmith_get and keysmith_get_into only). */
#define KEYSMITH_ERR_NOT_FOUND (-25300)
/** errSecBufferTooSmall: keysmith_get_into's buffer is too small; *length says how large. */
#define KEYSMITH_ERR_BUFFER_TOO_SMALL (-25301)
/** errSecInteractionNotAllowed: the keychain is locked or no prompt can be shown. */
#define KEYSMITH_ERR_INTERACTION_NOT_ALLOWED (-25308)
/** errSecDecode: stored data could not be read as asked. */
#define KEYSMITH_ERR_DECODE (-26275)
/** errSecMissingEntitlement: the access group is not one this program may use. */
#define KEYSMITH_ERR_MISSING_ENTITLEMENT (-34018)
/** keysmith_get_nowait only: answering would have waited (error->code WOULD_WAIT); make the
    same call with keysmith_get on a thread that may wait. (Apple's errSSLWouldBlock, a status
    no keychain call returns.) Since ABI version 2. */
#define KEYSMITH_WOULD_WAIT (-9803)

/** What went wrong, filled in by every call that fails (and cleared by one that succeeds). */
typedef struct keysmith_error {
    /** The OSStatus, 0 when the call succeeded. */
    int32_t status;
    /** The cross-platform code: ITEM_NOT_FOUND, AUTH_FAILED, USER_CANCELED,
        INTERACTION_NOT_ALLOWED, LIMIT_EXCEEDED, INVALID_VALUE, DECODING_FAILED,
        MISSING_ENTITLEMENT, UNKNOWN (and WOULD_WAIT from keysmith_get_nowait); empty on
        success. */
    char code[32];
    /** What happened, why, and what to do; never a value. Truncated to fit. */
    char message[1024];
} keysmith_error;

/** A store: the access group and the accessibility of the items it writes. */
typedef struct keysmith_store keysmith_store;

/** A list of strings in one library-allocated block: free it with keysmith_free(list.items). */
typedef struct keysmith_string_list {
    /** The strings, each once, in byte order (strcmp order); NULL when count is 0. */
    char **items;
    /** How many there are. */
    size_t count;
} keysmith_string_list;

/** The library's KEYSMITH_ABI_VERSION. */
int32_t keysmith_abi_version(void);

/**
 * Opens a store.
 * access_group: the access group, or NULL for this program's default group (for a program
 *   that configures no groups, "keysmith.shared": the group the keysmith tool and every
 *   unconfigured Keysmith program share); with NULL, reads and deletes see every group the
 *   program may use, as the Swift stores do.
 * accessibility: whenUnlocked, whenUnlockedThisDeviceOnly, afterFirstUnlock,
 *   afterFirstUnlockThisDeviceOnly or whenPasscodeSetThisDeviceOnly; NULL for
 *   afterFirstUnlockThisDeviceOnly (the Swift stores' default).
 * On success *out_store is the store; close it with keysmith_store_close.
 */
int32_t keysmith_store_open(const char *access_group, const char *accessibility, keysmith_store **out_store,
                            keysmith_error *error);

/** Closes a store (NULL is fine). Calls in flight on other threads must have returned. */
void keysmith_store_close(keysmith_store *store);

/** Stores value (length bytes; length 0 is an empty value) under key in service, replacing
    any previous value. On failure the previous value stays. */
int32_t keysmith_set(const keysmith_store *store, const char *service, const char *key, const uint8_t *value,
                     size_t length, keysmith_error *error);

/** Reads the value under key in service into a library buffer: *out_value (free it with
    keysmith_free) and *out_length. KEYSMITH_ERR_NOT_FOUND when there is none (error->code
    ITEM_NOT_FOUND; *out_value NULL). */
int32_t keysmith_get(const keysmith_store *store, const char *service, const char *key, uint8_t **out_value,
                     size_t *out_length, keysmith_error *error);

/**
 * keysmith_get, answered only when that takes no waiting: for a thread that must not block
 * (an event loop). Returns KEYSMITH_WOULD_WAIT, with nothing read (*out_value NULL), when
 * the read would wait: the keychain is not open in this process yet (the first call opens
 * it, reading the device key), another thread holds the keychain's write lock or its key
 * hierarchy, another connection holds the database (SQLite busy; no busy timeout here), an
 * item needs authentication (a prompt), or the keychain is locked. The caller then makes
 * the same call with keysmith_get where waiting is fine, which answers as always. Every
 * other answer is the one keysmith_get gives. Since ABI version 2.
 */
int32_t keysmith_get_nowait(const keysmith_store *store, const char *service, const char *key, uint8_t **out_value,
                            size_t *out_length, keysmith_error *error);

/** Reads the value under key in service into the caller's buffer (capacity bytes).
    *out_length is the value's length; when it is larger than capacity the call returns
    KEYSMITH_ERR_BUFFER_TOO_SMALL and writes nothing into buffer (buffer may be NULL with
    capacity 0 to ask for the length). KEYSMITH_ERR_NOT_FOUND when there is none. */
int32_t keysmith_get_into(const keysmith_store *store, const char *service, const char *key, uint8_t *buffer,
                          size_t capacity, size_t *out_length, keysmith_error *error);

/** Whether an item exists under key in service (*out_exists 1 or 0). Never reads the value,
    never prompts. */
int32_t keysmith_contains(const keysmith_store *store, const char *service, const char *key, int32_t *out_exists,
                          keysmith_error *error);

/** Removes the item under key in service; removing a missing item succeeds. */
int32_t keysmith_remove(const keysmith_store *store, const char *service, const char *key, keysmith_error *error);

/** The keys of service, each once, in byte order, in *out_keys (free out_keys->items with
    keysmith_free). Names are bytes: "jos\xc3\xa9" and "jose\xcc\x81" are two keys, both listed;
    a key held in several access groups (a store opened with a NULL group) is listed once. */
int32_t keysmith_keys(const keysmith_store *store, const char *service, keysmith_string_list *out_keys,
                      keysmith_error *error);

/** Removes every item of service, and only of it. */
int32_t keysmith_remove_all(const keysmith_store *store, const char *service, keysmith_error *error);

/** The services of generic passwords this store can see whose bytes start with prefix's
    bytes (an empty prefix lists all), each once, in byte order, in *out_services (free
    out_services->items with keysmith_free). */
int32_t keysmith_services(const keysmith_store *store, const char *prefix, keysmith_string_list *out_services,
                          keysmith_error *error);

/**
 * Stores UTF-8 text (length bytes) under key in service_prefix.namespace behind biometry,
 * as the Swift SecureStore's setBiometricProtected does: where biometry can be used the
 * item requires it (biometryCurrentSet, readable while unlocked); where it cannot (no
 * authenticator, nothing enrolled) the value is stored with the store's accessibility and
 * *out_protected is 0, with the reason in fallback_reason (NUL-terminated, truncated to
 * reason_capacity; may be NULL). Biometry locked out is KEYSMITH_ERR_AUTH_FAILED and
 * nothing changes.
 */
int32_t keysmith_set_biometric_protected(const keysmith_store *store, const char *service_prefix,
                                         const char *namespace_name, const char *key, const uint8_t *value,
                                         size_t length, int32_t *out_protected, char *fallback_reason,
                                         size_t reason_capacity, keysmith_error *error);

/**
 * Moves every item of old_service into service_prefix.namespace, as the Swift SecureStore's
 * migrateService does: for each key, write the new item, read it back, compare, and only then
 * delete the old one; a destination holding a different value is a conflict and both are
 * kept. Idempotent and crash-safe: the only copy of a value is never deleted.
 * *out_report_json is a JSON object (free it with keysmith_free):
 * {"migrated":[keys],"alreadyPresent":[keys],"conflicts":[keys],"skipped":{key:reason}}.
 */
int32_t keysmith_migrate_service(const keysmith_store *store, const char *old_service, const char *service_prefix,
                                 const char *namespace_name, char **out_report_json, keysmith_error *error);

/** Zeroes and frees a buffer the library returned (a value, a list's items, a report).
    NULL is fine. A buffer freed already, or a pointer the library did not return, stops
    the program with a message (abort), as free() does for a double free. */
void keysmith_free(void *buffer);

/**
 * For tests of this library: observer is called by keysmith_free with each buffer after it
 * was zeroed and before it is released, so a test can check that nothing of a value is
 * left in it. NULL removes the observer. Not for production use.
 */
void keysmith_debug_set_free_observer(void (*observer)(const void *buffer, size_t length, void *context),
                                      void *context);

#ifdef __cplusplus
}
#endif

#endif /* KEYSMITH_H */
