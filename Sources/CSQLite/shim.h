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
#endif
