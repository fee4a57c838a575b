/// The kinds of SQLite transactions: https://www.sqlite.org/lang_transaction.html
public enum TransactionKind: String, Sendable {
    /// The transaction takes locks when it first reads or writes.
    case deferred = "DEFERRED"
    /// The transaction takes the write lock at once (waiting up to
    /// `Configuration.busyTimeout` for it).
    case immediate = "IMMEDIATE"
    /// The transaction takes the write lock at once, and in rollback journal
    /// mode prevents other connections from reading.
    case exclusive = "EXCLUSIVE"
}

extension Database {
    /// Runs `body` in a transaction: committed when `body` returns, rolled
    /// back when it throws (the error is rethrown) or when the commit fails.
    ///
    /// When a statement of `body` fails and SQLite rolls the whole
    /// transaction back by itself (a conflict resolved with ROLLBACK,
    /// `RAISE(ROLLBACK)`, SQLITE_FULL), the later statements of `body` throw
    /// SQLITE_ABORT instead of running outside of the transaction, and
    /// `inTransaction` throws SQLITE_ABORT even if `body` caught the error
    /// and returned: nothing was committed. A `COMMIT` or `ROLLBACK` that
    /// `body` runs itself and that succeeds is not an error: the
    /// transaction then ends there.
    ///
    /// - Throws: The error of `body`, or a `DatabaseError` when the
    ///   transaction cannot begin (one is open already, the database is
    ///   locked) or commit, or SQLite rolled it back.
    public func inTransaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        checkAccess()
        try cachedStatement(sql: "BEGIN \(kind.rawValue) TRANSACTION").execute()
        isRunningManagedTransaction = true
        defer {
            isRunningManagedTransaction = false
            transactionRolledBackBySQLite = nil
        }
        let result: T
        do {
            result = try body()
            if let error = transactionAbortedError(sql: nil) { throw error }
            // The closure may have ended the transaction itself.
            if isInsideTransaction {
                try cachedStatement(sql: "COMMIT TRANSACTION").execute()
            }
        } catch {
            rollbackIfInsideTransaction()
            throw error
        }
        return result
    }

    /// Runs `body` in a savepoint: released when `body` returns, rolled back
    /// (`ROLLBACK TO`) and released when it throws. Outside of a transaction,
    /// the savepoint is a transaction of its own. Savepoints nest.
    ///
    /// - Throws: The error of `body`, or a `DatabaseError`.
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        checkAccess()
        try cachedStatement(sql: "SAVEPOINT reactivesqlite").execute()
        do {
            let result = try body()
            try cachedStatement(sql: "RELEASE SAVEPOINT reactivesqlite").execute()
            return result
        } catch {
            if isInsideTransaction {
                // > The ROLLBACK TO command reverts the state of the database
                // > back to what it was just after the corresponding SAVEPOINT.
                // > [It] does not cancel the transaction [nor] remove the
                // > savepoint. https://www.sqlite.org/lang_savepoint.html
                try? cachedStatement(sql: "ROLLBACK TRANSACTION TO SAVEPOINT reactivesqlite").execute()
                try? cachedStatement(sql: "RELEASE SAVEPOINT reactivesqlite").execute()
                forgetSchemaChangesUndoneByRollback()
            }
            throw error
        }
    }

    /// Runs `body` in a deferred transaction with `PRAGMA query_only` on:
    /// the closure sees one committed state, and cannot write.
    func readOnlyTransaction<T>(_ body: () throws -> T) throws -> T {
        try cachedStatement(sql: "PRAGMA query_only = 1").execute()
        let wasReadOnlyAccess = isReadOnlyAccess
        isReadOnlyAccess = true
        defer {
            isReadOnlyAccess = wasReadOnlyAccess
            try? cachedStatement(sql: "PRAGMA query_only = 0").execute()
        }
        return try inTransaction(.deferred) {
            // Another connection may have changed the schema since the last read.
            try refreshSchemaCacheIfNeeded()
            return try body()
        }
    }

    /// Rolls back the current transaction, if any. SQLite may have rolled it
    /// back already (after some errors such as SQLITE_FULL); a failure to roll
    /// back leaves nothing more to do.
    func rollbackIfInsideTransaction() {
        guard isInsideTransaction else { return }
        try? cachedStatement(sql: "ROLLBACK TRANSACTION").execute()
        forgetSchemaChangesUndoneByRollback()
    }

    /// After a rollback: when this connection changed the schema since the
    /// schema cache was last checked (a change clears it, and its version is
    /// unknown until the next check), the rollback may have undone the change,
    /// so the caches filled meanwhile (statements compiled against the undone
    /// schema) are forgotten.
    func forgetSchemaChangesUndoneByRollback() {
        if schemaCache.schemaVersion == nil { clearSchemaCache() }
    }

    /// After a `ROLLBACK` or `ROLLBACK TO` statement: forgets the caches when
    /// the rollback undid a schema change (the schema version differs from
    /// the cached one, or this connection changed the schema since it was
    /// last read), and keeps them otherwise.
    func refreshSchemaCacheAfterRollback() {
        guard refreshesSchemaAfterRollback else {
            // The next access checks the version; a change of this
            // connection's own was forgotten already (version unknown).
            forgetSchemaChangesUndoneByRollback()
            return
        }
        do {
            try refreshSchemaCacheIfNeeded()
        } catch {
            clearSchemaCache()
        }
    }

    // MARK: - Accesses

    /// The body of a `read` access: `body` in a read-only transaction, after
    /// forgetting the caches made stale by another connection's schema change.
    func readAccess<T>(_ body: (Database) throws -> T) throws -> T {
        try readOnlyTransaction { try body(self) }
    }

    /// The body of a `write` access: `body` in an immediate transaction,
    /// after forgetting the caches made stale by another connection's schema change.
    func writeAccess<T>(_ body: (Database) throws -> T) throws -> T {
        try inTransaction(.immediate) {
            try refreshSchemaCacheIfNeeded()
            return try body(self)
        }
    }

    /// The body of a `writeWithoutTransaction` access: `body`, after
    /// forgetting the caches made stale by another connection's schema change.
    ///
    /// A transaction that `body` leaves open is rolled back, and throws,
    /// when the access ends: see `withAccess(_:)`, which checks every access.
    func writeAccessWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try refreshSchemaCacheIfNeeded()
        return try body(self)
    }
}

extension Database {
    /// The error of a statement that may write, run in a read access.
    func makeWriteInReadAccessError(sql: String) -> DatabaseError {
        DatabaseError(
            resultCode: .SQLITE_READONLY,
            message: "a read access cannot write, nor set PRAGMA query_only: use write or writeWithoutTransaction",
            sql: sql, connectionLabel: label)
    }
}
