#if PostgreSQL
import Foundation
import PostgresNIO
import ReactiveSQLite
@testable import ReactiveSQLitePostgres
import ReactiveSQLiteReplication
import Testing

/// A partitioned table published through its root
/// (`publish_via_partition_root = true`) is one table of the replica. What
/// empties or removes one partition alone (`TRUNCATE`, `DROP`, `DETACH`)
/// is not in pgoutput's stream: the replicator finds it in PostgreSQL's
/// catalog (the partition has new storage, or is gone), and stops with an
/// error that says to resync, rather than keep rows that PostgreSQL no
/// longer has. What the stream does send (a `TRUNCATE` of the table,
/// rows that move between partitions, new partitions) goes on.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isAvailable), .timeLimit(.minutes(10)))
struct ReplicaPartitionTests {
    static let schema = [
        "CREATE TABLE measure (id integer, k integer, v text, PRIMARY KEY (id, k)) PARTITION BY RANGE (k)",
        "CREATE TABLE measure_low PARTITION OF measure FOR VALUES FROM (0) TO (10)",
        "CREATE TABLE measure_high PARTITION OF measure FOR VALUES FROM (10) TO (20)",
        "INSERT INTO measure VALUES (1, 1, 'a'), (2, 15, 'b'), (3, 5, 'c')",
        "CREATE PUBLICATION viaroot FOR TABLE measure WITH (publish_via_partition_root = true)",
    ]

    /// The text of an error, for a failure's message.
    static func message(_ error: (any Error)?) -> String {
        (error as? ReplicationError)?.message ?? "not a ReplicationError: \(String(describing: error))"
    }

