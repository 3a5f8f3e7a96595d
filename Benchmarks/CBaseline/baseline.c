// The C baseline for the read and write benchmarks: what the keychain design costs at the
// very least, with no Swift, no dictionary parsing and no attribute decoding.
#include "baseline.h"

#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/wait.h>

static unsigned char index_key[32];
static unsigned char item_key[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void name_hash(int index, unsigned char out[16]) {
    char name[64];
    int length = snprintf(name, sizeof name, "genp\x01" "account-%d", index);
    crypto_generichash(out, 16, (const unsigned char *)name, (unsigned long long)length, index_key, sizeof index_key);
}

static void init_keys(void) {
    static int ready = 0;
    if (ready) return;
    if (sodium_init() < 0) return;
    // As the keychain does: no global allocation statistics (a process-wide mutex on every
    // allocation). Fails harmlessly when SQLite was initialized first.
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    memset(index_key, 7, sizeof index_key);
    memset(item_key, 9, sizeof item_key);
    ready = 1;
}

static int open_db(const char *path, sqlite3 **db, int full) {
    if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) return -1;
    sqlite3_busy_timeout(*db, 30000);
    sqlite3_exec(*db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    sqlite3_exec(*db, full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    return 0;
}

int keysmith_baseline_prepare(const char *path, int item_count, int value_size) {
    init_keys();
    unlink(path);
    sqlite3 *db;
    if (open_db(path, &db, 0) != 0) return -1;
    sqlite3_exec(db, "CREATE TABLE items(id INTEGER PRIMARY KEY, h BLOB NOT NULL, nonce BLOB NOT NULL, ct BLOB NOT NULL);"
                     "CREATE INDEX items_h ON items(h);", NULL, NULL, NULL);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    sqlite3_stmt *insert;
    sqlite3_prepare_v2(db, "INSERT INTO items(h, nonce, ct) VALUES (?, ?, ?)", -1, &insert, NULL);
    unsigned char value[4096];
    unsigned char ct[4096 + crypto_aead_xchacha20poly1305_ietf_ABYTES];
    unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
    unsigned char hash[16];
    if (value_size > 4096) value_size = 4096;
    for (int i = 0; i < item_count; i++) {
        randombytes_buf(value, (size_t)value_size);
        randombytes_buf(nonce, sizeof nonce);
        unsigned long long ct_len;
        name_hash(i, hash);
        crypto_aead_xchacha20poly1305_ietf_encrypt(ct, &ct_len, value, (unsigned long long)value_size, hash, 16, NULL, nonce, item_key);
        sqlite3_bind_blob(insert, 1, hash, 16, SQLITE_STATIC);
        sqlite3_bind_blob(insert, 2, nonce, sizeof nonce, SQLITE_STATIC);
        sqlite3_bind_blob(insert, 3, ct, (int)ct_len, SQLITE_STATIC);
        if (sqlite3_step(insert) != SQLITE_DONE) { sqlite3_finalize(insert); sqlite3_close(db); return -1; }
        sqlite3_reset(insert);
    }
    sqlite3_finalize(insert);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    return 0;
}

/// One reader's loop: `lookups` random names among items [first, first + count).
static int64_t read_loop(sqlite3 *db, int first, int count, int lookups, uint32_t seed);

int64_t keysmith_baseline_read(const char *path, int item_count, int lookups, uint32_t seed) {
    init_keys();
    sqlite3 *db;
    if (open_db(path, &db, 0) != 0) return -1;
    int64_t elapsed = read_loop(db, 0, item_count, lookups, seed);
    sqlite3_close(db);
    return elapsed;
}

static int64_t read_loop(sqlite3 *db, int first, int count, int lookups, uint32_t seed) {
    sqlite3_stmt *select;
    sqlite3_prepare_v2(db, "SELECT nonce, ct FROM items WHERE h = ?", -1, &select, NULL);
    unsigned char hash[16];
    unsigned char plain[4096];
    uint32_t state = seed ? seed : 1;
    int64_t start = now_ns();
    for (int n = 0; n < lookups; n++) {
        state = state * 1664525u + 1013904223u;
        int index = first + (int)(state % (uint32_t)count);
        name_hash(index, hash);
        sqlite3_bind_blob(select, 1, hash, 16, SQLITE_STATIC);
        if (sqlite3_step(select) != SQLITE_ROW) { start = -1; break; }
        const unsigned char *nonce = sqlite3_column_blob(select, 0);
        const unsigned char *ct = sqlite3_column_blob(select, 1);
        int ct_len = sqlite3_column_bytes(select, 1);
        unsigned long long plain_len;
        if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plain_len, NULL, ct, (unsigned long long)ct_len, hash, 16, nonce, item_key) != 0) {
            start = -1;
            break;
        }
        sodium_memzero(plain, (size_t)plain_len);
        sqlite3_reset(select);
    }
    int64_t elapsed = start < 0 ? -1 : now_ns() - start;
    sqlite3_finalize(select);
    return elapsed;
}

struct reader {
    const char *path;
    int first, count, lookups;
    uint32_t seed;
    pthread_barrier_t *ready;
    int failed;
};

