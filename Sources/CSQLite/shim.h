#ifndef KEYSMITH_CSQLITE_SHIM_H
#define KEYSMITH_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <string.h>
#include <sys/vfs.h>

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

/// The file descriptor through which the connection reads its main database file, or -1
/// when SQLite does not say or the file is not one of its unix VFS. SQLite has no call for
/// it: a unix VFS file (`unixFile` in sqlite3.c, unchanged since 3.7) begins with its
/// methods, its VFS, its inode record and then the descriptor. The VFS field is checked
/// against the connection's VFS, and the caller checks the descriptor (`fstat`), so a
/// different layout only means no descriptor is recognized.
static inline int keysmith_sqlite_main_file_descriptor(sqlite3 *db) {
    sqlite3_vfs *vfs = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) != SQLITE_OK || !vfs || !vfs->zName
        || strncmp(vfs->zName, "unix", 4) != 0)
        return -1;
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || !file || !file->pMethods)
        return -1;
    struct keysmith_unix_file_head {
        const sqlite3_io_methods *methods;
        sqlite3_vfs *vfs;
        void *inode;
        int descriptor;
    };
    const struct keysmith_unix_file_head *head = (const struct keysmith_unix_file_head *)file;
    return head->vfs == vfs ? head->descriptor : -1;
}
/// The type (`f_type`, the file system's magic number) of the file system holding `path`,
/// or -1 when `statfs` fails. Here because Swift's Glibc module does not offer `statfs`;
/// used to decide whether the database's change times can vouch for it.
static inline long long keysmith_file_system_type(const char *path) {
    struct statfs info;
    return statfs(path, &info) == 0 ? (long long)info.f_type : -1;
}
#endif
