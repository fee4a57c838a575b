import DatabaseRegions
import DatabaseTestSupport
import Foundation
@testable import ReactiveSQLite
import Testing
import TestSupport

/// The values index (issue 33, point 2): an observation whose filter pins
/// a column to constants (`owner = ?`, `status IN ('a', 'b')`) is found
/// from a changed row's old and new values, so that a write costs the
/// observations pinned to its row's values, not every observation of the
/// table.
@Suite struct PinnedColumnTests {
    // MARK: - Which terms pin a column

    static func pinned(_ sql: String, _ arguments: StatementArguments = []) -> [String] {
        (RowFilter(sql: sql, arguments: arguments)?.pinnedColumns ?? []).map { pinned in
            pinned.column + " " + pinned.constants.map {
                switch $0 {
                case .literal(let text): text
                case .value(let value): "\(value)"
                }
            }.joined(separator: ",")
        }
    }

    @Test func termsRequiredByTheWholeClausePin() {
        #expect(Self.pinned("SELECT * FROM item WHERE owner = ?", [5]) == ["owner 5"])
        #expect(Self.pinned("SELECT * FROM item WHERE ? == owner", [5]) == ["owner 5"])
        #expect(Self.pinned("SELECT * FROM item i WHERE i.status IN ('a', 'it''s', x'00') AND price > 3")
            == ["status 'a','it''s',x'00'"])
        #expect(Self.pinned("SELECT * FROM item WHERE price BETWEEN 1 AND 2 AND \"Owner\" = -1.5e-3 ORDER BY id")
            == ["Owner -1.5e-3"])
        #expect(Self.pinned("SELECT * FROM item WHERE a = :a AND (b > 1 OR c) AND main.item.d = 0x1F", ["a": "x"])
            == ["a 'x'", "d 0x1F"])
        #expect(Self.pinned("SELECT ? FROM item WHERE owner = ? LIMIT ?", [0, 7, 10]) == ["owner 7"])
    }

    @Test(arguments: [
        "SELECT * FROM item WHERE owner = 1 OR price > 3",
        "SELECT * FROM item WHERE NOT owner = 1",
        "SELECT * FROM item WHERE owner = 1 COLLATE NOCASE",
        "SELECT * FROM item WHERE owner + 0 = 1",
        "SELECT * FROM item WHERE +owner = 1",
        "SELECT * FROM item WHERE owner = price",
        "SELECT * FROM item WHERE owner = NULL",
        "SELECT * FROM item WHERE owner = TRUE",
        "SELECT * FROM item WHERE owner = -'1'",
        "SELECT * FROM item WHERE owner IN (1, price)",
        "SELECT * FROM item WHERE owner != 1",
        "SELECT * FROM item WHERE owner >= 1",
        "SELECT * FROM item WHERE owner = 1 = 1",
        "SELECT * FROM item WHERE (owner = 1)",
        "SELECT * FROM item WHERE CASE WHEN a AND owner = 1 AND b THEN 1 ELSE 0 END",
        "SELECT * FROM item WHERE owner NOT IN (1, 2)",
    ])
    func otherTermsDoNotPin(sql: String) {
        #expect(Self.pinned(sql).isEmpty, "\(sql)")
    }

    // MARK: - Notifications

    static let schema = """
        CREATE TABLE item(
            id INTEGER PRIMARY KEY, owner INTEGER, label TEXT COLLATE NOCASE, code TEXT COLLATE RTRIM,
            tag, ratio REAL, twice AS (owner * 2));
        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 299)
        INSERT INTO item (id, owner, label, code, tag, ratio) SELECT i + 1, i, 'L' || i, 'c' || i, i, i FROM n;
        """

    /// 300 observations of `owner = ?`, one per owner: a write of one row
    /// runs the filter of the observations pinned to its old and new
    /// owners only, and tells them only.
    @Test(arguments: DatabaseKind.allCases)
    func aWriteConcernsTheObservationsPinnedToItsRowsValues(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schema)
        let owners = 0..<300
        let told = owners.map { _ in LockedState(0) }
        let recorders = owners.map { _ in Recorder<[Row]>() }
        var cancellables: [AnyDatabaseCancellable] = []
        defer { for cancellable in cancellables { cancellable.cancel() } }
        for owner in owners {
            let counter = told[owner]
            let recorder = recorders[owner]
            cancellables.append(
                ValueObservation.trackingAll(SQLRequest<Row>(sql: "SELECT id, label FROM item WHERE owner = ?", arguments: [owner]))
                    .handleEvents(databaseDidChange: { counter.withLock { $0 += 1 } })
                    .start(in: test.writer, onError: { Issue.record("\($0)") }, onChange: { recorder.append($0) }))
        }
        for recorder in recorders { _ = try await recorder.wait(for: 1) }
        func evaluations() throws -> Int { try test.writer.write { $0.observationBroker.filterEvaluationCount } }
        func toldOwners(since counts: [Int]) -> [Int] {
            owners.filter { told[$0].withLock { $0 } > counts[$0] }
        }
        for (write, expected) in [
            ("UPDATE item SET label = 'new' WHERE id = 6", [5]),
            ("UPDATE item SET owner = 7 WHERE id = 6", [5, 7]),
            ("INSERT INTO item (id, owner, label) VALUES (1000, 9, 'x')", [9]),
            ("DELETE FROM item WHERE id = 1000", [9]),
            ("UPDATE item SET owner = 400 WHERE id = 12", [11]),
            ("UPDATE item SET label = 'none' WHERE owner = 400", []),
        ] {
            let counts = told.map { $0.withLock { $0 } }
            let before = try evaluations()
            try test.writer.writeSQL(write)
            #expect(toldOwners(since: counts) == expected, "\(write)")
            // One run of the filter per side of the row at most.
            #expect(try evaluations() - before <= 2 * expected.count, "\(write)")
        }
        let ids = try await recorders[7].wait { $0.last?.count == 2 }.last?.map { try? $0["id"] as Int64 }
        #expect(ids == [6, 8])
    }

    /// A column stays pinned while an observation pins it: once the last
    /// one ends, the row events of its table no longer read its values.
    @Test(arguments: DatabaseKind.allCases)
    func aColumnIsPinnedWhileAnObservationPinsIt(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schema)
        func pinned() throws -> [String] {
            // After the unregistrations that `cancel()` left to the writer.
            try test.writer.write { $0.observationBroker.registry.pinnedColumns(ofTable: "item") }
        }
        var cancellables: [AnyDatabaseCancellable] = []
        for sql in ["SELECT * FROM item WHERE owner = 1", "SELECT * FROM item WHERE owner IN (2, 3)",
                    "SELECT * FROM item WHERE label = 'l4'"] {
            let recorder = Recorder<[Row]>()
            cancellables.append(ValueObservation.trackingAll(SQLRequest<Row>(sql: sql))
                .start(in: test.writer, onError: { Issue.record("\($0)") }, onChange: { recorder.append($0) }))
            _ = try await recorder.wait(for: 1)
        }
        #expect(try pinned() == ["label", "owner"])
        cancellables[0].cancel()
        #expect(try pinned() == ["label", "owner"])
        cancellables[1].cancel()
        #expect(try pinned() == ["label"])
        cancellables[2].cancel()
        #expect(try pinned() == [])
    }

    /// Pinned values compare as SQLite compares them with the column: its
    /// affinity converts the constant (`owner = '5'` is 5, `label = 5` is
    /// '5'), its collation folds texts (NOCASE, RTRIM), numbers compare by
    /// value (`ratio = 2` is 2.0); a column without affinity keeps texts
    /// apart from numbers. A generated column and the rowid are not pinned,
    /// and still filter.
    @Test(arguments: DatabaseKind.allCases)
    func pinnedValuesCompareAsSQLiteComparesThem(kind: DatabaseKind) async throws {
        // (query, a write of a row it matches, a write of a row it does not match)
        let cases: [(String, String, String)] = [
            ("SELECT * FROM item WHERE owner = '5'", "UPDATE item SET label = 'a' WHERE id = 6", "UPDATE item SET label = 'a' WHERE id = 5"),
            ("SELECT * FROM item WHERE owner IN ('5.0', 7)", "UPDATE item SET label = 'a' WHERE id = 8", "UPDATE item SET label = 'a' WHERE id = 7"),
            ("SELECT * FROM item WHERE label = 'l3'", "UPDATE item SET ratio = 0 WHERE id = 4", "UPDATE item SET ratio = 0 WHERE id = 3"),
            ("SELECT * FROM item WHERE label = 5", "UPDATE item SET label = '5' WHERE id = 2", "UPDATE item SET label = '6' WHERE id = 3"),
            ("SELECT * FROM item WHERE code = 'c3  '", "UPDATE item SET ratio = 0 WHERE id = 4", "UPDATE item SET ratio = 0 WHERE id = 5"),
            ("SELECT * FROM item WHERE ratio = 2", "UPDATE item SET label = 'b' WHERE id = 3", "UPDATE item SET label = 'b' WHERE id = 2"),
            ("SELECT * FROM item WHERE tag = 4", "UPDATE item SET label = 'b' WHERE id = 5", "UPDATE item SET tag = '4' WHERE id = 6"),
            ("SELECT * FROM item WHERE tag = '4'", "UPDATE item SET tag = '4' WHERE id = 6", "UPDATE item SET label = 'b' WHERE id = 5"),
            ("SELECT * FROM item WHERE twice = 10", "UPDATE item SET label = 'c' WHERE id = 6", "UPDATE item SET label = 'c' WHERE id = 7"),
            ("SELECT * FROM item WHERE id = 3 AND owner = 2", "UPDATE item SET label = 'd' WHERE id = 3", "UPDATE item SET label = 'd' WHERE id = 4"),
        ]
        for (sql, matched, unmatched) in cases {
            let test = try kind.make(sql: Self.schema)
            let changes = LockedState(0)
            let recorder = Recorder<[Row]>()
            let cancellable = ValueObservation.trackingAll(SQLRequest<Row>(sql: sql))
                .handleEvents(databaseDidChange: { changes.withLock { $0 += 1 } })
                .start(in: test.writer, onError: { Issue.record("\($0)") }, onChange: { recorder.append($0) })
            defer { cancellable.cancel() }
            _ = try await recorder.wait(for: 1)
            try test.writer.writeSQL(unmatched)
            #expect(changes.withLock { $0 } == 0, "\(sql): \(unmatched)")
            try test.writer.writeSQL(matched)
            #expect(changes.withLock { $0 } == 1, "\(sql): \(matched)")
        }
    }

    /// NOCASE stops comparing at the first NUL byte, then compares the
    /// lengths: 'a\0x' and 'a\0y' are equal, and the pin finds the row.
    @Test func nocaseTextsWithANulByteCompareAsSQLiteCompares() async throws {
        let test = try DatabaseKind.inMemoryQueue.make(sql: Self.schema)
        let changes = LockedState(0)
        let recorder = Recorder<[Row]>()
        let cancellable = ValueObservation.trackingAll(
            SQLRequest<Row>(sql: "SELECT * FROM item WHERE label = ?", arguments: ["a\u{0}x"]))
            .handleEvents(databaseDidChange: { changes.withLock { $0 += 1 } })
            .start(in: test.writer, onError: { Issue.record("\($0)") }, onChange: { recorder.append($0) })
        defer { cancellable.cancel() }
        _ = try await recorder.wait(for: 1)
        try test.writer.writeSQL("UPDATE item SET label = ? WHERE id = 1", arguments: ["A\u{0}y"])
        #expect(changes.withLock { $0 } == 1)
        _ = try await recorder.wait { $0.last?.count == 1 }
    }
}
