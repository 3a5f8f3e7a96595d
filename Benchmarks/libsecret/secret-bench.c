// secret-bench: what libsecret costs for the same job as Keysmith's keychain, measured by
// keysmith-bench in the same run. Kept out of the Swift package on purpose (the package
// must not depend on libsecret): `make bench` builds it with gcc and pkg-config.
//
//   secret-bench --backend file|gnome-keyring [--items 100,10000] [--lookups 200]
//                [--rounds 5] [--writes 20] [--budget-ms 1500] [--hold]
//
// For each item count it fills a keyring (schema org.keysmith.Bench, attributes service +
// account, 200-character secrets), then prints one line per measurement:
//
//   populate backend=gnome-keyring items=100 added=99 ns_per_item=...
//   read backend=file items=100 lookups=200 rounds=5 median_ns=... min_ns=... max_ns=...
//   write backend=file items=100 writes=20 rounds=5 median_ns=... min_ns=... max_ns=...
//
// read: random secret_password_lookup_sync calls; write: secret_password_store_sync of a
// random existing item (a new secret). Every figure is nanoseconds per operation; median,
// min and max are over the rounds. A round stops early once it has used --budget-ms (after
// at least 3 operations), so slow backends at large item counts stay bounded in time; the
// line gives the smallest number of operations a round did.
//
// Backends:
//   file           libsecret's file backend, no daemon: SECRET_BACKEND=file,
//                  SECRET_FILE_TEST_PATH in a private temporary directory,
//                  SECRET_FILE_TEST_PASSWORD set. One child process per item count (libsecret
//                  keeps its backend for the life of a process). Storing through the API
//                  rewrites the whole keyring each time (O(N) per store, hours for 10,000
//                  items), so the keyring file is written directly in libsecret 0.20.5's
//                  format (populate ... method=generated); every lookup then goes through
//                  libsecret. The key derivation (PBKDF2) happens on a first, untimed lookup.
//   gnome-keyring  gnome-keyring-daemon --foreground --unlock --components=secrets inside a
//                  private dbus-run-session whose bus listens on a UNIX socket in the
//                  temporary directory and can activate nothing. This program starts both
//                  and stops both; nothing is left running. Filled through the API, growing
//                  from one item count to the next (in increasing order); about 30 ms per
//                  store at 1,000 items, so keep it to a few thousand items at most.
//
// --hold (gnome-keyring): after measuring the first item count, print
//   hold backend=gnome-keyring items=N bus=ADDRESS service=S account=A
// and wait for a line (or end of file) on stdin before going on, so that the caller can
// time whole `secret-tool lookup` processes against the same daemon.
#define _GNU_SOURCE
#include <libsecret/secret.h>
#include <gcrypt.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SERVICE "com.keysmith.bench"
#define SECRET_LENGTH 200
#define MAX_SIZES 8
#define KEYRING_PASSWORD "keysmith-bench-password"

