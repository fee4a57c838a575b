import DatabaseTestSupport
import DatabaseRegions
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// Which transactions notify, on both change-tracking paths: the scenarios
/// of the observation engine's issue, rollbacks and savepoints, triggers,
/// foreign-key cascades, and `DELETE` without `WHERE`.
@Suite struct ChangeTrackingTests {
    // MARK: - Regions

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aRegionObservationIsNotifiedOncePerTransactionThatModifiesItsRegion(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE t1 (id INTEGER PRIMARY KEY, a, b);
            CREATE TABLE t2 (id INTEGER PRIMARY KEY, a, b);
            """)
        let writer = test.writer
        let (counter, cancellable) = countChanges(in: writer, of: [
            SQLRequest<Row>(sql: "SELECT a FROM t1"),
            SQLRequest<Row>(sql: "SELECT t1.a, t2.b FROM t1, t2"),
        ])
        defer { cancellable.cancel() }

        // One transaction inserting into both tables: one notification.
        try writer.writeSQL("INSERT INTO t1 (a, b) VALUES (1, 1); INSERT INTO t2 (a, b) VALUES (1, 1)")
        #expect(counter.value == 1)
        // Columns outside the region: nothing.
        try writer.writeSQL("UPDATE t1 SET b = 1")
        try writer.writeSQL("UPDATE t2 SET a = 1")
        #expect(counter.value == 1)
        // An insertion into either table.
        try writer.writeSQL("INSERT INTO t2 (a, b) VALUES (2, 2)")
        #expect(counter.value == 2)
        try writer.writeSQL("INSERT INTO t1 (a, b) VALUES (2, 2)")
        #expect(counter.value == 3)
        // Columns inside the region, and deletions.
        try writer.writeSQL("UPDATE t1 SET a = 5")
        #expect(counter.value == 4)
        try writer.writeSQL("UPDATE t2 SET b = 5")
        #expect(counter.value == 5)
        try writer.writeSQL("DELETE FROM t2 WHERE id = 1")
        #expect(counter.value == 6)
        // A statement that changes no row: nothing.
        try writer.writeSQL("UPDATE t1 SET a = 0 WHERE id = 1000")
        #expect(counter.value == 6)
        // Several statements and tables in one transaction: once.
        try writer.writeSQL("""
            INSERT INTO t1 (a, b) VALUES (3, 3);
            UPDATE t1 SET a = 4;
            DELETE FROM t2;
            """)
        #expect(counter.value == 7)
    }

    // MARK: - The trackingCount scenario

    /// Each value is awaited before the next write: no value can coalesce,
    /// so every kind of database delivers exactly the same values.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func trackingCountDeliversTwoZeroThree(kind: DatabaseKind, tracking: Configuration.ChangeTracking) async throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO person (name) VALUES ('a'), ('b');
            """)
        let writer = test.writer
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM person"))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        try await writer.write { db in try db.execute(sql: "UPDATE person SET name = name") }
        if !tracking.usesPreUpdateHook {
            // No old values: a potential change, fetched again.
            try await recorder.wait(for: 2)
        }
        try await writer.write { db in try db.execute(sql: "DELETE FROM person") }
        try await recorder.wait(forLast: 0)
        try await writer.write { db in
            try db.execute(sql: "INSERT INTO person (name) VALUES ('a'); INSERT INTO person (name) VALUES ('b')")
            try db.execute(sql: "INSERT INTO person (name) VALUES ('c')")
        }
        let values = try await recorder.wait(forLast: 3)
        #expect(values == (tracking.usesPreUpdateHook ? [2, 0, 3] : [2, 2, 0, 3]))
    }

    /// The writes of the issue's scenario, back to back: a queue fetches on
    /// the writer and delivers exactly these values; a pool may coalesce, and
    /// delivers an ordered subsequence that ends with the last state.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func trackingCountInABurstEndsWithTheLastState(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO person (name) VALUES ('a'), ('b');
            """)
        let writer = test.writer
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM person"))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try writer.writeSQL("UPDATE person SET name = name")
        try writer.writeSQL("DELETE FROM person")
        try writer.writeSQL("INSERT INTO person (name) VALUES ('a'), ('b'), ('c')")
        let expected = tracking.usesPreUpdateHook ? [2, 0, 3] : [2, 2, 0, 3]
        let values = try await recorder.wait(forLast: 3)
        if kind == .pool {
            #expect(values.first == 2)
            #expect(isOrderedSubsequence(values, of: expected), "\(values)")
        } else {
            #expect(values == expected)
        }
    }

    // MARK: - Rollbacks

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func rolledBackChangesNotifyNothing(kind: DatabaseKind, tracking: Configuration.ChangeTracking) async throws {
        let test = try kind.make(changeTracking: tracking, sql: "CREATE TABLE ta (id INTEGER PRIMARY KEY, v)")
        let writer = test.writer
        let (counter, regionCancellable) = countChanges(in: writer, of: [DatabaseRegion(table: "ta")])
        defer { regionCancellable.cancel() }
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM ta"))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        // A transaction rolled back because its closure throws.
        await #expect(throws: TestError.self) {
            try await writer.write { db in
                try db.execute(sql: "INSERT INTO ta (v) VALUES (1)")
                throw TestError()
            }
        }
        // Explicit ROLLBACK statements.
        try writer.writeSQLWithoutTransaction("BEGIN; INSERT INTO ta (v) VALUES (1); ROLLBACK")
        try writer.writeSQLWithoutTransaction("SAVEPOINT s; INSERT INTO ta (v) VALUES (1); ROLLBACK")
        // ROLLBACK TO inside a transaction that commits.
        try writer.writeSQLWithoutTransaction("""
            BEGIN; SAVEPOINT s; INSERT INTO ta (v) VALUES (1); UPDATE ta SET v = 2; DELETE FROM ta;
            INSERT INTO ta (v) VALUES (3); ROLLBACK TO s; RELEASE s; COMMIT
            """)
        try await writer.write { db in
            try? db.inSavepoint {
                try db.execute(sql: "INSERT INTO ta (v) VALUES (1)")
                throw TestError()
            }
        }
        // A savepoint released, then the outer transaction rolled back.
        try writer.writeSQLWithoutTransaction("""
            BEGIN; SAVEPOINT s; INSERT INTO ta (v) VALUES (1); RELEASE s; ROLLBACK
            """)
        #expect(counter.value == 0)
        #expect(try writer.count("ta") == 0)

        // A committed transaction, as a barrier: its value comes right after
        // the first one.
        try writer.writeSQL("INSERT INTO ta (v) VALUES (1)")
        #expect(counter.value == 1)
        #expect(try await recorder.wait(forLast: 1) == [0, 1])
    }

    /// A savepoint scenario: SQL run outside of `write`'s transaction, the
    /// notifications of observers of `ta` and `tb`, and the rows left.
    struct SavepointScenario: Sendable, CustomTestStringConvertible {
        var name: String
        var sql: String
        var taNotifications: Int
        var tbNotifications: Int
        var taRows: Int
        var tbRows: Int
        var testDescription: String { name }

        static let all: [SavepointScenario] = [
            SavepointScenario(
                name: "nested, rolled back to the outer savepoint",
                sql: """
                    BEGIN; SAVEPOINT outer1; INSERT INTO ta (v) VALUES (1);
                    SAVEPOINT inner1; INSERT INTO tb (v) VALUES (1);
                    ROLLBACK TO outer1; INSERT INTO tb (v) VALUES (2); RELEASE outer1; COMMIT
                    """,
                taNotifications: 0, tbNotifications: 1, taRows: 0, tbRows: 1),
            SavepointScenario(
                name: "nested, rolled back to the inner savepoint",
                sql: """
                    BEGIN; SAVEPOINT a; INSERT INTO ta (v) VALUES (1);
                    SAVEPOINT b; INSERT INTO tb (v) VALUES (1); ROLLBACK TO b;
                    RELEASE b; RELEASE a; COMMIT
                    """,
                taNotifications: 1, tbNotifications: 0, taRows: 1, tbRows: 0),
            SavepointScenario(
                name: "nested, changes after ROLLBACK TO kept",
                sql: """
                    BEGIN; SAVEPOINT a; INSERT INTO ta (v) VALUES (1);
                    SAVEPOINT b; INSERT INTO tb (v) VALUES (1); ROLLBACK TO b; INSERT INTO tb (v) VALUES (2);
                    RELEASE b; RELEASE a; COMMIT
                    """,
                taNotifications: 1, tbNotifications: 1, taRows: 1, tbRows: 1),
            SavepointScenario(
                name: "same name, ROLLBACK TO reaches the most recent",
                sql: """
                    BEGIN; SAVEPOINT s; INSERT INTO ta (v) VALUES (1);
                    SAVEPOINT s; INSERT INTO tb (v) VALUES (1); ROLLBACK TO s; RELEASE s; COMMIT
                    """,
                taNotifications: 1, tbNotifications: 0, taRows: 1, tbRows: 0),
            SavepointScenario(
                name: "same name, inner released, then ROLLBACK TO the outer",
                sql: """
                    SAVEPOINT s; INSERT INTO ta (v) VALUES (1);
                    SAVEPOINT s; INSERT INTO tb (v) VALUES (1); RELEASE s; ROLLBACK TO s; RELEASE s
                    """,
                taNotifications: 0, tbNotifications: 0, taRows: 0, tbRows: 0),
            SavepointScenario(
                name: "RELEASE of the outer savepoint releases the inner one",
                sql: """
                    BEGIN; SAVEPOINT a; SAVEPOINT b; INSERT INTO ta (v) VALUES (1); RELEASE a;
                    INSERT INTO tb (v) VALUES (1); COMMIT
                    """,
                taNotifications: 1, tbNotifications: 1, taRows: 1, tbRows: 1),
            SavepointScenario(
                name: "RELEASE of the outermost savepoint commits",
                sql: """
                    SAVEPOINT a; INSERT INTO ta (v) VALUES (1); SAVEPOINT b; INSERT INTO tb (v) VALUES (1);
                    RELEASE a
                    """,
                taNotifications: 1, tbNotifications: 1, taRows: 1, tbRows: 1),
            SavepointScenario(
                name: "names compare case-insensitively",
                sql: """
                    BEGIN; INSERT INTO tb (v) VALUES (1); SAVEPOINT Foo; INSERT INTO ta (v) VALUES (1);
                    ROLLBACK TO foo; RELEASE FOO; COMMIT
                    """,
                taNotifications: 0, tbNotifications: 1, taRows: 0, tbRows: 1),
            SavepointScenario(
                name: "savepoint kept through commit",
                sql: """
                    BEGIN; SAVEPOINT a; INSERT INTO ta (v) VALUES (1); SAVEPOINT b; INSERT INTO tb (v) VALUES (1);
                    COMMIT
                    """,
                taNotifications: 1, tbNotifications: 1, taRows: 1, tbRows: 1),
        ]
    }

    @Test(arguments: DatabaseKind.allCases, SavepointScenario.all)
    func savepointsNotifyWhatTheCommitKeeps(kind: DatabaseKind, scenario: SavepointScenario) throws {
        for tracking in changeTrackings {
            let test = try kind.make(changeTracking: tracking, sql: """
                CREATE TABLE ta (id INTEGER PRIMARY KEY, v);
                CREATE TABLE tb (id INTEGER PRIMARY KEY, v);
                """)
            let writer = test.writer
            let (ta, taCancellable) = countChanges(in: writer, of: [DatabaseRegion(table: "ta")])
            let (tb, tbCancellable) = countChanges(in: writer, of: [DatabaseRegion(table: "tb")])
            defer {
                taCancellable.cancel()
                tbCancellable.cancel()
            }
            try writer.writeSQLWithoutTransaction(scenario.sql)
            #expect(try writer.count("ta") == scenario.taRows, "\(tracking)")
            #expect(try writer.count("tb") == scenario.tbRows, "\(tracking)")
            #expect(ta.value == scenario.taNotifications, "\(tracking)")
            #expect(tb.value == scenario.tbNotifications, "\(tracking)")
        }
    }

    // MARK: - Triggers and foreign keys

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aForeignKeyCascadeNotifiesObserversOfTheChildTable(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE child (id INTEGER PRIMARY KEY, parentId INTEGER REFERENCES parent(id) ON DELETE CASCADE);
            INSERT INTO parent (id, name) VALUES (1, 'one'), (2, 'two');
            INSERT INTO child (id, parentId) VALUES (1, 1), (2, 1), (3, 2);
            """)
        let writer = test.writer
        let (counter, regionCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT * FROM child")])
        defer { regionCancellable.cancel() }
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM child"))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        // An update of the parent does not touch children.
        try writer.writeSQL("UPDATE parent SET name = 'uno' WHERE id = 1")
        #expect(counter.value == 0)
        try writer.writeSQL("DELETE FROM parent WHERE id = 1")
        #expect(counter.value == 1)
        #expect(try await recorder.wait(forLast: 1) == [3, 1])
    }

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aTriggerOnAnUnobservedTableNotifiesObserversOfTheTableItWrites(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE source (id INTEGER PRIMARY KEY, v);
            CREATE TABLE audit (id INTEGER PRIMARY KEY, message TEXT);
            CREATE TRIGGER sourceInsert AFTER INSERT ON source BEGIN
                INSERT INTO audit (message) VALUES ('inserted ' || NEW.v);
            END;
            CREATE TRIGGER sourceDelete AFTER DELETE ON source BEGIN
                UPDATE audit SET message = message || ' then deleted' WHERE message = 'inserted ' || OLD.v;
            END;
            """)
        let writer = test.writer
        let (counter, regionCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT message FROM audit")])
        defer { regionCancellable.cancel() }
        let recorder = Recorder<[String]>()
        let cancellable = ValueObservation.trackingAll(SQLRequest<String>(sql: "SELECT message FROM audit ORDER BY id"))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        try writer.writeSQL("INSERT INTO source (v) VALUES (1)")
        #expect(counter.value == 1)
        try await recorder.wait(for: 2)
        try writer.writeSQL("DELETE FROM source")
        #expect(counter.value == 2)
        let values = try await recorder.wait(for: 3)
        #expect(values == [[], ["inserted 1"], ["inserted 1 then deleted"]])
    }

    // MARK: - DELETE without WHERE

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func deleteWithoutWhereIsSeen(kind: DatabaseKind, tracking: Configuration.ChangeTracking) async throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL)
        let writer = test.writer
        // Compiled and cached before anything observes the database.
        try await writer.write { db in _ = try db.cachedStatement(sql: "DELETE FROM player") }

        let (counter, regionCancellable) = countChanges(in: writer, of: [ObservedPlayer.all()])
        defer { regionCancellable.cancel() }
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.trackingCount(ObservedPlayer.all())
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        let row = Recorder<ObservedPlayer?>()
        let rowCancellable = ValueObservation.trackingOne(ObservedPlayer.filter(key: 2))
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: row.append)
        defer { rowCancellable.cancel() }
        try await recorder.wait(for: 1)
        try await row.wait(for: 1)

        let log = EventLog()
        try synchronously {
            try writer.write { db in
                db.add(transactionObserver: log)
                try db.cachedStatement(sql: "DELETE FROM player").execute()
            }
        }
        #expect(counter.value == 1)
        #expect(log.events == [1, 2, 3].map { DatabaseEvent(kind: .delete(tableName: "player"), rowID: $0) })
        #expect(try await recorder.wait(for: 2) == [3, 0])
        #expect(try await row.wait(for: 2) == [ObservedPlayer(id: 2, name: "Barbara", score: 200), nil])
        _ = log
    }

    // MARK: - Schema changes

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func writesRightAfterASchemaChangeKeepColumnPrecision(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL)
        let writer = test.writer
        let (scores, cancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT score FROM player")])
        defer { cancellable.cancel() }
        // The schema changes right before updates that read nothing, so the
        // broker reads the table's columns while the update starts.
        try writer.writeSQL("CREATE TABLE other (id INTEGER PRIMARY KEY); UPDATE player SET name = 'Arthur II'")
        #expect(scores.value == 0)
        try writer.writeSQL("CREATE INDEX playerName ON player(name); UPDATE player SET name = 'Arthur III'")
        #expect(scores.value == 0)
        try writer.writeSQL("DROP INDEX playerName; UPDATE player SET score = 0")
        #expect(scores.value == 1)
    }

    /// No row event tells that a table was dropped or altered, and what its
    /// observers fetch changed (or fails now): they are told.
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func droppingOrAlteringATableNotifiesItsObservers(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL + """
            CREATE TABLE team (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE doomed (id INTEGER PRIMARY KEY);
            """)
        let writer = test.writer
        let (scores, scoresCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT score FROM player")])
        let (teams, teamsCancellable) = countChanges(in: writer, of: [SQLRequest<Row>(sql: "SELECT name FROM team")])
        let (doomed, doomedCancellable) = countChanges(in: writer, of: [DatabaseRegion(table: "doomed")])
        defer {
            scoresCancellable.cancel()
            teamsCancellable.cancel()
            doomedCancellable.cancel()
        }
        try writer.writeSQL("ALTER TABLE player ADD COLUMN bonus INTEGER")
        #expect([scores.value, teams.value, doomed.value] as [Int] == [1, 0, 0])
        try writer.writeSQL("ALTER TABLE team RENAME TO club")
        #expect([scores.value, teams.value, doomed.value] as [Int] == [1, 1, 0])
        try writer.writeSQL("DROP TABLE doomed")
        #expect([scores.value, teams.value, doomed.value] as [Int] == [1, 1, 1])
        // Rolled back: nothing.
        try writer.writeSQLWithoutTransaction("BEGIN; DROP TABLE player; ROLLBACK")
        #expect([scores.value, teams.value, doomed.value] as [Int] == [1, 1, 1])
    }
}

/// A transaction observer that logs everything it is told.
final class EventLog: TransactionObserver {
    enum Entry: Equatable, CustomStringConvertible {
        case event(DatabaseEvent)
        case willCommit
        case commit
        case rollback

        var description: String {
            switch self {
            case .event(let event): "\(event.kind)@\(event.rowID.map(String.init) ?? "nil")"
            case .willCommit: "willCommit"
            case .commit: "commit"
            case .rollback: "rollback"
            }
        }
    }

    private(set) var entries: [Entry] = []
    private let observesKind: (DatabaseEventKind) -> Bool
    /// Thrown by `databaseWillCommit()` when set.
    var willCommitError: (any Error)?

    init(observing observesKind: @escaping (DatabaseEventKind) -> Bool = { _ in true }) {
        self.observesKind = observesKind
    }

    /// The logged events, in order.
    var events: [DatabaseEvent] {
        entries.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    func clear() { entries = [] }

    func observes(eventsOfKind kind: DatabaseEventKind) -> Bool { observesKind(kind) }
    func databaseDidChange(with event: DatabaseEvent) { entries.append(.event(event)) }
    func databaseWillCommit() throws {
        entries.append(.willCommit)
        if let willCommitError { throw willCommitError }
    }
    func databaseDidCommit(_ db: Database) { entries.append(.commit) }
    func databaseDidRollback(_ db: Database) { entries.append(.rollback) }
}
