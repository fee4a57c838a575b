import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// Adversarial transactions: savepoints, statements that fail halfway,
/// DDL, triggers, foreign keys, virtual tables... Each scenario runs steps
/// (each one an access of the writer, made of SQL segments whose errors are
/// ignored), and checks, after each step, that every observation whose
/// result changed was told of it before the access returned, and that the
/// values of the observations reach a fresh fetch.
// On its own thread (see `DedicatedThreadTrait`): its cases compute for
// seconds, and on Swift's cooperative pool (two threads in CI) they starved
// the parallel debug run; in two runs of it, this suite and others of two
// minutes exceeded their limit, while they take 6 to 8 s alone.
@Suite(.serialized, .timeLimit(.minutes(3)), .onItsOwnThread) struct TransactionAdversarialTests {
    struct Scenario: Sendable, CustomTestStringConvertible {
        var name: String
        var schema: String
        var queries: [String]
        /// Each step: the SQL segments of one `writeWithoutTransaction`
        /// access, run one after the other, their errors ignored.
        var steps: [[String]]
        /// Runs only on the given tracking path, when not nil.
        var tracking: Configuration.ChangeTracking? = nil
        /// Whether a `DatabaseRegionObservation` of each query must be
        /// told too (its region is recorded once: not after a rename).
        var checksRegionObservation = true
        var testDescription: String { name }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var kind: DatabaseKind
        var tracking: Configuration.ChangeTracking
        var scenario: Scenario
        var testDescription: String { "\(scenario.name), \(kind.rawValue), \(tracking)" }

        static func all(_ scenarios: [Scenario]) -> [Case] {
            scenarios.flatMap { scenario in
                DatabaseKind.allCases.flatMap { kind in
                    changeTrackings.filter { scenario.tracking == nil || scenario.tracking == $0 }.map {
                        Case(kind: kind, tracking: $0, scenario: scenario)
                    }
                }
            }
        }
    }

    /// Runs a scenario; records an issue for each change an observation
    /// missed.
    static func check(_ test: Case, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let scenario = test.scenario
        let database = try test.kind.make(changeTracking: test.tracking, sql: scenario.schema)
        let writer = database.writer
        let queries = scenario.queries
        let recorders = queries.map { _ in Recorder<[Row]>() }
        let told = queries.map { _ in ChangeCounter() }
        var regionTold: [ChangeCounter] = []
        var cancellables: [AnyDatabaseCancellable] = []
        defer { for cancellable in cancellables { cancellable.cancel() } }
        for (index, sql) in queries.enumerated() {
            let counter = told[index]
            let recorder = recorders[index]
            cancellables.append(
                ValueObservation.trackingAll(SQLRequest<Row>(sql: sql))
                    .handleEvents(databaseDidChange: { counter.increment() })
                    .start(in: writer, onError: { _ in }, onChange: { recorder.append($0) }))
            _ = try await recorder.wait(for: 1)
            let (regionCounter, regionCancellable) = countChanges(
                in: writer, of: [SQLRequest<Row>(sql: sql)], sourceLocation: sourceLocation)
            regionTold.append(regionCounter)
            cancellables.append(regionCancellable)
        }
        func results() throws -> [[Row]?] {
            try writer.read { db in queries.map { try? SQLRequest<Row>(sql: $0).fetchAll(db) } }
        }
        var before = try results()
        // The queries whose observation missed a change already: a stale
        // final value would only repeat it.
        var missed = Set<Int>()
        for (stepIndex, step) in scenario.steps.enumerated() {
            let counts = told.map(\.value)
            let regionCounts = regionTold.map(\.value)
            Self.runStep(step, in: writer)
            let after = try results()
            for index in queries.indices where before[index] != after[index] {
                if told[index].value == counts[index] { missed.insert(index) }
                let description = "step \(stepIndex) \(step.joined(separator: " / ")): \(queries[index])"
                #expect(
                    told[index].value > counts[index],
                    "value observation not told: \(description); before \(String(describing: before[index])), after \(String(describing: after[index]))",
                    sourceLocation: sourceLocation)
                if scenario.checksRegionObservation {
                    #expect(
                        regionTold[index].value > regionCounts[index], "region observation not told: \(description)",
                        sourceLocation: sourceLocation)
                }
            }
            if ProcessInfo.processInfo.environment["ADVERSARIAL_TRACE"] != nil, before == after {
                print("UNCHANGED \(test.testDescription) step \(stepIndex)")
            }
            before = after
        }
        for (index, recorder) in recorders.enumerated() {
            guard let expected = before[index], !missed.contains(index) else { continue }
            do {
                _ = try await recorder.wait(timeout: .seconds(5)) { $0.last == expected }
            } catch {
                Issue.record(
                    "\(queries[index]): last value \(String(describing: recorder.values.last)), fresh fetch \(expected)",
                    sourceLocation: sourceLocation)
            }
        }
    }

    /// Runs the segments of a step in one access, blocking; a transaction
    /// left open is rolled back.
    static func runStep(_ step: [String], in writer: any DatabaseWriter) {
        try? writer.writeWithoutTransaction { db in
            for segment in step {
                try? db.execute(sql: segment)
            }
            if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK") }
        }
    }

    // MARK: - Scenarios

    static let basicSchema = """
        CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER NOT NULL DEFAULT 0);
        INSERT INTO t (id, k, v) VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3);
        """

    static let savepointScenarios: [Scenario] = [
        Scenario(
            name: "nested savepoints, rollback to outer after release of inner",
            schema: basicSchema,
            queries: ["SELECT * FROM t ORDER BY id", "SELECT * FROM t WHERE v > 10 ORDER BY id"],
            steps: [
                ["BEGIN", "SAVEPOINT a", "INSERT INTO t (k, v) VALUES ('d', 11)", "SAVEPOINT b",
                 "UPDATE t SET v = 12 WHERE id = 1", "RELEASE b", "ROLLBACK TO a", "UPDATE t SET v = 13 WHERE id = 2",
                 "RELEASE a", "COMMIT"],
                ["SAVEPOINT a", "SAVEPOINT b", "DELETE FROM t WHERE id = 2", "ROLLBACK TO a", "SAVEPOINT c",
                 "INSERT INTO t (k, v) VALUES ('e', 50)", "RELEASE c", "RELEASE a"],
                ["SAVEPOINT a", "INSERT INTO t (k, v) VALUES ('f', 60)", "SAVEPOINT a", "DELETE FROM t WHERE k = 'f'",
                 "ROLLBACK TO a", "RELEASE a", "RELEASE a"],
                ["BEGIN", "SAVEPOINT x", "UPDATE t SET v = 99 WHERE id = 3", "ROLLBACK TO x", "ROLLBACK TO x",
                 "UPDATE t SET v = 98 WHERE id = 3", "COMMIT"],
                ["BEGIN", "SAVEPOINT x", "UPDATE t SET v = 97 WHERE id = 3", "SAVEPOINT y", "RELEASE x",
                 "SAVEPOINT z", "UPDATE t SET v = 96 WHERE id = 1", "ROLLBACK TO z", "COMMIT"],
                // Savepoint names compare case-insensitively.
                ["BEGIN", "SAVEPOINT Sp", "UPDATE t SET v = 95 WHERE id = 1", "RELEASE sP", "SAVEPOINT q",
                 "UPDATE t SET v = 94 WHERE id = 2", "ROLLBACK TO Q", "COMMIT"],
                // A savepoint begun before the outer transaction ended, then ROLLBACK.
                ["BEGIN", "UPDATE t SET v = 93 WHERE id = 1", "SAVEPOINT s", "ROLLBACK", "UPDATE t SET v = 92 WHERE id = 2"],
            ]),
    ]

    static let failureScenarios: [Scenario] = [
        Scenario(
            name: "OR FAIL keeps the first rows, in a transaction",
            schema: basicSchema,
            queries: ["SELECT * FROM t ORDER BY id"],
            steps: [
                ["BEGIN", "INSERT OR FAIL INTO t (k, v) VALUES ('x', 10), ('y', 11), ('a', 12)", "COMMIT"],
                ["BEGIN", "UPDATE OR FAIL t SET k = 'z' WHERE v >= 10", "COMMIT"],
                ["INSERT OR FAIL INTO t (k, v) VALUES ('w', 10), ('a', 12)"],
                ["BEGIN", "INSERT OR ABORT INTO t (k, v) VALUES ('u', 10), ('a', 12)", "INSERT INTO t (k) VALUES ('q')", "COMMIT"],
                ["BEGIN", "INSERT OR ROLLBACK INTO t (k, v) VALUES ('r', 10), ('a', 12)", "INSERT INTO t (k) VALUES ('s')", "COMMIT"],
                ["INSERT OR IGNORE INTO t (k, v) VALUES ('a', 10), ('o', 11)"],
                ["INSERT OR REPLACE INTO t (k, v) VALUES ('a', 100)"],
                ["BEGIN", "UPDATE OR REPLACE t SET k = 'b' WHERE k = 'c'", "COMMIT"],
            ]),
        Scenario(
            name: "RAISE in triggers",
            schema: basicSchema + """
                CREATE TABLE log (id INTEGER PRIMARY KEY, msg TEXT);
                CREATE TRIGGER t_bi BEFORE INSERT ON t BEGIN
                    INSERT INTO log (msg) VALUES ('before ' || NEW.k);
                    SELECT RAISE(FAIL, 'fail') WHERE NEW.k = 'fail';
                    SELECT RAISE(ABORT, 'abort') WHERE NEW.k = 'abort';
                    SELECT RAISE(ROLLBACK, 'rollback') WHERE NEW.k = 'rollback';
                    SELECT RAISE(IGNORE) WHERE NEW.k = 'ignore';
                END;
                """,
            queries: ["SELECT * FROM t ORDER BY id", "SELECT * FROM log ORDER BY id"],
            steps: [
                ["INSERT INTO t (k) VALUES ('fail')"],
                ["INSERT INTO t (k) VALUES ('x1'), ('fail')"],
                ["BEGIN", "INSERT INTO t (k) VALUES ('x2'), ('fail')", "COMMIT"],
                ["BEGIN", "INSERT INTO t (k) VALUES ('x3'), ('abort')", "COMMIT"],
                ["BEGIN", "INSERT INTO t (k) VALUES ('x4')", "INSERT INTO t (k) VALUES ('x5'), ('rollback')", "INSERT INTO t (k) VALUES ('x6')"],
                ["INSERT INTO t (k) VALUES ('ignore')"],
                ["BEGIN", "INSERT INTO t (k) VALUES ('fail')", "COMMIT"],
                ["BEGIN", "SAVEPOINT s", "INSERT INTO t (k) VALUES ('x7'), ('fail')", "RELEASE s", "COMMIT"],
            ]),
    ]

    /// A REPLACE deletion is not counted by `sqlite3_changes()`; a trigger
    /// that fails with FAIL after it keeps it.
    static let replaceThenFailScenarios: [Scenario] = [
        Scenario(
            name: "REPLACE deletion kept by RAISE(FAIL) in a delete trigger",
            schema: basicSchema + """
                CREATE TRIGGER t_ad AFTER DELETE ON t BEGIN
                    SELECT RAISE(FAIL, 'no') WHERE OLD.v = 2;
                END;
                """,
            queries: ["SELECT * FROM t ORDER BY id", "SELECT k FROM t WHERE k = 'b'"],
            steps: [
                ["PRAGMA recursive_triggers = ON", "BEGIN", "INSERT OR REPLACE INTO t (id, k, v) VALUES (10, 'b', 20)", "COMMIT"],
                ["PRAGMA recursive_triggers = ON", "INSERT OR REPLACE INTO t (id, k, v) VALUES (11, 'a', 2)",
                 "INSERT OR REPLACE INTO t (id, k, v) VALUES (12, 'a', 21)"],
            ]),
    ]

    /// WITHOUT ROWID tables: the update hook reports none of their rows.
    static let withoutRowIDScenarios: [Scenario] = [
        Scenario(
            name: "WITHOUT ROWID, OR FAIL keeps the first rows",
            schema: """
                CREATE TABLE w (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;
                INSERT INTO w VALUES ('a', 1);
                """,
            queries: ["SELECT * FROM w ORDER BY k"],
            steps: [
                ["INSERT OR FAIL INTO w VALUES ('b', 2), ('a', 3)"],
                ["BEGIN", "INSERT OR FAIL INTO w VALUES ('c', 2), ('a', 3)", "COMMIT"],
                ["BEGIN", "UPDATE OR FAIL w SET k = 'a' WHERE k > 'a'", "COMMIT"],
            ]),
        Scenario(
            name: "WITHOUT ROWID written by a trigger of a statement that changes no row",
            schema: """
                CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT);
                CREATE TABLE w (k TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
                CREATE TRIGGER t_bi BEFORE INSERT ON t BEGIN
                    INSERT INTO w (k, n) VALUES (NEW.k, 1) ON CONFLICT (k) DO UPDATE SET n = n + 1;
                    SELECT RAISE(IGNORE) WHERE NEW.k = 'ignored';
                END;
                INSERT INTO t (id, k) VALUES (1, 'a');
                """,
            queries: ["SELECT * FROM w ORDER BY k"],
            steps: [
                ["INSERT OR IGNORE INTO t (id, k) VALUES (1, 'b')"],
                ["INSERT INTO t (k) VALUES ('ignored')"],
                ["BEGIN", "INSERT OR IGNORE INTO t (id, k) VALUES (1, 'c')", "COMMIT"],
                ["INSERT INTO t (id, k) VALUES (1, 'd') ON CONFLICT DO NOTHING"],
            ]),
        Scenario(
            name: "WITHOUT ROWID written through a view",
            schema: """
                CREATE TABLE w (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;
                CREATE VIEW vw AS SELECT k, v FROM w;
                CREATE TRIGGER vw_ii INSTEAD OF INSERT ON vw BEGIN
                    INSERT INTO w VALUES (NEW.k, NEW.v);
                END;
                CREATE TRIGGER vw_iu INSTEAD OF UPDATE ON vw BEGIN
                    UPDATE w SET v = NEW.v WHERE k = OLD.k;
                END;
                CREATE TRIGGER vw_id INSTEAD OF DELETE ON vw BEGIN
                    DELETE FROM w WHERE k = OLD.k;
                END;
                """,
            queries: ["SELECT * FROM w ORDER BY k"],
            steps: [
                ["INSERT INTO vw VALUES ('a', 1)"],
                ["UPDATE vw SET v = 2"],
                ["BEGIN", "INSERT INTO vw VALUES ('b', 1)", "DELETE FROM vw WHERE k = 'a'", "COMMIT"],
            ]),
    ]

    /// Schema changes that change what a query reads.
    static let schemaScenarios: [Scenario] = [
        Scenario(
            name: "a temporary table hides the observed main table",
            schema: basicSchema,
            queries: ["SELECT * FROM t ORDER BY id"],
            steps: [
                ["CREATE TEMP TABLE t (id INTEGER PRIMARY KEY, k TEXT, v INTEGER)"],
                ["INSERT INTO temp.t (id, k, v) VALUES (7, 'temp', 7)"],
                ["DROP TABLE temp.t"],
                ["BEGIN", "CREATE TEMP TABLE t AS SELECT * FROM main.t WHERE id = 1", "COMMIT"],
            ]),
        Scenario(
            name: "a temporary view hides the observed main table",
            schema: basicSchema,
            queries: ["SELECT * FROM t ORDER BY id"],
            steps: [
                ["CREATE TEMP VIEW t AS SELECT 1 AS id, 'view' AS k, 0 AS v"],
                ["DROP VIEW temp.t"],
            ]),
        Scenario(
            name: "DDL in a transaction",
            schema: basicSchema + "CREATE TABLE u (id INTEGER PRIMARY KEY, t_id INTEGER);",
            queries: ["SELECT * FROM t ORDER BY id", "SELECT * FROM u ORDER BY id", "SELECT k FROM t WHERE v = 2"],
            steps: [
                ["BEGIN", "ALTER TABLE t ADD COLUMN w INTEGER DEFAULT 5", "UPDATE t SET w = 6 WHERE id = 1", "COMMIT"],
                ["BEGIN", "ALTER TABLE t RENAME COLUMN w TO x", "COMMIT"],
                ["BEGIN", "ALTER TABLE t DROP COLUMN x", "INSERT INTO u (t_id) VALUES (1)", "COMMIT"],
                ["BEGIN", "CREATE INDEX t_v ON t(v)", "UPDATE t SET v = 2 WHERE id = 3", "DROP INDEX t_v", "COMMIT"],
                ["BEGIN", "CREATE TRIGGER t_au AFTER UPDATE ON t BEGIN INSERT INTO u (t_id) VALUES (NEW.id); END",
                 "UPDATE t SET v = 9 WHERE id = 2", "COMMIT"],
                ["BEGIN", "SAVEPOINT s", "ALTER TABLE t ADD COLUMN y INTEGER DEFAULT 1", "ROLLBACK TO s",
                 "UPDATE t SET v = 8 WHERE id = 1", "COMMIT"],
                ["BEGIN", "CREATE TABLE n (id INTEGER PRIMARY KEY)", "INSERT INTO n DEFAULT VALUES",
                 "ALTER TABLE u RENAME TO u2", "ALTER TABLE n RENAME TO u", "COMMIT"],
                ["BEGIN", "DROP TABLE u", "ALTER TABLE u2 RENAME TO u", "COMMIT"],
            ]),
    ]

    @Test(arguments: Case.all(withoutRowIDScenarios))
    func withoutRowID(_ test: Case) async throws { try await Self.check(test) }

    @Test(arguments: Case.all(schemaScenarios))
    func schemaChanges(_ test: Case) async throws { try await Self.check(test) }

    static let fkSchema = """
        CREATE TABLE parent (id INTEGER PRIMARY KEY, k TEXT UNIQUE);
        CREATE TABLE child (id INTEGER PRIMARY KEY,
            pc INTEGER REFERENCES parent(id) ON DELETE CASCADE ON UPDATE CASCADE,
            pn INTEGER REFERENCES parent(id) ON DELETE SET NULL ON UPDATE CASCADE,
            pd INTEGER DEFAULT 0 REFERENCES parent(id) ON DELETE SET DEFAULT ON UPDATE SET NULL);
        CREATE TABLE deferred (id INTEGER PRIMARY KEY,
            p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
        CREATE TABLE wchild (k TEXT PRIMARY KEY, p INTEGER REFERENCES parent(id) ON DELETE CASCADE) WITHOUT ROWID;
        INSERT INTO parent (id, k) VALUES (0, 'zero'), (1, 'a'), (2, 'b'), (3, 'c');
        INSERT INTO child (id, pc, pn, pd) VALUES (1, 1, 2, 3), (2, 2, 3, 1), (3, 3, 1, 2);
        INSERT INTO wchild VALUES ('x', 1), ('y', 2);
        """

    static let writeScenarios: [Scenario] = [
        Scenario(
            name: "foreign key actions",
            schema: fkSchema,
            queries: ["SELECT * FROM child ORDER BY id", "SELECT * FROM child WHERE pn IS NULL", "SELECT * FROM deferred",
                      "SELECT * FROM wchild ORDER BY k", "SELECT * FROM child WHERE pd = 0"],
            steps: [
                ["DELETE FROM parent WHERE id = 3"],
                ["BEGIN", "UPDATE parent SET id = 10 WHERE id = 1", "COMMIT"],
                ["INSERT OR REPLACE INTO parent (id, k) VALUES (20, 'b')"],
                ["BEGIN", "INSERT INTO deferred (p) VALUES (99)", "COMMIT", "INSERT INTO parent (id) VALUES (99)", "COMMIT"],
                ["BEGIN", "INSERT INTO deferred (p) VALUES (98)", "COMMIT"],
                ["BEGIN", "SAVEPOINT s", "DELETE FROM parent", "ROLLBACK TO s", "DELETE FROM parent WHERE id = 10", "RELEASE s", "COMMIT"],
                ["INSERT INTO parent (id, k) VALUES (5, 'e')", "INSERT INTO child (id, pc) VALUES (9, 5)", "INSERT INTO wchild VALUES ('z', 5)",
                 "DROP TABLE parent"],
            ]),
        Scenario(
            name: "recursive triggers",
            schema: """
                CREATE TABLE node (id INTEGER PRIMARY KEY, parent INTEGER, n INTEGER NOT NULL DEFAULT 0);
                CREATE TRIGGER node_ad AFTER DELETE ON node BEGIN
                    DELETE FROM node WHERE parent = OLD.id;
                END;
                CREATE TRIGGER node_au AFTER UPDATE OF n ON node WHEN NEW.n < 5 BEGIN
                    UPDATE node SET n = NEW.n + 1 WHERE id = NEW.id;
                END;
                INSERT INTO node (id, parent) VALUES (1, NULL), (2, 1), (3, 2), (4, 3), (5, NULL);
                """,
            queries: ["SELECT * FROM node ORDER BY id", "SELECT id FROM node WHERE n = 5"],
            steps: [
                ["PRAGMA recursive_triggers = ON", "DELETE FROM node WHERE id = 2"],
                ["PRAGMA recursive_triggers = ON", "UPDATE node SET n = 1 WHERE id = 5"],
                ["PRAGMA recursive_triggers = OFF", "BEGIN", "DELETE FROM node WHERE id = 1", "COMMIT"],
            ]),
        Scenario(
            name: "UPSERT, RETURNING, INSERT SELECT from the same table, truncate",
            schema: basicSchema,
            queries: ["SELECT * FROM t ORDER BY id", "SELECT id FROM t WHERE v >= 100", "SELECT count(*) FROM t"],
            steps: [
                ["INSERT INTO t (k, v) VALUES ('a', 100) ON CONFLICT (k) DO UPDATE SET v = excluded.v"],
                ["INSERT INTO t (k, v) VALUES ('b', 100) ON CONFLICT DO NOTHING"],
                ["BEGIN", "INSERT INTO t (k, v) SELECT k || 'x', v + 1 FROM t RETURNING id", "COMMIT"],
                ["UPDATE t SET v = v + 100 WHERE v < 5 RETURNING *"],
                ["DELETE FROM t RETURNING id"],
                ["INSERT INTO t (k, v) VALUES ('p', 1), ('q', 2)"], ["BEGIN", "DELETE FROM t", "COMMIT"],
                ["INSERT INTO t (k, v) VALUES ('p', 1), ('q', 2)", "BEGIN", "SAVEPOINT s", "DELETE FROM t", "ROLLBACK TO s",
                 "DELETE FROM t WHERE k = 'p'", "RELEASE s", "COMMIT"],
                ["INSERT INTO t (k, v) VALUES ('r', 1) ON CONFLICT (k) DO UPDATE SET v = v + 1",
                 "INSERT INTO t (k, v) VALUES ('r', 1) ON CONFLICT (k) DO UPDATE SET v = v + 1 WHERE v > 100"],
            ]),
        Scenario(
            name: "multi-statement strings and transaction kinds",
            schema: basicSchema,
            queries: ["SELECT * FROM t ORDER BY id", "SELECT id FROM t WHERE v > 50"],
            steps: [
                ["BEGIN IMMEDIATE; UPDATE t SET v = 60 WHERE id = 1; SAVEPOINT s; UPDATE t SET v = 70 WHERE id = 2; ROLLBACK TO s; COMMIT"],
                ["BEGIN EXCLUSIVE; INSERT INTO t (k, v) VALUES ('n', 51); INSERT INTO t (k) VALUES ('a'); COMMIT", "COMMIT"],
                ["SAVEPOINT a; UPDATE t SET v = 80 WHERE id = 3; RELEASE a; SAVEPOINT b; DELETE FROM t WHERE id = 1; ROLLBACK TO b; RELEASE b"],
                ["BEGIN; UPDATE t SET v = 1 WHERE id = 3; INSERT INTO t (k) VALUES ('a')", "COMMIT"],
                ["BEGIN DEFERRED; UPDATE t SET v = 200 WHERE id = 2; ROLLBACK; UPDATE t SET v = 201 WHERE id = 1"],
            ]),
        Scenario(
            name: "VACUUM, user_version, attached database with the same table name",
            schema: """
                CREATE TABLE t (k TEXT, v INTEGER);
                INSERT INTO t VALUES ('a', 1), ('b', 2), ('c', 3);
                """,
            queries: ["SELECT rowid, * FROM t ORDER BY rowid", "SELECT k FROM t WHERE v = 2"],
            steps: [
                ["DELETE FROM t WHERE k = 'a'", "VACUUM"],
                ["PRAGMA user_version = 7"],
                ["ATTACH DATABASE ':memory:' AS aux", "CREATE TABLE aux.t (k TEXT, v INTEGER)",
                 "INSERT INTO aux.t VALUES ('x', 2)", "BEGIN", "INSERT INTO aux.t VALUES ('y', 2)",
                 "UPDATE main.t SET v = 2 WHERE k = 'c'", "COMMIT", "DETACH DATABASE aux"],
            ]),
    ]

    @Test(arguments: Case.all(writeScenarios))
    func writes(_ test: Case) async throws { try await Self.check(test) }

    static let virtualTableScenarios: [Scenario] = [
        Scenario(
            name: "FTS5 with an external content table",
            schema: """
                CREATE TABLE doc (id INTEGER PRIMARY KEY, body TEXT);
                CREATE VIRTUAL TABLE ft USING fts5(body, content='doc', content_rowid='id');
                CREATE TRIGGER doc_ai AFTER INSERT ON doc BEGIN
                    INSERT INTO ft (rowid, body) VALUES (NEW.id, NEW.body);
                END;
                CREATE TRIGGER doc_ad AFTER DELETE ON doc BEGIN
                    INSERT INTO ft (ft, rowid, body) VALUES ('delete', OLD.id, OLD.body);
                END;
                INSERT INTO doc (id, body) VALUES (1, 'x one'), (2, 'y two');
                """,
            queries: ["SELECT rowid FROM ft WHERE ft MATCH 'x' ORDER BY rowid"],
            steps: [
                ["INSERT INTO doc (id, body) VALUES (3, 'x three')"],
                ["BEGIN", "SAVEPOINT s", "INSERT INTO doc (id, body) VALUES (4, 'x four')", "ROLLBACK TO s",
                 "INSERT INTO doc (id, body) VALUES (5, 'x five')", "RELEASE s", "COMMIT"],
                ["BEGIN", "DELETE FROM doc WHERE id = 1", "COMMIT"],
                ["INSERT OR FAIL INTO doc (id, body) VALUES (6, 'x six'), (3, 'x dup')"],
            ]),
        Scenario(
            name: "FTS5 with columnsize=0 and an external content table",
            schema: """
                CREATE TABLE doc (id INTEGER PRIMARY KEY, body TEXT);
                CREATE VIRTUAL TABLE ft USING fts5(body, content='doc', content_rowid='id', columnsize=0);
                CREATE TRIGGER doc_ai AFTER INSERT ON doc BEGIN
                    INSERT INTO ft (rowid, body) VALUES (NEW.id, NEW.body);
                END;
                CREATE TRIGGER doc_ad AFTER DELETE ON doc BEGIN
                    INSERT INTO ft (ft, rowid, body) VALUES ('delete', OLD.id, OLD.body);
                END;
                INSERT INTO doc (id, body) VALUES (1, 'x one'), (2, 'y two');
                """,
            queries: ["SELECT rowid FROM ft WHERE ft MATCH 'x' ORDER BY rowid"],
            steps: [
                ["INSERT INTO doc (id, body) VALUES (3, 'x three')"],
                ["BEGIN", "INSERT INTO doc (id, body) VALUES (5, 'x five')", "COMMIT"],
                ["BEGIN", "DELETE FROM doc WHERE id = 1", "COMMIT"],
                ["INSERT INTO ft (rowid, body) VALUES (10, 'x ten')"],
                ["BEGIN", "INSERT INTO ft (rowid, body) VALUES (11, 'x eleven')", "COMMIT"],
            ]),
        Scenario(
            name: "contentless FTS5 with columnsize=0",
            schema: """
                CREATE VIRTUAL TABLE ft USING fts5(body, content='', columnsize=0);
                INSERT INTO ft (rowid, body) VALUES (1, 'x one');
                """,
            queries: ["SELECT rowid FROM ft WHERE ft MATCH 'x' ORDER BY rowid"],
            steps: [
                ["INSERT INTO ft (rowid, body) VALUES (2, 'x two')"],
                ["BEGIN", "INSERT INTO ft (rowid, body) VALUES (3, 'x three')", "COMMIT"],
            ]),
        Scenario(
            name: "R*Tree in savepoints and failing statements",
            schema: """
                CREATE VIRTUAL TABLE box USING rtree(id, minX, maxX);
                INSERT INTO box VALUES (1, 0, 5), (2, 10, 20);
                """,
            queries: ["SELECT * FROM box WHERE minX <= 10 ORDER BY id"],
            steps: [
                ["BEGIN", "SAVEPOINT s", "INSERT INTO box VALUES (3, 1, 2)", "ROLLBACK TO s", "INSERT INTO box VALUES (4, 2, 3)", "COMMIT"],
                ["INSERT OR FAIL INTO box VALUES (5, 3, 4), (1, 9, 9)"],
                ["BEGIN", "INSERT OR FAIL INTO box VALUES (6, 3, 4), (1, 9, 9)", "COMMIT"],
                ["BEGIN", "INSERT INTO box VALUES (7, 3, 4), (1, 9, 9)", "COMMIT"],
            ]),
    ]

    static let renameScenarios: [Scenario] = [
        Scenario(
            name: "a view whose base table is renamed",
            schema: basicSchema + "CREATE VIEW v AS SELECT k, v FROM t WHERE v > 1;",
            queries: ["SELECT * FROM v ORDER BY k"],
            steps: [
                ["ALTER TABLE t RENAME TO t2"],
                ["INSERT INTO t2 (k, v) VALUES ('z', 5)"],
                ["BEGIN", "UPDATE t2 SET v = 0 WHERE k = 'b'", "COMMIT"],
            ],
            checksRegionObservation: false),
    ]

    @Test(arguments: Case.all(virtualTableScenarios))
    func virtualTables(_ test: Case) async throws { try await Self.check(test) }

    @Test(arguments: Case.all(renameScenarios))
    func renames(_ test: Case) async throws { try await Self.check(test) }

    @Test(arguments: Case.all(savepointScenarios))
    func savepoints(_ test: Case) async throws { try await Self.check(test) }

    @Test(arguments: Case.all(failureScenarios))
    func failures(_ test: Case) async throws { try await Self.check(test) }

    @Test(arguments: Case.all(replaceThenFailScenarios))
    func replaceThenFail(_ test: Case) async throws { try await Self.check(test) }
}