static const SecretSchema bench_schema = {
    "org.keysmith.Bench",
    SECRET_SCHEMA_NONE,
    {
        {"service", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {"account", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {NULL, 0},
    },
};

typedef struct {
    const char *backend;
    int sizes[MAX_SIZES];
    int size_count;
    int lookups;
    int rounds;
    int writes;
    int budget_ms;
    int hold;
    const char *workdir;  // set in the inner process of the gnome-keyring backend
} Options;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *message) {
    fprintf(stderr, "secret-bench: %s\n", message);
    exit(1);
}

// ---------------------------------------------------------------------------------------
// Small helpers: deterministic secrets, a random generator, medians, temporary directories.

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void make_secret(int index, int generation, char out[SECRET_LENGTH + 1]) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    uint64_t state = (uint64_t)index * 0x9E3779B97F4A7C15ULL + (uint64_t)generation + 1;
    for (int i = 0; i < SECRET_LENGTH; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        out[i] = alphabet[(state >> 33) % (sizeof alphabet - 1)];
    }
    out[SECRET_LENGTH] = '\0';
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *values, int count) {
    qsort(values, (size_t)count, sizeof *values, compare_double);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

static void remove_tree(const char *path) {
    if (path && *path) nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *make_workdir(void) {
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    char *path = g_strdup_printf("%s/secret-bench-XXXXXX", base);
    if (!mkdtemp(path)) die("cannot create a temporary directory");
    return path;
}

static char *subdir(const char *workdir, const char *name) {
    char *path = g_build_filename(workdir, name, NULL);
    if (mkdir(path, 0700) != 0 && errno != EEXIST) die("cannot create a directory in the temporary directory");
    return path;
}

// ---------------------------------------------------------------------------------------
// The measurements.

static void store_item(int index, int generation) {
    char account[32], label[48], secret[SECRET_LENGTH + 1];
    snprintf(account, sizeof account, "account-%d", index);
    snprintf(label, sizeof label, "keysmith bench item %d", index);
    make_secret(index, generation, secret);
    GError *error = NULL;
    if (!secret_password_store_sync(&bench_schema, SECRET_COLLECTION_DEFAULT, label, secret, NULL, &error,
                                    "service", SERVICE, "account", account, NULL)) {
        fprintf(stderr, "secret-bench: store failed: %s\n", error ? error->message : "unknown error");
        exit(1);
    }
}

static void lookup_item(int index) {
    char account[32];
    snprintf(account, sizeof account, "account-%d", index);
    GError *error = NULL;
    gchar *secret = secret_password_lookup_sync(&bench_schema, NULL, &error, "service", SERVICE, "account", account, NULL);
    if (secret == NULL || strlen(secret) != SECRET_LENGTH) {
        fprintf(stderr, "secret-bench: lookup of %s failed: %s\n", account, error ? error->message : "not found");
        exit(1);
    }
    secret_password_free(secret);
}

static void populate(const Options *options, int from, int to) {
    int64_t start = now_ns();
    for (int index = from; index < to; index++) store_item(index, 0);
    int64_t elapsed = now_ns() - start;
    printf("populate backend=%s items=%d added=%d ns_per_item=%.0f\n", options->backend, to, to - from,
           to > from ? (double)elapsed / (to - from) : 0.0);
    fflush(stdout);
}

/// Runs `rounds` rounds of up to `per_round` operations (bounded by the time budget) and
/// prints the median, min and max ns per operation over the rounds.
static void measure(const Options *options, const char *kind, int items, int per_round, int is_write) {
    double results[64];
    int rounds = options->rounds > 64 ? 64 : options->rounds;
    int done_min = per_round;
    int64_t budget = (int64_t)options->budget_ms * 1000000LL;
    static int generation = 1;
    for (int round = 0; round < rounds; round++) {
        int done = 0;
        int64_t start = now_ns();
        for (int n = 0; n < per_round; n++) {
            int index = (int)(next_random() % (uint64_t)items);
            if (is_write) store_item(index, generation++);
            else lookup_item(index);
            done++;
            if (done >= 3 && now_ns() - start > budget) break;
        }
        int64_t elapsed = now_ns() - start;
        results[round] = (double)elapsed / done;
        if (done < done_min) done_min = done;
    }
    double sorted[64];
    memcpy(sorted, results, sizeof(double) * (size_t)rounds);
    double median = median_of(sorted, rounds);
    printf("%s backend=%s items=%d %s=%d rounds=%d median_ns=%.0f min_ns=%.0f max_ns=%.0f\n", kind, options->backend,
           items, is_write ? "writes" : "lookups", done_min, rounds, median, sorted[0], sorted[rounds - 1]);
    fflush(stdout);
}

static void hold_for_caller(const Options *options, int items) {
    const char *bus = getenv("DBUS_SESSION_BUS_ADDRESS");
    printf("hold backend=%s items=%d bus=%s service=%s account=account-0\n", options->backend, items, bus ? bus : "",
           SERVICE);
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin)) clearerr(stdin);  // a line or end of file: go on
}

