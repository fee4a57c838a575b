import DatabaseTestSupport
import Dispatch
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// The row a record decodes from during a fetch reuses one buffer of values
/// while nobody keeps it: a record that keeps it must keep its own values, whatever the
/// fetch does next.
@Suite struct KeptRowTests {
    /// A record that keeps the row it was decoded from, and reads some of
    /// its columns only.
    struct RowKeeper: FetchableRecord, TableRecord, Sendable, Equatable {
        static let databaseTableName = "player"
        var id: Int64
        var row: Row
        init(row: Row) throws {
            id = try row[0]
            self.row = row
        }
    }

    /// A record that keeps only some rows (every other one).
    struct SometimesKeeper: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "player"
        var id: Int64
        var row: Row?
        init(row: Row) throws {
            id = try row["id"]
            self.row = id % 2 == 0 ? row : nil
        }
    }

    static let schemaSQL = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT, score INTEGER);
        INSERT INTO player VALUES (1, 'Arthur', 100), (2, 'Barbara', 200), (3, 'Craig', NULL), (4, 'David', 400);
        """

    static let expectedRows: [Row] = [
        Row(["id": 1, "name": "Arthur", "score": 100]),
        Row(["id": 2, "name": "Barbara", "score": 200]),
        Row(["id": 3, "name": "Craig", "score": nil]),
        Row(["id": 4, "name": "David", "score": 400]),
    ]

    @Test(arguments: DatabaseKind.allCases)
    func recordsThatKeepTheirRowKeepTheirOwnValues(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in try db.execute(sql: Self.schemaSQL) }
        try test.writer.read { db in
            let request = RowKeeper.orderByPrimaryKey()
            #expect(try request.fetchAll(db).map(\.row) == Self.expectedRows)
            #expect(try request.fetchOne(db)?.row == Self.expectedRows[0])
            var cursorRows: [Row] = []
            try request.fetchCursor(db).forEach { cursorRows.append($0.row) }
            #expect(cursorRows == Self.expectedRows)
            let some = try SometimesKeeper.orderByPrimaryKey().fetchAll(db)
            #expect(some.compactMap(\.row) == [Self.expectedRows[1], Self.expectedRows[3]])
        }
        // After the access: the kept rows do not read the statement.
        let kept = try test.writer.read { db in try RowKeeper.orderByPrimaryKey().fetchAll(db) }
        #expect(kept.map(\.row) == Self.expectedRows)
        #expect(kept.map(\.row.description) == Self.expectedRows.map(\.description))
    }

    @Test(arguments: DatabaseKind.allCases)
    func observedRecordsThatKeepTheirRowKeepTheirOwnValues(kind: DatabaseKind) async throws {
        let test = try kind.make()
        try await test.writer.write { db in try db.execute(sql: Self.schemaSQL) }
        let observation = ValueObservation.trackingAll(RowKeeper.orderByPrimaryKey())
        var values = observation.values(in: test.writer).makeAsyncIterator()
        let first = try #require(try await values.next())
        #expect(first.map(\.row) == Self.expectedRows)
        try await test.writer.write { db in try db.execute(sql: "UPDATE player SET name = 'Art' WHERE id = 1") }
        let second = try #require(try await values.next())
        #expect(second[0].row == Row(["id": 1, "name": "Art", "score": 100]))
        #expect(first.map(\.row) == Self.expectedRows)
    }

    @Test(arguments: DatabaseKind.allCases)
    func setDifferenceRecordsThatKeepTheirRowKeepTheirOwnValues(kind: DatabaseKind) async throws {
        let test = try kind.make()
        try await test.writer.write { db in try db.execute(sql: Self.schemaSQL) }
        let observation = ValueObservation.trackingSetDifferences(SometimesKeeper.orderByPrimaryKey())
        var values = observation.values(in: test.writer).makeAsyncIterator()
        let first = try #require(try await values.next())
        #expect(first.inserted.compactMap(\.row) == [Self.expectedRows[1], Self.expectedRows[3]])
        try await test.writer.write { db in
            try db.execute(sql: "UPDATE player SET name = 'Bob' WHERE id = 2; INSERT INTO player VALUES (6, 'Eve', 600)")
        }
        let second = try #require(try await values.next())
        #expect(second.updated.compactMap(\.row) == [Row(["id": 2, "name": "Bob", "score": 200])])
        #expect(second.inserted.compactMap(\.row) == [Row(["id": 6, "name": "Eve", "score": 600])])
        // Read on another thread than the one that decoded them.
        let firstRows = await Task.detached { first.inserted.compactMap(\.row).map(\.description) }.value
        #expect(firstRows == [Self.expectedRows[1].description, Self.expectedRows[3].description])
    }

    /// A record whose `init(row:)` hands its row to another thread, which
    /// reads it at once, then takes longer than a second to return.
    struct SlowHandOff: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "player"
        /// What the other thread read.
        static let reads = Locked<[String]>([])
        static let readsDone = DispatchSemaphore(value: 0)
        var id: Int64
        init(row: Row) throws {
            id = try row["id"]
            let readStarts = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                readStarts.signal()
                // Waits for init(row:) to return: the row is the statement's until then.
                let name: String? = try? row["name"]
                Self.reads.withLock { $0.append(name ?? "?") }
                Self.readsDone.signal()
            }
            readStarts.wait()
            // Slow, but correct: longer than the second after which the
            // read used to stop the program.
            Thread.sleep(forTimeInterval: 1.2)
        }
    }

    @Test func aRowReadOnAnotherThreadWaitsForASlowInitRowToReturn() throws {
        let test = try DatabaseKind.inMemoryQueue.make(sql: Self.schemaSQL)
        let records = try test.writer.read { db in
            try SQLRequest<SlowHandOff>(sql: "SELECT * FROM player WHERE id = 2").fetchAll(db)
        }
        #expect(records.map(\.id) == [2])
        #expect(SlowHandOff.readsDone.wait(timeout: .now() + 30) == .success)
        #expect(SlowHandOff.reads.value == ["Barbara"])
    }
}