static void *reader_thread(void *argument) {
    struct reader *reader = argument;
    sqlite3 *db;
    int opened = open_db(reader->path, &db, 0) == 0;
    // Warm up (the page cache and the statement) before the clock starts.
    if (opened && read_loop(db, reader->first, reader->count, 100, reader->seed + 7) < 0) opened = 0;
    pthread_barrier_wait(reader->ready);
    reader->failed = !opened || read_loop(db, reader->first, reader->count, reader->lookups, reader->seed) < 0;
    if (opened) sqlite3_close(db);
    return NULL;
}

int64_t keysmith_baseline_read_threads(const char *path, int item_count, int lookups, int threads) {
    init_keys();
    if (threads < 1 || threads > 16) return -1;
    pthread_t ids[16];
    struct reader readers[16];
    pthread_barrier_t ready;
    pthread_barrier_init(&ready, NULL, (unsigned)threads + 1);
    int share = item_count / threads;
    for (int i = 0; i < threads; i++) {
        readers[i] = (struct reader){path, i * share, share, lookups, (uint32_t)i + 1, &ready, 0};
        pthread_create(&ids[i], NULL, reader_thread, &readers[i]);
    }
    pthread_barrier_wait(&ready);
    int64_t start = now_ns();
    int failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(ids[i], NULL);
        failed |= readers[i].failed;
    }
    int64_t elapsed = now_ns() - start;
    pthread_barrier_destroy(&ready);
    return failed ? -1 : elapsed;
}

int64_t keysmith_baseline_read_processes(const char *path, int item_count, int lookups, int processes) {
    init_keys();
    if (processes < 1 || processes > 16) return -1;
    int ready[2], go[2];
    if (pipe(ready) != 0) return -1;
    if (pipe(go) != 0) { close(ready[0]); close(ready[1]); return -1; }
    pid_t pids[16];
    int started = 0, share = item_count / processes;
    for (int i = 0; i < processes; i++) {
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) {
            // The child opens its own connection (none is open in this function before fork).
            close(ready[0]);
            close(go[1]);
            sqlite3 *db;
            int opened = open_db(path, &db, 0) == 0;
            if (opened && read_loop(db, i * share, share, 100, (uint32_t)i + 7) < 0) opened = 0;
            char byte = 'r';
            if (write(ready[1], &byte, 1) != 1) _exit(3);
            if (read(go[0], &byte, 1) != 1) _exit(3);
            int failed = !opened || read_loop(db, i * share, share, lookups, (uint32_t)i + 1) < 0;
            _exit(failed ? 1 : 0);
        }
        pids[started++] = pid;
    }
    close(ready[1]);
    close(go[0]);
    int failed = started != processes;
    for (int i = 0; i < started; i++) {
        char byte;
        if (read(ready[0], &byte, 1) != 1) failed = 1;
    }
    int64_t start = now_ns();
    char signal[16];
    memset(signal, 'g', sizeof signal);
    if (write(go[1], signal, (size_t)started) != started) failed = 1;
    for (int i = 0; i < started; i++) {
        int status = 0;
        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    }
    int64_t elapsed = now_ns() - start;
    close(ready[0]);
    close(go[1]);
    return failed ? -1 : elapsed;
}

static int64_t write_loop(const char *path, int writes, int full, int value_size, int erasing);

int64_t keysmith_baseline_write(const char *path, int writes, int full, int value_size) {
    return write_loop(path, writes, full, value_size, 0);
}

int64_t keysmith_baseline_write_erasing(const char *path, int writes, int erasing, int value_size) {
    return write_loop(path, writes, 1, value_size, erasing);
}

static int64_t write_loop(const char *path, int writes, int full, int value_size, int erasing) {
    init_keys();
    sqlite3 *db;
    if (open_db(path, &db, full) != 0) return -1;
    sqlite3_exec(db, erasing ? "PRAGMA secure_delete=ON; PRAGMA journal_size_limit=0"
                             : "PRAGMA secure_delete=OFF; PRAGMA journal_size_limit=-1", NULL, NULL, NULL);
    sqlite3_stmt *upsert;
    if (sqlite3_prepare_v2(db, "UPDATE items SET nonce = ?, ct = ? WHERE h = ?", -1, &upsert, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    unsigned char value[4096], ct[4096 + 16], nonce[24], hash[16];
    if (value_size > 4096) value_size = 4096;
    int64_t start = now_ns();
    for (int n = 0; n < writes; n++) {
        name_hash(n % 100, hash);
        randombytes_buf(value, (size_t)value_size);
        randombytes_buf(nonce, sizeof nonce);
        unsigned long long ct_len;
        crypto_aead_xchacha20poly1305_ietf_encrypt(ct, &ct_len, value, (unsigned long long)value_size, hash, 16, NULL, nonce, item_key);
        sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        sqlite3_bind_blob(upsert, 1, nonce, sizeof nonce, SQLITE_STATIC);
        sqlite3_bind_blob(upsert, 2, ct, (int)ct_len, SQLITE_STATIC);
        sqlite3_bind_blob(upsert, 3, hash, 16, SQLITE_STATIC);
        sqlite3_step(upsert);
        sqlite3_reset(upsert);
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        if (erasing) sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    }
    int64_t elapsed = now_ns() - start;
    sqlite3_finalize(upsert);
    sqlite3_close(db);
    return elapsed;
}
