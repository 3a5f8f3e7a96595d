/*
 * keysmith.node: the Node-API addon of @keysmith/secure-store, over Keysmith's C interface
 * (include/keysmith.h, libkeysmith.so).
 *
 * Every keychain call runs on libuv's thread pool (napi_async_work) and settles a Promise on
 * the JavaScript thread: a keychain read can take a file lock or wait for the disk, and the
 * event loop must not wait with it. A get first asks keysmith_get_nowait on the JavaScript
 * thread, which answers only when it needs no waiting (the keychain open, no lock or busy
 * database in the way, no authentication); a value or a missing item settles the promise at
 * once, and anything else (it would wait, or any failure) makes the same call on the thread
 * pool, which answers as before. Value bytes copied out of JavaScript strings are zeroed
 * before they are freed; values read are handed to JavaScript as strings (which JavaScript
 * cannot zero) and their native buffers are zeroed by keysmith_free.
 *
 * Failures reject with an Error whose `code` is the cross-platform code (ITEM_NOT_FOUND,
 * INVALID_VALUE, ...) and `status` the OSStatus; a missing item resolves to null.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <node_api.h>

#include "keysmith.h"

#define NAPI_CALL(env, call)                                                    \
    do {                                                                        \
        if ((call) != napi_ok) {                                                \
            const napi_extended_error_info *info = NULL;                        \
            napi_get_last_error_info((env), &info);                             \
            napi_throw_error((env), "KEYSMITH_ADDON",                           \
                             info && info->error_message ? info->error_message  \
                                                         : "Node-API call failed"); \
            return NULL;                                                        \
        }                                                                       \
    } while (0)

typedef enum {
    OP_SET,
    OP_GET,
    OP_CONTAINS,
    OP_REMOVE,
    OP_KEYS,
    OP_REMOVE_ALL,
    OP_SERVICES,
    OP_SET_BIOMETRIC,
    OP_MIGRATE,
} operation;

/* One call in flight: its arguments (copied), its result, its promise. */
typedef struct {
    operation op;
    keysmith_store *store;
    napi_ref store_ref; /* keeps the store's JavaScript object (and so the store) alive */
    char *text[4];      /* service / key, or prefix, namespace, key, old service */
    uint8_t *value;
    size_t value_length;
    /* results */
    int32_t status;
    keysmith_error error;
    uint8_t *out_value;
    size_t out_length;
    int32_t flag;
    keysmith_string_list list;
    char *report;
    char reason[512];
    napi_deferred deferred;
    napi_async_work work;
} call;

/* Zeroes memory in a way the compiler may not drop (glibc's explicit_bzero: word-wide
   stores, where a volatile byte loop cost about 5,000 instructions a call for the error
   record alone). */
static void wipe(void *pointer, size_t length) { explicit_bzero(pointer, length); }

static void call_free(call *c) {
    for (int i = 0; i < 4; i++) free(c->text[i]);
    if (c->value) {
        wipe(c->value, c->value_length);
        free(c->value);
    }
    keysmith_free(c->out_value);
    keysmith_free(c->list.items);
    keysmith_free(c->report);
    wipe(&c->error, sizeof c->error);
    free(c);
}

/* ---- the store object ---- */

static void store_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    keysmith_store_close(data);
}

/* Throws a JavaScript Error with code and status, as the promises reject. */
static napi_value make_error(napi_env env, const char *code, int32_t status, const char *message) {
    napi_value js_code, js_message, error, js_status;
    napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &js_code);
    napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &js_message);
    napi_create_error(env, js_code, js_message, &error);
    napi_create_int32(env, status, &js_status);
    napi_set_named_property(env, error, "status", js_status);
    return error;
}

/* Whether a JavaScript string has no unpaired surrogate; throws INVALID_VALUE when it has one.
   Its UTF-8 form would carry U+FFFD in place of the half pair, so two different keys (or
   namespaces) would name the same item, and a value would be stored changed. */
