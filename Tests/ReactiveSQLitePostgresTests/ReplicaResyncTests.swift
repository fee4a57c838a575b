#if PostgreSQL
import Foundation
import PostgresNIO
import ReactiveSQLite
import ReactiveSQLitePostgres
import ReactiveSQLiteReplication
import Testing

/// A resync copies the tables again under a replica that apps read: the
/// position it stores never goes back for one source, and a waiter of
/// `ReplicaApplier.waitUntilReplicated` returns only once the replica
/// holds every transaction up to its position.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isAvailable), .timeLimit(.minutes(10)))
struct ReplicaResyncTests {
    /// Runs `body` with a database of one table, `item`, and the file of
    /// its replica on `slot`, which a replicator copied, caught up and
    /// stopped; the replica's file is removed after `body`.
    static func withStoppedReplica(
        slot: String, _ body: (_ url: String, _ connection: PostgresConnection, _ path: String) async throws -> Void
    ) async throws {
        try await ReplicationAdversarialTests.withDatabase([
            "CREATE TABLE item (id integer PRIMARY KEY, v integer)",
            "INSERT INTO item VALUES (1, 0)",
        ]) { url, connection in
            let replica = try TestReplica(url: url, slot: slot, tables: ["item"], path: TestReplica.temporaryPath())
            defer { replica.remove() }
            try await replica.catchUp(with: connection)
            await replica.stop()
            try await body(url, connection, replica.path)
        }
    }

    /// Writes to the replica's file at `path`, as someone else than the
    /// replicator.
    static func write(_ path: String, _ sql: String, arguments: StatementArguments = StatementArguments()) async throws {
        let file = try DatabaseQueue(path: path)
        try await file.write { try $0.execute(sql: sql, arguments: arguments) }
    }

    /// PostgreSQL's position now (after the commits of `connection`).
    static func currentPosition(_ connection: PostgresConnection) async throws -> ReplicationPosition {
        try #require(ReplicationPosition(lsn: try await connection.texts("SELECT pg_current_wal_lsn()::text")[0][0]!))
    }

