import Dispatch
import Foundation

/// One connection and the serial dispatch queue that runs every access to it.
///
/// `@unchecked Sendable`: the `Database` it owns is only used inside blocks
/// run on `queue` (or, for the rare synchronous accesses that run on the
/// caller's thread, with the queue blocked by `queue.sync`), so no two
/// threads ever touch it at once.
final class SerializedDatabase: @unchecked Sendable {
    let database: Database
    let queue: DispatchQueue

    /// Marks the queue, so that a reentrant access is detected before it deadlocks.
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    init(path: String, configuration: Configuration, role: String, readonly: Bool) throws {
        database = try Database(path: path, configuration: configuration, role: role, readonly: readonly)
        queue = DispatchQueue(label: database.label)
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
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
        precondition(
            !isCurrentQueue,
            "A database access was started from inside another access of the same connection "
                + "(\(database.label)): accesses are not reentrant. Use the Database you were given instead.")
        return try queue.sync {
            try database.withAccess { try block(database) }
        }
    }

    /// Runs `block` on the connection without blocking the caller: the task
    /// is suspended until the connection's queue has run it.
    func async<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        precondition(
            !isCurrentQueue,
            "A database access was started from inside another access of the same connection "
                + "(\(database.label)): accesses are not reentrant.")
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.database.withAccess { try block(self.database) } })
            }
        }
    }

    /// Closes the connection, waiting for the access in progress to end.
    /// Later accesses throw a `DatabaseError` (`SQLITE_MISUSE`).
    func close() {
        precondition(
            !isCurrentQueue,
            "close() was called from inside an access of the same connection (\(database.label)): "
                + "close the database after the access returns.")
        queue.sync { database.close() }
    }
}
