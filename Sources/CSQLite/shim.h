#ifndef KEYSMITH_CSQLITE_SHIM_H
#define KEYSMITH_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro Swift cannot import: it tells SQLite to copy bound bytes.
static inline sqlite3_destructor_type keysmith_sqlite_transient(void) { return SQLITE_TRANSIENT; }
/// SQLITE_STATIC: SQLite may use the bytes without copying until the statement is reset.
static inline sqlite3_destructor_type keysmith_sqlite_static(void) { return SQLITE_STATIC; }
#endif
