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
///
/// Durability: a pool commits in WAL mode with `PRAGMA synchronous = NORMAL`
/// on every connection, SQLite's recommended setting for WAL. A crash of
/// the program loses nothing once `write` has returned, and nothing ever
/// corrupts the database; a power loss or an operating system crash may
/// lose the last transactions committed before it (SQLite syncs the WAL at
/// checkpoints, not at each commit). Commits are faster for it. For commits
/// that also survive a power loss, set `PRAGMA synchronous = FULL` in
/// `Configuration.prepareDatabase`: a level set there wins over the pool's.
///
/// > In WAL mode when synchronous is NORMAL (1), the WAL file is
/// > synchronized before each checkpoint and the database file is
/// > synchronized after each completed checkpoint [...] A transaction
/// > committed in WAL mode with synchronous=NORMAL might roll back following
/// > a power loss or system crash. https://www.sqlite.org/pragma.html#pragma_synchronous
public final class DatabasePool: DatabaseWriter {
    /// The `PRAGMA synchronous` level of the pool's connections, unless
    /// `Configuration.prepareDatabase` sets one.
    static let defaultSynchronous = "NORMAL"

    /// The configuration of the connections.
    public let configuration: Configuration
    /// The path of the database file.
    public let path: String
    let writer: SerializedDatabase
    /// Identifies the accesses of this database on each thread.
    let owner: AccessOwner
    let readers: ConnectionPool
    /// Detects external commits for observations (nil unless the configuration asks for it).
    let externalChangeDetector: ExternalChangeDetector?

