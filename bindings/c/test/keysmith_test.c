/*
 * The C interface of Keysmith (include/keysmith.h), tested from C against the real library
 * and a temporary keychain (KEYSMITH_HOME must name an empty directory).
 *
 * Build and run: make test-c. Prints one line per check and exits 1 if any failed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keysmith.h"

/* The library writes keysmith_error and keysmith_string_list by these offsets. */
_Static_assert(offsetof(keysmith_error, code) == 4 && offsetof(keysmith_error, message) == 36, "keysmith_error layout");
_Static_assert(offsetof(keysmith_string_list, count) == sizeof(char **), "keysmith_string_list layout");

static int failures = 0;
static int checks = 0;

#define CHECK(condition, ...)                                                   \
    do {                                                                        \
        checks++;                                                               \
        if (!(condition)) {                                                     \
            failures++;                                                         \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #condition); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, "\n");                                              \
        }                                                                       \
    } while (0)

static const char SERVICE[] = "com.example.ctest.auth";
/* A value with a NUL and high bytes: the interface carries bytes, not C strings. */
static const uint8_t SECRET[] = {'s', '3', 'c', 'r', 'e', 't', 0, 0xff, 'T', 'O', 'K', 'E', 'N', '-', '4', '2'};

/* What keysmith_free showed the observer. */
struct freed {
    const void *buffer;
    size_t length;
    int all_zero;
    int calls;
};

static void observe_free(const void *buffer, size_t length, void *context) {
    struct freed *freed = context;
    const unsigned char *bytes = buffer;
    freed->buffer = buffer;
    freed->length = length;
    freed->all_zero = 1;
    for (size_t i = 0; i < length; i++) {
        if (bytes[i] != 0) freed->all_zero = 0;
    }
    freed->calls++;
}

static int contains_bytes(const char *text, const uint8_t *needle, size_t length) {
    size_t text_length = strlen(text);
    if (length == 0 || text_length < length) return 0;
    for (size_t i = 0; i + length <= text_length; i++) {
        if (memcmp(text + i, needle, length) == 0) return 1;
    }
    return 0;
}

