import DatabaseTestSupport
import Foundation
@testable import ReactiveSQLite
import Synchronization
import Testing
import TestSupport

/// Filters decide (issue 33, point 1): an observation of a one-table
/// request is not concerned by a change of a row that its `WHERE` clause
/// matches neither before nor after the change, with the pre-update hook;
/// the update hook, which has no old values, notifies as before.
@Suite struct RowFilterTests {
    // MARK: - Which statements give a filter

    @Test(arguments: [
        ("SELECT * FROM player WHERE team = 'red'", "SELECT 1 FROM player WHERE team = 'red'"),
        ("select name from main.player as p where p.score > 3 order by name limit 2", "SELECT 1 FROM main.player as p WHERE p.score > 3"),
        ("SELECT team, count(*) FROM \"player\" p WHERE score BETWEEN 1 AND 9 GROUP BY team HAVING count(*) > 1", "SELECT 1 FROM \"player\" p WHERE score BETWEEN 1 AND 9"),
        ("SELECT * FROM player WHERE name LIKE 'a%' OR name IS NULL; ", "SELECT 1 FROM player WHERE name LIKE 'a%' OR name IS NULL"),
        ("SELECT * FROM player WHERE team IN ('a', 'b') -- comment\nORDER BY id", "SELECT 1 FROM player WHERE team IN ('a', 'b') -- comment"),
    ])
    func oneTableSelectsWithAWhereClauseHaveAFilter(sql: String, filterSQL: String) throws {
        let filter = try #require(RowFilter(sql: sql, arguments: []))
        #expect(filter.sql == filterSQL)
        #expect(filter.table == "player")
    }

    @Test(arguments: [
        "SELECT * FROM player",
        "SELECT * FROM player ORDER BY score",
        "SELECT * FROM player JOIN team ON team.id = player.team WHERE score > 1",
        "SELECT * FROM player, team WHERE score > 1",
        "SELECT * FROM player WHERE score > (SELECT avg(score) FROM player)",
        "SELECT * FROM player WHERE id IN (SELECT player FROM award)",
        "SELECT * FROM player WHERE score > 1 UNION SELECT * FROM player WHERE score < 0",
        "WITH p AS (SELECT * FROM player) SELECT * FROM p WHERE score > 1",
        "SELECT * FROM player WHERE random() % 2 = 0",
        "SELECT * FROM player WHERE id = changes()",
        "SELECT * FROM player INDEXED BY player_score WHERE score > 1",
        "SELECT * FROM temp.player WHERE score > 1",
        "SELECT * FROM player WHERE score > ?2",
        "SELECT * FROM player WHERE score > 1; DELETE FROM player",
    ])
    func otherStatementsHaveNone(sql: String) {
        #expect(RowFilter(sql: sql, arguments: [1, 2]) == nil)
    }