static void run_benchmarks(const Options *options) {
    int populated = 0;
    // Warm-up: opens the backend (file: derives the key; service: opens the session).
    store_item(0, 0);
    lookup_item(0);
    populated = 1;
    for (int s = 0; s < options->size_count; s++) {
        int items = options->sizes[s];
        if (items > populated) {
            populate(options, populated, items);
            populated = items;
        }
        measure(options, "read", items, options->lookups, 0);
        measure(options, "write", items, options->writes, 1);
        if (options->hold && s == 0) hold_for_caller(options, items);
    }
}

// ---------------------------------------------------------------------------------------
// Backends.


// The file backend cannot be filled through its API in reasonable time: each
// secret_password_store_sync rebuilds and rewrites the whole keyring (about 30 ms per store
// at 1,000 items here, so 10,000 items would take hours). The keyring is therefore written
// directly, in the format of libsecret 0.20.5's secret-file-collection.c (what the file
// backend reads): header "GnomeKeyring\n\r\0\n", version 1.0, then the GVariant
// (uayutua(a{say}ay)): salt size, salt, PBKDF2-SHA256 iteration count, modified time, usage
// count, items. An item is (attribute name -> HMAC-SHA256 of the value, keyed with the
// derived key; encrypted blob), the blob being AES-CBC of the PKCS#7-padded GVariant
// (a{ss}stt ay) (attributes, label, created, modified, secret), then the 16-byte IV, then
// an HMAC-SHA256 of ciphertext + IV. Every lookup through libsecret then checks the format.
#define FILE_SALT_SIZE 32
#define FILE_ITERATIONS 100000
#define FILE_KEY_SIZE 16
#define FILE_MAC_SIZE 32
#define FILE_BLOCK 16

static void file_mac(const unsigned char *key, const void *data, size_t length, unsigned char out[FILE_MAC_SIZE]) {
    gcry_mac_hd_t hd;
    size_t out_length = FILE_MAC_SIZE;
    if (gcry_mac_open(&hd, GCRY_MAC_HMAC_SHA256, 0, NULL) != 0) die("gcry_mac_open failed");
    gcry_mac_setkey(hd, key, FILE_KEY_SIZE);
    gcry_mac_write(hd, data, length);
    gcry_mac_read(hd, out, &out_length);
    gcry_mac_close(hd);
}

static GVariant *file_item(const unsigned char *key, int index, guint64 now) {
    char account[32], label[48], secret[SECRET_LENGTH + 1];
    snprintf(account, sizeof account, "account-%d", index);
    snprintf(label, sizeof label, "keysmith bench item %d", index);
    make_secret(index, 0, secret);
    // Attribute names in sorted order, as hash_attributes() writes them; the file backend
    // stores the schema's attributes only (no xdg:schema).
    const char *names[] = {"account", "service"};
    const char *values[] = {account, SERVICE};
    int count = 2;

    GVariantBuilder hashed, plain;
    g_variant_builder_init(&hashed, G_VARIANT_TYPE("a{say}"));
    g_variant_builder_init(&plain, G_VARIANT_TYPE("a{ss}"));
    for (int i = 0; i < count; i++) {
        unsigned char mac[FILE_MAC_SIZE];
        file_mac(key, values[i], strlen(values[i]), mac);
        g_variant_builder_add(&hashed, "{s@ay}", names[i],
                              g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, mac, FILE_MAC_SIZE, 1));
        g_variant_builder_add(&plain, "{ss}", names[i], values[i]);
    }
    GVariant *serialized = g_variant_new("(@a{ss}stt@ay)", g_variant_builder_end(&plain), label, now, now,
                                         g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, secret, SECRET_LENGTH, 1));
    g_variant_ref_sink(serialized);
    size_t n_data = g_variant_get_size(serialized);
    size_t n_padded = ((n_data + FILE_BLOCK) / FILE_BLOCK) * FILE_BLOCK;
    unsigned char *data = g_malloc(n_padded + FILE_BLOCK + FILE_MAC_SIZE);
    g_variant_store(serialized, data);
    g_variant_unref(serialized);
    memset(data + n_data, (int)(n_padded - n_data), n_padded - n_data);

    gcry_cipher_hd_t cipher;
    if (gcry_cipher_open(&cipher, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CBC, 0) != 0) die("gcry_cipher_open failed");
    if (gcry_cipher_setkey(cipher, key, FILE_KEY_SIZE) != 0) die("gcry_cipher_setkey failed");
    gcry_create_nonce(data + n_padded, FILE_BLOCK);
    gcry_cipher_setiv(cipher, data + n_padded, FILE_BLOCK);
    if (gcry_cipher_encrypt(cipher, data, n_padded, NULL, 0) != 0) die("encryption failed");
    gcry_cipher_close(cipher);
    file_mac(key, data, n_padded + FILE_BLOCK, data + n_padded + FILE_BLOCK);

    GVariant *blob = g_variant_new_from_data(G_VARIANT_TYPE("ay"), data, n_padded + FILE_BLOCK + FILE_MAC_SIZE, TRUE,
                                             g_free, data);
    return g_variant_new("(@a{say}@ay)", g_variant_builder_end(&hashed), blob);
}

