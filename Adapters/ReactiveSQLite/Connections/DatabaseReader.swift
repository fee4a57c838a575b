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
