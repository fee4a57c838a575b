import Dispatch

/// One connection and the serial dispatch queue that runs every access to it.
///
/// `@unchecked Sendable`: the `Database` it owns is only used inside blocks
/// run on `queue` (or, for the synchronous accesses that run on the caller's
/// thread, with the queue held by `queue.sync`), so no two threads ever touch
/// it at once. The one exception is `deinit`, which runs when no other
/// reference remains.
final class SerializedDatabase: @unchecked Sendable {
    let database: Database
    let queue: DispatchQueue
    /// The queue or pool this connection belongs to.
    let owner: AccessOwner

    /// Marks the queue, so that a reentrant access is detected before it deadlocks.
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Opens the connection (see `Database.init`, which runs
    /// `Configuration.prepareDatabase`).
    ///
    /// - Parameter defaultSynchronous: The `PRAGMA synchronous` level of the
    ///   connection unless `prepareDatabase` sets one; nil keeps SQLite's.
    init(
        path: String, configuration: Configuration, role: String, readonly: Bool, defaultSynchronous: String? = nil,
        owner: AccessOwner
    ) throws {
        database = try Database(
            path: path, configuration: configuration, role: role, readonly: readonly,
            defaultSynchronous: defaultSynchronous)
        queue = DispatchQueue(label: database.label)
        self.owner = owner
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    deinit {
        // Statements keep their `Database` alive, and the connection's cache
        // keeps statements: closing breaks the cycle. Nothing else can use the
        // connection now, and this may run on `queue` itself (at the end of an
        // async access), so close directly rather than through `queue.sync`.
        database.close()
    }

    var label: String { database.label }

    /// Whether the current thread runs an access of this connection.
    var isCurrentQueue: Bool {
        DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self)
    }

    /// Runs `block` on the connection, blocking the calling thread until it ends.
    ///
    /// - Precondition: the current thread does not run an access of this
    ///   connection already (that would deadlock).
    func sync<T>(_ block: (Database) throws -> T) throws -> T {
        if isCurrentQueue {
            // fatalError rather than precondition: the message shows in release builds too.
            fatalError(
                "A database access was started from inside another access of the same connection "
                    + "(\(database.label)): accesses are not reentrant. Use the Database you were given instead.")
        }
        return try queue.sync {
            try owner.runAccess {
                try database.withAccess { try block(database) }
            }
        }
    }

    /// Runs `block` on the connection's queue and calls `completion` with its
    /// result on that queue, without blocking the caller.
    ///
    /// `completion` runs right after the access, before any other access of
    /// the connection, and needs no thread of Swift concurrency's pool: a
    /// caller that gives the connection back there lets other accesses
    /// proceed even when every cooperative thread is blocked.
    func asyncAccess<T>(
        _ block: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        queue.async {
            let result = Result {
                try self.owner.runAccess {
                    try self.database.withAccess { try block(self.database) }
                }
            }
            completion(result)
        }
    }

    /// Runs `block` on the connection without blocking the caller: the task
    /// is suspended until the connection's queue has run it.
    func async<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            asyncAccess(block) { continuation.resume(with: $0) }
        }
    }

    /// Closes the connection, waiting for the access in progress to end.
    /// Later accesses throw a `DatabaseError` (`SQLITE_MISUSE`).
    ///
    /// - Precondition: Not called from inside an access of this connection.
    func close() {
        if isCurrentQueue {
            fatalError(
                "close() was called from inside an access of the same connection (\(database.label)): "
                    + "close the database after the access returns.")
        }
        queue.sync { database.close() }
    }

    /// Closes the connection after the accesses already scheduled, without
    /// waiting: usable on any thread, the connection's queue included.
    func closeAfterPendingAccesses() {
        queue.async { self.database.close() }
    }
}