static void write_file_keyring(const Options *options, const char *path, int items) {
    int64_t start = now_ns();
    if (!gcry_check_version(NULL)) die("libgcrypt initialisation failed");
    unsigned char salt[FILE_SALT_SIZE], key[FILE_KEY_SIZE];
    gcry_create_nonce(salt, sizeof salt);
    if (gcry_kdf_derive(KEYRING_PASSWORD, strlen(KEYRING_PASSWORD), GCRY_KDF_PBKDF2, GCRY_MD_SHA256, salt, sizeof salt,
                        FILE_ITERATIONS, sizeof key, key) != 0)
        die("key derivation failed");
    guint64 now = (guint64)time(NULL);
    GVariantBuilder list;
    g_variant_builder_init(&list, G_VARIANT_TYPE("a(a{say}ay)"));
    for (int index = 0; index < items; index++) g_variant_builder_add_value(&list, file_item(key, index, now));
    GVariant *variant = g_variant_new("(u@ayutu@a(a{say}ay))", GUINT32_TO_LE(FILE_SALT_SIZE),
                                      g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, salt, sizeof salt, 1),
                                      GUINT32_TO_LE(FILE_ITERATIONS), GUINT64_TO_LE(now), GUINT32_TO_LE(items),
                                      g_variant_builder_end(&list));
    g_variant_ref_sink(variant);
    g_variant_get_data(variant);  // serialise now (aligned), then copy after the header
    size_t size = g_variant_get_size(variant);
    unsigned char *contents = g_malloc(16 + 2 + size);
    memcpy(contents, "GnomeKeyring\n\r\0\n", 16);
    contents[16] = 1;
    contents[17] = 0;
    g_variant_store(variant, contents + 18);
    g_variant_unref(variant);
    GError *error = NULL;
    if (!g_file_set_contents(path, (const char *)contents, (gssize)(16 + 2 + size), &error)) die("cannot write the keyring");
    chmod(path, 0600);
    g_free(contents);
    printf("populate backend=%s items=%d added=%d method=generated ns_per_item=%.0f\n", options->backend, items, items,
           (double)(now_ns() - start) / items);
    fflush(stdout);
}

