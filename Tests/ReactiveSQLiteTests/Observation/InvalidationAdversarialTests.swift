import DatabaseTestSupport
import Foundation
@testable import ReactiveSQLite
import Testing
import TestSupport

/// Adversarial tests of precise invalidation (row filters, pinned values,
/// windows): each observes a query, commits a write that changes the
/// query's result, and checks that the observation was told (the count of
/// `databaseDidChange` is exact once the write returns) and then delivers
/// the value of a fresh fetch. A wasted notification is fine; a missed one
/// is the bug these tests look for.
@Suite struct InvalidationAdversarialTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var schema: String
        var query: String
        var arguments: StatementArguments = StatementArguments()
        var writes: [String]
        var testDescription: String { "\(query) \(arguments) / \(writes.joined(separator: "; "))" }
    }

    /// Observes `query`, runs `writes` (one transaction each), and expects
    /// the observation to be told of each write that changes its result,
    /// and to end with the value of a fresh fetch.
    static func expectNoMissedChange(
        kind: DatabaseKind, configuration: Configuration = Configuration(), _ testCase: Case,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let test = try kind.make(configuration: configuration, sql: testCase.schema)
        let request = SQLRequest<Row>(sql: testCase.query, arguments: testCase.arguments)
        let recorder = Recorder<[Row]>()
        let changes = LockedState(0)
        let cancellable = ValueObservation.trackingAll(request)
            .handleEvents(databaseDidChange: { changes.withLock { $0 += 1 } })
            .start(in: test.writer, onError: { Issue.record("observation failed: \($0)", sourceLocation: sourceLocation) },
                   onChange: { recorder.append($0) })
        defer { cancellable.cancel() }
        var previous = try await recorder.wait(for: 1)[0]
        let initial = previous
        for write in testCase.writes {
            let before = changes.withLock { $0 }
            try test.writer.writeSQL(write)
            let fresh = try await test.writer.read { db in try request.fetchAll(db) }
            if fresh != previous {
                #expect(
                    changes.withLock { $0 } > before,
                    "MISSED: \(write): observation had \(previous), fresh fetch \(fresh)", sourceLocation: sourceLocation)
            }
            previous = fresh
        }
        #expect(previous != initial, "the writes must change the result", sourceLocation: sourceLocation)
        if changes.withLock({ $0 }) > 0 {
            let expected = previous
            _ = try? await recorder.wait(timeout: .seconds(5)) { $0.last == expected }
        }
        #expect(recorder.values.last == previous, "observed value differs from a fresh fetch", sourceLocation: sourceLocation)
    }

    // MARK: - Cases that behave correctly (kept as regression tests)

    static let schema = """
        CREATE TABLE t(
            id INTEGER PRIMARY KEY, i INTEGER, r REAL, n NUMERIC, s TEXT, c TEXT COLLATE NOCASE,
            rt TEXT COLLATE RTRIM, b BLOB, x, g AS (i * 2) VIRTUAL, gs AS (s || 'z') STORED);
        INSERT INTO t(id, i, r, n, s, c, rt, b, x) VALUES
            (1, 1, 1.0, 1, '1', 'abc', 'a', x'01', 1),
            (2, 2, 2.5, 2.5, 'b', 'ÉCOLE', 'b  ', x'02', '2'),
            (3, 9007199254740993, 0.0, 0, 'c', 'x', 'c', x'', 16);
        """

    static func c(_ query: String, _ writes: String..., arguments: StatementArguments = StatementArguments()) -> Case {
        Case(schema: schema, query: query, arguments: arguments, writes: writes)
    }

    static let correctCases: [Case] = [
        // Affinity of the constant.
        c("SELECT * FROM t WHERE i = 1.0", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE i = '1'", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE i = '1e0'", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE i = ' 1 '", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE i = 0x1", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE x = 0x10", "UPDATE t SET s = 'q' WHERE id = 3"),
        c("SELECT * FROM t WHERE x = 1e0", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE x = '2'", "UPDATE t SET x = 2 WHERE id = 2"),
        c("SELECT * FROM t WHERE x = 2", "UPDATE t SET x = 2.0 WHERE id = 2"),
        c("SELECT * FROM t WHERE s = 1", "UPDATE t SET s = '1.0' WHERE id = 1"),
        c("SELECT * FROM t WHERE s = 1.0", "UPDATE t SET s = 1.0 WHERE id = 1"),
        c("SELECT * FROM t WHERE s IN (1, 'zz')", "UPDATE t SET i = 5 WHERE id = 1"),
        c("SELECT * FROM t WHERE n = '2.50'", "UPDATE t SET s = 'q' WHERE id = 2"),
        c("SELECT * FROM t WHERE r = 2.5", "UPDATE t SET r = '2.5' WHERE id = 1"),
        c("SELECT * FROM t WHERE r = 1", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE i = -1", "UPDATE t SET i = -1 WHERE id = 2"),
        c("SELECT * FROM t WHERE i = - 1", "UPDATE t SET i = -1 WHERE id = 2"),
        // Large integers, zero signs.
        c("SELECT * FROM t WHERE i = 9007199254740992", "UPDATE t SET i = 9007199254740992 WHERE id = 3"),
        c("SELECT * FROM t WHERE i = 9007199254740993", "UPDATE t SET s = 'q' WHERE id = 3"),
        c("SELECT * FROM t WHERE i = 9007199254740993", "UPDATE t SET i = 9007199254740992 WHERE id = 3"),
        c("SELECT * FROM t WHERE r = -0.0", "UPDATE t SET s = 'q' WHERE id = 3"),
        c("SELECT * FROM t WHERE r = 0", "UPDATE t SET r = -0.0 WHERE id = 3", "UPDATE t SET s = 'q' WHERE id = 3"),
        c("SELECT * FROM t WHERE x = 0", "UPDATE t SET x = -0.0 WHERE id = 3"),
        // Collations.
        c("SELECT * FROM t WHERE c = 'ABC'", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE c = 'école'", "UPDATE t SET c = 'éCOLE' WHERE id = 2"),
        c("SELECT * FROM t WHERE c = 'école'", "UPDATE t SET c = 'écOLE' WHERE id = 1"),
        c("SELECT * FROM t WHERE rt = 'b'", "UPDATE t SET s = 'q' WHERE id = 2"),
        c("SELECT * FROM t WHERE rt = 'a  '", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE rt = 'a'", "UPDATE t SET rt = 'a \t' WHERE id = 1"),
        c("SELECT * FROM t WHERE c = 'ABC' COLLATE BINARY", "UPDATE t SET c = 'ABC' WHERE id = 1"),
        c("SELECT * FROM t WHERE s = 'B' COLLATE NOCASE", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE s COLLATE NOCASE = 'B'", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE 'B' COLLATE NOCASE = s", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE s = 'B' COLLATE RTRIM", "UPDATE t SET s = 'B  ' WHERE id = 2"),
        c("SELECT * FROM t WHERE c IN ('ABC') COLLATE BINARY", "UPDATE t SET c = 'ABC' WHERE id = 1"),
        // Blobs.
        c("SELECT * FROM t WHERE b = x'01'", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE b = x''", "UPDATE t SET s = 'q' WHERE id = 3"),
        c("SELECT * FROM t WHERE b = ''", "UPDATE t SET b = '' WHERE id = 1"),
        c("SELECT * FROM t WHERE x = x'31'", "UPDATE t SET x = x'31' WHERE id = 1"),
        // Spellings of the column.
        c("SELECT * FROM t WHERE \"S\" = 'b'", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE [s] = 'b'", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE `s` = 'b'", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE t.s = 'b'", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE main.t.s = 'b'", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM main.t AS q WHERE q.s = 'b'", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t q WHERE q.\"s\" == 'b'", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE 'b' = s", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE \"zz\" = s", "UPDATE t SET s = 'zz' WHERE id = 2"),
        // Terms that must not pin.
        c("SELECT * FROM t WHERE s = 'b' OR i = 1", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE i = 1 AND s = '1' OR i = 3", "UPDATE t SET i = 3 WHERE id = 2"),
        c("SELECT * FROM t WHERE NOT s = 'b'", "UPDATE t SET i = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE NOT s = 'b' AND i = 1", "UPDATE t SET s = 'z' WHERE id = 1"),
        c("SELECT * FROM t WHERE CASE WHEN s = 'b' THEN 0 ELSE 1 END", "UPDATE t SET i = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE (s = 'b') = 0", "UPDATE t SET i = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE s = 'b' = 0", "UPDATE t SET i = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE s = 'b' IS 0", "UPDATE t SET i = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE s = 'b' IS NOT 1", "UPDATE t SET i = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE s = 'b' ISNULL", "UPDATE t SET s = NULL WHERE id = 1"),
        c("SELECT * FROM t WHERE s IN ('b') = 0", "UPDATE t SET i = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE s = 'b' BETWEEN 0 AND 0", "UPDATE t SET i = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE i BETWEEN s = 'b' AND 1", "UPDATE t SET i = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE +i = 1", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE +s = '1'", "UPDATE t SET i = 5 WHERE id = 1"),
        c("SELECT * FROM t WHERE i + 0 = 1", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE i = s", "UPDATE t SET i = 2 WHERE id = 1"),
        c("SELECT * FROM t WHERE i IS 1", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE i IS NOT 2 AND i IS NOT 1", "UPDATE t SET i = 5 WHERE id = 1"),
        c("SELECT * FROM t WHERE i != 2", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE i NOT IN (2, 3)", "UPDATE t SET s = 'q' WHERE id = 1"),
        c("SELECT * FROM t WHERE s = -'1'", "UPDATE t SET s = '-1' WHERE id = 1"),
        c("SELECT * FROM t WHERE s = ~1", "UPDATE t SET s = '-2' WHERE id = 1"),
        c("SELECT * FROM t WHERE s = 'b' || ''", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE s = 'b' --1\n AND i = 2", "UPDATE t SET r = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE s = /* 'zz' */ 'b'", "UPDATE t SET r = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE i = 2 AND s LIKE 'B'", "UPDATE t SET r = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE s IN ('b', 'zz') AND i BETWEEN 0 AND 5", "UPDATE t SET r = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE i BETWEEN 1 AND 1 AND s = '1'", "UPDATE t SET r = 7 WHERE id = 1"),
        c("SELECT * FROM t WHERE s IN ('zz')", "UPDATE t SET s = 'zz' WHERE id = 2"),
        c("SELECT * FROM t WHERE s IN ('zz') OR 1", "UPDATE t SET r = 7 WHERE id = 2"),
        c("SELECT * FROM t WHERE s = TRUE", "UPDATE t SET s = 1 WHERE id = 2"),
        c("SELECT * FROM t WHERE i = true", "UPDATE t SET s = 'q' WHERE id = 1"),
        // Generated columns, the rowid.
        c("SELECT * FROM t WHERE g = 4", "UPDATE t SET s = 'q' WHERE id = 2"),
        c("SELECT * FROM t WHERE g = 4", "UPDATE t SET i = 2 WHERE id = 1"),
        c("SELECT * FROM t WHERE gs = 'bz'", "UPDATE t SET s = 'b' WHERE id = 1"),
        c("SELECT * FROM t WHERE rowid = 2", "UPDATE t SET s = 'q' WHERE id = 2"),
        c("SELECT * FROM t WHERE oid = 2", "UPDATE t SET id = 20 WHERE id = 2"),
        c("SELECT * FROM t WHERE _rowid_ = 20", "UPDATE t SET id = 20 WHERE id = 2"),
        c("SELECT * FROM t WHERE id = 2", "UPDATE t SET s = 'q' WHERE id = 2"),
        // Parameters.
        c("SELECT * FROM t WHERE s = ?", "UPDATE t SET i = 7 WHERE id = 2", arguments: ["b"]),
        c("SELECT * FROM t WHERE i = ?", "UPDATE t SET s = 'q' WHERE id = 1", arguments: ["1"]),
        c("SELECT * FROM t WHERE i = ?", "UPDATE t SET s = 'q' WHERE id = 1", arguments: [1.0]),
        c("SELECT * FROM t WHERE s = ?", "UPDATE t SET s = '1.5' WHERE id = 1", arguments: [1.5]),
        c("SELECT * FROM t WHERE b = ?", "UPDATE t SET s = 'q' WHERE id = 1", arguments: [Data([1])]),
        c("SELECT * FROM t WHERE s = :v", "UPDATE t SET i = 7 WHERE id = 2", arguments: ["v": "b"]),
        c("SELECT * FROM t WHERE s = @v", "UPDATE t SET i = 7 WHERE id = 2", arguments: ["v": "b"]),
        c("SELECT * FROM t WHERE s = $v", "UPDATE t SET i = 7 WHERE id = 2", arguments: ["v": "b"]),
        c("SELECT :v AS p, * FROM t WHERE s = :v AND i = :w", "UPDATE t SET r = 7 WHERE id = 2", arguments: ["v": "b", "w": 2]),
        c("SELECT ? AS p, * FROM t WHERE s = ? AND i = ? LIMIT ?", "UPDATE t SET r = 7 WHERE id = 2", arguments: [0, "b", 2, 5]),
        c("SELECT * FROM t WHERE s = ?1", "UPDATE t SET i = 7 WHERE id = 2", arguments: ["b"]),
        c("SELECT * FROM t WHERE i = ? AND s = ?", "UPDATE t SET r = 7 WHERE id = 2", arguments: [2, "b"]),
        // Row moves, REPLACE, triggers.
        c("SELECT * FROM t WHERE i = 1", "INSERT OR REPLACE INTO t(id, i, s) VALUES (1, 7, 'n')"),
        c("SELECT * FROM t WHERE i = 1", "REPLACE INTO t(id, i, s) VALUES (1, 1, 'n')"),
        c("SELECT * FROM t WHERE i = 1", "UPDATE t SET id = 10 WHERE id = 1"),
        c("SELECT * FROM t WHERE i = 1", "DELETE FROM t"),
        c("SELECT * FROM t WHERE i = 1",
          "CREATE TABLE log(v); CREATE TRIGGER tr AFTER INSERT ON log BEGIN UPDATE t SET s = NEW.v WHERE i = 1; END",
          "INSERT INTO log VALUES ('from trigger')"),
        // Windows.
        c("SELECT * FROM t WHERE x IS NOT NULL ORDER BY i LIMIT 2", "UPDATE t SET i = 0 WHERE id = 3"),
        c("SELECT * FROM t WHERE x IS NOT NULL ORDER BY i DESC LIMIT 1", "UPDATE t SET i = 9007199254740999 WHERE id = 1"),
        c("SELECT * FROM t WHERE i > 0 ORDER BY s LIMIT 1", "UPDATE t SET s = '0' WHERE id = 3"),
        c("SELECT * FROM t WHERE i > 0 ORDER BY c LIMIT 1", "UPDATE t SET c = 'AAA' WHERE id = 3"),
        c("SELECT * FROM t ORDER BY rt, id LIMIT 1", "UPDATE t SET rt = '' WHERE id = 3"),
        // Schema changes while observing.
        c("SELECT * FROM t WHERE s = 'b'", "ALTER TABLE t ADD COLUMN z TEXT DEFAULT 'd'", "UPDATE t SET i = 7 WHERE id = 2"),
        c("SELECT id, s FROM t WHERE s = 'b'", "ALTER TABLE t ADD COLUMN z TEXT DEFAULT 'd'", "UPDATE t SET s = 'q' WHERE id = 2"),
        c("SELECT id, s FROM t WHERE s = 'b'",
          "CREATE INDEX t_s ON t(s)", "UPDATE t SET s = 'q' WHERE id = 2", "DROP INDEX t_s", "UPDATE t SET s = 'b' WHERE id = 1"),
    ]

    @Test(arguments: correctCases)
    func adversarialCasesOnAQueue(testCase: Case) async throws {
        try await Self.expectNoMissedChange(kind: .inMemoryQueue, testCase)
    }

    @Test(arguments: DatabaseKind.allCases)
    func adversarialCasesOnEveryKind(kind: DatabaseKind) async throws {
        guard kind != .inMemoryQueue else { return }
        for testCase in Self.correctCases {
            try await Self.expectNoMissedChange(kind: kind, testCase)
        }
    }

    static let otherTableCases: [Case] = [
        // A column added with a default: old rows lack it in their record.
        Case(
            schema: """
                CREATE TABLE a(id INTEGER PRIMARY KEY, v INTEGER);
                INSERT INTO a VALUES (1, 1), (2, 2);
                ALTER TABLE a ADD COLUMN z TEXT DEFAULT 'd';
                ALTER TABLE a ADD COLUMN w INTEGER DEFAULT 5;
                """,
            query: "SELECT * FROM a WHERE z = 'd' AND w = 5", writes: ["UPDATE a SET v = 3 WHERE id = 1", "DELETE FROM a WHERE id = 2"]),
        // WITHOUT ROWID, its key changed.
        Case(
            schema: """
                CREATE TABLE w(k TEXT PRIMARY KEY, v INTEGER, s TEXT) WITHOUT ROWID;
                INSERT INTO w VALUES ('a', 1, 'x'), ('b', 2, 'y');
                """,
            query: "SELECT * FROM w WHERE v = 1", writes: ["UPDATE w SET s = 'z' WHERE k = 'a'", "UPDATE w SET k = 'c' WHERE k = 'a'"]),
        Case(
            schema: """
                CREATE TABLE w(v INTEGER, g AS (v + 1) VIRTUAL, k TEXT, s TEXT, PRIMARY KEY (s, k)) WITHOUT ROWID;
                INSERT INTO w(v, k, s) VALUES (1, 'a', 'x'), (2, 'b', 'y');
                """,
            query: "SELECT * FROM w WHERE s = 'x'", writes: ["UPDATE w SET v = 9 WHERE k = 'a'", "UPDATE w SET s = 'q' WHERE k = 'a'"]),
        // STRICT, ANY keeps texts apart from numbers.
        Case(
            schema: """
                CREATE TABLE st(id INTEGER PRIMARY KEY, a ANY, b INT) STRICT;
                INSERT INTO st VALUES (1, '1', 1), (2, 1, 2);
                """,
            query: "SELECT * FROM st WHERE a = '1'", writes: ["UPDATE st SET b = 5 WHERE id = 1", "UPDATE st SET a = '1' WHERE id = 2"]),
        Case(
            schema: """
                CREATE TABLE st(id INTEGER PRIMARY KEY, a ANY, b INT) STRICT;
                INSERT INTO st VALUES (1, '1', 1), (2, 1, 2);
                """,
            query: "SELECT * FROM st WHERE a = 1", writes: ["UPDATE st SET b = 5 WHERE id = 2", "UPDATE st SET a = 1 WHERE id = 1"]),
        // A non-STRICT ANY column has NUMERIC affinity.
        Case(
            schema: """
                CREATE TABLE an(id INTEGER PRIMARY KEY, a ANY, b INT);
                INSERT INTO an VALUES (1, '1', 1), (2, 'x', 2);
                """,
            query: "SELECT * FROM an WHERE a = '1.0'", writes: ["UPDATE an SET b = 5 WHERE id = 1"]),
        // Odd declared types.
        Case(
            schema: """
                CREATE TABLE od(id INTEGER PRIMARY KEY, a FLOATING POINT, b REALBLOB, c "VAR CHAR", d);
                INSERT INTO od VALUES (1, '1.0', '1', 1, 1);
                """,
            query: "SELECT * FROM od WHERE a = 1 AND b = '1' AND c = '1'", writes: ["UPDATE od SET d = 5 WHERE id = 1"]),
        // VIRTUAL generated columns before the pinned and filtered ones.
        Case(
            schema: """
                CREATE TABLE vg(id INTEGER PRIMARY KEY, v1 AS (a * 10) VIRTUAL, a INTEGER, v2 AS (b || '!'), b TEXT, s INTEGER);
                INSERT INTO vg(id, a, b, s) VALUES (1, 1, 'x', 0), (2, 2, 'y', 0);
                """,
            query: "SELECT * FROM vg WHERE b = 'y' AND v1 = 20", writes: ["UPDATE vg SET s = 1 WHERE id = 2", "UPDATE vg SET a = 3 WHERE id = 2"]),
        // A hidden rowid that an UPDATE changes.
        Case(
            schema: """
                CREATE TABLE h(a INTEGER, s TEXT);
                INSERT INTO h(rowid, a, s) VALUES (1, 1, 'x'), (2, 2, 'y');
                """,
            query: "SELECT rowid, * FROM h WHERE rowid = 2", writes: ["UPDATE h SET rowid = 5 WHERE rowid = 2"]),
        Case(
            schema: """
                CREATE TABLE h(a INTEGER, s TEXT);
                INSERT INTO h(rowid, a, s) VALUES (1, 1, 'x'), (2, 2, 'y');
                """,
            query: "SELECT rowid, * FROM h WHERE a = 2", writes: ["UPDATE h SET rowid = 5 WHERE rowid = 2"]),
        // INTEGER PRIMARY KEY DESC is no rowid alias.
        Case(
            schema: """
                CREATE TABLE d(id INTEGER PRIMARY KEY DESC, a INTEGER);
                INSERT INTO d VALUES (1, 1), (2, 2);
                """,
            query: "SELECT rowid, * FROM d WHERE id = 2", writes: ["UPDATE d SET a = 5 WHERE id = 2"]),
        // Foreign key actions.
        Case(
            schema: """
                CREATE TABLE parent(id INTEGER PRIMARY KEY);
                CREATE TABLE child(id INTEGER PRIMARY KEY, p INTEGER REFERENCES parent(id) ON DELETE CASCADE ON UPDATE CASCADE, s TEXT);
                INSERT INTO parent VALUES (1), (2);
                INSERT INTO child VALUES (1, 1, 'a'), (2, 2, 'b');
                """,
            query: "SELECT * FROM child WHERE p = 1", writes: ["UPDATE parent SET id = 5 WHERE id = 1"]),
        Case(
            schema: """
                CREATE TABLE parent(id INTEGER PRIMARY KEY);
                CREATE TABLE child(id INTEGER PRIMARY KEY, p INTEGER REFERENCES parent(id) ON DELETE SET NULL, s TEXT);
                INSERT INTO parent VALUES (1), (2);
                INSERT INTO child VALUES (1, 1, 'a'), (2, 2, 'b');
                """,
            query: "SELECT * FROM child WHERE p = 1", writes: ["DELETE FROM parent WHERE id = 1"]),
        // A unique index whose REPLACE deletes another row.
        Case(
            schema: """
                CREATE TABLE u(id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER);
                INSERT INTO u VALUES (1, 'a', 1), (2, 'b', 2);
                """,
            query: "SELECT * FROM u WHERE v = 1", writes: ["UPDATE OR REPLACE u SET k = 'a' WHERE id = 2"]),
        // A view over the table.
        Case(
            schema: """
                CREATE TABLE base(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);
                CREATE VIEW v(x, y) AS SELECT b, a FROM base;
                INSERT INTO base VALUES (1, 1, 'p'), (2, 2, 'q');
                """,
            query: "SELECT * FROM v WHERE y = 1", writes: ["UPDATE base SET b = 'z' WHERE id = 1"]),
        // A NOCASE text with a NUL byte, non-ASCII letters.
        Case(
            schema: """
                CREATE TABLE nc(id INTEGER PRIMARY KEY, s TEXT COLLATE NOCASE, v INTEGER);
                INSERT INTO nc VALUES (1, 'a' || char(0) || 'x', 1), (2, 'ÿ', 2);
                """,
            query: "SELECT * FROM nc WHERE s = ?", arguments: ["A\u{0}y"], writes: ["UPDATE nc SET v = 5 WHERE id = 1"]),
        Case(
            schema: """
                CREATE TABLE nc(id INTEGER PRIMARY KEY, s TEXT COLLATE NOCASE, v INTEGER);
                INSERT INTO nc VALUES (1, 'a' || char(0) || 'x', 1), (2, 'Ÿ', 2);
                """,
            query: "SELECT * FROM nc WHERE s = 'ÿ'", writes: ["UPDATE nc SET s = 'ÿ' WHERE id = 2"]),
    ]

    @Test(arguments: DatabaseKind.allCases)
    func otherTables(kind: DatabaseKind) async throws {
        for testCase in Self.otherTableCases {
            try await Self.expectNoMissedChange(kind: kind, testCase)
        }
    }

    // MARK: - Missed changes (bugs)

    /// A temporary table `t` hides the main table `t`; the observation reads
    /// `main.t` explicitly. The writer describes the table by its name, as
    /// SQLite resolves it (`temp.t`): a row of `main.t` must not be read
    /// with those columns (it once was: the pin and the filter read the
    /// wrong slots).
    static let tempSchema = """
        CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);
        INSERT INTO t VALUES (1, 1, 'x'), (2, 2, 'y');
        CREATE TEMP TABLE t(id INTEGER PRIMARY KEY, b TEXT, a INTEGER);
        """

    @Test(arguments: DatabaseKind.allCases)
    func tempTableHidingTheMainTable_pinnedColumn(kind: DatabaseKind) async throws {
        try await Self.expectNoMissedChange(kind: kind, Case(
            schema: Self.tempSchema, query: "SELECT id, a, b FROM main.t WHERE b = 'x'",
            writes: ["UPDATE main.t SET a = 5 WHERE id = 1"]))
    }

    @Test(arguments: DatabaseKind.allCases)
    func tempTableHidingTheMainTable_rowFilter(kind: DatabaseKind) async throws {
        try await Self.expectNoMissedChange(kind: kind, Case(
            schema: Self.tempSchema, query: "SELECT id, a, b FROM main.t WHERE b LIKE 'x'",
            writes: ["UPDATE main.t SET a = 5 WHERE id = 1"]))
    }

    /// On a pool, the readers have no temporary table: `FROM t` reads the
    /// main table there, while the writer's name `t` is its temporary table.
    @Test func tempTableOfTheWriterOnAPool() async throws {
        try await Self.expectNoMissedChange(kind: .pool, Case(
            schema: Self.tempSchema, query: "SELECT id, a, b FROM t WHERE b LIKE 'x'",
            writes: ["UPDATE main.t SET a = 5 WHERE id = 1"]))
    }

    /// A table whose own column is named `rowid` still has a hidden rowid
    /// (`oid`, `_rowid_`): the copy of `RowFilterEvaluator` must bind it by
    /// one of those (binding `rowid` gave the column the key, and the
    /// copy's hidden rowid was 1).
    static let rowidColumnSchema = """
        CREATE TABLE t(rowid TEXT, a INTEGER);
        INSERT INTO t(rowid, a) VALUES ('x', 1), ('y', 2);
        """

    @Test(arguments: DatabaseKind.allCases)
    func aColumnNamedRowid_filterOnTheColumn(kind: DatabaseKind) async throws {
        try await Self.expectNoMissedChange(kind: kind, Case(
            schema: Self.rowidColumnSchema, query: "SELECT a FROM t WHERE rowid = 'x'",
            writes: ["UPDATE t SET a = 10 WHERE rowid = 'x'"]))
    }

    @Test(arguments: DatabaseKind.allCases)
    func aColumnNamedRowid_filterOnTheHiddenRowid(kind: DatabaseKind) async throws {
        try await Self.expectNoMissedChange(kind: kind, Case(
            schema: Self.rowidColumnSchema, query: "SELECT a FROM t WHERE _rowid_ = 2",
            writes: ["UPDATE t SET a = 20 WHERE _rowid_ = 2"]))
    }

    /// `PRAGMA case_sensitive_like = ON` on the observed connections: the
    /// private database of the copies has the default case-insensitive
    /// LIKE, where `NOT LIKE` rejects rows the query accepts: filters that
    /// use LIKE must give up.
    @Test(arguments: DatabaseKind.allCases)
    func caseSensitiveLikeWithNotLike(kind: DatabaseKind) async throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA case_sensitive_like = ON") }
        try await Self.expectNoMissedChange(kind: kind, configuration: configuration, Case(
            schema: """
                CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);
                INSERT INTO t VALUES (1, 'abc', 1), (2, 'Abc', 2);
                """,
            query: "SELECT * FROM t WHERE name NOT LIKE 'A%'",
            writes: ["UPDATE t SET v = 10 WHERE id = 1"]))
    }

    /// Control: the cases above with the update hook (no row filter, no
    /// pins) are notified too.
    @Test func controlWithoutPreciseInvalidation() async throws {
        var configuration = Configuration()
        configuration.changeTracking = .updateHookOnly
        for testCase in [
            Case(schema: Self.tempSchema, query: "SELECT id, a, b FROM main.t WHERE b = 'x'", writes: ["UPDATE main.t SET a = 5 WHERE id = 1"]),
            Case(schema: Self.tempSchema, query: "SELECT id, a, b FROM main.t WHERE b LIKE 'x'", writes: ["UPDATE main.t SET a = 5 WHERE id = 1"]),
            Case(schema: Self.rowidColumnSchema, query: "SELECT a FROM t WHERE rowid = 'x'", writes: ["UPDATE t SET a = 10 WHERE rowid = 'x'"]),
            Case(schema: Self.rowidColumnSchema, query: "SELECT a FROM t WHERE _rowid_ = 2", writes: ["UPDATE t SET a = 20 WHERE _rowid_ = 2"]),
        ] {
            try await Self.expectNoMissedChange(kind: .inMemoryQueue, configuration: configuration, testCase)
        }
        configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA case_sensitive_like = ON") }
        try await Self.expectNoMissedChange(kind: .inMemoryQueue, configuration: configuration, Case(
            schema: """
                CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);
                INSERT INTO t VALUES (1, 'abc', 1), (2, 'Abc', 2);
                """,
            query: "SELECT * FROM t WHERE name NOT LIKE 'A%'",
            writes: ["UPDATE t SET v = 10 WHERE id = 1"]))
    }

    /// Two columns whose names are canonically equivalent Swift strings
    /// (NFC "é" and NFD "e\u{301}") are two columns for SQLite, and two
    /// pinned columns with their own collations (keyed by Swift `String`,
    /// they were merged: the second column's values were read under the
    /// first one's NOCASE, and no longer equalled its BINARY pin).
    @Test(arguments: DatabaseKind.allCases)
    func canonicallyEquivalentColumnNamesShareACollation(kind: DatabaseKind) async throws {
        let nfc = "\u{E9}"
        let nfd = "e\u{301}"
        let test = try kind.make(sql: """
            CREATE TABLE t(id INTEGER PRIMARY KEY, "\(nfc)" TEXT COLLATE NOCASE, "\(nfd)" TEXT);
            INSERT INTO t VALUES (1, 'x', 'ABC'), (2, 'y', 'DEF');
            """)
        // First: pins the NOCASE column.
        let first = Recorder<[Row]>()
        let firstCancellable = ValueObservation.trackingAll(SQLRequest<Row>(sql: "SELECT id FROM t WHERE \"\(nfc)\" = 'x'"))
            .start(in: test.writer, onError: { Issue.record("\($0)") }, onChange: { first.append($0) })
        defer { firstCancellable.cancel() }
        _ = try await first.wait(for: 1)
        // Second: pins the BINARY column to 'ABC'.
        let request = SQLRequest<Row>(sql: "SELECT id FROM t WHERE \"\(nfd)\" = 'ABC'")
        let second = Recorder<[Row]>()
        let changes = LockedState(0)
        let secondCancellable = ValueObservation.trackingAll(request)
            .handleEvents(databaseDidChange: { changes.withLock { $0 += 1 } })
            .start(in: test.writer, onError: { Issue.record("\($0)") }, onChange: { second.append($0) })
        defer { secondCancellable.cancel() }
        let initial = try await second.wait(for: 1)[0]
        try test.writer.writeSQL("UPDATE t SET \"\(nfd)\" = 'GHI' WHERE id = 1")
        let fresh = try await test.writer.read { db in try request.fetchAll(db) }
        #expect(fresh != initial)
        #expect(changes.withLock { $0 } == 1, "MISSED: observation had \(initial), fresh fetch \(fresh)")
    }
}
