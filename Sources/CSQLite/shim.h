#ifndef KEYSMITH_CSQLITE_SHIM_H
#define KEYSMITH_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro Swift cannot import: it tells SQLite to copy bound bytes.
static inline sqlite3_destructor_type keysmith_sqlite_transient(void) { return SQLITE_TRANSIENT; }
/// SQLITE_STATIC: SQLite may use the bytes without copying until the statement is reset.
static inline sqlite3_destructor_type keysmith_sqlite_static(void) { return SQLITE_STATIC; }
/// Turns off SQLite's global allocation statistics (sqlite3_config is variadic, which Swift
/// cannot call). With them on, every allocation of every connection takes one process-wide
/// mutex, so threads reading through their own connections contend on it. Only works
/// before SQLite is first used in the process; returns SQLITE_MISUSE (harmlessly) after.
static inline int keysmith_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#include <string.h>

/// Copies the WAL-index header of `db`'s main database (both copies, 96 bytes: iVersion,
/// iChange, isInit, bigEndCksum, szPage, mxFrame, nPage, frame checksum, salt, checksum)
/// into `out`, read as SQLite reads it (walIndexTryHdr): copy 1, a memory barrier, copy 2.
/// Returns 1 when the header could be read and its two copies agree and are initialized,
/// 0 otherwise (not in WAL mode, the wal-index not mapped, a writer half-way through
/// updating it). Region 0 is mapped without extending it and only read.
static inline int keysmith_wal_index_header(sqlite3 *db, unsigned char out[96]) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == 0) return 0;
    if (file->pMethods == 0 || file->pMethods->iVersion < 2 || file->pMethods->xShmMap == 0) return 0;
    void volatile *region = 0;
    if (file->pMethods->xShmMap(file, 0, 32768, 0, &region) != SQLITE_OK || region == 0) return 0;
    const volatile unsigned char *header = (const volatile unsigned char *)region;
    for (int i = 0; i < 48; i++) out[i] = header[i];
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 48; i < 96; i++) out[i] = header[i];
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (memcmp(out, out + 48, 48) != 0) return 0;
    /* isInit (byte 12 of the header) */
    if (out[12] == 0) return 0;
    return 1;
}
#endif
