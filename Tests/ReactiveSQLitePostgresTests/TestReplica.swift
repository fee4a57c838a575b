#if PostgreSQL
import Foundation
import Logging
import PostgresNIO
import ReactiveSQLite
import ReactiveSQLitePostgres
import ReactiveSQLiteReplication
import TestSupport
import Testing

/// A replica of a test database, its `PostgresReplicator` running in a
/// task: the one helper of every PostgreSQL replication suite.
///
/// The replica's file is a new one in the temporary directory, removed
/// when the helper goes; or, given `path`, that file, which several
/// replicas in turn can use (a replicator started again on its replica),
/// and which the test removes with `remove()`.
final class TestReplica: Sendable {
    /// The replica's file.
    let path: String
    /// The replica, as the app reads it.
    let pool: DatabasePool
    /// The replicator's run; cancelled when the helper goes.
    let task: Task<Void, any Error>
    /// The replica's source name, which keys its position.
    let source: String
    /// The replicator.
    let replicator: PostgresReplicator
    /// How the replicator ended, once it did.
    let ending = Locked<Result<Void, any Error>?>(nil)
    /// Whether the helper chose the file, and removes it when it goes.
    private let ownsFile: Bool

    /// Starts a replicator of the database at `url` into a replica.
    ///
    /// - Parameters:
    ///   - tables: The tables of the publication to create when it does
    ///     not exist (`PostgresReplicationConfiguration.tables`).
    ///   - publication: The publication, when not the slot's name.
    ///   - resync: Whether the tables are copied again.
    ///   - path: The replica's file; nil for a new one, removed when the
    ///     helper goes.
    init(
        url: String, slot: String, tables: [String] = [], publication: String? = nil, resync: Bool = false,
        path: String? = nil
    ) throws {
        ownsFile = path == nil
        self.path = path ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("replica-\(UUID().uuidString).db").path
        var configuration = Configuration()
        configuration.observesExternalChanges = false
        pool = try DatabasePool(path: self.path, configuration: configuration)
        source = "postgresql:\(slot)"
        var replication = try PostgresReplicationConfiguration(
            url: url, slot: slot, publication: publication, tables: tables)
        replication.resync = resync
        let replicator = PostgresReplicator(
            configuration: replication, applier: try ReplicaApplier(writer: pool, source: source),
            logger: Logger(label: "replica:\(slot)"))
        self.replicator = replicator
        let ending = self.ending
        task = Task {
            do {
                try await replicator.run()
                ending.value = .success(())
            } catch {
                ending.value = .failure(error)
                throw error
            }
        }
    }

    /// Waits until the replica holds every transaction PostgreSQL
    /// committed so far (read-your-writes); throws the replicator's error
    /// if it stopped.
    func catchUp(with connection: PostgresConnection) async throws {
        let ending = self.ending
        try await Self.catchUp(pool, source: source, with: connection) {
            switch ending.value {
            case .failure(let error)?: throw error
            case .success?: throw ReplicationError("the replicator stopped")
            case nil: break
            }
        }
    }

    /// Stops the replicator and waits for its end.
    func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// The error that stopped the replicator, waiting up to 60 s (an
    /// issue when it did not stop).
    func error() async -> (any Error)? {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            switch ending.value {
            case .failure(let error)?: return error
            case .success?: return nil
            case nil: try? await Task.sleep(for: .milliseconds(20))
            }
        }
        Issue.record("the replicator did not stop in 60 s")
        return nil
    }

    /// Removes the replica's files (once no other pool uses them).
    func remove() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    deinit {
        task.cancel()
        if ownsFile { remove() }
    }

    /// Waits until the replica in `reader` holds every transaction
    /// PostgreSQL committed so far (read-your-writes). `checkReplicator`
    /// throws when the replicator stopped, to say why rather than wait; a
    /// replica behind for a minute fails too.
    static func catchUp(
        _ reader: some DatabaseReader, source: String, with connection: PostgresConnection,
        checkReplicator: @escaping @Sendable () throws -> Void
    ) async throws {
        let lsn = try await connection.texts("SELECT pg_current_wal_lsn()::text")[0][0]!
        let position = try #require(ReplicationPosition(lsn: lsn))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await ReplicaApplier.waitUntilReplicated(position, source: source, in: reader) }
            group.addTask {
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    try checkReplicator()
                    try await Task.sleep(for: .milliseconds(20))
                }
                throw ReplicationError("the replica did not reach \(position) in 60 s")
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
#endif