static int well_formed_utf16(napi_env env, napi_value value, const char *name) {
    size_t length = 0;
    if (napi_get_value_string_utf16(env, value, NULL, 0, &length) != napi_ok) return 0;
    char16_t *units = malloc((length + 1) * sizeof *units);
    if (units == NULL) {
        napi_throw_error(env, "UNKNOWN", "Out of memory.");
        return 0;
    }
    napi_get_value_string_utf16(env, value, units, length + 1, &length);
    int ok = 1;
    for (size_t i = 0; i < length && ok; i++) {
        if (units[i] >= 0xD800 && units[i] <= 0xDBFF) {
            if (i + 1 < length && units[i + 1] >= 0xDC00 && units[i + 1] <= 0xDFFF) {
                i++;
            } else {
                ok = 0;
            }
        } else if (units[i] >= 0xDC00 && units[i] <= 0xDFFF) {
            ok = 0;
        }
    }
    wipe(units, (length + 1) * sizeof *units); /* it may be a value */
    free(units);
    if (!ok) {
        char message[256];
        snprintf(message, sizeof message,
                 "The %s contains an unpaired surrogate (half of a UTF-16 pair), which UTF-8 cannot carry: "
                 "it would be stored as different text. Use well-formed text.", name);
        napi_throw(env, make_error(env, "INVALID_VALUE", KEYSMITH_ERR_PARAM, message));
    }
    return ok;
}

/* Whether the UTF-8 form of a JavaScript string may hide an unpaired surrogate: Node writes
   one as U+FFFD (EF BF BD), or, without replacement, as its own three bytes (ED A0..BF xx).
   Bytes with neither come from well-formed text, so the UTF-16 check (a copy of the whole
   string) is needed only when this says yes. */
static int may_hide_surrogate(const char *text, size_t length) {
    const uint8_t *bytes = (const uint8_t *)text;
    for (size_t i = 0; i + 2 < length; i++) {
        if (bytes[i] == 0xEF && bytes[i + 1] == 0xBF && bytes[i + 2] == 0xBD) return 1;
        if (bytes[i] == 0xED && bytes[i + 1] >= 0xA0 && bytes[i + 1] <= 0xBF) return 1;
    }
    return 0;
}

/* A string argument, or NULL for null/undefined when optional. Throws on a wrong type. */
static int string_argument(napi_env env, napi_value value, const char *name, int optional, char **out,
                           size_t *out_length) {
    napi_valuetype type;
    *out = NULL;
    if (out_length) *out_length = 0;
    if (napi_typeof(env, value, &type) != napi_ok) return 0;
    if (optional && (type == napi_null || type == napi_undefined)) return 1;
    if (type != napi_string) {
        char message[160];
        snprintf(message, sizeof message, "The %s must be a string.", name);
        napi_throw(env, make_error(env, "INVALID_VALUE", KEYSMITH_ERR_PARAM, message));
        return 0;
    }
    size_t length = 0;
    if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return 0;
    char *copy = malloc(length + 1);
    if (copy == NULL) {
        napi_throw_error(env, "UNKNOWN", "Out of memory.");
        return 0;
    }
    napi_get_value_string_utf8(env, value, copy, length + 1, &length);
    if (may_hide_surrogate(copy, length) && !well_formed_utf16(env, value, name)) {
        wipe(copy, length); /* it may be a value */
        free(copy);
        return 0;
    }
    if (out_length) {
        *out_length = length; /* a value may hold U+0000: it is bytes with a length */
    } else if (strlen(copy) != length) {
        free(copy);
        char message[160];
        snprintf(message, sizeof message, "The %s contains a NUL character (U+0000): use a name without it.", name);
        napi_throw(env, make_error(env, "INVALID_VALUE", KEYSMITH_ERR_PARAM, message));
        return 0;
    }
    *out = copy;
    return 1;
}