static void test_round_trip(keysmith_store *store) {
    keysmith_error error;
    CHECK(keysmith_set(store, SERVICE, "access_token", SECRET, sizeof SECRET, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(error.status == 0 && error.code[0] == 0 && error.message[0] == 0, "a success clears the error");

    uint8_t *value = NULL;
    size_t length = 0;
    CHECK(keysmith_get(store, SERVICE, "access_token", &value, &length, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(length == sizeof SECRET && value != NULL && memcmp(value, SECRET, length) == 0, "round trip of %zu bytes", length);
    keysmith_free(value);

    /* Replacing keeps one item with the new value. */
    const uint8_t second[] = "second";
    CHECK(keysmith_set(store, SERVICE, "access_token", second, 6, &error) == KEYSMITH_OK, "%s", error.message);
    uint8_t buffer[64];
    memset(buffer, 0xAA, sizeof buffer);
    CHECK(keysmith_get_into(store, SERVICE, "access_token", buffer, sizeof buffer, &length, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(length == 6 && memcmp(buffer, "second", 6) == 0 && buffer[6] == 0xAA, "get_into writes exactly the value");

    /* An empty value is a value. */
    CHECK(keysmith_set(store, SERVICE, "empty", NULL, 0, &error) == KEYSMITH_OK, "%s", error.message);
    value = (uint8_t *)1;
    CHECK(keysmith_get(store, SERVICE, "empty", &value, &length, &error) == KEYSMITH_OK && length == 0, "empty value: %s", error.message);
    keysmith_free(value);

    int32_t exists = -1;
    CHECK(keysmith_contains(store, SERVICE, "access_token", &exists, &error) == KEYSMITH_OK && exists == 1, "contains");
    CHECK(keysmith_set(store, SERVICE, "access_token", SECRET, sizeof SECRET, &error) == KEYSMITH_OK, "%s", error.message);
}

static void test_not_found(keysmith_store *store) {
    keysmith_error error;
    uint8_t *value = (uint8_t *)1;
    size_t length = 99;
    int32_t status = keysmith_get(store, SERVICE, "missing", &value, &length, &error);
    CHECK(status == KEYSMITH_ERR_NOT_FOUND, "get of a missing item: %d", status);
    CHECK(error.status == KEYSMITH_ERR_NOT_FOUND && strcmp(error.code, "ITEM_NOT_FOUND") == 0, "code %s", error.code);
    CHECK(value == NULL && length == 0, "no buffer for a missing item");
    CHECK(strstr(error.message, "missing") != NULL && strstr(error.message, SERVICE) != NULL, "message names key and service: %s", error.message);

    uint8_t buffer[4];
    CHECK(keysmith_get_into(store, SERVICE, "missing", buffer, sizeof buffer, &length, &error) == KEYSMITH_ERR_NOT_FOUND, "get_into missing");

    int32_t exists = -1;
    CHECK(keysmith_contains(store, SERVICE, "missing", &exists, &error) == KEYSMITH_OK && exists == 0, "contains missing");
    CHECK(keysmith_remove(store, SERVICE, "missing", &error) == KEYSMITH_OK, "removing a missing item succeeds: %s", error.message);
}

static void test_buffers(keysmith_store *store) {
    keysmith_error error;
    size_t length = 0;
    uint8_t small[4];
    memset(small, 0xAA, sizeof small);
    int32_t status = keysmith_get_into(store, SERVICE, "access_token", small, sizeof small, &length, &error);
    CHECK(status == KEYSMITH_ERR_BUFFER_TOO_SMALL, "too small: %d", status);
    CHECK(length == sizeof SECRET, "the needed length is reported: %zu", length);
    CHECK(small[0] == 0xAA && small[3] == 0xAA, "nothing written into a buffer that is too small");
    CHECK(strstr(error.message, "16") != NULL && !contains_bytes(error.message, SECRET, 6), "message: %s", error.message);

    length = 0;
    status = keysmith_get_into(store, SERVICE, "access_token", NULL, 0, &length, &error);
    CHECK(status == KEYSMITH_ERR_BUFFER_TOO_SMALL && length == sizeof SECRET, "asking for the length: %d %zu", status, length);
}

static void test_bad_input(keysmith_store *store) {
    keysmith_error error;
    uint8_t *value = NULL;
    size_t length = 0;
    int32_t exists = 0;
    keysmith_string_list list;

    CHECK(keysmith_set(NULL, SERVICE, "k", SECRET, 3, &error) == KEYSMITH_ERR_PARAM, "NULL store");
    CHECK(strcmp(error.code, "INVALID_VALUE") == 0 && strstr(error.message, "store is NULL") != NULL, "%s", error.message);
    CHECK(keysmith_set(store, NULL, "k", SECRET, 3, &error) == KEYSMITH_ERR_PARAM, "NULL service");
    CHECK(strstr(error.message, "service is NULL") != NULL, "%s", error.message);
    CHECK(keysmith_set(store, SERVICE, NULL, SECRET, 3, &error) == KEYSMITH_ERR_PARAM, "NULL key");
    CHECK(keysmith_set(store, SERVICE, "", SECRET, 3, &error) == KEYSMITH_ERR_PARAM, "empty key");
    CHECK(strstr(error.message, "key is empty") != NULL, "%s", error.message);
    CHECK(keysmith_set(store, "", "k", SECRET, 3, &error) == KEYSMITH_ERR_PARAM, "empty service");
    CHECK(keysmith_set(store, SERVICE, "k", NULL, 3, &error) == KEYSMITH_ERR_PARAM, "NULL value with a length");
    CHECK(strstr(error.message, "value is NULL") != NULL, "%s", error.message);
    const char bad_utf8[] = {'k', (char)0xC3, 0};
    CHECK(keysmith_set(store, SERVICE, bad_utf8, SECRET, 3, &error) == KEYSMITH_ERR_PARAM, "key that is not UTF-8");
    CHECK(keysmith_get(store, SERVICE, "access_token", NULL, &length, &error) == KEYSMITH_ERR_PARAM, "NULL out_value");
    CHECK(keysmith_get(store, SERVICE, "access_token", &value, NULL, &error) == KEYSMITH_ERR_PARAM, "NULL out_length");
    CHECK(keysmith_get_into(store, SERVICE, "access_token", NULL, 8, &length, &error) == KEYSMITH_ERR_PARAM, "NULL buffer with a capacity");
    CHECK(keysmith_contains(store, SERVICE, "k", NULL, &error) == KEYSMITH_ERR_PARAM, "NULL out_exists");
    CHECK(keysmith_keys(store, SERVICE, NULL, &error) == KEYSMITH_ERR_PARAM, "NULL out_keys");
    CHECK(keysmith_services(store, NULL, &list, &error) == KEYSMITH_ERR_PARAM, "NULL prefix");
    CHECK(keysmith_remove(store, NULL, "k", &error) == KEYSMITH_ERR_PARAM, "remove with NULL service");
    CHECK(keysmith_remove_all(store, NULL, &error) == KEYSMITH_ERR_PARAM, "remove_all with NULL service");
    /* A NULL error is allowed: the status still says what happened. */
    CHECK(keysmith_contains(store, SERVICE, "access_token", &exists, NULL) == KEYSMITH_OK && exists == 1, "NULL error on success");
    CHECK(keysmith_get(store, SERVICE, "missing", &value, &length, NULL) == KEYSMITH_ERR_NOT_FOUND, "NULL error on failure");

    keysmith_store *other = (keysmith_store *)1;
    CHECK(keysmith_store_open(NULL, "sometimes", &other, &error) == KEYSMITH_ERR_PARAM, "unknown accessibility");
    CHECK(other == NULL, "no store on failure");
    CHECK(strstr(error.message, "sometimes") != NULL && strstr(error.message, "whenUnlockedThisDeviceOnly") != NULL, "lists the choices: %s", error.message);
    CHECK(keysmith_store_open(NULL, NULL, NULL, &error) == KEYSMITH_ERR_PARAM, "NULL out_store");
    keysmith_store_close(NULL);
    keysmith_free(NULL);
    /* The existing value is untouched by all of the above. */
    CHECK(keysmith_get(store, SERVICE, "access_token", &value, &length, &error) == KEYSMITH_OK && length == sizeof SECRET
              && memcmp(value, SECRET, length) == 0, "value kept");
    keysmith_free(value);
}

static void test_error_never_has_the_value(void) {
    keysmith_error error;
    keysmith_store *foreign = NULL;
    /* A group this program is not entitled to (it configures none but keysmith.shared). */
    CHECK(keysmith_store_open("com.example.not-ours", NULL, &foreign, &error) == KEYSMITH_OK, "%s", error.message);
    int32_t status = keysmith_set(foreign, SERVICE, "access_token", SECRET, sizeof SECRET, &error);
    CHECK(status == KEYSMITH_ERR_MISSING_ENTITLEMENT, "set in a foreign group: %d (%s)", status, error.message);
    CHECK(strcmp(error.code, "MISSING_ENTITLEMENT") == 0, "code %s", error.code);
    CHECK(strlen(error.message) > 20 && strstr(error.message, "com.example.not-ours") != NULL, "message: %s", error.message);
    CHECK(!contains_bytes(error.message, SECRET, 6), "the message never contains the value");
    keysmith_store_close(foreign);
}

static void test_zeroing(keysmith_store *store) {
    keysmith_error error;
    struct freed freed = {0};
    keysmith_debug_set_free_observer(observe_free, &freed);

    uint8_t *value = NULL;
    size_t length = 0;
    CHECK(keysmith_get(store, SERVICE, "access_token", &value, &length, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(length == sizeof SECRET && memcmp(value, SECRET, length) == 0, "the buffer holds the value before it is freed");
    keysmith_free(value);
    CHECK(freed.calls == 1 && freed.buffer == value && freed.length == sizeof SECRET, "the observer saw the buffer (%d calls)", freed.calls);
    CHECK(freed.all_zero, "keysmith_free zeroes every byte of a value before releasing it");

    keysmith_string_list keys;
    CHECK(keysmith_keys(store, SERVICE, &keys, &error) == KEYSMITH_OK, "%s", error.message);
    keysmith_free(keys.items);
    CHECK(freed.calls == 2 && freed.length > 0 && freed.all_zero, "a list is zeroed too");

    keysmith_debug_set_free_observer(NULL, NULL);
    CHECK(keysmith_get(store, SERVICE, "access_token", &value, &length, &error) == KEYSMITH_OK, "%s", error.message);
    keysmith_free(value);
    CHECK(freed.calls == 2, "no observer once removed");
}

static void test_lists(keysmith_store *store) {
    keysmith_error error;
    const char *other_service = "com.example.ctest.profile";
    CHECK(keysmith_set(store, SERVICE, "b_key", (const uint8_t *)"1", 1, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_set(store, SERVICE, "a_key", (const uint8_t *)"2", 1, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_set(store, other_service, "nickname", (const uint8_t *)"3", 1, &error) == KEYSMITH_OK, "%s", error.message);

    keysmith_string_list keys;
    CHECK(keysmith_keys(store, SERVICE, &keys, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keys.count == 4, "4 keys, got %zu", keys.count);
    if (keys.count == 4) {
        CHECK(strcmp(keys.items[0], "a_key") == 0 && strcmp(keys.items[1], "access_token") == 0
                  && strcmp(keys.items[2], "b_key") == 0 && strcmp(keys.items[3], "empty") == 0,
              "sorted keys: %s %s %s %s", keys.items[0], keys.items[1], keys.items[2], keys.items[3]);
    }
    keysmith_free(keys.items);

    keysmith_string_list services;
    CHECK(keysmith_services(store, "com.example.ctest.", &services, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(services.count == 2 && strcmp(services.items[0], SERVICE) == 0 && strcmp(services.items[1], other_service) == 0,
          "services under the prefix: %zu", services.count);
    keysmith_free(services.items);

    CHECK(keysmith_remove(store, SERVICE, "b_key", &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_remove_all(store, other_service, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_keys(store, other_service, &keys, &error) == KEYSMITH_OK && keys.count == 0 && keys.items == NULL, "service emptied");
    CHECK(keysmith_keys(store, SERVICE, &keys, &error) == KEYSMITH_OK && keys.count == 3, "other services untouched: %zu", keys.count);
    keysmith_free(keys.items);
}

static void test_biometric_and_migration(keysmith_store *store) {
    keysmith_error error;
    int32_t protected_ = -1;
    char reason[256];
    const uint8_t pin[] = "1234";
    int32_t status = keysmith_set_biometric_protected(store, "com.example.ctest", "local_pin", "pin", pin, 4, &protected_,
                                                      reason, sizeof reason, &error);
    CHECK(status == KEYSMITH_OK, "%s", error.message);
    /* No authenticator on this machine: the value is stored plainly and the reason says why. */
    CHECK(protected_ == 0 && strlen(reason) > 0, "fell back: %d '%s'", protected_, reason);
    uint8_t buffer[8];
    size_t length = 0;
    CHECK(keysmith_get_into(store, "com.example.ctest.local_pin", "pin", buffer, sizeof buffer, &length, &error) == KEYSMITH_OK
              && length == 4 && memcmp(buffer, "1234", 4) == 0, "readable after the fallback");
    CHECK(keysmith_set_biometric_protected(store, "com.example.ctest", "local_pin", "pin", pin, 4, NULL, NULL, 0, &error)
              == KEYSMITH_ERR_PARAM, "NULL out_protected");

    /* Migration: one key moves, one conflicts (both copies kept). */
    const char *old_service = "com.example.old.auth";
    CHECK(keysmith_set(store, old_service, "moved", (const uint8_t *)"m", 1, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_set(store, old_service, "conflict", (const uint8_t *)"old", 3, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_set(store, "com.example.new.auth", "conflict", (const uint8_t *)"new", 3, &error) == KEYSMITH_OK, "%s", error.message);
    char *report = NULL;
    CHECK(keysmith_migrate_service(store, old_service, "com.example.new", "auth", &report, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(report != NULL && strstr(report, "\"migrated\":[\"moved\"]") != NULL && strstr(report, "\"conflicts\":[\"conflict\"]") != NULL,
          "report: %s", report ? report : "(null)");
    keysmith_free(report);
    int32_t exists = -1;
    CHECK(keysmith_contains(store, old_service, "moved", &exists, &error) == KEYSMITH_OK && exists == 0, "old copy removed after the move");
    CHECK(keysmith_contains(store, old_service, "conflict", &exists, &error) == KEYSMITH_OK && exists == 1, "conflicting old copy kept");
    CHECK(keysmith_get_into(store, "com.example.new.auth", "moved", buffer, sizeof buffer, &length, &error) == KEYSMITH_OK
              && length == 1 && buffer[0] == 'm', "moved value readable");
}

/* The bytes of `value` under `key` in `service`, compared with `expected` (a C string). */
static int reads(keysmith_store *store, const char *service, const char *key, const char *expected) {
    keysmith_error error;
    uint8_t buffer[64];
    size_t length = 0;
    if (keysmith_get_into(store, service, key, buffer, sizeof buffer, &length, &error) != KEYSMITH_OK) return 0;
    return length == strlen(expected) && memcmp(buffer, expected, length) == 0;
}

/* Whether a string list holds exactly `text` (byte for byte). */
static int list_holds(const keysmith_string_list *list, const char *text) {
    for (size_t i = 0; i < list->count; i++) {
        if (strcmp(list->items[i], text) == 0) return 1;
    }
    return 0;
}

/* Names are bytes: "jos" + U+00E9 and "jose" + U+0301 look alike and are two names. */
#define JOSE_PRECOMPOSED "jos\xc3\xa9"
#define JOSE_DECOMPOSED "jose\xcc\x81"

static void test_unicode_twins(keysmith_store *store) {
    keysmith_error error;
    const char *alice = "com.example.ctwin.account_" JOSE_DECOMPOSED;
    const char *bob = "com.example.ctwin.account_" JOSE_PRECOMPOSED;
    /* A read of one namespace's service never answers with the other's item, even after
       the other was read first through the same store. */
    CHECK(keysmith_set(store, alice, "token", (const uint8_t *)"ALICE-SECRET-TOKEN", 18, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(reads(store, alice, "token", "ALICE-SECRET-TOKEN"), "alice reads her token");
    uint8_t buffer[64];
    size_t length = 0;
    int32_t status = keysmith_get_into(store, bob, "token", buffer, sizeof buffer, &length, &error);
    CHECK(status == KEYSMITH_ERR_NOT_FOUND, "bob has no token yet: status %d, %zu bytes", status, length);
    CHECK(keysmith_set(store, bob, "token", (const uint8_t *)"BOB-TOKEN", 9, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(reads(store, bob, "token", "BOB-TOKEN"), "bob reads his own token");
    CHECK(reads(store, alice, "token", "ALICE-SECRET-TOKEN"), "alice still reads hers");
    CHECK(keysmith_remove_all(store, bob, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_get_into(store, bob, "token", buffer, sizeof buffer, &length, &error) == KEYSMITH_ERR_NOT_FOUND,
          "bob's namespace reset");
    CHECK(reads(store, alice, "token", "ALICE-SECRET-TOKEN"), "alice's token survives bob's reset");

    /* Listings keep both twins: keys, and services under a prefix. */
    const char *twins = "com.example.ctwin.keys";
    CHECK(keysmith_set(store, twins, JOSE_PRECOMPOSED, (const uint8_t *)"1", 1, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_set(store, twins, JOSE_DECOMPOSED, (const uint8_t *)"2", 1, &error) == KEYSMITH_OK, "%s", error.message);
    keysmith_string_list keys;
    CHECK(keysmith_keys(store, twins, &keys, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keys.count == 2 && list_holds(&keys, JOSE_PRECOMPOSED) && list_holds(&keys, JOSE_DECOMPOSED),
          "both twin keys listed: %zu", keys.count);
    keysmith_free(keys.items);

    /* A namespace that starts with a combining mark: the service still starts with the prefix's bytes. */
    const char *marked = "com.example.ctwin.\xcc\x81mark";
    CHECK(keysmith_set(store, marked, "k", (const uint8_t *)"3", 1, &error) == KEYSMITH_OK, "%s", error.message);
    keysmith_string_list services;
    CHECK(keysmith_services(store, "com.example.ctwin.", &services, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(services.count == 3 && list_holds(&services, alice) && list_holds(&services, twins) && list_holds(&services, marked),
          "twin services and the combining-mark service listed: %zu", services.count);
    keysmith_free(services.items);
    /* A prefix matches bytes: bob's spelling does not select alice's service. */
    CHECK(keysmith_services(store, bob, &services, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(services.count == 0, "no service starts with bob's bytes: %zu (%s)", services.count,
          services.count > 0 ? services.items[0] : "");
    keysmith_free(services.items);
}

struct worker {
    keysmith_store *store;
    int index;
    int failures;
};

static void *work(void *argument) {
    struct worker *worker = argument;
    char key[32];
    char value[32];
    for (int round = 0; round < 20; round++) {
        keysmith_error error;
        snprintf(key, sizeof key, "thread_%d", worker->index);
        int written = snprintf(value, sizeof value, "value-%d-%d", worker->index, round);
        if (keysmith_set(worker->store, "com.example.ctest.threads", key, (const uint8_t *)value, (size_t)written, &error) != KEYSMITH_OK) {
            worker->failures++;
            continue;
        }
        uint8_t *read = NULL;
        size_t length = 0;
        if (keysmith_get(worker->store, "com.example.ctest.threads", key, &read, &length, &error) != KEYSMITH_OK
            || length != (size_t)written || memcmp(read, value, length) != 0) {
            worker->failures++;
        }
        keysmith_free(read);
    }
    return NULL;
}

static void test_threads(keysmith_store *store) {
    enum { COUNT = 4 };
    pthread_t threads[COUNT];
    struct worker workers[COUNT];
    for (int i = 0; i < COUNT; i++) {
        workers[i] = (struct worker){store, i, 0};
        pthread_create(&threads[i], NULL, work, &workers[i]);
    }
    int total = 0;
    for (int i = 0; i < COUNT; i++) {
        pthread_join(threads[i], NULL);
        total += workers[i].failures;
    }
    CHECK(total == 0, "one store shared by %d threads: %d failures", COUNT, total);
}

/* Half the threads set one key while the other half remove it: every set succeeds. */
struct racer {
    keysmith_store *store;
    int index;
    int failures;
    int32_t last_status;
};

static void *race(void *argument) {
    struct racer *racer = argument;
    for (int round = 0; round < 200; round++) {
        keysmith_error error;
        int32_t status = racer->index % 2 == 0
                             ? keysmith_set(racer->store, "com.example.ctest.race", "contested", (const uint8_t *)"v", 1, &error)
                             : keysmith_remove(racer->store, "com.example.ctest.race", "contested", &error);
        if (status != KEYSMITH_OK) {
            racer->failures++;
            racer->last_status = status;
        }
    }
    return NULL;
}

static void test_set_races_remove(keysmith_store *store) {
    enum { COUNT = 8 };
    pthread_t threads[COUNT];
    struct racer racers[COUNT];
    for (int i = 0; i < COUNT; i++) {
        racers[i] = (struct racer){store, i, 0, 0};
        pthread_create(&threads[i], NULL, race, &racers[i]);
    }
    int total = 0;
    int32_t last = 0;
    for (int i = 0; i < COUNT; i++) {
        pthread_join(threads[i], NULL);
        total += racers[i].failures;
        if (racers[i].failures > 0) last = racers[i].last_status;
    }
    CHECK(total == 0, "set and remove racing on one key from %d threads: %d failures (last status %d)", COUNT, total, last);
}

/* How a child process that calls keysmith_free on `buffer` twice ends (its wait status). */
static int status_of_double_free(void *buffer) {
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDERR_FILENO); /* the library's message is expected */
        keysmith_free(buffer);
        keysmith_free(buffer);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return status;
}

static void test_misused_free(keysmith_store *store) {
    keysmith_error error;
    uint8_t *value = NULL;
    size_t length = 0;
    CHECK(keysmith_set(store, SERVICE, "double_free", SECRET, sizeof SECRET, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_get(store, SERVICE, "double_free", &value, &length, &error) == KEYSMITH_OK, "%s", error.message);
    /* A second keysmith_free must stop the program (as free() does), not zero memory by a
       length read from a released block nor hand the block out twice. */
    int status = status_of_double_free(value);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "a double keysmith_free aborts (wait status %d)", status);
    keysmith_free(value);
    /* So does a pointer the library never returned. */
    uint8_t *foreign = calloc(1, 64);
    status = status_of_double_free(foreign + 16);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "keysmith_free of a foreign pointer aborts (wait status %d)", status);
    free(foreign);
}

/*
 * keysmith.h: a NULL accessibility is afterFirstUnlockThisDeviceOnly. A ThisDeviceOnly item
 * is absent when the keychain is read with another machine's identity, an item of the
 * same store opened with "afterFirstUnlock" is not; both are readable with no passphrase
 * (so neither is whenPasscodeSetThisDeviceOnly). The reading on "another machine" is this
 * program run again with KEYSMITH_MACHINE_ID set (as a copied keychain opened elsewhere).
 */
#define DEVICE_ONLY_SERVICE "com.example.ctest.accessibility"

static int read_as_another_machine(void) {
    keysmith_error error;
    keysmith_store *store = NULL;
    if (keysmith_store_open(NULL, NULL, &store, &error) != KEYSMITH_OK) return 3;
    uint8_t *value = NULL;
    size_t length = 0;
    int32_t device_only = keysmith_get(store, DEVICE_ONLY_SERVICE, "default", &value, &length, &error);
    keysmith_free(value);
    value = NULL;
    int32_t portable = keysmith_get(store, DEVICE_ONLY_SERVICE, "portable", &value, &length, &error);
    keysmith_free(value);
    keysmith_store_close(store);
    fprintf(stderr, "on another machine: default %d, portable %d\n", device_only, portable);
    return device_only == KEYSMITH_ERR_NOT_FOUND && portable == KEYSMITH_OK ? 0 : 1;
}

static void test_default_accessibility(keysmith_store *store) {
    keysmith_error error;
    keysmith_store *portable = NULL;
    CHECK(keysmith_store_open(NULL, "afterFirstUnlock", &portable, &error) == KEYSMITH_OK, "%s", error.message);
    if (portable == NULL) return;
    CHECK(keysmith_set(store, DEVICE_ONLY_SERVICE, "default", SECRET, sizeof SECRET, &error) == KEYSMITH_OK, "%s", error.message);
    CHECK(keysmith_set(portable, DEVICE_ONLY_SERVICE, "portable", SECRET, sizeof SECRET, &error) == KEYSMITH_OK, "%s", error.message);
    keysmith_store_close(portable);

    /* The child's environment is made before fork: after it, only exec. */
    extern char **environ;
    size_t count = 0;
    while (environ[count] != NULL) count++;
    char **environment = calloc(count + 2, sizeof(char *));
    if (environment == NULL) return;
    size_t kept = 0;
    for (size_t index = 0; index < count; index++) {
        if (strncmp(environ[index], "KEYSMITH_MACHINE_ID=", 20) != 0) environment[kept++] = environ[index];
    }
    environment[kept] = "KEYSMITH_MACHINE_ID=keysmith-c-test-another-machine";
    char *arguments[] = {"keysmith-test", "--read-as-another-machine", NULL};
    pid_t child = fork();
    if (child == 0) {
        execve("/proc/self/exe", arguments, environment);
        _exit(127);
    }
    free(environment);
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child, "run this program as another machine");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "a NULL accessibility is afterFirstUnlockThisDeviceOnly: absent on another machine (exit %d)", WEXITSTATUS(status));
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--read-as-another-machine") == 0) return read_as_another_machine();
    if (getenv("KEYSMITH_HOME") == NULL) {
        fprintf(stderr, "keysmith_test: set KEYSMITH_HOME to an empty temporary directory\n");
        return 2;
    }
    CHECK(keysmith_abi_version() == KEYSMITH_ABI_VERSION, "ABI version %d", keysmith_abi_version());
    keysmith_error error;
    keysmith_store *store = NULL;
    CHECK(keysmith_store_open(NULL, NULL, &store, &error) == KEYSMITH_OK && store != NULL, "%s", error.message);
    if (store == NULL) return 1;

    test_round_trip(store);
    test_not_found(store);
    test_buffers(store);
    test_bad_input(store);
    test_error_never_has_the_value();
    test_zeroing(store);
    test_lists(store);
    test_biometric_and_migration(store);
    test_threads(store);
    test_unicode_twins(store);
    test_set_races_remove(store);
    test_misused_free(store);
    test_default_accessibility(store);

    keysmith_store_close(store);
    printf("keysmith C interface: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