    /// What PostgreSQL 15 sends: a `TRUNCATE` of one partition, nothing at
    /// all (not even its transaction's Begin and Commit); a `TRUNCATE` of
    /// the table, one Truncate message that names the table only.
    @Test func pgoutputSendsNothingForATruncateOfOnePartition() async throws {
        try await ReplicationAdversarialTests.withDatabase(Self.schema) { _, connection in
            try await connection.run("SELECT pg_create_logical_replication_slot('spec_partition', 'pgoutput')")
            var xids: [String] = []
            for table in ["measure_low", "measure"] {
                try await connection.run("BEGIN")
                try await connection.run("TRUNCATE \(table)")
                xids.append(try await connection.texts("SELECT txid_current()::text")[0][0] ?? "")
                try await connection.run("COMMIT")
            }
            let measure = try await connection.texts("SELECT 'measure'::regclass::oid::text")[0][0]
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT xid::text, data FROM pg_logical_slot_peek_binary_changes(
                    'spec_partition', NULL, NULL, 'proto_version', '1', 'publication_names', 'viaroot')
                """), logger: PostgresTestCluster.logger)
            var messages: [(xid: String, message: PgOutputMessage)] = []
            for try await row in rows {
                let (xid, data) = try row.decode((String, ByteBuffer).self)
                messages.append((xid, try PgOutputMessage(decoding: data.readableBytesView)))
            }
            let (partitionXID, rootXID) = (xids[0], xids[1])
            #expect(!messages.contains { $0.xid == partitionXID }, "\(messages)")
            let truncates = messages.compactMap { item -> [UInt32]? in
                if case .truncate(_, let ids) = item.message { return ids } else { return nil }
            }
            let measureOID = try #require(measure.flatMap { UInt32($0) })
            #expect(truncates == [[measureOID]])
            #expect(messages.allSatisfy { $0.xid == rootXID })
        }
    }

    /// A `TRUNCATE` of one partition stops the replica with an error that
    /// names the partition and says to resync; the resync copies the table
    /// again, and the stream goes on.
    @Test func aTruncateOfOnePartitionStopsTheReplicaUntilAResync() async throws {
        try await ReplicationAdversarialTests.withDatabase(Self.schema) { url, connection in
            let path = TestReplica.temporaryPath()
            let replica = try TestReplica(url: url, slot: "partition_truncated", publication: "viaroot", path: path)
            defer { replica.remove() }
            try await replica.catchUp(with: connection)
            try await connection.run("TRUNCATE measure_low")
            try await connection.run("INSERT INTO measure VALUES (4, 16, 'd')")
            let message = Self.message(await replica.error())
            #expect(
                message.contains("public.measure_low") && message.contains("TRUNCATE")
                    && message.contains("--resync"),
                "\(message)")
            await replica.stop()
            let resynced = try TestReplica(
                url: url, slot: "partition_truncated", publication: "viaroot", resync: true, path: path)
            // A write after the stop: the stopped replica had reached the
            // others (it stops once the stream passed the TRUNCATE).
            try await connection.run("INSERT INTO measure VALUES (5, 6, 'e')")
            try await resynced.catchUp(with: connection)
            try await ReplicationAdversarialTests.expectEqual(resynced, connection, "measure")
            try await connection.run("INSERT INTO measure VALUES (6, 7, 'f')")
            try await resynced.catchUp(with: connection)
            try await ReplicationAdversarialTests.expectEqual(resynced, connection, "measure")
        }
    }

    /// A partition dropped or detached takes its rows out of the table,
    /// and the stream says nothing of it: the replica stops. A partition
    /// rewritten (`VACUUM FULL`) stops it too: the catalog shows new
    /// storage, as after a `TRUNCATE`, and does not tell them apart.
    @Test(arguments: [
        ("partition_dropped", "DROP TABLE measure_high"),
        ("partition_detached", "ALTER TABLE measure DETACH PARTITION measure_high"),
        ("partition_rewritten", "VACUUM FULL measure_high"),
    ])
    func aPartitionDroppedDetachedOrRewrittenStopsTheReplica(slot: String, statement: String) async throws {
        try await TestReplica.withReplica(slot: slot, publication: "viaroot", schema: Self.schema) { replica, connection in
            try await connection.run(statement)
            let message = Self.message(await replica.error())
            #expect(message.contains("public.measure_high") && message.contains("--resync"), "\(message)")
        }
    }

    /// What the stream sends goes on: a `TRUNCATE` of the table (alone,
    /// with other changes, committed asynchronously), rows that move
    /// between partitions, a partition created and filled, a `VACUUM`.
    @Test func aTruncateOfTheTableAndNewPartitionsKeepTheReplicaGoing() async throws {
        try await TestReplica.withReplica(slot: "partition_kept", publication: "viaroot", schema: Self.schema) { replica, connection in
            let steps: [[String]] = [
                ["TRUNCATE measure"],
                ["INSERT INTO measure VALUES (1, 1, 'a'), (2, 15, 'b')"],
                ["BEGIN", "UPDATE measure SET k = 12 WHERE id = 1", "TRUNCATE measure",
                 "INSERT INTO measure VALUES (3, 3, 'c')", "COMMIT"],
                ["CREATE TABLE measure_top PARTITION OF measure FOR VALUES FROM (20) TO (30)"],
                ["INSERT INTO measure VALUES (4, 25, 'd'), (5, 2, 'e')"],
                ["UPDATE measure SET k = 26 WHERE id = 5"],
                ["VACUUM measure"],
                ["SET synchronous_commit = off", "TRUNCATE measure", "SET synchronous_commit = on"],
                ["INSERT INTO measure VALUES (6, 27, 'f')"],
            ]
            for step in steps {
                for statement in step { try await connection.run(statement) }
                try await replica.catchUp(with: connection)
                try await ReplicationAdversarialTests.expectEqual(replica, connection, "measure")
            }
        }
    }
}

/// The check of partitions against the catalog
/// (`PostgresSourceState.checkPartitions`), on made-up catalogs: what it
/// takes, what it waits for, what stops the replica.
@Suite struct ReplicaPartitionCheckTests {
    /// A table `measure` (OID 100) with partitions 101 and 102.
    static func state(truncatedBy: UInt32? = nil) -> PostgresSourceState {
        var table = PublishedTable(
            schema: "public", name: "measure", oid: 100,
            columns: [.init(name: "id", typeOID: 23, typeModifier: -1, number: 1)], primaryKey: ["id"])
        table.partitions = [
            .init(oid: 101, name: "public.low", relfilenode: 1_101), .init(oid: 102, name: "public.high", relfilenode: 1_102),
        ]
        table.truncatedBy = truncatedBy
        return PostgresSourceState(snapshot: nil, tables: [table])
    }

    /// The catalog: the root, then leaves as (OID, relfilenode, xmin).
    static func catalog(_ leaves: [(UInt32, UInt32, UInt32)]) -> [CatalogPartition] {
        [CatalogPartition(root: 100, oid: 100, name: "public.measure", isLeaf: false, relfilenode: 0, xmin: 1)]
            + leaves.map { CatalogPartition(
                root: 100, oid: $0.0, name: $0.0 == 101 ? "public.low" : "public.other", isLeaf: true,
                relfilenode: $0.1, xmin: $0.2) }
    }

    static func position(_ value: UInt64) -> ReplicationPosition { ReplicationPosition(value) }

    @Test func unchangedPartitionsAndNewOnesGoOn() throws {
        var state = Self.state()
        var unexplained: [UInt32: UnexplainedPartition] = [:]
        #expect(try !state.checkPartitions(
            Self.catalog([(101, 1_101, 5), (102, 1_102, 6)]), seenBefore: Self.position(10),
            readThrough: Self.position(20), unexplained: &unexplained))
        #expect(try state.checkPartitions(
            Self.catalog([(101, 1_101, 5), (102, 1_102, 6), (103, 1_103, 7)]), seenBefore: Self.position(10),
            readThrough: Self.position(20), unexplained: &unexplained))
        #expect(state.tables[0].partitions?.map(\.oid) == [101, 102, 103])
    }

    @Test func newStorageFromTheLastTruncateOfTheTableIsTaken() throws {
        var state = Self.state(truncatedBy: 42)
        var unexplained: [UInt32: UnexplainedPartition] = [:]
        #expect(try state.checkPartitions(
            Self.catalog([(101, 2_101, 42), (102, 2_102, 42)]), seenBefore: Self.position(10),
            readThrough: Self.position(20), unexplained: &unexplained))
        #expect(state.tables[0].partitions?.map(\.relfilenode) == [2_101, 2_102])
        // A later change of the row of pg_class that keeps the storage.
        #expect(try !state.checkPartitions(
            Self.catalog([(101, 2_101, 50), (102, 2_102, 42)]), seenBefore: Self.position(30),
            readThrough: Self.position(40), unexplained: &unexplained))
    }

    /// New storage that no TRUNCATE of the table explains waits until the
    /// stream was read past the position seen with it first (the TRUNCATE
    /// may still come), then stops, though each later check sees a later
    /// position (a server under load flushes behind what it writes).
    @Test func unexplainedStorageWaitsForTheStreamThenStops() throws {
        var state = Self.state(truncatedBy: 42)
        var unexplained: [UInt32: UnexplainedPartition] = [:]
        let catalog = Self.catalog([(101, 3_101, 77), (102, 1_102, 6)])
        #expect(try !state.checkPartitions(
            catalog, seenBefore: Self.position(100), readThrough: Self.position(90), unexplained: &unexplained))
        #expect(unexplained[101] == UnexplainedPartition(relfilenode: 3_101, committedBefore: Self.position(100)))
        #expect(throws: ReplicationError.self) {
            try state.checkPartitions(
                catalog, seenBefore: Self.position(200), readThrough: Self.position(150), unexplained: &unexplained)
        }
        // The TRUNCATE of the table came in the stream in time.
        var explained = Self.state(truncatedBy: 42)
        unexplained = [:]
        _ = try explained.checkPartitions(
            catalog, seenBefore: Self.position(100), readThrough: Self.position(90), unexplained: &unexplained)
        explained.tables[0].truncatedBy = 77
        #expect(try explained.checkPartitions(
            catalog, seenBefore: Self.position(200), readThrough: Self.position(150), unexplained: &unexplained))
        #expect(unexplained.isEmpty)
    }

    @Test func aPartitionGoneStops() {
        var state = Self.state()
        var unexplained: [UInt32: UnexplainedPartition] = [:]
        #expect {
            try state.checkPartitions(
                Self.catalog([(101, 1_101, 5)]), seenBefore: Self.position(10), readThrough: Self.position(20),
                unexplained: &unexplained)
        } throws: { error in
            (error as? ReplicationError)?.message.contains("public.high was dropped or detached") == true
        }
    }

    /// A replica of an earlier version does not list the partitions: they
    /// are taken as they are; a table dropped (no root in the catalog) is
    /// left alone.
    @Test func partitionsUnknownAreTakenAndDroppedTablesLeftAlone() throws {
        var state = Self.state()
        state.tables[0].partitions = nil
        var unexplained: [UInt32: UnexplainedPartition] = [:]
        #expect(try state.checkPartitions(
            Self.catalog([(101, 9_101, 5)]), seenBefore: Self.position(10), readThrough: Self.position(20),
            unexplained: &unexplained))
        #expect(state.tables[0].partitions?.map(\.relfilenode) == [9_101])
        #expect(try !state.checkPartitions(
            [], seenBefore: Self.position(10), readThrough: Self.position(20), unexplained: &unexplained))
    }
}
#endif