    /// Opens the database file at `path` (creating it unless
    /// `configuration.readonly`) and switches it to WAL mode.
    ///
    /// The writer connection is opened now: `configuration.prepareDatabase`
    /// runs on it, then `PRAGMA synchronous = NORMAL` unless it set a level,
    /// then the switch to WAL mode. Readers are opened when reads first need
    /// them (see `Configuration.prepareDatabase`).
    ///
    /// - Throws: `DatabaseError` when the file cannot be opened or is not a
    ///   database, or when it cannot use WAL mode (an in-memory path, or a
    ///   read-only database that is not in WAL mode already); the error
    ///   thrown by `configuration.prepareDatabase`, unchanged. Nothing stays
    ///   open when `init` throws.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        guard configuration.maximumReaderCount >= 1 else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE,
                message: "Configuration.maximumReaderCount must be at least 1 (got \(configuration.maximumReaderCount))",
                connectionLabel: configuration.label)
        }
        self.configuration = configuration
        self.path = path
        let owner = AccessOwner(label: configuration.label)
        self.owner = owner
        let writer = try SerializedDatabase(
            path: path, configuration: configuration, role: "writer", readonly: configuration.readonly,
            defaultSynchronous: Self.defaultSynchronous, owner: owner)
        do {
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
        } catch {
            writer.close()
            throw error
        }
        self.writer = writer
        externalChangeDetector = ExternalChangeDetector.ifEnabled(
            path: path, configuration: configuration, owner: owner, writer: writer,
            defaultSynchronous: Self.defaultSynchronous)
        let label = configuration.label
        readers = ConnectionPool(
            label: label + ".readers",
            maximumCount: configuration.maximumReaderCount,
            closedError: {
                DatabaseError(resultCode: .SQLITE_MISUSE, message: "the connection is closed", connectionLabel: label)
            },
            makeConnection: { index in
                try SerializedDatabase(
                    path: path, configuration: configuration, role: "reader.\(index)", readonly: true,
                    defaultSynchronous: DatabasePool.defaultSynchronous, owner: owner)
            })
    }

    deinit {
        // Close the idle readers before the writer (released after this
        // body): the last connection to close checkpoints the WAL and
        // deletes it, which only the writer can do.
        readers.close(waitingForIdleConnections: false)
    }

    /// Runs `value` in a read transaction on a reader connection, blocking
    /// the calling thread until a reader is free and the closure is done.
    /// Concurrent reads use distinct readers.
    ///
    /// - Precondition: Not called from inside another access of this pool
    ///   (it could wait forever for a reader held by the outer accesses).
    public func read<T>(_ value: (Database) throws -> T) throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabasePool.read")
        let reader = try readers.acquire()
        defer { readers.release(reader) }
        return try reader.sync { db in try db.readAccess(value) }
    }

    /// Runs `value` in a read transaction on a reader connection, suspending
    /// the task (not blocking its thread) until a reader is free.
    ///
    /// The reader is given back as soon as `value` returns, on the reader's
    /// dispatch queue, without waiting for the task to resume.
    public func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabasePool.read")
        let readers = self.readers
        return try await withCheckedThrowingContinuation { continuation in
            readers.acquire { acquisition in
                switch acquisition {
                case .failure(let error):
                    continuation.resume(throwing: error)
                case .success(let reader):
                    reader.asyncAccess({ db in try db.readAccess(value) }) { result in
                        readers.release(reader)
                        continuation.resume(with: result)
                    }
                }
            }
        }
    }

    /// Runs `updates` in a transaction on the writer connection: committed
    /// when it returns, rolled back when it throws. Reads go on meanwhile,
    /// and see the changes once committed. When SQLite rolls the transaction
    /// back by itself after an error that `updates` catches, the write
    /// throws SQLITE_ABORT (see `Database.inTransaction(_:_:)`).
    ///
    /// - Precondition: Not called from inside another access of this pool.
    public func write<T>(_ updates: (Database) throws -> T) throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabasePool.write")
        return try writer.sync { db in try db.writeAccess(updates) }
    }

    /// Runs `updates` in a transaction on the writer, without blocking the task's thread.
    public func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabasePool.write")
        return try await writer.async { db in try db.writeAccess(updates) }
    }

    /// Runs `updates` on the writer connection, outside of any transaction:
    /// each statement commits on its own, unless the closure opens a
    /// transaction itself.
    ///
    /// A transaction the closure opens must end inside it: one still open
    /// when the closure returns is rolled back, and the access throws a
    /// `DatabaseError` (`SQLITE_MISUSE`); when the closure throws, it is
    /// rolled back and the closure's error is rethrown. Later writes and
    /// observations never see its uncommitted changes. See
    /// `DatabaseWriter.writeWithoutTransaction(_:)`.
    ///
    /// - Throws: The error thrown by `updates`, a `DatabaseError` when SQLite
    ///   fails or the pool is closed, or a `DatabaseError` (`SQLITE_MISUSE`)
    ///   when the closure left a transaction open.
    /// - Precondition: Not called from inside another access of this pool.
    public func writeWithoutTransaction<T>(_ updates: (Database) throws -> T) throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabasePool.writeWithoutTransaction")
        return try writer.sync { db in try db.writeAccessWithoutTransaction(updates) }
    }

    /// Runs `updates` on the writer outside of any transaction, without
    /// blocking the task's thread. A transaction left open by the closure
    /// is rolled back, and throws, as with `writeWithoutTransaction(_:)`.
    public func writeWithoutTransaction<T: Sendable>(
        _ updates: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        owner.preconditionNoAccessOnCurrentThread("DatabasePool.writeWithoutTransaction")
        return try await writer.async { db in try db.writeAccessWithoutTransaction(updates) }
    }

    /// Closes the writer and the idle readers now; readers in use close when
    /// their read ends, and reads waiting for a reader throw. Later accesses
    /// throw a `DatabaseError` (`SQLITE_MISUSE`). Waits for the write in
    /// progress, if any, but not for reads. Stops watching external changes
    /// (see `Configuration.observesExternalChanges`).
    ///
    /// - Precondition: Not called from inside an access of this pool.
    public func close() {
        owner.preconditionNoAccessOnCurrentThread("DatabasePool.close()")
        readers.close()
        externalChangeDetector?.close()
        writer.close()
    }
}
