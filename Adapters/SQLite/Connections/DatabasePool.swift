/// A database in WAL mode with one writer connection and up to
/// `Configuration.maximumReaderCount` reader connections.
///
/// Reads run concurrently with each other and with the writer. Each read
/// runs in its own transaction, so it sees one committed state from start to
/// end, never a write in progress.
///
/// ```swift
/// let dbPool = try DatabasePool(path: "/path/to/db.sqlite")
/// try await dbPool.write { db in try db.execute(sql: "INSERT INTO player (name) VALUES ('Arthur')") }
/// let names = try await dbPool.read { db in try SQLRequest<String>(sql: "SELECT name FROM player").fetchAll(db) }
/// ```
public final class DatabasePool: DatabaseWriter {
    /// The configuration of the connections.
    public let configuration: Configuration
    /// The path of the database file.
    public let path: String
    let writer: SerializedDatabase
    let readers: ConnectionPool

    /// Opens the database file at `path` (creating it unless
    /// `configuration.readonly`) and switches it to WAL mode.
    ///
    /// - Throws: `DatabaseError` when the file cannot be opened or is not a
    ///   database, or when it cannot use WAL mode (an in-memory path, or a
    ///   read-only database that is not in WAL mode already).
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.configuration = configuration
        self.path = path
        writer = try SerializedDatabase(
            path: path, configuration: configuration, role: "writer", readonly: configuration.readonly)
        try writer.sync { db in
            let mode = try SQLRequest<String>(
                sql: configuration.readonly ? "PRAGMA journal_mode" : "PRAGMA journal_mode = WAL"
            ).fetchOne(db)
            guard mode?.lowercased() == "wal" else {
                throw DatabaseError(
                    resultCode: .SQLITE_ERROR,
                    message: "DatabasePool needs WAL mode, and the database is in journal mode \(mode ?? "unknown")"
                        + (configuration.readonly ? " (a read-only pool cannot change it)" : ""),
                    connectionLabel: db.label)
            }
        }
        let label = configuration.label
        readers = ConnectionPool(
            maximumCount: configuration.maximumReaderCount,
            closedError: {
                DatabaseError(resultCode: .SQLITE_MISUSE, message: "the connection is closed", connectionLabel: label)
            },
            makeConnection: { index in
                try SerializedDatabase(path: path, configuration: configuration, role: "reader.\(index)", readonly: true)
            })
    }

    /// Runs `value` in a read transaction on a reader connection, blocking
    /// the calling thread until a reader is free and the closure is done.
    /// Concurrent reads use distinct readers.
    public func read<T>(_ value: (Database) throws -> T) throws -> T {
        let reader = try readers.acquire()
        defer { readers.release(reader) }
        return try reader.sync { db in try db.readOnlyTransaction { try value(db) } }
    }

    /// Runs `value` in a read transaction on a reader connection, suspending
    /// the task (not blocking its thread) until a reader is free.
    public func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let reader = try await readers.acquire()
        defer { readers.release(reader) }
        return try await reader.async { db in try db.readOnlyTransaction { try value(db) } }
    }

    /// Runs `updates` in a transaction on the writer connection: committed
    /// when it returns, rolled back when it throws. Reads go on meanwhile,
    /// and see the changes once committed.
    public func write<T>(_ updates: (Database) throws -> T) throws -> T {
        try writer.sync { db in try db.inTransaction(.immediate) { try updates(db) } }
    }

    /// Runs `updates` in a transaction on the writer, without blocking the task's thread.
    public func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.async { db in try db.inTransaction(.immediate) { try updates(db) } }
    }

    /// Runs `updates` on the writer connection, outside of any transaction.
    public func writeWithoutTransaction<T>(_ updates: (Database) throws -> T) throws -> T {
        try writer.sync { db in try updates(db) }
    }

    /// Runs `updates` on the writer outside of any transaction, without
    /// blocking the task's thread.
    public func writeWithoutTransaction<T: Sendable>(
        _ updates: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await writer.async { db in try updates(db) }
    }

    /// Closes the writer and the idle readers now; readers in use close when
    /// their read ends. Later accesses throw a `DatabaseError`.
    ///
    /// - Precondition: Not called from inside an access of this pool's writer.
    public func close() {
        readers.close()
        writer.close()
    }
}
