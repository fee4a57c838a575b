/// A database connection that serializes every access: reads and writes run
/// one after the other, each on the connection's dispatch queue.
///
/// ```swift
/// let dbQueue = try DatabaseQueue(path: "/path/to/db.sqlite")  // a file
/// let memory = try DatabaseQueue()                             // in memory
/// try dbQueue.write { db in
///     try db.execute(sql: "CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT)")
/// }
/// let count = try dbQueue.read { db in try SQLRequest<Int>(sql: "SELECT COUNT(*) FROM player").fetchOne(db) }
/// ```
///
/// A queue is `Sendable`: share it between threads and tasks freely.
///
/// Durability: a queue keeps SQLite's defaults, `PRAGMA synchronous = FULL`
/// and the file's journal mode (a rollback journal, `DELETE`, for a new
/// file): a transaction is on disk when `write` returns, and survives a
/// crash of the program, of the operating system, and a power loss.
/// Change either in `Configuration.prepareDatabase` (for example
/// `PRAGMA journal_mode = WAL` and `PRAGMA synchronous = NORMAL`, a
/// `DatabasePool`'s settings).
public final class DatabaseQueue: DatabaseWriter {
    /// The configuration of the connection.
    public let configuration: Configuration
    /// The path of the database file, or `:memory:`.
    public let path: String
    let writer: SerializedDatabase
    /// Identifies the accesses of this database on each thread.
    let owner: AccessOwner
    /// Detects external commits for observations (nil unless the configuration asks for it).
    let externalChangeDetector: ExternalChangeDetector?

    /// Opens (creating it unless `configuration.readonly`) the database file
    /// at `path`, and runs `configuration.prepareDatabase` on the connection.
    ///
    /// - Throws: `DatabaseError`: `SQLITE_CANTOPEN` for a file that cannot be
    ///   opened, `SQLITE_NOTADB` for a file that is not a database; the error
    ///   thrown by `configuration.prepareDatabase`, unchanged. Nothing stays
    ///   open when `init` throws.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.configuration = configuration
        self.path = path
        let owner = AccessOwner(label: configuration.label)
        self.owner = owner
        writer = try SerializedDatabase(
            path: path, configuration: configuration, role: "queue", readonly: configuration.readonly, owner: owner)
        externalChangeDetector = ExternalChangeDetector.ifEnabled(
            path: path, configuration: configuration, owner: owner, writer: writer)
    }

    /// Opens a new, empty, private in-memory database.
    public convenience init(configuration: Configuration = Configuration()) throws {
        try self.init(path: ":memory:", configuration: configuration)
    }

    /// Runs `value` in a read-only transaction (`BEGIN DEFERRED` with
    /// `PRAGMA query_only`): a write inside throws `SQLITE_READONLY`.
    ///
    /// - Precondition: Not called from inside another access of this queue.
    public func read<T>(_ value: (Database) throws -> T) throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabaseQueue.read")
        return try writer.sync { db in try db.readAccess(value) }
    }

    /// Runs `value` in a read-only transaction, suspending the task (not
    /// blocking its thread) until the connection is available.
    public func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabaseQueue.read")
        return try await writer.async { db in try db.readAccess(value) }
    }

    /// `read(_:)`, yielding to the writers of other processes when the queue
    /// observes external changes (see `Database.yieldingToWriters(_:)`): in
    /// rollback-journal mode it holds no lock that another process's commit
    /// could meet. `value` may run several times; the result is its last
    /// run's.
    ///
    /// - Precondition: Not called from inside another access of this queue.
    package func readYieldingToWriters<T>(_ value: (Database) throws -> T) throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabaseQueue.read")
        return try writer.sync { db in try db.yieldingToWriters { try db.readAccess(value) } }
    }

    /// `readYieldingToWriters(_:)`, suspending the task (not blocking its
    /// thread) until the connection is available.
    package func readYieldingToWriters<T: Sendable>(
        _ value: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabaseQueue.read")
        return try await writer.async { db in try db.yieldingToWriters { try db.readAccess(value) } }
    }

    /// Runs `updates` in a transaction (`BEGIN IMMEDIATE`): committed when it
    /// returns, rolled back when it throws. When SQLite rolls the transaction
    /// back by itself after an error that `updates` catches, the write
    /// throws SQLITE_ABORT (see `Database.inTransaction(_:_:)`).
    ///
    /// - Precondition: Not called from inside another access of this queue.
    public func write<T>(_ updates: (Database) throws -> T) throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabaseQueue.write")
        return try writer.sync { db in try db.writeAccess(updates) }
    }

    /// Runs `updates` in a transaction, suspending the task (not blocking its
    /// thread) until the connection is available.
    public func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabaseQueue.write")
        return try await writer.async { db in try db.writeAccess(updates) }
    }

    /// Runs `updates` outside of any transaction: each statement commits on
    /// its own, unless the closure opens a transaction itself.
    ///
    /// A transaction the closure opens must end inside it: one still open
    /// when the closure returns is rolled back, and the access throws a
    /// `DatabaseError` (`SQLITE_MISUSE`); when the closure throws, it is
    /// rolled back and the closure's error is rethrown. Later reads and
    /// observations never see its uncommitted changes. See
    /// `DatabaseWriter.writeWithoutTransaction(_:)`.
    ///
    /// - Throws: The error thrown by `updates`, a `DatabaseError` when SQLite
    ///   fails or the queue is closed, or a `DatabaseError` (`SQLITE_MISUSE`)
    ///   when the closure left a transaction open.
    /// - Precondition: Not called from inside another access of this queue.
    public func writeWithoutTransaction<T>(_ updates: (Database) throws -> T) throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabaseQueue.writeWithoutTransaction")
        return try writer.sync { db in try db.writeAccessWithoutTransaction(updates) }
    }

    /// Runs `updates` outside of any transaction, without blocking the task's
    /// thread. A transaction left open by the closure is rolled back, and
    /// throws, as with `writeWithoutTransaction(_:)`.
    public func writeWithoutTransaction<T: Sendable>(
        _ updates: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabaseQueue.writeWithoutTransaction")
        return try await writer.async { db in try db.writeAccessWithoutTransaction(updates) }
    }

    /// Closes the connection after the access in progress, if any, and
    /// stops watching external changes (see `Configuration.observesExternalChanges`).
    ///
    /// - Precondition: Not called from inside an access of this queue.
    public func close() {
        owner.preconditionNoAccessOnCurrentThread("DatabaseQueue.close()")
        externalChangeDetector?.close()
        writer.close()
    }
}