/// One child process per item count: libsecret keeps the file backend (and its keyring)
/// for the life of the process, and each count needs a keyring of its own.
static void run_file_backend(Options *options) {
    for (int s = 0; s < options->size_count; s++) {
        int items = options->sizes[s];
        char *workdir = make_workdir();  // made and removed here, even if the child dies
        fflush(stdout);
        pid_t child = fork();
        if (child < 0) die("fork failed");
        if (child == 0) {
            char *directory = subdir(workdir, "keyrings");
            char *path = g_build_filename(directory, "default.keyring", NULL);
            write_file_keyring(options, path, items);
            setenv("SECRET_BACKEND", "file", 1);
            setenv("SECRET_FILE_TEST_PATH", path, 1);
            setenv("SECRET_FILE_TEST_PASSWORD", KEYRING_PASSWORD, 1);
            unsetenv("DBUS_SESSION_BUS_ADDRESS");  // no daemon, no bus
            lookup_item(0);  // opens the backend: loads the file, derives the key
            measure(options, "read", items, options->lookups, 0);
            measure(options, "write", items, options->writes, 1);
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        remove_tree(workdir);
        g_free(workdir);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("the file backend measurement failed");
    }
}

/// Waits (bounded) until org.freedesktop.secrets has an owner on the session bus.
static int wait_for_secret_service(pid_t daemon) {
    GError *error = NULL;
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
    if (!bus) return -1;
    int ready = 0;
    for (int attempt = 0; attempt < 200 && !ready; attempt++) {  // at most ~10 s
        GVariant *reply = g_dbus_connection_call_sync(
            bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
            g_variant_new("(s)", "org.freedesktop.secrets"), G_VARIANT_TYPE("(b)"), G_DBUS_CALL_FLAGS_NONE, 2000,
            NULL, NULL);
        if (reply) {
            gboolean owned = FALSE;
            g_variant_get(reply, "(b)", &owned);
            g_variant_unref(reply);
            ready = owned;
        }
        if (!ready) {
            if (waitpid(daemon, NULL, WNOHANG) == daemon) break;  // the daemon died
            usleep(50000);
        }
    }
    g_object_unref(bus);
    return ready ? 0 : -1;
}

static void stop_daemon(pid_t daemon) {
    if (daemon <= 0) return;
    kill(daemon, SIGTERM);
    for (int attempt = 0; attempt < 100; attempt++) {  // at most ~5 s, then SIGKILL
        if (waitpid(daemon, NULL, WNOHANG) == daemon) return;
        usleep(50000);
    }
    kill(daemon, SIGKILL);
    waitpid(daemon, NULL, 0);
}

/// Inside the private bus: start gnome-keyring-daemon (login keyring created and unlocked
/// with a password given on stdin), measure, stop it.
static void run_gnome_keyring_inner(Options *options) {
    const char *workdir = options->workdir;
    char *home = subdir(workdir, "home");
    char *runtime = subdir(workdir, "run");
    char *data = subdir(workdir, "data");
    char *config = subdir(workdir, "config");
    char *cache = subdir(workdir, "cache");
    setenv("HOME", home, 1);
    setenv("XDG_RUNTIME_DIR", runtime, 1);
    setenv("XDG_DATA_HOME", data, 1);
    setenv("XDG_CONFIG_HOME", config, 1);
    setenv("XDG_CACHE_HOME", cache, 1);
    unsetenv("SECRET_BACKEND");
    unsetenv("GNOME_KEYRING_CONTROL");
    unsetenv("DISPLAY");

    int password_pipe[2];
    if (pipe(password_pipe) != 0) die("pipe failed");
    pid_t daemon = fork();
    if (daemon < 0) die("fork failed");
    if (daemon == 0) {
        dup2(password_pipe[0], STDIN_FILENO);
        close(password_pipe[0]);
        close(password_pipe[1]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);  // never our stdout: the caller reads it to the end
            if (!getenv("SECRET_BENCH_VERBOSE")) dup2(null, STDERR_FILENO);
            close(null);
        }
        execlp("gnome-keyring-daemon", "gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets",
               (char *)NULL);
        _exit(127);
    }
    close(password_pipe[0]);
    ssize_t written = write(password_pipe[1], KEYRING_PASSWORD, strlen(KEYRING_PASSWORD));
    (void)written;
    close(password_pipe[1]);
    char *pid_file = g_build_filename(workdir, "daemon.pid", NULL);
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "%d\n", (int)daemon);
    g_file_set_contents(pid_file, pid_text, -1, NULL);

    if (wait_for_secret_service(daemon) != 0) {
        stop_daemon(daemon);
        die("gnome-keyring-daemon did not register org.freedesktop.secrets (is gnome-keyring installed?)");
    }
    run_benchmarks(options);
    // Close libsecret's connection before stopping the daemon.
    secret_service_disconnect();
    stop_daemon(daemon);
    unlink(pid_file);
    g_free(pid_file);
    g_free(home); g_free(runtime); g_free(data); g_free(config); g_free(cache);
}

