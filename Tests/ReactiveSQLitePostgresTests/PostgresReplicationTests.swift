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

/// Replication of PostgreSQL tables into SQLite replicas, against a real
/// PostgreSQL 15 (see `PostgresTestCluster`): the initial copy while
/// writers run, random transactions into two replicas, read-your-writes,
/// reconnection, and the cases that stop the replica or copy it again.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isAvailable), .timeLimit(.minutes(10)))
struct PostgresReplicationTests {
    static let schema = [
        """
        CREATE TABLE player (
            id integer PRIMARY KEY, name text NOT NULL, score integer NOT NULL,
            flag boolean, price numeric, photo bytea, seen timestamptz)
        """,
        "CREATE TABLE team (id integer PRIMARY KEY, size integer NOT NULL)",
        "INSERT INTO team SELECT i, 100 FROM generate_series(1, 10) i",
    ]

    /// The tables of `schema`, which the replicas publish.
    static let tables = ["player", "team"]

    /// Both tables, every column as text, as PostgreSQL and the replica
    /// must both give them.
    static let postgresState = """
        SELECT 'player', id::text, name, score::text, flag::int::text, price::text, encode(photo, 'hex'), seen::text \
        FROM player UNION ALL SELECT 'team', id::text, size::text, NULL, NULL, NULL, NULL, NULL FROM team
        """

    /// The first row that differs, for a failure's message.
    static func firstDifference(_ lhs: [[String?]], _ rhs: [[String?]]) -> String {
        for (left, right) in zip(lhs, rhs) where left != right { return "\(left) != \(right)" }
        return "\(lhs.count) rows != \(rhs.count) rows"
    }

    /// Rows as both sides compare them: in key order, numerics by value
    /// (the replica keeps `12.50` as the real 12.5).
    static func normalized(_ rows: [[String?]]) -> [[String?]] {
        rows.map { row in
            row.enumerated().map { index, text in index == 5 ? text.map { Double($0).map { "\($0)" } ?? $0 } : text }
        }.sorted { ($0[0]!, Int($0[1]!)!) < ($1[0]!, Int($1[1]!)!) }
    }

