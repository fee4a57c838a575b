/// A type that gives read and write access to a database: `DatabaseQueue` and `DatabasePool`.
///
/// Use `any DatabaseWriter` where code writes.
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `updates` in a transaction, blocking the calling thread until it
    /// is done: committed when the closure returns, rolled back when it
    /// throws (and the error is rethrown).
    ///
    /// No transaction outlives the access: one begun after the commit (by a
    /// `TransactionObserver` or a `DatabaseRegionObservation` called then)
    /// and still open when the access ends is rolled back, and the access
    /// throws a `DatabaseError` (`SQLITE_MISUSE`), although its own
    /// transaction committed.
    ///
    /// - Throws: The error thrown by `updates`, or a `DatabaseError` (for
    ///   example `SQLITE_BUSY` after `Configuration.busyTimeout` when another
    ///   process holds the write lock).
    /// - Precondition: Not called from inside another access of the same
    ///   queue or pool, whatever connection it uses: that could wait forever,
    ///   so it stops the program with a message instead.
    func write<T>(_ updates: (Database) throws -> T) throws -> T

    /// Runs `updates` outside of any transaction: each statement commits on
    /// its own, unless the closure opens a transaction itself.
    ///
    /// A transaction the closure opens (`BEGIN`, `SAVEPOINT`) must end inside
    /// it (`COMMIT`, `ROLLBACK`), or use `Database.inTransaction(_:_:)`,
    /// which ends it. One still open when the closure returns is rolled
    /// back, so that no later access or observation sees its uncommitted
    /// changes, and the access throws a `DatabaseError` (`SQLITE_MISUSE`,
    /// "the access left a transaction open"). When the closure throws, the
    /// transaction is rolled back and the closure's error is rethrown.
    /// Statements committed before that transaction stay committed.
    ///
    /// ```swift
    /// try writer.writeWithoutTransaction { db in
    ///     try db.execute(sql: "BEGIN IMMEDIATE; INSERT INTO player (name) VALUES ('Arthur')")
    ///     try db.execute(sql: "COMMIT")  // without it: rolled back, and SQLITE_MISUSE
    /// }
    /// ```
    ///
    /// - Throws: The error thrown by `updates`, a `DatabaseError` when SQLite
    ///   fails or the database is closed, or a `DatabaseError`
    ///   (`SQLITE_MISUSE`) when the closure left a transaction open.
    /// - Precondition: Not called from inside another access of the same
    ///   queue or pool, whatever connection it uses.
    func writeWithoutTransaction<T>(_ updates: (Database) throws -> T) throws -> T

    /// The `async` variant of `write(_:)`: never blocks a cooperative thread
    /// while waiting for the writer connection.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// The `async` variant of `writeWithoutTransaction(_:)`: never blocks a
    /// cooperative thread while waiting for the writer connection. A
    /// transaction left open by the closure is rolled back, and throws, the
    /// same way.
    func writeWithoutTransaction<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T
}
