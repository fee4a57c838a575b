import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `ValueObservation.trackingRowDifferences`: the rows of any query and
/// their differences, identified by the inferred primary key, given
/// columns, or all values.
@Suite(.timeLimit(.minutes(2)), .onItsOwnThread) struct RowDifferencesObservationTests {
    private func start(
        _ observation: ValueObservation<RowsWithDifference>, in writer: any DatabaseWriter
    ) -> (Recorder<RowsWithDifference>, AnyDatabaseCancellable) {
        let recorder = Recorder<RowsWithDifference>()
        let cancellable = observation.start(
            in: writer, scheduling: .async(onQueue: DispatchQueue(label: "RowDifferencesObservationTests")),
            onError: { Issue.record($0) }, onChange: { recorder.append($0) })
        return (recorder, cancellable)
    }

    private static func name(_ row: Row) -> String? { try? row["name"] }

    private static func names(_ entries: [RowDifference.Entry]) -> [String] {
        entries.map { name($0.row) ?? "?" }
    }

    @Test(arguments: DatabaseKind.allCases)
    func firstRowsThenOnlyRealChanges(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let (recorder, cancellable) = start(
            .trackingRowDifferences(sql: "SELECT * FROM player WHERE score >= ?", arguments: [120]), in: test.writer)
        defer { cancellable.cancel() }
        let first = try #require(try await recorder.wait(for: 1).first)
        #expect(first.change == .initial)
        #expect(first.identity == .primaryKey(table: "player", columns: ["id"]))
        #expect(first.columnNames == ["id", "name", "score"])
        #expect(first.rows.map(Self.name) == ["Barbara", "Craig"])
        #expect(first.difference == nil)
        // Nothing stored changes: nothing delivered. Then a real change.
        try test.writer.writeSQL("UPDATE player SET score = score")
        try test.writer.writeSQL("UPDATE player SET score = 10 WHERE id = 1")
        try test.writer.writeSQL("UPDATE player SET name = 'Bea', score = 210 WHERE id = 2")
        let values = try await recorder.wait(for: 2)
        #expect(values.count == 2)
        let difference = try #require(values[1].difference)
        #expect(difference.inserted.isEmpty && difference.deleted.isEmpty && difference.moved.isEmpty)
        #expect(difference.updated.count == 1)
        #expect(difference.updated.first.flatMap { Self.name($0.previous) } == "Barbara")
        #expect(difference.updated.first.flatMap { Self.name($0.row) } == "Bea")
        #expect(difference.updated.first?.changedColumns == [1, 2])
        try test.writer.writeSQL("INSERT INTO player (id, name, score) VALUES (4, 'Dan', 500)")
        try test.writer.writeSQL("DELETE FROM player WHERE id = 3")
        // The two commits may coalesce into one value.
        let more = try await recorder.wait { values in
            values.last.map { Set($0.rows.compactMap(Self.name)) == ["Bea", "Dan"] } ?? false
        }
        let later = more.dropFirst(2)
        let inserted = later.compactMap(\.difference).flatMap(\.inserted)
        let deleted = later.compactMap(\.difference).flatMap(\.deleted)
        #expect(Self.names(inserted) == ["Dan"])
        #expect(Self.names(deleted) == ["Craig"])
        #expect((1...2).contains(later.count))
    }

    @Test(arguments: DatabaseKind.allCases)
    func givenColumnsOrAllValues(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let (byName, c1) = start(
            .trackingRowDifferences(sql: "SELECT name, score FROM player", identifiedBy: .columns(["NAME"])),
            in: test.writer)
        let (byValues, c2) = start(.trackingRowDifferences(sql: "SELECT name, score FROM player"), in: test.writer)
        defer { [c1, c2].forEach { $0.cancel() } }
        _ = try await byName.wait(for: 1)
        _ = try await byValues.wait(for: 1)
        #expect(byValues.values.first?.identity == .allValues)
        try test.writer.writeSQL("UPDATE player SET score = 1 WHERE name = 'Arthur'")
        let named = try #require(try await byName.wait(for: 2).last?.difference)
        #expect(named.updated.map { Self.name($0.row) } == ["Arthur"])
        #expect(named.inserted.isEmpty && named.deleted.isEmpty)
        // Without a key, a changed row is a deletion and an insertion.
        let whole = try #require(try await byValues.wait(for: 2).last?.difference)
        #expect(whole.updated.isEmpty)
        #expect(Self.names(whole.inserted) == ["Arthur"] && Self.names(whole.deleted) == ["Arthur"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func orderedDifferencesCarryPositionsAndMoves(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let (recorder, cancellable) = start(
            .trackingRowDifferences(sql: "SELECT * FROM player ORDER BY score DESC", isOrdered: true), in: test.writer)
        defer { cancellable.cancel() }
        _ = try await recorder.wait(for: 1)
        // Barbara 200, Craig 150, Arthur 100 → Arthur 300 first.
        try test.writer.writeSQL("UPDATE player SET score = 300 WHERE id = 1")
        let difference = try #require(try await recorder.wait(for: 2).last?.difference)
        #expect(difference.moved.map { [$0.from, $0.to] } == [[3, 1]])
        #expect(difference.updated.map(\.position) == [1])
    }

    @Test(arguments: DatabaseKind.allCases)
    func theFirstDifferenceMayStartFromGivenRows(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let known = [
            Row(["id": 1, "name": "Arthur", "score": 100]), Row(["id": 2, "name": "Barbara", "score": 1]),
            Row(["id": 9, "name": "Gone", "score": 0]),
        ]
        let (recorder, cancellable) = start(
            .trackingRowDifferences(sql: "SELECT * FROM player", initialRows: ResultRows(known)), in: test.writer)
        defer { cancellable.cancel() }
        let first = try #require(try await recorder.wait(for: 1).first)
        let difference = try #require(first.difference)
        #expect(Self.names(difference.inserted) == ["Craig"])
        #expect(Self.names(difference.deleted) == ["Gone"])
        #expect(difference.updated.map { Self.name($0.row) } == ["Barbara"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func otherColumnsStartAnewWithTheirIdentity(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let (recorder, cancellable) = start(.trackingRowDifferences(sql: "SELECT * FROM player"), in: test.writer)
        defer { cancellable.cancel() }
        _ = try await recorder.wait(for: 1)
        try test.writer.writeSQL("ALTER TABLE player ADD COLUMN team TEXT")
        let value = try #require(try await recorder.wait(for: 2).last)
        #expect(value.change == .columnsChanged)
        #expect(value.columnNames == ["id", "name", "score", "team"])
        #expect(value.rows.count == 3)
        #expect(value.identity == .primaryKey(table: "player", columns: ["id"]))
    }

    /// The README's example: a join, identified by a column, as JSON.
    @Test(arguments: DatabaseKind.allCases)
    func aJoinIdentifiedByAColumnAsJSON(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: """
            CREATE TABLE team (id INTEGER PRIMARY KEY, color TEXT);
            CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT, teamId INTEGER);
            INSERT INTO team VALUES (1, 'red'), (2, 'blue');
            INSERT INTO player VALUES (1, 'Arthur', 1), (2, 'Barbara', 2);
            """)
        let observation = ValueObservation.trackingRowDifferences(
            sql: "SELECT p.name, t.color FROM player p JOIN team t ON t.id = p.teamId",
            identifiedBy: .columns(["name"]))
        let (recorder, cancellable) = start(observation, in: test.writer)
        defer { cancellable.cancel() }
        _ = try await recorder.wait(for: 1)
        try test.writer.writeSQL("UPDATE team SET color = 'green' WHERE id = 1")
        let value = try #require(try await recorder.wait(for: 2).last)
        let difference = try #require(value.difference)
        #expect(RowJSON.difference(difference, columnNames: value.columnNames, isOrdered: false) == """
            {"inserted":[],"updated":[{"name":"Arthur","color":"green"}],"previous":[{"color":"red"}],"deleted":[]}

            """)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aStatementThatIsNotAReadFailsWithoutRunning(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        for sql in ["DELETE FROM player", "SELECT * FROM nowhere", "CREATE TABLE t(a)"] {
            let observation = ValueObservation.trackingRowDifferences(sql: sql)
            await #expect(throws: DatabaseError.self, "\(sql)") {
                for try await _ in observation.values(in: test.writer) {}
            }
        }
        let count = try await test.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player") }
        #expect(count == 3)
        let tables = try await test.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE name = 't'") }
        #expect(tables == 0)
    }

    /// Seeded random commits: every value's rows are a committed state, its
    /// difference applied to the previous value's rows gives its rows, and
    /// the last value is a fresh fetch.
    @Test(arguments: DatabaseKind.allCases)
    func differencesComposeToEveryDeliveredResult(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, tag TEXT, value);")
        let sql = "SELECT * FROM item WHERE tag <> 'x'"
        for isOrdered in [false, true] {
            let query = isOrdered ? sql + " ORDER BY value, id" : sql
            let (recorder, cancellable) = start(.trackingRowDifferences(sql: query, isOrdered: isOrdered), in: test.writer)
            defer { cancellable.cancel() }
            var random = SplitMix64(seed: isOrdered ? 7 : 11)
            for _ in 0..<300 {
                let id = Int.random(in: 1...20, using: &random)
                let tag = ["a", "b", "x"].randomElement(using: &random)!
                let value: (any DatabaseValueConvertible)? = [nil, 1, 1.0, "1", 2].randomElement(using: &random)!
                switch Int.random(in: 0..<4, using: &random) {
                case 0: try test.writer.writeSQL("DELETE FROM item WHERE id = ?", arguments: [id])
                case 1: try test.writer.writeSQL("UPDATE item SET value = ? WHERE id = ?", arguments: [value, id])
                default:
                    try test.writer.writeSQL(
                        "INSERT OR REPLACE INTO item (id, tag, value) VALUES (?, ?, ?)", arguments: [id, tag, value])
                }
            }
            let final = try await test.writer.read { db in try Row.fetchAll(db, sql: query) }
            let values = try await recorder.wait { $0.last?.rows.map(\.databaseValues) == final.map(\.databaseValues) }
            var rows: [Row] = []
            for (index, value) in values.enumerated() {
                if let difference = value.difference {
                    rows = Self.apply(difference, to: rows, isOrdered: isOrdered)
                } else {
                    #expect(index == 0)
                    rows = Array(value.rows)
                }
                let expected = value.rows.map(\.databaseValues)
                if isOrdered {
                    #expect(rows.map(\.databaseValues) == expected, "value \(index)")
                } else {
                    #expect(Set(rows.map(\.databaseValues)) == Set(expected), "value \(index)")
                }
            }
        }
    }

    /// The rows a difference leads to: deleted removed by key, updated
    /// replaced; ordered, moved and inserted rows at their new positions.
    private static func apply(_ difference: RowDifference, to rows: [Row], isOrdered: Bool) -> [Row] {
        func id(_ row: Row) -> Int64 { (try? row["id"]) ?? -1 }
        let removed = Set(difference.deleted.map { id($0.row) } + difference.moved.map { id($0.row) })
        let updates = Dictionary(difference.updated.map { (id($0.row), $0.row) }, uniquingKeysWith: { $1 })
        var result = rows.filter { !removed.contains(id($0)) }.map { updates[id($0)] ?? $0 }
        guard isOrdered else { return result + difference.inserted.map(\.row) }
        let placed = (difference.inserted.map { ($0.position ?? 0, $0.row) }
            + difference.moved.map { ($0.to, updates[id($0.row)] ?? $0.row) }).sorted { $0.0 < $1.0 }
        for (position, row) in placed { result.insert(row, at: position - 1) }
        return result
    }
}