    @Test func theArgumentsOfTheWhereClauseAreItsOwn() throws {
        let positional = try #require(RowFilter(
            sql: "SELECT ?, name FROM player WHERE team = ? AND score > ? LIMIT ?", arguments: [0, "red", 3, 10]))
        #expect(positional.arguments == ["red", 3])
        let named = try #require(RowFilter(
            sql: "SELECT :x AS x FROM player WHERE team = :team LIMIT :n", arguments: ["x": 0, "team": "red", "n": 10]))
        #expect(named.arguments == ["team": "red"])
        #expect(RowFilter(sql: "SELECT * FROM player WHERE team = ? AND score > :s", arguments: ["red"]) == nil)
    }

    // MARK: - Notifications

    static let schema = """
        CREATE TABLE item(id INTEGER PRIMARY KEY, owner INTEGER, name TEXT COLLATE NOCASE, price);
        INSERT INTO item VALUES (1, 1, 'apple', 10), (2, 2, 'Banana', 20), (3, 2, 'cherry', NULL), (4, 3, 'date', 40);
        """

    /// Starts `observation`, counting the commits it is told of (on the
    /// writer, at each commit: exact once the write returns); returns the
    /// recorder, the counter and the cancellable, once the first value came.
    func start<Value: Sendable>(
        _ observation: ValueObservation<Value>, in writer: any DatabaseWriter
    ) async throws -> (Recorder<Value>, LockedState<Int>, AnyDatabaseCancellable) {
        let recorder = Recorder<Value>()
        let changes = LockedState(0)
        let cancellable = observation.handleEvents(databaseDidChange: { changes.withLock { $0 += 1 } }).start(
            in: writer, onError: { Issue.record("observation failed: \($0)") }, onChange: { recorder.append($0) })
        _ = try await recorder.wait(for: 1)
        return (recorder, changes, cancellable)
    }

    /// Changes that the filter matches neither before nor after do not
    /// concern the observation; changes it matches before or after do.
    @Test(arguments: DatabaseKind.allCases)
    func changesOutsideTheFilterDoNotConcernTheObservation(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schema)
        let observation = ValueObservation.trackingAll(
            SQLRequest<Row>(sql: "SELECT id, name FROM item WHERE owner = ? ORDER BY id", arguments: [2]))
        let (recorder, changes, cancellable) = try await start(observation, in: test.writer)
        defer { cancellable.cancel() }
        // Not matched before, nor after: owners 1, 3, 4 and 9.
        try test.writer.writeSQL("UPDATE item SET price = 11 WHERE id = 1")
        try test.writer.writeSQL("UPDATE item SET owner = 4 WHERE id = 4")
        try test.writer.writeSQL("INSERT INTO item VALUES (5, 9, 'elder', 1)")
        try test.writer.writeSQL("DELETE FROM item WHERE id = 5")
        #expect(changes.withLock { $0 } == 0)
        // Matched after the change: enters.
        try test.writer.writeSQL("UPDATE item SET owner = 2 WHERE id = 1")
        #expect(changes.withLock { $0 } == 1)
        // Matched before the change: leaves.
        try test.writer.writeSQL("UPDATE item SET owner = 7 WHERE id = 2")
        #expect(changes.withLock { $0 } == 2)
        // Matched before and after.
        try test.writer.writeSQL("UPDATE item SET name = 'Cherry' WHERE id = 3")
        #expect(changes.withLock { $0 } == 3)
        let values = try await recorder.wait { $0.last?.map { try? $0["name"] as String } == ["apple", "Cherry"] }
        #expect(values.last?.map { try? $0["id"] as Int64 } == [1, 3])
    }

    /// SQLite's semantics: the column's affinity (`owner = '2'` is 2), its
    /// collation (`name = 'BANANA'` under NOCASE), NULL (`price > 25` is
    /// not true for NULL), `LIKE` (ASCII case-insensitive), `GLOB` (case
    /// sensitive), `IN`, `BETWEEN`, `IS`. For each, a change of a row it
    /// does not match leaves the observation alone, and a change of a row
    /// it matches does.
    @Test(arguments: DatabaseKind.allCases)
    func theFilterIsEvaluatedAsSQLiteEvaluatesIt(kind: DatabaseKind) async throws {
        // (query, a change of a row it matches neither before nor after,
        // a change of a row it matches); each change writes other stored
        // values in a column the query reads, so that without the filter
        // both concern the observation.
        let cases: [(String, String, String)] = [
            ("SELECT id FROM item WHERE owner = '2'", "UPDATE item SET owner = 5 WHERE id = 4", "UPDATE item SET owner = 3 WHERE id = 2"),
            ("SELECT id FROM item WHERE name = 'BANANA'", "UPDATE item SET name = 'apricot' WHERE id = 1", "UPDATE item SET name = 'BANANA' WHERE id = 2"),
            ("SELECT id FROM item WHERE price > 25", "UPDATE item SET price = 5 WHERE id = 3", "UPDATE item SET price = 41 WHERE id = 4"),
            ("SELECT id FROM item WHERE name LIKE 'CH%'", "UPDATE item SET name = 'Bananas' WHERE id = 2", "UPDATE item SET name = 'Cherry' WHERE id = 3"),
            ("SELECT id FROM item WHERE name GLOB 'B*'", "UPDATE item SET name = 'banana' WHERE id = 1", "UPDATE item SET name = 'Bananas' WHERE id = 2"),
            ("SELECT id FROM item WHERE owner IN (1, 3)", "UPDATE item SET owner = 4 WHERE id = 2", "UPDATE item SET owner = 1 WHERE id = 4"),
            ("SELECT id FROM item WHERE price BETWEEN 15 AND 25", "UPDATE item SET price = 26 WHERE id = 4", "UPDATE item SET price = 15 WHERE id = 2"),
            ("SELECT id FROM item WHERE price IS NULL", "UPDATE item SET price = 11 WHERE id = 1", "UPDATE item SET price = 1 WHERE id = 3"),
            ("SELECT id FROM item WHERE price IS NOT 20", "UPDATE item SET price = 20.0 WHERE id = 2", "UPDATE item SET price = 21 WHERE id = 3"),
        ]
        for (sql, unmatched, matched) in cases {
            let test = try kind.make(sql: Self.schema)
            let (_, changes, cancellable) = try await start(
                ValueObservation.trackingAll(SQLRequest<Int64>(sql: sql)), in: test.writer)
            defer { cancellable.cancel() }
            try test.writer.writeSQL(unmatched)
            #expect(changes.withLock { $0 } == 0, "\(sql): \(unmatched)")
            try test.writer.writeSQL(matched)
            #expect(changes.withLock { $0 } == 1, "\(sql): \(matched)")
        }
    }

    /// Without old values (the update hook), every change of the read
    /// columns is notified, as before.
    @Test func theUpdateHookNotifiesAsBefore() async throws {
        let test = try DatabaseKind.inMemoryQueue.make(changeTracking: .updateHookOnly, sql: Self.schema)
        let (_, changes, cancellable) = try await start(
            ValueObservation.trackingAll(SQLRequest<Int64>(sql: "SELECT id FROM item WHERE owner = 2")), in: test.writer)
        defer { cancellable.cancel() }
        try test.writer.writeSQL("UPDATE item SET owner = 5 WHERE id = 4")
        #expect(changes.withLock { $0 } == 1)
    }

    /// Generated columns are computed again in the copy of the row, and a
    /// schema change makes the copy again from the new definition.
    @Test(arguments: DatabaseKind.allCases)
    func generatedColumnsAndSchemaChanges(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: """
            CREATE TABLE item(id INTEGER PRIMARY KEY, price, doubled AS (price * 2), label AS (upper(name)) STORED, name);
            INSERT INTO item (id, price, name) VALUES (1, 10, 'a'), (2, 20, 'b');
            """)
        let (_, changes, cancellable) = try await start(
            ValueObservation.trackingAll(SQLRequest<Int64>(sql: "SELECT id FROM item WHERE doubled > 30 AND label = 'B'")),
            in: test.writer)
        defer { cancellable.cancel() }
        try test.writer.writeSQL("UPDATE item SET price = 14 WHERE id = 1")
        #expect(changes.withLock { $0 } == 0)
        try test.writer.writeSQL("UPDATE item SET price = 21 WHERE id = 2")
        #expect(changes.withLock { $0 } == 1)
        try test.writer.writeSQL("ALTER TABLE item ADD COLUMN note")
        let afterSchemaChange = changes.withLock { $0 }
        try test.writer.writeSQL("UPDATE item SET price = 15 WHERE id = 1")
        #expect(changes.withLock { $0 } == afterSchemaChange)
        try test.writer.writeSQL("UPDATE item SET price = 22 WHERE id = 2")
        #expect(changes.withLock { $0 } == afterSchemaChange + 1)
    }

    /// A row written before `ALTER TABLE ADD COLUMN ... DEFAULT` lacks the
    /// column in its record, and the pre-update hook gives NULL for its old
    /// value: the filter cannot tell, and its deletion is notified.
    @Test(arguments: DatabaseKind.allCases)
    func aColumnAddedWithADefaultIsNotTakenForNull(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schema + "ALTER TABLE item ADD COLUMN status TEXT DEFAULT 'open';")
        let (recorder, changes, cancellable) = try await start(
            ValueObservation.trackingAll(SQLRequest<Int64>(sql: "SELECT id FROM item WHERE status = 'open'")),
            in: test.writer)
        defer { cancellable.cancel() }
        #expect(try await recorder.wait(for: 1)[0] == [1, 2, 3, 4])
        try test.writer.writeSQL("DELETE FROM item WHERE id = 2")
        #expect(changes.withLock { $0 } == 1)
        #expect(try await recorder.wait(for: 2)[1] == [1, 3, 4])
    }

    /// Operators keep the filter; so do the differences observations.
    @Test func operatorsAndDifferencesKeepTheFilter() async throws {
        let test = try DatabaseKind.inMemoryQueue.make(sql: Self.schema)
        let request = SQLRequest<Row>(sql: "SELECT id, name FROM item WHERE owner = 2")
        let (_, mapped, first) = try await start(
            ValueObservation.trackingAll(request).map { $0.count }.removeDuplicates(), in: test.writer)
        defer { first.cancel() }
        let (_, rows, second) = try await start(
            ValueObservation.trackingRowDifferences(sql: request.sql).map { $0.rows.count }, in: test.writer)
        defer { second.cancel() }
        try test.writer.writeSQL("UPDATE item SET name = 'apricot' WHERE id = 1")
        #expect(mapped.withLock { $0 } == 0 && rows.withLock { $0 } == 0)
        try test.writer.writeSQL("UPDATE item SET name = 'cherries' WHERE id = 3")
        #expect(mapped.withLock { $0 } == 1 && rows.withLock { $0 } == 1)
    }

    /// An observation whose fetch is the user's own may read more than its
    /// tracked request selects: no filter.
    @Test func aFetchOfTheUsersIsNotFiltered() async throws {
        let test = try DatabaseKind.inMemoryQueue.make(sql: Self.schema)
        let observation = ValueObservation.tracking(
            regions: [SQLRequest<Row>(sql: "SELECT * FROM item WHERE owner = 2")],
            fetch: { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM item") ?? 0 })
        let (_, changes, cancellable) = try await start(observation, in: test.writer)
        defer { cancellable.cancel() }
        try test.writer.writeSQL("INSERT INTO item VALUES (9, 9, 'fig', 1)")
        #expect(changes.withLock { $0 } == 1)
    }
}

/// Issue 33's differential test: random filters over typed, untyped,
/// NOCASE and generated columns (and some the engine gives up on), random
/// commits; after each commit, an oracle (every query run before and after
/// it) says which results changed. An observation whose result changed
/// must have been told of the commit (nothing missed), and at the end
/// every observation's value equals a fresh fetch. The commits told to an
/// observation whose result did not change are counted, and printed.
// On its own thread (see `DedicatedThreadTrait`): its cases compute for
// seconds, and on Swift's cooperative pool (two threads in CI) they starved
// the parallel debug run; in two runs of it, this suite and others of two
// minutes exceeded their limit, while they take 6 to 8 s alone.
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct RowFilterDifferentialTests {
    static let schema = """
        CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT COLLATE NOCASE, c, d REAL, g AS (a * 2));
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
        INSERT INTO t (id, a, b, c, d) SELECT i, i % 10, char(97 + i % 7) || (i % 3), CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN i WHEN 2 THEN 'x' || i ELSE i * 1.5 END, i / 10.0 FROM n;
        """

    static func randomTerm(using random: inout SplitMix64) -> String {
        let n = Int.random(in: 0..<10, using: &random)
        let letter = String(UnicodeScalar(UInt8(97 + Int.random(in: 0..<7, using: &random))))
        switch Int.random(in: 0..<17, using: &random) {
        case 0: return "a = \(n)"
        case 1: return "a = '\(n)'"
        case 2: return "a IN (\(n), \((n + 3) % 10))"
        case 3: return "b = '\(letter.uppercased())\(n % 3)'"
        case 4: return "b LIKE '\(letter)%'"
        case 5: return "c IS NULL"
        case 6: return "c > \(n * 20)"
        case 7: return "d BETWEEN \(n) AND \(n + 3)"
        case 8: return "g > \(n * 2)"
        case 9: return "NOT (a < \(n))"
        case 10: return "b GLOB '\(letter)*'"
        case 11: return "c IS NOT \(n)"
        // Pinned values converted by affinity: a text for the INTEGER
        // column, an integer for the REAL one, texts and numbers apart in
        // the column without affinity.
        case 12: return "d IN (\(n), '\(n).5')"
        case 13: return "c = '\(["x", ""][n % 2])\(n * 4)'"
        case 14: return "b IN ('\(letter)\(n % 3)', \(n)) AND a IN ('\(n)', \(n + 1))"
        // The engine gives up on these: a subquery, a function of chance.
        case 15: return "a > (SELECT avg(a) FROM t)"
        default: return "abs(random()) >= 0 AND a = \(n)"
        }
    }

    /// Whether the engine gives up on a query's clause (see `randomTerm`).
    static func givesUp(_ query: String) -> Bool {
        query.contains("(SELECT avg(a) FROM t)") || query.contains("random()")
    }

    static func randomWrite(using random: inout SplitMix64) -> String {
        let id = Int.random(in: 1...220, using: &random)
        let n = Int.random(in: 0..<10, using: &random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return "UPDATE t SET a = \(n) WHERE id = \(id)"
        case 1: return "UPDATE t SET b = '\(["A", "b", "C", "d"][n % 4])\(n % 3)' WHERE id = \(id)"
        case 2: return "UPDATE t SET c = \(["NULL", "\(n * 25)", "'x'", "\(n).5"][n % 4]) WHERE id = \(id)"
        case 3: return "UPDATE t SET d = \(Double(n) + 0.5) WHERE id = \(id)"
        case 4: return "DELETE FROM t WHERE id = \(id)"
        case 5: return "INSERT OR REPLACE INTO t (id, a, b, c, d) VALUES (\(id), \(n), 'e\(n % 3)', \(n * 30), \(n))"
        case 6: return "UPDATE t SET a = a + 1 WHERE id BETWEEN \(id) AND \(id + 5)"
        case 7: return "UPDATE t SET c = c WHERE id = \(id)"
        case 8: return "BEGIN; UPDATE t SET a = \(n) WHERE id = \(id); SAVEPOINT s; DELETE FROM t WHERE id < \(id); ROLLBACK TO s; RELEASE s; COMMIT"
        default: return "UPDATE OR REPLACE t SET id = \(id + 300) WHERE id = \(id)"
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func nothingIsMissedAndFewFetchesAreWasted(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schema)
        var random = SplitMix64(seed: 33)
        var queries: [String] = []
        for _ in 0..<30 {
            var clause = Self.randomTerm(using: &random)
            if Bool.random(using: &random) {
                clause += (Bool.random(using: &random) ? " AND " : " OR ") + Self.randomTerm(using: &random)
            }
            queries.append("SELECT * FROM t WHERE \(clause) ORDER BY id")
        }
        var unexplained: [String] = []
        var wastedByFilters = 0
        let (needed, wasted) = try await NotificationOracle.run(
            test, queries: queries, steps: 150, random: &random, randomWrite: Self.randomWrite(using:)
        ) { index, write in
            guard !Self.givesUp(queries[index]) else { return }
            wastedByFilters += 1
            // A REPLACE deletes a row and inserts one again, maybe with the
            // same values: both changes concern the observation, which no
            // row event tells apart from a real change.
            if !write.hasPrefix("INSERT OR REPLACE") { unexplained.append("\(queries[index]) <- \(write)") }
        }
        let share = Double(wasted) / Double(max(1, needed + wasted))
        print("""
            RowFilterDifferentialTests (\(kind)): \(needed) notifications needed, \(wasted) not needed \
            (\((share * 1000).rounded() / 10)% of all), \(wastedByFilters) of them for clauses the engine filters
            """)
        // Only the clauses the engine gives up on, and REPLACEs that write a
        // row again as it was, waste a notification (seeds 33 to 48 checked).
        #expect(unexplained.isEmpty, "\(unexplained.count) notifications not needed: \(unexplained.prefix(3))")
        #expect(needed > 500)
    }
}
