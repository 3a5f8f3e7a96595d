#ifndef KEYSMITH_BASELINE_H
#define KEYSMITH_BASELINE_H
#include <stdint.h>

/// The physical limit of the keychain's read path, done by hand in C: one keyed BLAKE2b of
/// the name, one SQLite point query on an indexed hash column (WAL, same pragmas), one
/// XChaCha20-Poly1305 decryption of a `value_size`-byte secret.
/// Creates a database of `item_count` rows in `path` (removed first).
/// Returns 0 on success.
int keysmith_baseline_prepare(const char *path, int item_count, int value_size);

/// Looks up `lookups` random names among the `item_count` rows and returns the total
/// nanoseconds spent, or -1 on failure. Opens and closes its own connection.
int64_t keysmith_baseline_read(const char *path, int item_count, int lookups, uint32_t seed);

/// Read throughput at the C limit: `threads` threads (at most 16), each with its own
/// connection, each doing `lookups` random reads of its own share of the `item_count` rows,
/// all started at once after a warm-up. Returns the wall-clock nanoseconds until the last
/// finished, or -1 on failure.
int64_t keysmith_baseline_read_threads(const char *path, int item_count, int lookups, int threads);

/// The same with `processes` forked processes (at most 16) instead of threads.
int64_t keysmith_baseline_read_processes(const char *path, int item_count, int lookups, int processes);

/// Durable writes: `writes` upserts of one row each in its own transaction with
/// synchronous=FULL (`full` != 0) or NORMAL; returns total nanoseconds or -1.
int64_t keysmith_baseline_write(const char *path, int writes, int full, int value_size);

/// The same durable writes (synchronous=FULL), with `erasing` != 0 as the keychain does
/// them: secure_delete=ON, journal_size_limit=0 and wal_checkpoint(TRUNCATE) after each
/// commit (the overwritten ciphertext leaves the files); with 0, neither. Nanoseconds or -1.
int64_t keysmith_baseline_write_erasing(const char *path, int writes, int erasing, int value_size);
#endif