    static func replicaState(_ reader: any DatabaseReader) async throws -> [[String?]] {
        try await reader.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT 'player', CAST(id AS TEXT), name, CAST(score AS TEXT), CAST(flag AS TEXT), CAST(price AS TEXT),
                       CASE WHEN photo IS NULL THEN NULL ELSE lower(hex(photo)) END, seen FROM player
                UNION ALL SELECT 'team', CAST(id AS TEXT), CAST(size AS TEXT), NULL, NULL, NULL, NULL, NULL FROM team
                """)
            return normalized(rows.map { row in (0..<row.count).map { index -> String? in
                let value: String? = try? row[index]
                return value
            } })
        }
    }

    /// Runs `body` with a fresh database holding `schema`, and a
    /// connection to it, closed whatever happens (postgres-nio traps on a
    /// connection released open).
    static func withDatabase(_ body: (String, PostgresConnection) async throws -> Void) async throws {
        let (url, connection) = try await PostgresTestCluster.makeDatabase()
        do {
            try await connection.run("SET TimeZone = 'UTC'")
            for sql in schema { try await connection.run(sql) }
            try await body(url, connection)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// One random transaction: inserts, updates of keys and of other
    /// columns, deletes, over both tables, committed or rolled back. Score
    /// moves between a player and a team in the same transaction, so that
    /// `SUM(score) + SUM(size)` never changes: an observer that saw a
    /// transaction half-applied would see another sum.
    static func randomTransaction(_ random: inout SplitMix64, ids: inout Set<Int>, nextID: inout Int) -> [String] {
        var statements = ["BEGIN"]
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let team = Int.random(in: 1...10, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 1:
                let id = nextID
                nextID += 1
                ids.insert(id)
                let price = ["NULL", "12.50", "123456789012345678901234.5678", "-0.001"].randomElement(using: &random)!
                let flag = ["NULL", "true", "false"].randomElement(using: &random)!
                statements.append("""
                    INSERT INTO player VALUES (\(id), 'p\(id) é', 0, \(flag), \(price), \
                    '\\x\(String(format: "%04x", id))'::bytea, '2026-12-06 12:00:00+00'::timestamptz + \(id) * interval '1 s')
                    """)
            case 2 where !ids.isEmpty:
                let id = ids.randomElement(using: &random)!
                let delta = Int.random(in: -5...5, using: &random)
                statements.append("UPDATE player SET score = score + \(delta), name = name || 'x' WHERE id = \(id)")
                statements.append("UPDATE team SET size = size - \(delta) WHERE id = \(team)")
            case 3 where !ids.isEmpty:
                let id = ids.randomElement(using: &random)!
                let newID = nextID
                nextID += 1
                ids.remove(id)
                ids.insert(newID)
                statements.append("UPDATE player SET id = \(newID) WHERE id = \(id)")
            case 4 where !ids.isEmpty:
                let id = ids.randomElement(using: &random)!
                ids.remove(id)
                statements.append("UPDATE team SET size = size + (SELECT score FROM player WHERE id = \(id)) WHERE id = \(team)")
                statements.append("DELETE FROM player WHERE id = \(id)")
            default:
                statements.append("UPDATE team SET size = size WHERE id = \(team)")
            }
        }
        statements.append("COMMIT")
        return statements
    }

    /// Runs one `randomTransaction`, committed or rolled back.
    static func runRandomTransaction(
        rolledBack: Bool, _ random: inout SplitMix64, ids: inout Set<Int>, nextID: inout Int,
        on connection: PostgresConnection
    ) async throws {
        var statements = randomTransaction(&random, ids: &ids, nextID: &nextID)
        if rolledBack { statements[statements.count - 1] = "ROLLBACK" }
        for statement in statements { try await connection.run(statement) }
        if rolledBack {
            // What the rolled-back transaction did to `ids` is undone.
            ids = Set(try await connection.texts("SELECT id::text FROM player").compactMap { $0[0].flatMap(Int.init) })
        }
    }

    /// 2 000 random transactions (a tenth rolled back) into two replicas,
    /// one of them copied while writers run. Both end equal to PostgreSQL,
    /// and an observer of the first never sees a transaction half-applied.
    @Test func randomTransactionsReachTwoReplicasWhole() async throws {
        try await Self.withDatabase { url, connection in
            var random = SplitMix64(seed: 34)
            var ids: Set<Int> = []
            var nextID = 1
            let first = try TestReplica(url: url, slot: "first", tables: Self.tables)
            try await first.catchUp(with: connection)
            let sums = Recorder<Int>()
            let cancellable = ValueObservation.tracking { db in
                try Int.fetchOne(db, sql: "SELECT COALESCE((SELECT SUM(score) FROM player), 0) + (SELECT SUM(size) FROM team)")!
            }.start(in: first.pool, scheduling: .observationQueue) { error in Issue.record(error) } onChange: { sums.append($0) }
            defer { cancellable.cancel() }
            var differences = [Self.observeDifferences(first.pool)]
            defer { differences.forEach { $0.cancellable.cancel() } }
            var second: TestReplica?
            for index in 0..<2_000 {
                try await Self.runRandomTransaction(
                    rolledBack: index % 10 == 9, &random, ids: &ids, nextID: &nextID, on: connection)
                if index == 300 { second = try TestReplica(url: url, slot: "second", tables: Self.tables) }
                if index == 400 {
                    // Copied while 100 transactions ran; observed from here.
                    try await second!.catchUp(with: connection)
                    differences.append(Self.observeDifferences(second!.pool))
                }
            }
            let expected = Self.normalized(try await connection.texts(Self.postgresState))
            #expect(expected.count > 20)
            try await first.catchUp(with: connection)
            try await second!.catchUp(with: connection)
            for replica in [first, second!] {
                let state = try await Self.replicaState(replica.pool)
                #expect(state == expected, "first difference: \(Self.firstDifference(state, expected))")
            }
            // The differences each replica's observer received, applied in
            // turn to its first rows, give the final rows.
            for (index, observed) in differences.enumerated() {
                let final = try await [TestReplica](arrayLiteral: first, second!)[index].pool.read { db in
                    try Row.fetchAll(db, sql: "SELECT * FROM player")
                }
                let values = try await observed.recorder.wait(timeout: .seconds(30)) { values in
                    values.last.map { Set($0.rows) == Set(final) } ?? false
                }
                #expect(values.count > 10, "replica \(index): \(values.count) values")
                #expect(try Self.compose(values) == Set(final), "replica \(index)")
            }
            try await sums.wait(timeout: .seconds(30)) { $0.last == 1_000 }
            #expect(sums.values.allSatisfy { $0 == 1_000 }, "a transaction seen half-applied: \(Set(sums.values))")
        }
    }

    /// An observer of a replica's players, with their differences.
    static func observeDifferences(_ pool: DatabasePool) -> (
        recorder: Recorder<RowsWithDifference>, cancellable: AnyDatabaseCancellable
    ) {
        let recorder = Recorder<RowsWithDifference>()
        let cancellable = ValueObservation.trackingRowDifferences(sql: "SELECT * FROM player").start(
            in: pool, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: { recorder.append($0) })
        return (recorder, cancellable)
    }

    /// The first value's rows, with each later value's difference applied
    /// in turn, by primary key.
    static func compose(_ values: [RowsWithDifference]) throws -> Set<Row> {
        guard let first = values.first else { return [] }
        var rows: [Int64: Row] = [:]
        for row in first.rows { rows[try row["id"]] = row }
        for value in values.dropFirst() {
            let difference = try #require(value.difference, "a later value without its difference")
            for entry in difference.deleted { rows[try entry.row["id"]] = nil }
            for update in difference.updated {
                let key: Int64 = try update.previous["id"]
                #expect(rows[key] == update.previous, "an update's previous row is the one composed")
                rows[key] = update.row
            }
            for entry in difference.inserted {
                let key: Int64 = try entry.row["id"]
                #expect(rows[key] == nil, "an inserted row is not there yet: \(entry.row)")
                rows[key] = entry.row
            }
        }
        return Set(rows.values)
    }

    /// A write to a table the replica does not hold still moves the
    /// replica's position (read-your-writes waits for it, up to
    /// `quietAdvanceInterval`), and an idle replicator, which polls every
    /// 5 ms, stores no position while the WAL stands still. (Its CPU when
    /// idle is in `Benchmarks/replica-latency.py`.)
    @Test func otherTablesMoveThePositionAndIdlePollsStoreNothing() async throws {
        try await Self.withDatabase { url, connection in
            let replica = try TestReplica(url: url, slot: "idle", tables: Self.tables)
            try await replica.catchUp(with: connection)
            // Moves the WAL without a change of the replica's tables.
            try await connection.run("CREATE TABLE elsewhere (id integer PRIMARY KEY)")
            try await connection.run("INSERT INTO elsewhere VALUES (1)")
            try await replica.catchUp(with: connection)
            let commits = Locked(0)
            let cancellable = DatabaseRegionObservation(tracking: DatabaseRegion(table: "_reactivesqlite_replication"))
                .start(in: replica.pool, onError: { Issue.record($0) }, onChange: { _ in commits.withLock { $0 += 1 } })
            defer { cancellable.cancel() }
            let clock = ContinuousClock()
            let start = clock.now
            try await Task.sleep(for: .milliseconds(500))
            let elapsed = clock.now - start
            // About 100 polls in that time; at most one stored position
            // per 100 ms, and none while the WAL stands still.
            #expect(commits.value <= Int(elapsed / .milliseconds(100)) + 1, "\(commits.value) commits in \(elapsed)")
            // A change still comes at once.
            try await connection.run("INSERT INTO player (id, name, score) VALUES (1, 'a', 0)")
            try await replica.catchUp(with: connection)
            #expect(try await replica.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM player") } == 1)
        }
    }

    /// TRUNCATE empties the replica's tables in one transaction.
    @Test func truncateEmptiesTheTables() async throws {
        try await Self.withDatabase { url, connection in
            try await connection.run("INSERT INTO player (id, name, score) VALUES (1, 'a', 0), (2, 'b', 0)")
            let replica = try TestReplica(url: url, slot: "truncating", tables: Self.tables)
            try await replica.catchUp(with: connection)
            #expect(try await replica.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM player") } == 2)
            try await connection.run("TRUNCATE player, team")
            try await replica.catchUp(with: connection)
            #expect(try await Self.replicaState(replica.pool) == [])
        }
    }

    /// A table without primary key cannot be replicated exactly: the
    /// replicator refuses it, and says why.
    @Test func aTableWithoutPrimaryKeyStopsWithAClearError() async throws {
        try await Self.withDatabase { url, connection in
            try await connection.run("CREATE TABLE loose (a integer, b text)")
            let replica = try TestReplica(url: url, slot: "loose_table", tables: ["loose"])
            let error = await #expect(throws: ReplicationError.self) { try await replica.task.value }
            #expect(error?.message.contains("loose has no primary key") == true, "\(String(describing: error))")
        }
    }

    /// Two published tables of one name in two schemas would be one
    /// table in the replica: the replicator refuses them, and says why.
    @Test func twoTablesOfOneNameInTwoSchemasStopWithAClearError() async throws {
        try await Self.withDatabase { url, connection in
            try await connection.run("CREATE SCHEMA other")
            try await connection.run("CREATE TABLE other.\"Team\" (id integer PRIMARY KEY)")
            try await connection.run("CREATE PUBLICATION twins FOR TABLE team, other.\"Team\"")
            let replica = try TestReplica(url: url, slot: "twins", publication: "twins")
            let error = await #expect(throws: ReplicationError.self) { try await replica.task.value }
            #expect(error?.message.contains("other.Team and public.team are both published") == true, "\(String(describing: error))")
        }
    }

    /// A column added in PostgreSQL stops the replica, unchanged, with a
    /// message; run again with `resync`, it copies the tables again.
    @Test func aColumnAddedStopsTheReplicaUntilAResync() async throws {
        try await Self.withDatabase { url, connection in
            let replica = try TestReplica(url: url, slot: "changing", tables: Self.tables)
            try await connection.run("INSERT INTO player (id, name, score) VALUES (1, 'a', 0)")
            try await replica.catchUp(with: connection)
            try await connection.run("ALTER TABLE player ADD COLUMN level integer")
            try await connection.run("INSERT INTO player (id, name, score, level) VALUES (2, 'b', 0, 3)")
            let error = await #expect(throws: ReplicationError.self) { try await replica.task.value }
            #expect(error?.message.contains("added: level") == true, "\(String(describing: error))")
            #expect(try await replica.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM player") } == 1)
            let resynced = try TestReplica(url: url, slot: "changing", tables: Self.tables, resync: true)
            try await resynced.catchUp(with: connection)
            #expect(try await resynced.pool.read { try Int.fetchOne($0, sql: "SELECT level FROM player WHERE id = 2") } == 3)
        }
    }

    /// `pg_terminate_backend` of the replicator's connection, at random
    /// moments of its polling, ten times: it connects again each time and
    /// applies every transaction exactly once (a duplicate insert would
    /// stop it; a lost one would leave the replica behind).
    @Test func theReplicatorConnectsAgainAfterItsConnectionIsTerminated() async throws {
        try await Self.withDatabase { url, connection in
            let replica = try TestReplica(url: url, slot: "terminated", tables: Self.tables)
            try await replica.catchUp(with: connection)
            var random = SplitMix64(seed: 35)
            for round in 0..<10 {
                let terminated = try await connection.texts("""
                    SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                    """)
                #expect(terminated.count == 1, "round \(round): the replicator's connection, and no other")
                // Another moment of the replicator's loop for each round.
                try await Task.sleep(for: .microseconds(Int.random(in: 0...8_000, using: &random)))
                try await connection.run("INSERT INTO player (id, name, score) VALUES (\(round), 'p', \(round))")
                try await connection.run("UPDATE team SET size = size + 1 WHERE id = 1")
                try await replica.catchUp(with: connection)
            }
            let expected = Self.normalized(try await connection.texts(Self.postgresState))
            let state = try await Self.replicaState(replica.pool)
            #expect(state == expected, "first difference: \(Self.firstDifference(state, expected))")
        }
    }

    /// A column dropped in PostgreSQL stops the replica, unchanged, with a
    /// message, as an added one does.
    @Test func aColumnDroppedStopsTheReplica() async throws {
        try await Self.withDatabase { url, connection in
            let replica = try TestReplica(url: url, slot: "narrowing", tables: Self.tables)
            try await connection.run("INSERT INTO player (id, name, score, photo) VALUES (1, 'a', 0, '\\x01')")
            try await replica.catchUp(with: connection)
            try await connection.run("ALTER TABLE player DROP COLUMN photo")
            try await connection.run("UPDATE player SET score = 5 WHERE id = 1")
            let error = await #expect(throws: ReplicationError.self) { try await replica.task.value }
            #expect(error?.message.contains("dropped: photo") == true, "\(String(describing: error))")
            #expect(try await replica.pool.read { try Int.fetchOne($0, sql: "SELECT score FROM player") } == 0)
        }
    }

    /// A dropped slot: the replica is copied again, through a new slot.
    @Test func aDroppedSlotIsRecreatedAndTheTablesCopiedAgain() async throws {
        try await Self.withDatabase { url, connection in
            let replica = try TestReplica(url: url, slot: "dropped", tables: Self.tables)
            try await connection.run("INSERT INTO player (id, name, score) VALUES (1, 'a', 0)")
            try await replica.catchUp(with: connection)
            replica.task.cancel()
            _ = try? await replica.task.value
            try await connection.run("SELECT pg_drop_replication_slot('dropped')")
            try await connection.run("INSERT INTO player (id, name, score) VALUES (2, 'b', 0)")
            // The same replica file, started again.
            let path = replica.path
            let pool = try DatabasePool(path: path)
            let replicator = PostgresReplicator(
                configuration: try PostgresReplicationConfiguration(url: url, slot: "dropped"),
                applier: try ReplicaApplier(writer: pool, source: "postgresql:dropped"), logger: Logger(label: "again"))
            let task = Task { try await replicator.run() }
            defer { task.cancel() }
            let lsn = try #require(ReplicationPosition(lsn: try await connection.texts("SELECT pg_current_wal_lsn()::text")[0][0]!))
            try await ReplicaApplier.waitUntilReplicated(lsn, source: "postgresql:dropped", in: pool)
            #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM player") } == 2)
        }
    }
}
#endif
