import DatabaseTestSupport
import Differences
import Foundation
@testable import ReactiveSQLite
import TestSupport
import Testing

// Adversarial checks of the observations that compute differences or
// refetch only the changed rows: after each commit, the state that the
// delivered values lead to must equal a fresh fetch of the same query.

// MARK: - Support

protocol AdversarialTable: Sendable { static var name: String { get } }
enum AdvT: AdversarialTable { static let name = "t" }
enum AdvChild: AdversarialTable { static let name = "child" }

/// A record that keeps its whole row.
struct AdvRecord<Table: AdversarialTable>: FetchableRecord, TableRecord, Sendable {
    static var databaseTableName: String { Table.name }
    let row: Row
    init(row: Row) throws { self.row = row }
}

enum Adv {
    /// The stored value, exactly: storage class, bits, bytes (base 64: the
    /// values of 100 KB are compared often).
    static func exact(_ value: DatabaseValue) -> String {
        if value.isInvalidUTF8Text { return "T!" + (value.textBytes ?? Data()).base64EncodedString() }
        switch value.storage {
        case .null: return "N"
        case .integer(let i): return "I\(i)"
        case .real(let r): return "R\(r)(\(String(r.bitPattern, radix: 16)))"
        case .text(let s): return "T" + Data(s.utf8).base64EncodedString()
        case .blob(let b): return "B" + b.base64EncodedString()
        }
    }

    static func exact(_ row: Row) -> String {
        zip(row.columnNames, row.databaseValues).map { "\($0)=\(exact($1))" }.joined(separator: ",")
    }

    static func readable(_ row: Row) -> String { row.description }

    static func fetchRows(_ db: Database, _ sql: String) throws -> [Row] {
        try SQLRequest<Row>(sql: sql).fetchAll(db)
    }

    /// The state a set difference observation leads to: row by key.
    typealias KeyedState = [[DatabaseValue]: Row]

    static func key(_ row: Row, _ keyColumns: [String]) -> [DatabaseValue] {
        keyColumns.map { row.databaseValues[row.index(ofColumn: $0)!] }
    }

    static func apply<T>(_ differences: [SetDifference<AdvRecord<T>>], keyColumns: [String]) -> KeyedState {
        var state = KeyedState()
        apply(differences[...], to: &state, keyColumns: keyColumns)
        return state
    }

    static func apply<T>(_ differences: ArraySlice<SetDifference<AdvRecord<T>>>, to state: inout KeyedState, keyColumns: [String]) {
        for difference in differences {
            for record in difference.deleted { state[key(record.row, keyColumns)] = nil }
            for record in difference.inserted + difference.updated { state[key(record.row, keyColumns)] = record.row }
        }
    }

    /// The state the differences recorded so far lead to, folded once per
    /// difference (a wait's condition runs at each value recorded).
    final class SetDifferenceFold<T: AdversarialTable>: Sendable {
        private let folded = LockedState((count: 0, state: KeyedState()))
        let keyColumns: [String]
        init(keyColumns: [String]) { self.keyColumns = keyColumns }

        func state(after differences: [SetDifference<AdvRecord<T>>]) -> KeyedState {
            folded.withLock { fold in
                if differences.count < fold.count { fold = (0, KeyedState()) }
                Adv.apply(differences[fold.count...], to: &fold.state, keyColumns: keyColumns)
                fold.count = differences.count
                return fold.state
            }
        }
    }

    static func keyedState(_ rows: [Row], keyColumns: [String]) -> KeyedState {
        var state = KeyedState()
        for row in rows { state[key(row, keyColumns)] = row }
        return state
    }

    /// Both states, as sorted lists of exact rows.
    static func describe(_ state: KeyedState) -> [String] { state.values.map(exact).sorted() }

