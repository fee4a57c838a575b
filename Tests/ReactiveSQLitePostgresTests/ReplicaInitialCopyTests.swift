#if PostgreSQL
import Foundation
import ReactiveSQLite
@testable import ReactiveSQLitePostgres
import ReactiveSQLiteReplication
import Testing

/// The initial copy streams: it reads the tables in batches from one
/// PostgreSQL snapshot and writes them to the replica as they come, in
/// one SQLite transaction, so that its memory does not grow with the
/// tables. (That the copy is exact while writers run is
/// `PostgresReplicationTests.randomTransactionsReachTwoReplicasWhole`.)
@Suite(.serialized, .enabled(if: PostgresTestCluster.isAvailable), .timeLimit(.minutes(10)))
struct ReplicaInitialCopyTests {
    /// A table of 20 000 rows, beside a small one and an empty one: the
    /// replicator never holds more than two batches of rows (one written
    /// to SQLite while the next is read), and the replica equals
    /// PostgreSQL.
    @Test func theCopyHoldsABoundedNumberOfRowsWhateverTheTableSize() async throws {
        // 20 000 rows, not more: each costs the parallel debug run (two
        // cores) CPU time that starved other suites' time limits.
        try await TestReplica.withReplica(slot: "streamed", tables: ["big", "small", "empty"], schema: [
            "CREATE TABLE big (id integer PRIMARY KEY, v text)",
            "INSERT INTO big SELECT i, md5(i::text) FROM generate_series(1, 20000) i",
            "CREATE TABLE small (id integer PRIMARY KEY)",
            "INSERT INTO small SELECT generate_series(1, 3)",
            "CREATE TABLE empty (id integer PRIMARY KEY)",
        ]) { replica, connection in
            let peak = replica.replicator.copyMeter.peak.rows
            #expect(peak > 0 && peak <= 2 * PostgresReplicator.copyBatchRows, "\(peak) rows held at once")
            for table in ["big", "small", "empty"] {
                try await ReplicationAdversarialTests.expectEqual(replica, connection, table)
            }
        }
    }

    /// A table of 64 rows of 1 MiB each: the copy reads fewer rows per
    /// batch, and never holds more than two batches of about
    /// `copyBatchBytes`, not the table's 64 MiB.
    @Test func theCopyOfWideRowsHoldsABoundedNumberOfBytes() async throws {
        let rowBytes = 1 << 20
        try await TestReplica.withReplica(slot: "wide", tables: ["wide"], schema: [
            "CREATE TABLE wide (id integer PRIMARY KEY, body text)",
            "INSERT INTO wide SELECT i, repeat(md5(i::text), \(rowBytes / 32)) FROM generate_series(1, 64) i",
        ]) { replica, connection in
            let peak = replica.replicator.copyMeter.peak
            #expect(
                peak.bytes > 0 && peak.bytes <= 2 * (PostgresReplicator.copyBatchBytes + rowBytes),
                "\(peak.bytes) bytes (\(peak.rows) rows) held at once")
            let lengths = try await replica.pool.read { db in
                try Int.fetchAll(db, sql: "SELECT length(body) FROM wide ORDER BY id")
            }
            #expect(lengths == Array(repeating: rowBytes, count: 64))
        }
    }

    /// The replicator's backend terminated three times in the middle of
    /// the copy (while it fetches a batch, the replica's transaction
    /// open): each time the replica's transaction is rolled back, the
    /// replicator connects again and copies again, and the replica ends
    /// equal to PostgreSQL.
    @Test func aCopyInterruptedByALostConnectionStartsAgain() async throws {
        try await ReplicationAdversarialTests.withDatabase([
            "CREATE TABLE big (id integer PRIMARY KEY, v text)",
            "INSERT INTO big SELECT i, md5(i::text) FROM generate_series(1, 50000) i",
        ]) { url, connection in
            let replica = try TestReplica(url: url, slot: "interrupted", tables: ["big"])
            var terminated = 0
            let deadline = ContinuousClock.now + .seconds(60)
            while terminated < 3, ContinuousClock.now < deadline {
                let rows = try await connection.texts("""
                    SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
                    WHERE application_name = 'reactivesqlite-replica:interrupted' AND query LIKE 'FETCH%'
                    """)
                terminated += rows.count
                try await Task.sleep(for: .milliseconds(rows.isEmpty ? 2 : 300))
            }
            #expect(terminated == 3)
            try await connection.run("INSERT INTO big VALUES (0, 'after')")
            try await replica.catchUp(with: connection)
            try await ReplicationAdversarialTests.expectEqual(replica, connection, "big")
        }
    }

    /// The size of the next batch follows the size of the rows read: up
    /// to `copyBatchRows` small rows, fewer wide ones, never more than
    /// twice the batch before, never none.
    @Test func batchesGrowFromOneRowUpToTheirLimits() {
        #expect(PostgresReplicator.nextBatchRows(after: 1, bytes: 40) == 2)
        #expect(PostgresReplicator.nextBatchRows(after: 512, bytes: 512 * 40) == PostgresReplicator.copyBatchRows)
        #expect(PostgresReplicator.nextBatchRows(after: 1_000, bytes: 1_000 * 40) == PostgresReplicator.copyBatchRows)
        #expect(PostgresReplicator.nextBatchRows(after: 8, bytes: 8 << 20) == PostgresReplicator.copyBatchBytes >> 20)
        #expect(PostgresReplicator.nextBatchRows(after: 1, bytes: 100 << 20) == 1)
        #expect(PostgresReplicator.nextBatchRows(after: 3, bytes: 0) == 6)
    }
}
#endif
