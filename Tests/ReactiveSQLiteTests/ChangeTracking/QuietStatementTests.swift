import DatabaseTestSupport
import Foundation
@testable import ReactiveSQLite
import TestSupport
import Testing

/// Statements that write no watched table run quiet (issue 33, point 5):
/// no level, no context, and no row hook, so that SQLite prepares no row
/// event for them. Each test would fail if the quiet path were missing,
/// or if it let a change that concerns an observation go unseen.
@Suite(.serialized, .timeLimit(.minutes(5))) struct QuietStatementTests {
    static let schema = """
        CREATE TABLE team (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT, score INTEGER);
        CREATE TABLE log (id INTEGER PRIMARY KEY, message TEXT);
        INSERT INTO team (name) VALUES ('a');
        """

    /// The row events the broker received, and its quiet runs, during `body`.
    static func hookActivity(
        _ writer: any DatabaseWriter, _ body: @escaping @Sendable (Database) throws -> Void
    ) throws -> (rowEvents: Int, quietRuns: Int) {
        try writer.write { db in
            let broker = db.observationBroker
            let (events, runs) = (broker.rowEventCount, broker.quietRunCount)
            try body(db)
            return (broker.rowEventCount - events, broker.quietRunCount - runs)
        }
    }

    /// 1 000 inserts of a table nobody watches, while `team` is observed:
    /// after the first run, which finds the statement quiet, none reaches
    /// the row hook, and the observation of `team` hears of nothing.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aTransactionOfAnUnwatchedTableReachesNoHook(kind: DatabaseKind, tracking: Configuration.ChangeTracking) throws {
        let test = try kind.make(changeTracking: tracking, sql: Self.schema)
        let (teams, cancellable) = countChanges(in: test.writer, of: [SQLRequest<Row>(sql: "SELECT * FROM team")])
        defer { cancellable.cancel() }
        let activity = try Self.hookActivity(test.writer) { db in
            for id in 1...1_000 {
                try db.cachedStatement(sql: "INSERT INTO player (id, name) VALUES (?, 'x')").execute(arguments: [id])
            }
        }
        #expect(activity.rowEvents <= 1, "the first run only, before the statement is known quiet")
        #expect(activity.quietRuns >= 999)
        #expect(teams.value == 0)
        // The statement writes `team` now: followed again.
        let teamActivity = try Self.hookActivity(test.writer) { db in
            for id in 2...11 {
                try db.cachedStatement(sql: "INSERT INTO team (id, name) VALUES (?, 'x')").execute(arguments: [id])
            }
        }
        #expect(teamActivity.rowEvents == 10)
        #expect(teams.value == 1)
    }

    /// A statement found quiet stops being quiet when an observation starts
    /// watching the table it writes.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aNewObservationOfTheTableEndsTheQuietRuns(kind: DatabaseKind, tracking: Configuration.ChangeTracking) throws {
        let test = try kind.make(changeTracking: tracking, sql: Self.schema)
        let (_, teamCancellable) = countChanges(in: test.writer, of: [SQLRequest<Row>(sql: "SELECT * FROM team")])
        defer { teamCancellable.cancel() }
        let insert: @Sendable (Database, Int) throws -> Void = { db, id in
            try db.cachedStatement(sql: "INSERT INTO player (id, name) VALUES (?, 'x')").execute(arguments: [id])
        }
        try test.writer.write { db in for id in 1...3 { try insert(db, id) } }
        let (players, playerCancellable) = countChanges(in: test.writer, of: [SQLRequest<Row>(sql: "SELECT * FROM player")])
        defer { playerCancellable.cancel() }
        let activity = try Self.hookActivity(test.writer) { db in try insert(db, 4) }
        #expect(activity.quietRuns == 0)
        #expect(activity.rowEvents == 1)
        #expect(players.value == 1)
        for id in 5...7 { try test.writer.write { db in try insert(db, id) } }
        #expect(players.value == 4)
    }

    /// A trigger that another connection adds after the statement was
    /// found quiet, between two statements of one access outside of a
    /// transaction (an access that starts sees the schema change, and
    /// compiles its statements again): SQLite recompiles the statement in
    /// its next run, which now writes the watched table through the
    /// trigger, with no row hook to tell. Its end sees the recompilation,
    /// and every observation hears of the commit; the statement never runs
    /// quiet again.
    @Test(arguments: [DatabaseKind.fileQueue, .pool], changeTrackings)
    func aTriggerAddedByAnotherConnectionIsSeen(kind: DatabaseKind, tracking: Configuration.ChangeTracking) async throws {
        let test = try kind.make(changeTracking: tracking, sql: Self.schema)
        let logCount: @Sendable (Database) throws -> Int = { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM log")! }
        let probe = FreshValueProbe("log", ValueObservation.tracking(logCount), in: test.writer, fetch: logCount)
        defer { probe.cancel() }
        try await probe.expectFreshValue(in: test.writer, after: "start")
        #if SQLCipher
        let configuration = TestDatabase.encrypted(Configuration())
        #else
        let configuration = Configuration()
        #endif
        let other = try DatabaseQueue(path: try #require(test.path), configuration: configuration)
        defer { other.close() }
        let (logs, cancellable) = countChanges(in: test.writer, of: [SQLRequest<Row>(sql: "SELECT * FROM log")])
        defer { cancellable.cancel() }
        let quietRuns = try Self.insertAcrossSchemaChange(test.writer, other: other, logs: logs)
        #expect(quietRuns == 0)
        try await probe.expectFreshValue(in: test.writer, after: "inserts through the new trigger")
        #expect(try await test.writer.read(logCount) == 3)
    }

    /// Inserts players 1 to 6 outside of a transaction; `other` adds a
    /// trigger that logs insertions after the third; each later insertion
    /// notifies the observers of `log`. Returns the quiet runs of the last
    /// two inserts.
    static func insertAcrossSchemaChange(
        _ writer: any DatabaseWriter, other: DatabaseQueue, logs: ChangeCounter
    ) throws -> Int {
        let sql = "INSERT INTO player (id, name) VALUES (?, 'x')"
        return try writer.writeWithoutTransaction { db in
            let runs = db.observationBroker.quietRunCount
            for id in 1...3 { try db.cachedStatement(sql: sql).execute(arguments: [id]) }
            #expect(db.observationBroker.quietRunCount - runs == 2)
            try other.writeWithoutTransaction { db in
                try db.execute(sql: """
                    CREATE TRIGGER player_log AFTER INSERT ON player BEGIN
                        INSERT INTO log (message) VALUES ('player ' || NEW.id);
                    END
                    """)
            }
            #expect(try logs.calls(during: { try db.cachedStatement(sql: sql).execute(arguments: [4]) }) == 1)
            // Recompiled: followed from now on, row by row.
            let recompiled = db.observationBroker.quietRunCount
            for id in 5...6 {
                #expect(try logs.calls(during: { try db.cachedStatement(sql: sql).execute(arguments: [id]) }) == 1)
            }
            return db.observationBroker.quietRunCount - recompiled
        }
    }

    /// A foreign key action of a quiet-looking table: deleting a team
    /// deletes its players, which are watched. The authorizer reports the
    /// action's table, so the statement is not quiet, and the observation
    /// sees each deletion.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aForeignKeyActionOnAWatchedTableIsNotQuiet(kind: DatabaseKind, tracking: Configuration.ChangeTracking) async throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            PRAGMA foreign_keys = ON;
            CREATE TABLE team (id INTEGER PRIMARY KEY);
            CREATE TABLE member (id INTEGER PRIMARY KEY, teamId INTEGER REFERENCES team(id) ON DELETE CASCADE);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5)
            INSERT INTO team (id) SELECT i FROM n;
            INSERT INTO member (teamId) SELECT id FROM team;
            """)
        try await test.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA foreign_keys = ON") }
        let members: @Sendable (Database) throws -> Int = { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM member")! }
        let probe = FreshValueProbe("member", ValueObservation.tracking(members), in: test.writer, fetch: members)
        defer { probe.cancel() }
        try await probe.expectFreshValue(in: test.writer, after: "start")
        for id in 1...5 {
            let activity = try Self.hookActivity(test.writer) { db in
                try db.cachedStatement(sql: "DELETE FROM team WHERE id = ?").execute(arguments: [id])
            }
            #expect(activity.quietRuns == 0)
            try await probe.expectFreshValue(in: test.writer, after: "deleting team \(id)")
        }
        #expect(try await test.writer.read(members) == 0)
    }

    /// Quiet statements outside a transaction still commit as the broker
    /// counts commits: the numbers that observations compare (window
    /// boundaries) see each one; a rolled-back transaction of quiet
    /// statements leaves nothing behind.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func quietCommitsAreCounted(kind: DatabaseKind, tracking: Configuration.ChangeTracking) throws {
        let test = try kind.make(changeTracking: tracking, sql: Self.schema)
        let (teams, cancellable) = countChanges(in: test.writer, of: [SQLRequest<Row>(sql: "SELECT * FROM team")])
        defer { cancellable.cancel() }
        try test.writer.writeWithoutTransaction { db in
            let insert = "INSERT INTO player (name) VALUES ('x')"
            try db.cachedStatement(sql: insert).execute()
            let before = db.observationBroker.lastCommitNumber
            let runs = db.observationBroker.quietRunCount
            for _ in 1...5 { try db.cachedStatement(sql: insert).execute() }
            #expect(db.observationBroker.quietRunCount - runs == 5)
            #expect(db.observationBroker.lastCommitNumber - before == 5)
            try db.execute(sql: "BEGIN")
            for _ in 1...5 { try db.cachedStatement(sql: insert).execute() }
            try db.execute(sql: "ROLLBACK")
            #expect(db.observationBroker.lastCommitNumber - before == 5)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player") == 6)
            // Then a watched change in the same connection is seen.
            try db.execute(sql: "UPDATE team SET name = 'b'")
        }
        #expect(teams.value == 1)
    }
}
