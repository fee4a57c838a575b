// The one C header ReactiveSQLite sees when built with the `SQLCipher`
// trait: libsqlcipher (pkg-config `sqlcipher`), with the same wrappers as
// `CSQLite/shim.h`, plus what bridges an SQLCipher built on an older SQLite
// (Debian's libsqlcipher 3.4.1 is SQLite 3.15.2) to the API the Swift code
// is written against. Every bridge below is chosen by `SQLITE_VERSION_NUMBER`
// of the header in use, so a newer SQLCipher gets the real functions.
#ifndef REACTIVESQLITE_CSQLCIPHER_SHIM_H
#define REACTIVESQLITE_CSQLCIPHER_SHIM_H

// sqlite3.h declares sqlite3_key and sqlite3_rekey only with this.
#ifndef SQLITE_HAS_CODEC
#define SQLITE_HAS_CODEC 1
#endif

// Like CSQLite/shim.h: the pre-update functions are declared only with this
// (on a library built with the hook). SQLite 3.15's header declares them
// whatever the option, and Debian's libsqlcipher 3.4.1 is built without the
// hook: the names are moved aside here and replaced below.
#ifndef SQLITE_ENABLE_PREUPDATE_HOOK
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#endif
#define sqlite3_preupdate_hook _rsqlite_library_preupdate_hook
#define sqlite3_preupdate_old _rsqlite_library_preupdate_old
#define sqlite3_preupdate_new _rsqlite_library_preupdate_new
#define sqlite3_preupdate_count _rsqlite_library_preupdate_count
#define sqlite3_preupdate_depth _rsqlite_library_preupdate_depth

#include <sqlite3.h>

#undef sqlite3_preupdate_hook
#undef sqlite3_preupdate_old
#undef sqlite3_preupdate_new
#undef sqlite3_preupdate_count
#undef sqlite3_preupdate_depth

// The pre-update hook: SQLCipher's library may lack it (Debian's does, and
// `sqlite3_compileoption_used("ENABLE_PREUPDATE_HOOK")` is then 0), and a
// reference to a missing symbol would not link. The observation engine calls
// these only when that run-time check says the hook is compiled in; with
// SQLCipher it takes the update-hook path (`Configuration.ChangeTracking`).
// These stand-ins install nothing and report SQLITE_MISUSE.
static inline void *sqlite3_preupdate_hook(
    sqlite3 *db,
    void (*callback)(void *, sqlite3 *, int, char const *, char const *, sqlite3_int64, sqlite3_int64),
    void *context) {
    (void)db; (void)callback; (void)context;
    return 0;
}
static inline int sqlite3_preupdate_old(sqlite3 *db, int column, sqlite3_value **value) {
    (void)db; (void)column; *value = 0;
    return SQLITE_MISUSE;
}
static inline int sqlite3_preupdate_new(sqlite3 *db, int column, sqlite3_value **value) {
    (void)db; (void)column; *value = 0;
    return SQLITE_MISUSE;
}
static inline int sqlite3_preupdate_count(sqlite3 *db) { (void)db; return 0; }
static inline int sqlite3_preupdate_depth(sqlite3 *db) { (void)db; return 0; }

#if SQLITE_VERSION_NUMBER < 3020000
// sqlite3_prepare_v3 (SQLite 3.20) with no flags is sqlite3_prepare_v2;
// ReactiveSQLite passes no flags.
static inline int sqlite3_prepare_v3(
    sqlite3 *db, const char *sql, int byteCount, unsigned int flags, sqlite3_stmt **statement,
    const char **tail) {
    (void)flags;
    return sqlite3_prepare_v2(db, sql, byteCount, statement, tail);
}
#endif

/// How many times SQLite recompiled the statement (`SQLITE_STMTSTATUS_REPREPARE`,
/// SQLite 3.20), or 0 on an older SQLite, which does not count recompilations
/// (its `sqlite3_stmt_status` must not be asked for an operation it lacks).
static inline int _rsqlite_recompilation_count(sqlite3_stmt *statement) {
#if SQLITE_VERSION_NUMBER >= 3020000
    return sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_REPREPARE, 0);
#else
    (void)statement;
    return 0;
#endif
}

/// Whether the connection holds a transaction, a read one included
/// (`sqlite3_txn_state`, SQLite 3.34): 0 none, 1 read, 2 write; -1 on an
/// older SQLite, which cannot tell.
static inline int _rsqlite_txn_state(sqlite3 *db) {
#if SQLITE_VERSION_NUMBER >= 3034000
    return sqlite3_txn_state(db, 0);
#else
    (void)db;
    return -1;
#endif
}

/// `sqlite3_db_config` with one int argument and one int result
/// (SQLITE_DBCONFIG_ENABLE_FKEY, SQLITE_DBCONFIG_DEFENSIVE, ...).
static inline int _rsqlite_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

/// SQLITE_TRANSIENT: SQLite copies the bound bytes before the bind call returns.
static inline sqlite3_destructor_type _rsqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// Sets the key of a connection that has not read its file yet (`sqlite3_key`).
static inline int _rsqlite_key(sqlite3 *db, const void *key, int byteCount) {
    return sqlite3_key(db, key, byteCount);
}

/// Changes the key of an open, keyed connection, re-encrypting the file (`sqlite3_rekey`).
static inline int _rsqlite_rekey(sqlite3 *db, const void *key, int byteCount) {
    return sqlite3_rekey(db, key, byteCount);
}

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>

/// Whether the calling thread is the process's first one (its thread id is
/// the process id): Foundation's `Thread.isMainThread` without Foundation.
/// `syscall` is variadic, which Swift cannot call.
static inline int _rsqlite_is_main_thread(void) {
    return syscall(SYS_gettid) == getpid();
}
#endif

#endif