/* openStore(accessGroup: string | null, accessibility: string | null): the store object. */
static napi_value open_store(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 2) {
        napi_throw(env, make_error(env, "INVALID_VALUE", KEYSMITH_ERR_PARAM, "openStore(accessGroup, accessibility)"));
        return NULL;
    }
    char *group = NULL, *accessibility = NULL;
    if (!string_argument(env, argv[0], "access group", 1, &group, NULL)) return NULL;
    if (!string_argument(env, argv[1], "accessibility", 1, &accessibility, NULL)) {
        free(group);
        return NULL;
    }
    keysmith_store *store = NULL;
    keysmith_error error;
    int32_t status = keysmith_store_open(group, accessibility, &store, &error);
    free(group);
    free(accessibility);
    if (status != KEYSMITH_OK) {
        napi_throw(env, make_error(env, error.code, status, error.message));
        return NULL;
    }
    napi_value object;
    NAPI_CALL(env, napi_create_object(env, &object));
    if (napi_wrap(env, object, store, store_finalize, NULL, NULL) != napi_ok) {
        keysmith_store_close(store);
        napi_throw_error(env, "KEYSMITH_ADDON", "The store could not be attached to its object.");
        return NULL;
    }
    return object;
}

/* ---- calls ---- */

static void execute(napi_env env, void *data) {
    (void)env;
    call *c = data;
    switch (c->op) {
    case OP_SET:
        c->status = keysmith_set(c->store, c->text[0], c->text[1], c->value, c->value_length, &c->error);
        break;
    case OP_GET:
        c->status = keysmith_get(c->store, c->text[0], c->text[1], &c->out_value, &c->out_length, &c->error);
        break;
    case OP_CONTAINS:
        c->status = keysmith_contains(c->store, c->text[0], c->text[1], &c->flag, &c->error);
        break;
    case OP_REMOVE:
        c->status = keysmith_remove(c->store, c->text[0], c->text[1], &c->error);
        break;
    case OP_KEYS:
        c->status = keysmith_keys(c->store, c->text[0], &c->list, &c->error);
        break;
    case OP_REMOVE_ALL:
        c->status = keysmith_remove_all(c->store, c->text[0], &c->error);
        break;
    case OP_SERVICES:
        c->status = keysmith_services(c->store, c->text[0], &c->list, &c->error);
        break;
    case OP_SET_BIOMETRIC:
        c->status = keysmith_set_biometric_protected(c->store, c->text[0], c->text[1], c->text[2], c->value,
                                                     c->value_length, &c->flag, c->reason, sizeof c->reason,
                                                     &c->error);
        break;
    case OP_MIGRATE:
        c->status = keysmith_migrate_service(c->store, c->text[3], c->text[0], c->text[1], &c->report, &c->error);
        break;
    }
}

