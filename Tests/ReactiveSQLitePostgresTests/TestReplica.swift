#if PostgreSQL
import DatabaseRegions
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
    /// Every position the replicator stored, in the order of its SQLite
    /// commits (the replica's first copy included): what a reader of the
    /// replica could see, one commit after the other.
    let storedPositions = Locked<[ReplicationPosition?]>([])
    /// The observation that records `storedPositions`.
    private let positionsObservation: AnyDatabaseCancellable
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
        self.path = path ?? Self.temporaryPath()
        var configuration = Configuration()
        configuration.observesExternalChanges = false
        pool = try DatabasePool(path: self.path, configuration: configuration)
        source = "postgresql:\(slot)"
        var replication = try PostgresReplicationConfiguration(
            url: url, slot: slot, publication: publication, tables: tables)
        replication.resync = resync
        let applier = try ReplicaApplier(writer: pool, source: source)
        // Started before the replicator, which then cannot commit unseen:
        // called on the writer's queue after each commit that writes the
        // table of positions.
        let storedPositions = self.storedPositions
        let source = self.source
        positionsObservation = DatabaseRegionObservation(tracking: DatabaseRegion(table: "_reactivesqlite_replication"))
            .start(in: pool, onError: { Issue.record($0) }) { db in
                do {
                    let position = try Int64.fetchOne(
                        db, sql: "SELECT position FROM _reactivesqlite_replication WHERE source = ?", arguments: [source])
                    storedPositions.withLock { $0.append(position.map { ReplicationPosition(UInt64(bitPattern: $0)) }) }
                } catch {
                    Issue.record(error)
                }
            }
        let replicator = PostgresReplicator(
            configuration: replication, applier: applier, logger: Logger(label: "replica:\(slot)"))
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

    /// The replica's stored position, and its slot's `confirmed_flush_lsn`
    /// as `connection` reads it.
    func positions(with connection: PostgresConnection) async throws
        -> (replica: ReplicationPosition, slot: ReplicationPosition)
    {
        let stored = try #require(try await ReplicaApplier(writer: pool, source: source).position())
        var bindings = PostgresBindings()
        bindings.append(replicator.configuration.slot)
        var slot: String?
        for try await row in try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
                binds: bindings),
            logger: PostgresTestCluster.logger)
        {
            slot = try row.decode(String?.self)
        }
        return (stored, try #require(slot.flatMap(ReplicationPosition.init(lsn:))))
    }

    /// A new replica file's path in the temporary directory, for replicas
    /// started one after the other on it (`init`'s `path`); the test
    /// removes it with `remove()`.
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("replica-\(UUID().uuidString).db").path
    }

    /// Runs `body` with a fresh database holding `schema`
    /// (`ReplicationAdversarialTests.withDatabase`) and a replica of it
    /// that holds its first copy: the setup of most replication tests.
    ///
    /// - Parameters:
    ///   - slot: The replica's slot, which names its publication too.
    ///   - tables: The tables of the publication to create, when the
    ///     schema does not create it.
    ///   - publication: The publication, when not the slot's name.
    ///   - schema: The statements that make the database.
    ///   - options: What `CREATE DATABASE` adds after the name.
    ///   - body: Given the replica, caught up, and a connection to the
    ///     database.
    static func withReplica(
        slot: String, tables: [String] = [], publication: String? = nil, schema: [String], options: String = "",
        _ body: (TestReplica, PostgresConnection) async throws -> Void
    ) async throws {
        try await ReplicationAdversarialTests.withDatabase(schema, options: options) { url, connection in
            let replica = try TestReplica(url: url, slot: slot, tables: tables, publication: publication)
            try await replica.catchUp(with: connection)
            try await body(replica, connection)
        }
    }

    /// Removes the replica's files (once no other pool uses them).
    func remove() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    deinit {
        task.cancel()
        positionsObservation.cancel()
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