/// Waits (at most ~3 s) for every remaining child (orphans of the session re-parented to
/// us) to exit, then kills and reaps any that are still there.
static void reap_descendants(void) {
    for (int attempt = 0; attempt < 60; attempt++) {
        pid_t pid = waitpid(-1, NULL, WNOHANG);
        if (pid < 0 && errno == ECHILD) return;  // none left
        if (pid == 0) usleep(50000);
    }
    DIR *proc = opendir("/proc");
    if (proc) {
        struct dirent *entry;
        while ((entry = readdir(proc)) != NULL) {
            int pid = atoi(entry->d_name);
            if (pid <= 1) continue;
            char path[64], stat_line[512];
            snprintf(path, sizeof path, "/proc/%d/stat", pid);
            FILE *file = fopen(path, "r");
            if (!file) continue;
            size_t length = fread(stat_line, 1, sizeof stat_line - 1, file);
            fclose(file);
            stat_line[length] = '\0';
            char *close_paren = strrchr(stat_line, ')');
            int parent = 0;
            if (close_paren && sscanf(close_paren + 2, "%*c %d", &parent) == 1 && parent == getpid()) {
                fprintf(stderr, "secret-bench: stopping leftover process %d\n", pid);
                kill(pid, SIGKILL);
            }
        }
        closedir(proc);
    }
    while (waitpid(-1, NULL, 0) > 0) {}
}

/// Outside: create the temporary directory and a bus configuration that listens on a UNIX
/// socket in it and has no service directories (so nothing can be D-Bus-activated), run
/// this program again inside `dbus-run-session`, then make sure nothing is left.
static int run_gnome_keyring_outer(int argc, char **argv) {
    char *workdir = make_workdir();
    char *bus_dir = subdir(workdir, "bus");
    char *config_path = g_build_filename(workdir, "session.conf", NULL);
    char *config = g_strdup_printf(
        "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
        " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
        "<busconfig>\n"
        "  <type>session</type>\n"
        "  <listen>unix:dir=%s</listen>\n"
        "  <auth>EXTERNAL</auth>\n"
        "  <policy context=\"default\">\n"
        "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
        "    <allow eavesdrop=\"true\"/>\n"
        "    <allow own=\"*\"/>\n"
        "  </policy>\n"
        "</busconfig>\n",
        bus_dir);
    if (!g_file_set_contents(config_path, config, -1, NULL)) die("cannot write the bus configuration");

    // The inner program is this very binary.
    char self[4096];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) die("cannot find this program's path");
    self[length] = '\0';

    char *config_arg = g_strdup_printf("--config-file=%s", config_path);
    GPtrArray *args = g_ptr_array_new();
    g_ptr_array_add(args, "dbus-run-session");
    g_ptr_array_add(args, config_arg);
    g_ptr_array_add(args, "--");
    g_ptr_array_add(args, self);
    g_ptr_array_add(args, "--in-session");
    g_ptr_array_add(args, workdir);
    for (int i = 1; i < argc; i++) g_ptr_array_add(args, argv[i]);
    g_ptr_array_add(args, NULL);

    // Orphans of the session (dbus-run-session does not wait for the bus daemon it stops)
    // become our children, so that they can be reaped, or stopped, before we return.
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) die("fork failed");
    if (child == 0) {
        execvp("dbus-run-session", (char **)args->pdata);
        fprintf(stderr, "secret-bench: cannot run dbus-run-session: %s\n", strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}

    // Belt and braces: if the inner program died before stopping the daemon, stop it.
    char *pid_file = g_build_filename(workdir, "daemon.pid", NULL);
    gchar *contents = NULL;
    if (g_file_get_contents(pid_file, &contents, NULL, NULL)) {
        pid_t daemon = (pid_t)atoi(contents);
        if (daemon > 1 && kill(daemon, 0) == 0) {
            kill(daemon, SIGTERM);
            usleep(200000);
            kill(daemon, SIGKILL);
        }
        g_free(contents);
    }
    reap_descendants();
    remove_tree(workdir);
    g_free(pid_file);
    g_ptr_array_free(args, TRUE);
    g_free(config_arg);
    g_free(config);
    g_free(config_path);
    g_free(bus_dir);
    g_free(workdir);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 1;
}