    /// Waits until the set differences lead to the rows of `freshSQL`;
    /// records an issue (and returns false) when they never do.
    static func expectSetDifferences<T>(
        _ recorder: Recorder<SetDifference<AdvRecord<T>>>, writer: any DatabaseWriter, freshSQL: String,
        keyColumns: [String], _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Bool {
        let fresh = try await writer.read { db in try fetchRows(db, freshSQL) }
        let freshState = keyedState(fresh, keyColumns: keyColumns)
        let expected = describe(freshState)
        let fold = SetDifferenceFold<T>(keyColumns: keyColumns)
        let matches: @Sendable ([SetDifference<AdvRecord<T>>]) -> Bool = { values in
            fold.state(after: values) == freshState
        }
        do {
            _ = try await recorder.wait(timeout: .seconds(3), until: matches)
            return true
        } catch is ObservationTimeout {
            let deliveredState = apply(recorder.values, keyColumns: keyColumns)
            let delivered = describe(deliveredState)
            let deliveredOnly = deliveredState.values.filter { !Set(expected).contains(exact($0)) }.map(readable).sorted()
            let freshOnly = fresh.filter { !Set(delivered).contains(exact($0)) }.map(readable)
            Issue.record(
                """
                \(context): set differences lead to \(deliveredState.count) rows, fresh fetch \(fresh.count) rows
                  delivered only: \(deliveredOnly.prefix(8))
                  fresh only:     \(freshOnly.prefix(8))
                """, sourceLocation: sourceLocation)
            return false
        }
    }

    /// Waits until the last value of a row array observation equals the
    /// rows of `freshSQL` exactly, in order.
    static func expectRows(
        _ recorder: Recorder<[Row]>, writer: any DatabaseWriter, freshSQL: String, _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Bool {
        let fresh = try await writer.read { db in try fetchRows(db, freshSQL) }.map(exact)
        do {
            _ = try await recorder.wait(timeout: .seconds(3)) { values in values.last?.map(exact) == fresh }
            return true
        } catch is ObservationTimeout {
            let last = (recorder.values.last ?? []).map(readable)
            let freshRows = try await writer.read { db in try fetchRows(db, freshSQL) }.map(readable)
            Issue.record(
                """
                \(context): last value
                  \(last.prefix(12))
                fresh fetch (\(freshSQL)):
                  \(freshRows.prefix(12))
                """, sourceLocation: sourceLocation)
            return false
        }
    }

    /// Waits until the row differences lead to the rows of `freshSQL`
    /// (as a multiset, or in order when `ordered`), both through `rows` and
    /// through the differences applied to the previous rows.
    ///
    /// - Parameter verified: The number of values whose differences were
    ///   verified already; updated.
    static func expectRowDifferences(
        _ recorder: Recorder<RowsWithDifference>, writer: any DatabaseWriter, freshSQL: String, ordered: Bool = false,
        verified: inout Int, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Bool {
        let freshRows = try await writer.read { db in try fetchRows(db, freshSQL) }
        let fresh = ordered ? freshRows.map(exact) : freshRows.map(exact).sorted()
        do {
            _ = try await recorder.wait(timeout: .seconds(3)) { values in
                guard let last = values.last else { return false }
                let rows = ordered ? Array(last.rows).map(exact) : Array(last.rows).map(exact).sorted()
                return rows == fresh
            }
        } catch is ObservationTimeout {
            let last = Array(recorder.values.last?.rows ?? []).map(exact)
            let freshExact = freshRows.map(exact)
            Issue.record(
                """
                \(context): rows of last value: \(last.count), fresh fetch: \(freshRows.count)
                  delivered only: \(last.filter { !freshExact.contains($0) }.prefix(8))
                  fresh only:     \(freshExact.filter { !last.contains($0) }.prefix(8))
                """, sourceLocation: sourceLocation)
            return false
        }
        // The differences, applied to the previous rows, give the rows.
        let values = recorder.values
        defer { verified = max(verified, values.count) }
        for index in values.indices.dropFirst(max(1, verified)) {
            guard let difference = values[index].difference else { continue }
            var multiset = Array(values[index - 1].rows).map(exact)
            func remove(_ row: Row) -> Bool {
                guard let i = multiset.firstIndex(of: exact(row)) else { return false }
                multiset.remove(at: i)
                return true
            }
            var consistent = true
            for entry in difference.deleted { consistent = remove(entry.row) && consistent }
            for update in difference.updated {
                consistent = remove(update.previous) && consistent
                multiset.append(exact(update.row))
            }
            for entry in difference.inserted { multiset.append(exact(entry.row)) }
            if !consistent || multiset.sorted() != Array(values[index].rows).map(exact).sorted() {
                Issue.record(
                    "\(context): value \(index): the difference does not lead from the previous rows to the rows",
                    sourceLocation: sourceLocation)
                return false
            }
        }
        return true
    }
}

@Suite(.timeLimit(.minutes(2)), .onItsOwnThread) struct IncrementalAdversarialTests {
    typealias T = AdvRecord<AdvT>

    static func startSetDifferences<R: FetchRequest>(
        _ request: R, in writer: any DatabaseWriter
    ) -> (Recorder<SetDifference<R.Element>>, AnyDatabaseCancellable)
    where R.Element: FetchableRecord & TableRecord & Sendable {
        let recorder = Recorder<SetDifference<R.Element>>()
        let cancellable = ValueObservation.trackingSetDifferences(request).start(
            in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        return (recorder, cancellable)
    }

    static func startRows(
        _ observation: ValueObservation<[Row]>, in writer: any DatabaseWriter
    ) -> (Recorder<[Row]>, AnyDatabaseCancellable) {
        let recorder = Recorder<[Row]>()
        let cancellable = observation.start(
            in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        return (recorder, cancellable)
    }

    static func startRowDifferences(
        sql: String, identity: RowIdentity? = nil, ordered: Bool = false, in writer: any DatabaseWriter
    ) -> (Recorder<RowsWithDifference>, AnyDatabaseCancellable) {
        let recorder = Recorder<RowsWithDifference>()
        let cancellable = ValueObservation.trackingRowDifferences(sql: sql, identifiedBy: identity, isOrdered: ordered)
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        return (recorder, cancellable)
    }
}

// MARK: - Scenarios

/// An observed schema, the observations to check, and commits.
struct AdvScenario: Sendable, CustomTestStringConvertible {
    var name: String
    var schema: String
    /// The request of `trackingSetDifferences`, with its fresh SQL and key.
    var setRequest: QueryInterfaceRequest<AdvRecord<AdvT>>?
    var setSQLRequest: String?
    var setFreshSQL: String = "SELECT * FROM t"
    var keyColumns: [String] = ["id"]
    /// `trackingAll` of a limited request, and its fresh SQL (ties by rowid).
    var topRequest: QueryInterfaceRequest<Row>?
    var topFreshSQL: String = ""
    /// `trackingRowDifferences` of this SQL.
    var rowSQL: String?
    var rowOrdered = false
    /// Each step is one write; a step starting with `!` runs outside of a transaction.
    var steps: [String]

    var testDescription: String { name }
}

extension IncrementalAdversarialTests {
    static func run(
        _ scenario: AdvScenario, kind: DatabaseKind, changeTracking: Configuration.ChangeTracking = .automatic
    ) async throws {
        let test = try kind.make(changeTracking: changeTracking, sql: scenario.schema)
        let writer = test.writer
        var cancellables: [AnyDatabaseCancellable] = []
        defer { cancellables.forEach { $0.cancel() } }
        var setRecorder: Recorder<SetDifference<T>>?
        if let request = scenario.setRequest {
            let (recorder, cancellable) = startSetDifferences(request, in: writer)
            setRecorder = recorder
            cancellables.append(cancellable)
        } else if let sql = scenario.setSQLRequest {
            let (recorder, cancellable) = startSetDifferences(SQLRequest<T>(sql: sql), in: writer)
            setRecorder = recorder
            cancellables.append(cancellable)
        }
        var topRecorder: Recorder<[Row]>?
        if let request = scenario.topRequest {
            let (recorder, cancellable) = startRows(ValueObservation.trackingAll(request), in: writer)
            topRecorder = recorder
            cancellables.append(cancellable)
        }
        var rowRecorder: Recorder<RowsWithDifference>?
        if let sql = scenario.rowSQL {
            let (recorder, cancellable) = startRowDifferences(sql: sql, ordered: scenario.rowOrdered, in: writer)
            rowRecorder = recorder
            cancellables.append(cancellable)
        }
        var verifiedRowValues = 0
        func check(_ context: String) async throws -> Bool {
            var ok = true
            if let setRecorder {
                ok = try await Adv.expectSetDifferences(
                    setRecorder, writer: writer, freshSQL: scenario.setFreshSQL, keyColumns: scenario.keyColumns,
                    "\(scenario.name) [\(kind)] set differences, \(context)") && ok
            }
            if let topRecorder {
                ok = try await Adv.expectRows(
                    topRecorder, writer: writer, freshSQL: scenario.topFreshSQL,
                    "\(scenario.name) [\(kind)] top rows, \(context)") && ok
            }
            if let rowRecorder, let sql = scenario.rowSQL {
                ok = try await Adv.expectRowDifferences(
                    rowRecorder, writer: writer, freshSQL: sql, ordered: scenario.rowOrdered, verified: &verifiedRowValues,
                    "\(scenario.name) [\(kind)] row differences, \(context)") && ok
            }
            return ok
        }
        guard try await check("initial") else { return }
        for (index, step) in scenario.steps.enumerated() {
            if step.hasPrefix("!") {
                try await writer.writeWithoutTransaction { db in try db.execute(sql: String(step.dropFirst())) }
            } else {
                try await writer.write { db in try db.execute(sql: step) }
            }
            guard try await check("after step \(index): \(step)") else { return }
        }
    }
}

// MARK: - Targeted scenarios

extension AdvScenario {
    static let ipk = "CREATE TABLE t (id INTEGER PRIMARY KEY, u TEXT UNIQUE, score, name TEXT);"
    static let ipkRowsCTE = """
        WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 120)
        INSERT INTO t (id, u, score, name) SELECT x, 'u' || x, x % 5, 'n' || x FROM s;
        """

    /// Every observation on an INTEGER PRIMARY KEY table with 120 rows.
    static func ipkScenario(_ name: String, extraSchema: String = "", steps: [String]) -> AdvScenario {
        AdvScenario(
            name: name, schema: ipk + extraSchema + ipkRowsCTE,
            setRequest: AdvRecord<AdvT>.all().filter(sql: "score <> ?", arguments: [4]),
            setFreshSQL: "SELECT * FROM t WHERE score <> 4",
            topRequest: AdvRecord<AdvT>.all().order(sql: "score DESC").limit(5).asRequest(of: Row.self),
            topFreshSQL: "SELECT * FROM t ORDER BY score DESC, id LIMIT 5",
            rowSQL: "SELECT * FROM t WHERE score <> 4",
            steps: steps)
    }

    static let targeted: [AdvScenario] = [
        ipkScenario("rowid change of one row", steps: [
            "UPDATE t SET id = 1000, score = 9 WHERE id = 3",
            "UPDATE t SET id = -5 WHERE id = 1000",
            "UPDATE t SET id = 3 WHERE id = -5",
        ]),
        ipkScenario("rowid shift of every row", steps: [
            "UPDATE t SET id = id + 1000",
            "UPDATE t SET id = id - 999 WHERE id > 1290",
        ]),
        ipkScenario("REPLACE on a UNIQUE column deletes another row", steps: [
            "INSERT OR REPLACE INTO t (id, u, score, name) VALUES (5000, 'u7', 9, 'replacer')",
            "UPDATE OR REPLACE t SET u = 'u8', score = 9 WHERE id = 9",
            "REPLACE INTO t (id, u, score, name) VALUES (10, 'u11', 9, 'replaced twice')",
        ]),
        ipkScenario("upsert", steps: [
            "INSERT INTO t (id, u, score, name) VALUES (4, 'x', 9, 'up') ON CONFLICT(id) DO UPDATE SET score = 9, name = 'upserted'",
            "INSERT INTO t (id, u, score, name) VALUES (999, 'u12', 9, 'up') ON CONFLICT(u) DO UPDATE SET score = excluded.score",
        ]),
        ipkScenario("delete and reinsert the same key in one transaction", steps: [
            "DELETE FROM t WHERE id = 20; INSERT INTO t (id, u, score, name) VALUES (20, 'u20', 9, 'again')",
            "DELETE FROM t WHERE id = 21; INSERT INTO t (id, u, score, name) VALUES (21, 'u21', 1, 'n21')",
            "DELETE FROM t; INSERT INTO t (id, u, score, name) VALUES (1, 'u1', 1, 'n1')",
        ]),
        ipkScenario("savepoint rollbacks", steps: [
            "SAVEPOINT a; UPDATE t SET score = 9 WHERE id = 30; ROLLBACK TO a; UPDATE t SET name = 'x' WHERE id = 31; RELEASE a",
            "UPDATE t SET score = 9 WHERE id = 32; SAVEPOINT b; UPDATE t SET score = 0 WHERE id = 32; ROLLBACK TO b; RELEASE b",
            "SAVEPOINT c; DELETE FROM t WHERE id < 100; SAVEPOINT d; INSERT INTO t (id, score) VALUES (50, 9); ROLLBACK TO c; RELEASE c",
            "SAVEPOINT e; UPDATE t SET id = id + 5000 WHERE id = 40; RELEASE e; SAVEPOINT f; UPDATE t SET score = 9 WHERE id = 5040; ROLLBACK TO f; RELEASE f",
        ]),
        ipkScenario("trigger updating other rows", extraSchema: """
            CREATE TRIGGER tr AFTER UPDATE OF name ON t WHEN new.name = 'boost'
            BEGIN UPDATE t SET score = 9 WHERE id = new.id + 1; END;
            """, steps: [
            "UPDATE t SET name = 'boost' WHERE id = 50",
            "UPDATE t SET name = 'boost' WHERE id BETWEEN 60 AND 200",
        ]),
        ipkScenario("many changes in one transaction", steps: [
            "UPDATE t SET score = 9 WHERE id % 3 = 0",
            "UPDATE t SET score = (score + 1) % 5",
            "DELETE FROM t WHERE id % 2 = 0",
            "INSERT INTO t (score, name) SELECT 9, 'more' FROM t LIMIT 100",
        ]),
        ipkScenario("big values", steps: [
            "UPDATE t SET name = zeroblob(100000) WHERE id = 1",
            "UPDATE t SET name = randomblob(70000) || 'x' WHERE id = 1",
            "UPDATE t SET score = 9223372036854775807 WHERE id = 2",
            "UPDATE t SET score = 9223372036854775806 WHERE id = 2",
            "UPDATE t SET id = 9223372036854775807 WHERE id = 3",
            "UPDATE t SET id = -9223372036854775808 WHERE id = 4",
            "UPDATE t SET score = 9 WHERE id IN (9223372036854775807, -9223372036854775808)",
            "UPDATE t SET name = 'y' WHERE id IN (9223372036854775807, -9223372036854775808)",
        ]),
        ipkScenario("storage class changes", steps: [
            "UPDATE t SET score = 1.0 WHERE id = 1",
            "UPDATE t SET score = '1' WHERE id = 1",
            "UPDATE t SET score = x'31' WHERE id = 1",
            "UPDATE t SET score = 1 WHERE id = 1",
            "UPDATE t SET score = 0.0 WHERE id = 5",
            "UPDATE t SET score = -0.0 WHERE id = 5",
            "UPDATE t SET name = 'A' WHERE id = 6",
            "UPDATE t SET name = 'a' WHERE id = 6",
            "UPDATE t SET name = 'é' WHERE id = 7",
            "UPDATE t SET name = 'é' WHERE id = 7",
            "UPDATE t SET name = CAST(x'80ff' AS TEXT) WHERE id = 8",
            "UPDATE t SET name = CAST(x'80fe' AS TEXT) WHERE id = 8",
            "UPDATE t SET name = 'a' || char(0) || 'b' WHERE id = 9",
            "UPDATE t SET name = 'a' || char(0) || 'c' WHERE id = 9",
        ]),
        ipkScenario("cascade from a parent", extraSchema: """
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            INSERT INTO parent (id) VALUES (1), (2), (3);
            ALTER TABLE t ADD COLUMN p REFERENCES parent(id) ON DELETE CASCADE ON UPDATE CASCADE;
            ALTER TABLE t ADD COLUMN q REFERENCES parent(id) ON DELETE SET NULL;
            """, steps: [
            "!PRAGMA foreign_keys = ON",
            "UPDATE t SET p = 1 WHERE id < 50",
            "UPDATE t SET p = 2, q = 3 WHERE id BETWEEN 50 AND 150",
            "DELETE FROM parent WHERE id = 1",
            "UPDATE parent SET id = 20 WHERE id = 2",
            "DELETE FROM parent WHERE id = 3",
            "DELETE FROM parent",
        ]),
        ipkScenario("ALTER TABLE while observing", steps: [
            "!ALTER TABLE t ADD COLUMN extra DEFAULT 7",
            "UPDATE t SET score = 9 WHERE id = 1",
            "!ALTER TABLE t RENAME COLUMN name TO label",
            "UPDATE t SET score = 9 WHERE id = 2",
            "!ALTER TABLE t DROP COLUMN extra",
            "UPDATE t SET score = 9 WHERE id = 3",
        ]),
        ipkScenario("drop and create again", steps: [
            "!BEGIN; DROP TABLE t; CREATE TABLE t (id INTEGER PRIMARY KEY, u TEXT UNIQUE, score, name TEXT); INSERT INTO t (id, score, name) VALUES (1, 9, 'new'), (2, 1, 'two'); COMMIT",
            "UPDATE t SET score = 3 WHERE id = 2",
        ]),
    ]
}

extension IncrementalAdversarialTests {
    @Test(arguments: AdvScenario.targeted, [DatabaseKind.inMemoryQueue])
    func targeted(scenario: AdvScenario, kind: DatabaseKind) async throws {
        try await Self.run(scenario, kind: kind)
    }
}

extension IncrementalAdversarialTests {
    /// `trackingSetDifferences` compares rows with `DatabaseValue ==`, as
    /// documented, for which the integer 1 and the real 1.0 (and 0.0 and
    /// -0.0) are equal: an update that only changes the storage class is
    /// not a change of the record (the kept record may keep the integer),
    /// and the records still equal a fresh fetch's.
    @Test(arguments: [DatabaseKind.inMemoryQueue])
    func setDifferencesCompareValuesAsDatabaseValues(kind: DatabaseKind) async throws {
        let scenario = AdvScenario.ipkScenario("integer to real", steps: [
            "UPDATE t SET score = 1.0 WHERE id = 1",
            "UPDATE t SET score = -0.0 WHERE id = 5",
        ])
        try await Self.run(scenario, kind: kind)
    }
}

// MARK: - Keys of every kind

extension AdvScenario {
    static func keyed(
        _ name: String, schema: String, keyColumns: [String], setSQL: String? = nil, order: String? = nil,
        rowSQL: String? = "SELECT * FROM t", steps: [String]
    ) -> AdvScenario {
        var request = AdvRecord<AdvT>.all()
        if let order { request = request.order(sql: order) }
        return AdvScenario(
            name: name, schema: schema, setRequest: setSQL == nil ? request : nil, setSQLRequest: setSQL,
            setFreshSQL: setSQL ?? "SELECT * FROM t", keyColumns: keyColumns, rowSQL: rowSQL, steps: steps)
    }

    static let keyKinds: [AdvScenario] = [
        keyed("NOCASE text key", schema: "CREATE TABLE t (k TEXT PRIMARY KEY COLLATE NOCASE, v); INSERT INTO t VALUES ('a', 1), ('B', 2), ('c', 3)",
              keyColumns: ["k"], order: "k", steps: [
            "UPDATE t SET k = 'A' WHERE k = 'a'",
            "UPDATE t SET k = 'b' WHERE k = 'B'; UPDATE t SET v = 5 WHERE k = 'c'",
            "DELETE FROM t WHERE k = 'C'; INSERT INTO t VALUES ('C', 3)",
            "INSERT OR REPLACE INTO t VALUES ('a', 9)",
        ]),
        keyed("RTRIM text key", schema: "CREATE TABLE t (k TEXT PRIMARY KEY COLLATE RTRIM, v); INSERT INTO t VALUES ('a', 1), ('b  ', 2)",
              keyColumns: ["k"], steps: [
            "UPDATE t SET k = 'a ' WHERE k = 'a'",
            "UPDATE t SET k = 'b' WHERE k = 'b'",
            "INSERT OR REPLACE INTO t VALUES ('a  ', 5)",
        ]),
        keyed("untyped key of mixed types", schema: "CREATE TABLE t (k PRIMARY KEY, v); INSERT INTO t VALUES (1, 'int'), ('1', 'text'), (x'31', 'blob'), (2.5, 'real')",
              keyColumns: ["k"], steps: [
            "UPDATE t SET k = 1.0 WHERE k = 1",
            "UPDATE t SET v = 'changed' WHERE k = 1",
            "UPDATE t SET k = 3 WHERE k = '1'; UPDATE t SET k = '1' WHERE k = x'31'",
            "UPDATE t SET k = 9223372036854775807 WHERE k = 3",
            "UPDATE t SET k = 9223372036854775806.0 WHERE k = 2.5",
        ]),
        keyed("NULL keys of a rowid table", schema: "CREATE TABLE t (k TEXT PRIMARY KEY, v); INSERT INTO t VALUES ('a', 1), (NULL, 2)",
              keyColumns: ["k"], steps: [
            "UPDATE t SET v = 3 WHERE k IS NULL",
            "UPDATE t SET k = 'b' WHERE k IS NULL",
        ]),
        keyed("composite key", schema: "CREATE TABLE t (a, b TEXT COLLATE NOCASE, v, PRIMARY KEY (b, a)); INSERT INTO t VALUES (1, 'x', 1), (2, 'x', 2), (1, 'Y', 3)",
              keyColumns: ["b", "a"], order: "v", steps: [
            "UPDATE t SET a = 3 WHERE a = 1 AND b = 'x'",
            "UPDATE t SET b = 'X' WHERE a = 2",
            "UPDATE t SET v = v + 1",
            "INSERT OR REPLACE INTO t VALUES (1, 'y', 4)",
        ]),
        keyed("WITHOUT ROWID", schema: "CREATE TABLE t (k TEXT COLLATE NOCASE PRIMARY KEY, v) WITHOUT ROWID; INSERT INTO t VALUES ('a', 1), ('b', 2)",
              keyColumns: ["k"], steps: [
            "UPDATE t SET k = 'A' WHERE k = 'a'",
            "UPDATE t SET v = 3 WHERE k = 'B'",
            "DELETE FROM t; INSERT INTO t VALUES ('a', 1), ('B', 2)",
        ]),
        keyed("INTEGER PRIMARY KEY DESC", schema: "CREATE TABLE t (id INTEGER PRIMARY KEY DESC, v); INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)",
              keyColumns: ["id"], steps: [
            "UPDATE t SET id = 10 WHERE id = 1",
            "UPDATE t SET v = 9 WHERE id = 2",
            "UPDATE t SET id = '4' WHERE id = 3",
            "UPDATE t SET id = 'x' WHERE id = 4",
        ]),
        keyed("hidden rowid and VACUUM", schema: "CREATE TABLE t (v); INSERT INTO t VALUES (1), (2), (3), (4), (5); DELETE FROM t WHERE v IN (2, 3)",
              keyColumns: ["rowid"], setSQL: "SELECT rowid, * FROM t", rowSQL: "SELECT rowid, v FROM t", steps: [
            "!VACUUM",
            "UPDATE t SET v = 9 WHERE v = 5",
            "DELETE FROM t WHERE v = 1",
            "!VACUUM",
            "UPDATE t SET v = 10 WHERE v = 9",
        ]),
        keyed("INTEGER key table with a column named rowid", schema: "CREATE TABLE t (id INTEGER PRIMARY KEY, rowid TEXT, v); INSERT INTO t VALUES (1, 'r1', 1), (2, 'r2', 2)",
              keyColumns: ["id"], steps: [
            "UPDATE t SET rowid = 'x' WHERE id = 1",
            "UPDATE t SET id = 5 WHERE id = 2",
        ]),
        keyed("invalid UTF-8 key", schema: "CREATE TABLE t (k TEXT PRIMARY KEY, v); INSERT INTO t VALUES (CAST(x'80' AS TEXT), 1), (CAST(x'ff' AS TEXT), 2), ('a', 3)",
              keyColumns: ["k"], steps: [
            "UPDATE t SET v = 5 WHERE k = CAST(x'80' AS TEXT)",
            "UPDATE t SET k = CAST(x'c0' AS TEXT) WHERE k = CAST(x'ff' AS TEXT)",
            "UPDATE t SET v = CAST(x'fe' AS TEXT) WHERE k = 'a'",
            "UPDATE t SET v = CAST(x'fd' AS TEXT) WHERE k = 'a'",
        ]),
    ]
}

extension IncrementalAdversarialTests {
    @Test(arguments: AdvScenario.keyKinds, [DatabaseKind.inMemoryQueue])
    func keyKinds(scenario: AdvScenario, kind: DatabaseKind) async throws {
        try await Self.run(scenario, kind: kind)
    }

    @Test(arguments: AdvScenario.keyKinds + AdvScenario.targeted.prefix(4))
    func updateHookOnly(scenario: AdvScenario) async throws {
        try await Self.run(scenario, kind: .inMemoryQueue, changeTracking: .updateHookOnly)
    }
}

// MARK: - Random differential

extension IncrementalAdversarialTests {
    static func randomValue(_ random: inout SplitMix64) -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return "NULL"
        case 1: return "\(Double(Int.random(in: 0..<6, using: &random)))"
        case 2: return "'\(Int.random(in: 0..<6, using: &random))'"
        case 3: return ["'a'", "'A'", "'b'", "'B '", "'é'", "'é'", "CAST(x'ff' AS TEXT)", "x'61'"].randomElement(using: &random)!
        case 4: return "-0.0"
        default: return "\(Int.random(in: 0..<6, using: &random))"
        }
    }

    static func randomStatement(_ random: inout SplitMix64) -> String {
        let id = Int.random(in: 1...60, using: &random)
        let other = Int.random(in: 1...60, using: &random)
        let v = randomValue(&random)
        switch Int.random(in: 0..<14, using: &random) {
        case 0, 1: return "UPDATE t SET score = \(v) WHERE id = \(id)"
        case 2: return "UPDATE t SET name = \(v) WHERE id = \(id)"
        case 3: return "UPDATE OR REPLACE t SET id = \(other) WHERE id = \(id)"
        case 4: return "INSERT OR REPLACE INTO t (id, u, score, name) VALUES (\(id), \(other % 9), \(v), \(randomValue(&random)))"
        case 5: return "UPDATE OR REPLACE t SET u = \(other % 9) WHERE id = \(id)"
        case 6: return "DELETE FROM t WHERE id = \(id)"
        case 7: return "UPDATE t SET score = score + 1 WHERE score > \(v)"
        case 8: return "DELETE FROM t WHERE id = \(id); INSERT INTO t (id, score, name) VALUES (\(id), \(v), 'again')"
        case 9: return "SAVEPOINT s; UPDATE t SET score = \(v) WHERE id = \(id); DELETE FROM t WHERE id = \(other); ROLLBACK TO s; RELEASE s"
        case 10: return "INSERT INTO t (score, name) VALUES (\(v), \(randomValue(&random)))"
        case 11: return "UPDATE t SET id = id + 100 WHERE id = \(id); UPDATE OR REPLACE t SET id = id - 100 WHERE id = \(id + 100)"
        case 12: return "UPDATE t SET name = 'boost' WHERE id = \(id)"
        default: return "UPDATE t SET score = \(v), name = \(randomValue(&random)) WHERE id % 7 = \(id % 7)"
        }
    }

    @Test(arguments: [
        (DatabaseKind.inMemoryQueue, Configuration.ChangeTracking.automatic), (.pool, .automatic),
        (.inMemoryQueue, .updateHookOnly),
    ])
    func randomDifferential(kind: DatabaseKind, changeTracking: Configuration.ChangeTracking) async throws {
        let test = try kind.make(changeTracking: changeTracking, sql: """
            CREATE TABLE t (id INTEGER PRIMARY KEY, u UNIQUE, score, name TEXT COLLATE NOCASE);
            CREATE TRIGGER tr AFTER UPDATE OF name ON t WHEN new.name = 'boost'
            BEGIN UPDATE t SET score = 5 WHERE id = new.id + 1; END;
            WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 40)
            INSERT INTO t (id, score, name) SELECT x, x % 6, char(97 + x % 3) FROM s;
            """)
        let writer = test.writer
        var cancellables: [AnyDatabaseCancellable] = []
        defer { cancellables.forEach { $0.cancel() } }
        let setRequest = AdvRecord<AdvT>.all().filter(sql: "score > ?", arguments: [2]).order(sql: "name")
        let (setRecorder, c1) = Self.startSetDifferences(setRequest, in: writer)
        let (allRecorder, c2) = Self.startSetDifferences(AdvRecord<AdvT>.all(), in: writer)
        let topRequest = AdvRecord<AdvT>.all().order(sql: "score DESC, name").limit(4).asRequest(of: Row.self)
        let (topRecorder, c3) = Self.startRows(ValueObservation.trackingAll(topRequest), in: writer)
        let rowSQL1 = "SELECT id, score, name FROM t WHERE score > 2"
        let (rowRecorder1, c4) = Self.startRowDifferences(sql: rowSQL1, in: writer)
        let rowSQL2 = "SELECT * FROM t WHERE name LIKE 'a%' OR typeof(score) = 'real'"
        let (rowRecorder2, c5) = Self.startRowDifferences(sql: rowSQL2, in: writer)
        let topRequest2 = AdvRecord<AdvT>.all().filter(sql: "name <> 'b'").order(sql: "name DESC").limit(3).asRequest(of: Row.self)
        let (topRecorder2, c6) = Self.startRows(ValueObservation.trackingAll(topRequest2), in: writer)
        cancellables = [c1, c2, c3, c4, c5, c6]

        var random = SplitMix64(seed: 0xAD5E + UInt64(DatabaseKind.allCases.firstIndex(of: kind)!))
        var (verified1, verified2) = (0, 0)
        for step in 0..<120 {
            let statements = (0..<Int.random(in: 1...3, using: &random)).map { _ in Self.randomStatement(&random) }
            try await writer.write { db in
                for sql in statements { try db.execute(sql: sql) }
            }
            let context = "[\(kind), \(changeTracking)] step \(step): \(statements.joined(separator: "; "))"
            var ok = try await Adv.expectSetDifferences(
                setRecorder, writer: writer, freshSQL: "SELECT * FROM t WHERE score > 2", keyColumns: ["id"],
                "filtered set differences \(context)")
            ok = try await Adv.expectSetDifferences(
                allRecorder, writer: writer, freshSQL: "SELECT * FROM t", keyColumns: ["id"],
                "set differences \(context)") && ok
            ok = try await Adv.expectRows(
                topRecorder, writer: writer, freshSQL: "SELECT * FROM t ORDER BY score DESC, name, id LIMIT 4",
                "top rows \(context)") && ok
            ok = try await Adv.expectRows(
                topRecorder2, writer: writer, freshSQL: "SELECT * FROM t WHERE name <> 'b' ORDER BY name DESC, id LIMIT 3",
                "top rows 2 \(context)") && ok
            ok = try await Adv.expectRowDifferences(rowRecorder1, writer: writer, freshSQL: rowSQL1, verified: &verified1, "row differences \(context)") && ok
            ok = try await Adv.expectRowDifferences(rowRecorder2, writer: writer, freshSQL: rowSQL2, verified: &verified2, "row differences 2 \(context)") && ok
            if !ok { break }
        }
    }
}

extension IncrementalAdversarialTests {
    /// A temporary table that hides the observed table, then goes away.
    @Test func temporaryTableHidesTheObservedTable() async throws {
        let scenario = AdvScenario.ipkScenario("temporary table", steps: [
            "!CREATE TEMP TABLE t (id INTEGER PRIMARY KEY, u UNIQUE, score, name); INSERT INTO temp.t VALUES (1, 'x', 9, 'temp')",
            "UPDATE main.t SET score = 9 WHERE id = 2",
            "INSERT INTO temp.t VALUES (2, 'y', 9, 'temp2')",
            "UPDATE temp.t SET score = 0 WHERE id = 1",
            "!DROP TABLE temp.t",
            "UPDATE main.t SET score = 9 WHERE id = 3",
        ])
        try await Self.run(scenario, kind: .inMemoryQueue)
    }

    /// Ties of a NOCASE ordering, whose values change case.
    @Test func topRowsNoCaseTies() async throws {
        let scenario = AdvScenario(
            name: "nocase ties",
            schema: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE); INSERT INTO t (name) VALUES ('a'), ('A'), ('b'), ('B'), ('a ');",
            setRequest: AdvRecord<AdvT>.all().filter(sql: "name = 'a'"), setFreshSQL: "SELECT * FROM t WHERE name = 'a'",
            topRequest: AdvRecord<AdvT>.all().order(sql: "name").limit(2).asRequest(of: Row.self),
            topFreshSQL: "SELECT * FROM t ORDER BY name, id LIMIT 2",
            rowSQL: "SELECT * FROM t WHERE name = 'A'",
            steps: [
                "UPDATE t SET name = 'A' WHERE id = 1",
                "UPDATE t SET name = 'a' WHERE id = 2",
                "UPDATE t SET id = 0 WHERE id = 3; UPDATE t SET name = 'A' WHERE id = 0",
                "UPDATE t SET name = 'Á' WHERE id = 1",
            ])
        try await Self.run(scenario, kind: .inMemoryQueue)
    }
}

extension IncrementalAdversarialTests {
    /// A temporary table created with the name of the observed table hides
    /// it: every observation of `t` now reads the (empty) temporary table,
    /// but no observation is notified of the CREATE.
    @Test func creatingAHidingTemporaryTableChangesTheObservedValue() async throws {
        let scenario = AdvScenario.ipkScenario("hiding temporary table, no row", steps: [
            "!CREATE TEMP TABLE t (id INTEGER PRIMARY KEY, u UNIQUE, score, name)",
        ])
        try await Self.run(scenario, kind: .inMemoryQueue)
    }

    /// A hiding temporary table whose columns come in another order, then
    /// one whose `id` is a plain column (its rowids are not the ids): the
    /// incremental fetches must not reuse what they learnt of `main.t`.
    @Test(arguments: [
        "CREATE TEMP TABLE t (name, score, u UNIQUE, id INTEGER PRIMARY KEY)",
        "CREATE TEMP TABLE t (id, u UNIQUE, score, name)",
        "CREATE TEMP TABLE t (id INTEGER PRIMARY KEY, u UNIQUE, score, name) WITHOUT ROWID",
    ])
    func hidingTemporaryTableOfAnotherShape(create: String) async throws {
        let scenario = AdvScenario.ipkScenario("hiding temporary table of another shape", steps: [
            "!" + create + "; INSERT INTO temp.t (id, u, score, name) VALUES (7, 'a', 9, 'temp7'), (8, 'b', 3, 'temp8')",
            "UPDATE temp.t SET score = 10 WHERE id = 8",
            "UPDATE main.t SET score = 9 WHERE id = 2",
            "INSERT INTO temp.t (id, u, score, name) VALUES (2, 'c', 8, 'temp2')", // no tie: the rowid orders ties
            "DELETE FROM temp.t WHERE id = 7",
            "!DROP TABLE temp.t",
            "UPDATE main.t SET score = 9 WHERE id = 3",
        ])
        try await Self.run(scenario, kind: .inMemoryQueue)
    }
}