/* Whether bytes are well-formed UTF-8 (so a read never turns into replacement characters). */
static int valid_utf8(const uint8_t *bytes, size_t length) {
    size_t i = 0;
    while (i < length) {
        uint8_t b = bytes[i];
        size_t extra;
        uint32_t code;
        if (b < 0x80) { i++; continue; }
        else if ((b & 0xE0) == 0xC0) { extra = 1; code = b & 0x1F; }
        else if ((b & 0xF0) == 0xE0) { extra = 2; code = b & 0x0F; }
        else if ((b & 0xF8) == 0xF0) { extra = 3; code = b & 0x07; }
        else return 0;
        if (i + extra >= length) return 0;
        for (size_t k = 1; k <= extra; k++) {
            if ((bytes[i + k] & 0xC0) != 0x80) return 0;
            code = (code << 6) | (bytes[i + k] & 0x3F);
        }
        if ((extra == 1 && code < 0x80) || (extra == 2 && code < 0x800) || (extra == 3 && code < 0x10000)
            || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
            return 0;
        i += extra + 1;
    }
    return 1;
}

static napi_value string_array(napi_env env, const keysmith_string_list *list) {
    napi_value array;
    if (napi_create_array_with_length(env, list->count, &array) != napi_ok) return NULL;
    for (size_t i = 0; i < list->count; i++) {
        napi_value item;
        napi_create_string_utf8(env, list->items[i], NAPI_AUTO_LENGTH, &item);
        napi_set_element(env, array, (uint32_t)i, item);
    }
    return array;
}

/* Settles the call's promise with its result, and frees the call. */
static void settle(napi_env env, napi_status status, call *c) {
    napi_value result = NULL;
    napi_value failure = NULL;
    if (status != napi_ok) {
        failure = make_error(env, "UNKNOWN", -1, "The keychain call was canceled.");
    } else if (c->op == OP_GET && c->status == KEYSMITH_ERR_NOT_FOUND) {
        napi_get_null(env, &result); /* a missing item is null, not an error */
    } else if (c->status != KEYSMITH_OK) {
        failure = make_error(env, c->error.code, c->status, c->error.message);
    } else {
        switch (c->op) {
        case OP_GET:
            if (!valid_utf8(c->out_value, c->out_length)) {
                failure = make_error(env, "DECODING_FAILED", KEYSMITH_ERR_DECODE,
                                     "The stored value is not UTF-8 text, so it cannot be read as a string. It was "
                                     "written by another program as bytes: read it there, or store it again as text.");
            } else {
                napi_create_string_utf8(env, (const char *)c->out_value, c->out_length, &result);
            }
            break;
        case OP_CONTAINS:
            napi_get_boolean(env, c->flag != 0, &result);
            break;
        case OP_KEYS:
        case OP_SERVICES:
            result = string_array(env, &c->list);
            break;
        case OP_SET_BIOMETRIC: {
            napi_value is_protected, reason;
            napi_create_object(env, &result);
            napi_get_boolean(env, c->flag != 0, &is_protected);
            napi_set_named_property(env, result, "protected", is_protected);
            if (c->flag == 0) {
                napi_create_string_utf8(env, c->reason, NAPI_AUTO_LENGTH, &reason);
            } else {
                napi_get_null(env, &reason);
            }
            napi_set_named_property(env, result, "reason", reason);
            break;
        }
        case OP_MIGRATE:
            napi_create_string_utf8(env, c->report ? c->report : "{}", NAPI_AUTO_LENGTH, &result);
            break;
        default:
            napi_get_undefined(env, &result);
        }
    }
    if (failure) {
        napi_reject_deferred(env, c->deferred, failure);
    } else {
        napi_resolve_deferred(env, c->deferred, result);
    }
    if (c->store_ref) napi_delete_reference(env, c->store_ref);
    if (c->work) napi_delete_async_work(env, c->work);
    call_free(c);
}

static void complete(napi_env env, napi_status status, void *data) { settle(env, status, data); }

/* A get answered on the JavaScript thread when keysmith_get_nowait can answer it without
   waiting with a value or a missing item: 1 with *out the settled promise (the call freed), 0
   with the call untouched for the thread pool to answer, -1 after throwing (the call freed). */
static int get_now(napi_env env, call *c, napi_value *out) {
    int32_t status = keysmith_get_nowait(c->store, c->text[0], c->text[1], &c->out_value, &c->out_length, &c->error);
    if (status != KEYSMITH_OK && status != KEYSMITH_ERR_NOT_FOUND) {
        keysmith_free(c->out_value);
        c->out_value = NULL;
        c->out_length = 0;
        return 0;
    }
    c->status = status;
    napi_value promise;
    if (napi_create_promise(env, &c->deferred, &promise) != napi_ok) {
        call_free(c);
        napi_throw_error(env, "KEYSMITH_ADDON", "The keychain call could not be started.");
        return -1;
    }
    settle(env, napi_ok, c);
    *out = promise;
    return 1;
}

/* Starts a call: argv[0] is the store object, then `strings` string arguments, then the value
   (a string) when `with_value`. Returns the promise. */
static napi_value start(napi_env env, napi_callback_info info, operation op, size_t strings, int with_value) {
    size_t argc = 6;
    napi_value argv[6];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    size_t needed = 1 + strings + (with_value ? 1 : 0);
    if (argc < needed) {
        napi_throw(env, make_error(env, "INVALID_VALUE", KEYSMITH_ERR_PARAM, "Too few arguments."));
        return NULL;
    }
    call *c = calloc(1, sizeof *c);
    if (c == NULL) {
        napi_throw_error(env, "UNKNOWN", "Out of memory.");
        return NULL;
    }
    c->op = op;
    if (napi_unwrap(env, argv[0], (void **)&c->store) != napi_ok || c->store == NULL) {
        call_free(c);
        napi_throw(env, make_error(env, "INVALID_VALUE", KEYSMITH_ERR_PARAM, "The first argument must be a store from openStore()."));
        return NULL;
    }
    /* The string arguments, in order, and the slot each goes to (see call.text). */
    static const char *plain[] = {"service", "key"};
    static const char *biometric[] = {"service prefix", "namespace", "key"};
    static const char *migrate[] = {"service prefix", "namespace", "old service"};
    const char **names = op == OP_SET_BIOMETRIC ? biometric : op == OP_MIGRATE ? migrate : plain;
    for (size_t i = 0; i < strings; i++) {
        size_t slot = (op == OP_MIGRATE && i == 2) ? 3 : i;
        if (!string_argument(env, argv[1 + i], names[i], 0, &c->text[slot], NULL)) {
            call_free(c);
            return NULL;
        }
    }
    if (with_value) {
        char *value = NULL;
        if (!string_argument(env, argv[1 + strings], "value", 0, &value, &c->value_length)) {
            call_free(c);
            return NULL;
        }
        c->value = (uint8_t *)value;
    }
    if (op == OP_GET) {
        napi_value settled = NULL;
        int answered = get_now(env, c, &settled);
        if (answered != 0) return settled; /* NULL after a throw */
    }
    napi_value promise, name;
    if (napi_create_reference(env, argv[0], 1, &c->store_ref) != napi_ok
        || napi_create_promise(env, &c->deferred, &promise) != napi_ok
        || napi_create_string_utf8(env, "keysmith", NAPI_AUTO_LENGTH, &name) != napi_ok
        || napi_create_async_work(env, NULL, name, execute, complete, c, &c->work) != napi_ok
        || napi_queue_async_work(env, c->work) != napi_ok) {
        call_free(c);
        napi_throw_error(env, "KEYSMITH_ADDON", "The keychain call could not be started.");
        return NULL;
    }
    return promise;
}

static napi_value js_set(napi_env env, napi_callback_info info) { return start(env, info, OP_SET, 2, 1); }
static napi_value js_get(napi_env env, napi_callback_info info) { return start(env, info, OP_GET, 2, 0); }
static napi_value js_contains(napi_env env, napi_callback_info info) { return start(env, info, OP_CONTAINS, 2, 0); }
static napi_value js_remove(napi_env env, napi_callback_info info) { return start(env, info, OP_REMOVE, 2, 0); }
static napi_value js_keys(napi_env env, napi_callback_info info) { return start(env, info, OP_KEYS, 1, 0); }
static napi_value js_remove_all(napi_env env, napi_callback_info info) { return start(env, info, OP_REMOVE_ALL, 1, 0); }
static napi_value js_services(napi_env env, napi_callback_info info) { return start(env, info, OP_SERVICES, 1, 0); }
static napi_value js_set_biometric(napi_env env, napi_callback_info info) { return start(env, info, OP_SET_BIOMETRIC, 3, 1); }
static napi_value js_migrate(napi_env env, napi_callback_info info) { return start(env, info, OP_MIGRATE, 3, 0); }

static napi_value init(napi_env env, napi_value exports) {
    napi_property_descriptor properties[] = {
        {"openStore", NULL, open_store, NULL, NULL, NULL, napi_enumerable, NULL},
        {"set", NULL, js_set, NULL, NULL, NULL, napi_enumerable, NULL},
        {"get", NULL, js_get, NULL, NULL, NULL, napi_enumerable, NULL},
        {"contains", NULL, js_contains, NULL, NULL, NULL, napi_enumerable, NULL},
        {"remove", NULL, js_remove, NULL, NULL, NULL, napi_enumerable, NULL},
        {"keys", NULL, js_keys, NULL, NULL, NULL, napi_enumerable, NULL},
        {"removeAll", NULL, js_remove_all, NULL, NULL, NULL, napi_enumerable, NULL},
        {"services", NULL, js_services, NULL, NULL, NULL, napi_enumerable, NULL},
        {"setBiometricProtected", NULL, js_set_biometric, NULL, NULL, NULL, napi_enumerable, NULL},
        {"migrateService", NULL, js_migrate, NULL, NULL, NULL, napi_enumerable, NULL},
    };
    NAPI_CALL(env, napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties));
    napi_value version;
    NAPI_CALL(env, napi_create_int32(env, keysmith_abi_version(), &version));
    NAPI_CALL(env, napi_set_named_property(env, exports, "abiVersion", version));
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
