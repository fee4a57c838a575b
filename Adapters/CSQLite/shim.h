// The one C header ReactiveSQLite sees: libsqlite3, plus wrappers for what
// Swift cannot import directly (variadic functions, macros with casts).
#ifndef REACTIVESQLITE_CSQLITE_SHIM_H
#define REACTIVESQLITE_CSQLITE_SHIM_H

// sqlite3.h declares the pre-update hook functions only when this is defined
// before it is included. Debian's libsqlite3 is compiled with the hook; the
// observation engine checks at run time with sqlite3_compileoption_used.
#ifndef SQLITE_ENABLE_PREUPDATE_HOOK
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#endif

#include <sqlite3.h>

/// How many times SQLite recompiled the statement (`SQLITE_STMTSTATUS_REPREPARE`).
/// A function, not the call itself, so that CSQLCipher's shim can bridge an
/// SQLite older than 3.20, which does not count recompilations.
static inline int _rsqlite_recompilation_count(sqlite3_stmt *statement) {
    return sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_REPREPARE, 0);
}

/// Whether the connection holds a transaction, a read one included, on any
/// of its databases (`sqlite3_txn_state`, SQLite 3.34): 0 none, 1 read,
/// 2 write. A function, not the call itself, so that CSQLCipher's shim can
/// bridge an older SQLite, which cannot tell (-1).
static inline int _rsqlite_txn_state(sqlite3 *db) {
    return sqlite3_txn_state(db, 0);
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
