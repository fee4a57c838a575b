/// A type that gives read access to a database: `DatabaseQueue` and `DatabasePool`.
///
/// Use `any DatabaseReader` where code only reads.
public protocol DatabaseReader: AnyObject, Sendable {
    /// The configuration the connections were opened with.
    var configuration: Configuration { get }

    /// Runs `value` in a read-only transaction and returns its result, blocking
    /// the calling thread until it is done.
    ///
    /// The closure sees one committed state of the database from start to
    /// end, even while other connections write.
    ///
    /// - Throws: The error thrown by `value`, a `DatabaseError` when SQLite
    ///   fails, or when the database is closed.
    /// - Precondition: Not called from inside another access of the same
    ///   queue or pool, whatever connection it uses: that could wait forever,
    ///   so it stops the program with a message instead.
    func read<T>(_ value: (Database) throws -> T) throws -> T

    /// Runs `value` in a read-only transaction and returns its result, without
    /// blocking a cooperative thread while waiting for a connection.
    func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Closes the connections. Accesses that start afterwards throw a
    /// `DatabaseError` (`SQLITE_MISUSE`, "the connection is closed").
    /// Connections also close when the reader is released.
    func close()
}

/// A type that gives read and write access to a database: `DatabaseQueue` and `DatabasePool`.
///
/// Use `any DatabaseWriter` where code writes.
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `updates` in a transaction, blocking the calling thread until it
    /// is done: committed when the closure returns, rolled back when it
    /// throws (and the error is rethrown).
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
    func writeWithoutTransaction<T>(_ updates: (Database) throws -> T) throws -> T

    /// The `async` variant of `write(_:)`: never blocks a cooperative thread
    /// while waiting for the writer connection.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// The `async` variant of `writeWithoutTransaction(_:)`.
    func writeWithoutTransaction<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T
}