// ---------------------------------------------------------------------------------------

static void usage(void) {
    fprintf(stderr,
            "usage: secret-bench --backend file|gnome-keyring [--items 100,10000] [--lookups N] [--rounds N]\n"
            "                    [--writes N] [--budget-ms N] [--hold]\n");
    exit(2);
}

int main(int argc, char **argv) {
    Options options = {.backend = NULL, .size_count = 0, .lookups = 200, .rounds = 5, .writes = 20,
                       .budget_ms = 1500, .hold = 0, .workdir = NULL};
    int inner = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--in-session") == 0 && value) { inner = 1; options.workdir = value; i++; }
        else if (strcmp(arg, "--backend") == 0 && value) { options.backend = value; i++; }
        else if (strcmp(arg, "--items") == 0 && value) {
            char *copy = g_strdup(value), *save = NULL;
            for (char *part = strtok_r(copy, ",", &save); part && options.size_count < MAX_SIZES;
                 part = strtok_r(NULL, ",", &save)) {
                int n = atoi(part);
                if (n >= 1) options.sizes[options.size_count++] = n;
            }
            g_free(copy);
            i++;
        }
        else if (strcmp(arg, "--lookups") == 0 && value) { options.lookups = atoi(value); i++; }
        else if (strcmp(arg, "--rounds") == 0 && value) { options.rounds = atoi(value); i++; }
        else if (strcmp(arg, "--writes") == 0 && value) { options.writes = atoi(value); i++; }
        else if (strcmp(arg, "--budget-ms") == 0 && value) { options.budget_ms = atoi(value); i++; }
        else if (strcmp(arg, "--hold") == 0) { options.hold = 1; }
        else usage();
    }
    if (!options.backend) usage();
    if (options.size_count == 0) { options.sizes[0] = 100; options.size_count = 1; }
    // Item counts in increasing order: the keyring grows from one to the next.
    for (int i = 1; i < options.size_count; i++)
        for (int j = i; j > 0 && options.sizes[j - 1] > options.sizes[j]; j--) {
            int t = options.sizes[j]; options.sizes[j] = options.sizes[j - 1]; options.sizes[j - 1] = t;
        }
    if (options.lookups < 1) options.lookups = 1;
    if (options.writes < 1) options.writes = 1;
    if (options.rounds < 1) options.rounds = 1;
    if (options.rounds > 64) options.rounds = 64;
    rng_state ^= (uint64_t)options.sizes[0];

    if (strcmp(options.backend, "file") == 0) {
        run_file_backend(&options);
        return 0;
    }
    if (strcmp(options.backend, "gnome-keyring") == 0) {
        if (!inner) return run_gnome_keyring_outer(argc, argv);
        run_gnome_keyring_inner(&options);
        return 0;
    }
    usage();
    return 2;
}