    /// Bug: a replicator stopped by a change its replica does not match
    /// (the usual reason to resync) has stored the transactions before it
    /// in the same poll, but not moved its slot yet; a resync then stored
    /// the slot's position, before the one the replica had: a reader saw
    /// the replica's position go back, and a waiter of a position in
    /// between, which had returned, waited again for the stream. Correct:
    /// the copy, which shows every transaction the replica held, stores
    /// at least the replica's position; the stream's transactions up to
    /// it are skipped, those after it applied once; a waiter of a position
    /// after it returns once the replica holds its transaction.
    @Test func aResyncNeverMovesTheReplicaPositionBack() async throws {
        try await Self.withStoppedReplica(slot: "backwards") { url, connection, path in
            // Two transactions that the next run reads in one poll: the
            // first applies, the second updates a row that the replica
            // lost (written by someone else), and stops the replicator.
            let before = try await Self.currentPosition(connection)
            try await connection.run("INSERT INTO item VALUES (2, 0)")
            try await connection.run("UPDATE item SET v = 1 WHERE id = 1")
            let updated = try await Self.currentPosition(connection)
            try await Self.write(path, "DELETE FROM item WHERE id = 1")
            var replica = try TestReplica(url: url, slot: "backwards", path: path)
            let error = await replica.error()
            #expect("\(String(describing: error))".contains("the updated row is not in the replica"))
            let stopped = try await replica.positions(with: connection)
            // What makes a resync go back: the replica holds the insertion,
            // the slot stands before it.
            let ids = try await replica.pool.read { try Int.fetchAll($0, sql: "SELECT id FROM item ORDER BY id") }
            #expect(ids == [2])
            #expect(stopped.replica > before && stopped.replica < updated, "\(stopped.replica)")
            #expect(stopped.slot < stopped.replica, "slot \(stopped.slot), replica \(stopped.replica)")
            // A waiter of the update, from before the resync to its end, in
            // a reader of its own, as an app's.
            var configuration = Configuration()
            configuration.observesExternalChanges = true
            let reader = try DatabasePool(path: path, configuration: configuration)
            let source = replica.source
            let waiter = Task {
                try await ReplicaApplier.waitUntilReplicated(updated, source: source, in: reader)
                return try await reader.read { try Int.fetchOne($0, sql: "SELECT v FROM item WHERE id = 1") }
            }
            replica = try TestReplica(url: url, slot: "backwards", resync: true, path: path)
            try await replica.catchUp(with: connection)
            // It saw the update: the replica held it when it returned.
            #expect(try await waiter.value == 1)
            try await ReplicationAdversarialTests.expectEqual(replica, connection, "item")
            let stored = replica.storedPositions.value
            #expect(!stored.isEmpty)
            #expect(
                stored.allSatisfy { ($0 ?? ReplicationPosition(0)) >= stopped.replica },
                "the replica stood at \(stopped.replica), then stored \(stored.map { $0?.description ?? "nil" })")
            #expect(zip(stored, stored.dropFirst()).allSatisfy { ($0 ?? ReplicationPosition(0)) <= ($1 ?? ReplicationPosition(0)) })
            // The stream goes on from there, each transaction once.
            try await connection.run("UPDATE item SET v = v + 1")
            try await connection.run("INSERT INTO item VALUES (3, 3)")
            try await replica.catchUp(with: connection)
            try await ReplicationAdversarialTests.expectEqual(replica, connection, "item")
        }
    }

    /// Bug: a replica whose position is after everything the source wrote
    /// (a replica of another server, or of a server restored to an earlier
    /// point) resumed from there, and skipped every transaction up to its
    /// position as applied; resynced, it kept that position until the
    /// copy's commit, and a waiter of a position of the source returned
    /// at once, with the rows of the other history, however long the
    /// copy took. Correct: without a resync, stop and say so; with one,
    /// forget the position before the copy, so that a waiter waits for the
    /// copy and the stream, and store the source's own position with the
    /// copy.
    @Test func aReplicaOfAnotherHistoryStopsAndAResyncForgetsItsPosition() async throws {
        try await Self.withStoppedReplica(slot: "elsewhere") { url, connection, path in
            // A position far beyond this server's WAL.
            let foreign = ReplicationPosition(1 << 60)
            try await Self.write(
                path, "UPDATE _reactivesqlite_replication SET position = ?", arguments: [Int64(bitPattern: foreign.value)])
            try await connection.run("INSERT INTO item VALUES (2, 0)")
            var replica = try TestReplica(url: url, slot: "elsewhere", path: path)
            let error = await replica.error()
            #expect(
                (error as? ReplicationError)?.message.contains("after the end of PostgreSQL's WAL") == true
                    && (error as? ReplicationError)?.message.contains("--resync") == true,
                "\(String(describing: error))")
            // A waiter that comes before the replicator looks at the
            // replica returns at once: nothing has told the replica yet
            // that its position is of another history. The resync's first
            // commit forgets it, before the copy stores the source's own:
            // from then on, a waiter of this server's positions waits for
            // the copy.
            replica = try TestReplica(url: url, slot: "elsewhere", resync: true, path: path)
            let deadline = ContinuousClock.now + .seconds(60)
            while replica.storedPositions.value.count < 2, replica.ending.value == nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let stored = replica.storedPositions.value
            #expect(stored.count >= 2 && stored[0] == nil && stored[1] != nil, "\(stored)")
            try await replica.catchUp(with: connection)
            try await ReplicationAdversarialTests.expectEqual(replica, connection, "item")
            let position = try #require(try await ReplicaApplier(writer: replica.pool, source: replica.source).position())
            #expect(position < foreign)
            try await connection.run("INSERT INTO item VALUES (3, 0)")
            try await connection.run("UPDATE item SET v = 5 WHERE id = 1")
            try await replica.catchUp(with: connection)
            try await ReplicationAdversarialTests.expectEqual(replica, connection, "item")
        }
    }
}
#endif
