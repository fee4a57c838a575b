import DatabaseTestSupport
import ReactiveSQLite
import Testing

private typealias Player = RequestFixtures.Player

/// Ten million integers, far too many to load: a cursor must read them lazily.
private let hugeSeriesSQL = """
    WITH RECURSIVE series(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM series WHERE n < 10000000)
    SELECT n FROM series
    """

@Suite struct CursorTests {
    @Test(arguments: DatabaseKind.allCases)
    func aCursorIteratesEveryElementThenEnds(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let rows = try SQLRequest<Row>(sql: "SELECT id, name FROM player WHERE id <= ? ORDER BY id", arguments: [2])
                .fetchCursor(db)
            #expect(try rows.next() == Row(["id": 1, "name": "Arthur"]))
            #expect(try rows.next() == Row(["id": 2, "name": "Barbara"]))
            #expect(try rows.next() == nil)
            #expect(try rows.next() == nil)

            let scores = try SQLRequest<Int?>(sql: "SELECT score FROM player ORDER BY id").fetchCursor(db)
            var values: [Int?] = []
            try scores.forEach { values.append($0) }
            #expect(values == [100, 200, 150, nil])

            let players = try Player.orderByPrimaryKey().fetchCursor(db)
            var fetched: [Player] = []
            while let player = try players.next() { fetched.append(player) }
            #expect(fetched == [.arthur, .barbara, .craig, .david])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCursorReadsTheFirstRowsOfAHugeSeriesAndStops(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            let request = SQLRequest<Int>(sql: hugeSeriesSQL)
            do {
                let cursor = try request.fetchCursor(db)
                #expect(try cursor.next() == 1)
                #expect(try cursor.next() == 2)
                #expect(try cursor.next() == 3)
                // Abandoned here, nine million nine hundred ninety-nine thousand and more rows before its end.
            }
            // The same SQL runs again from the start.
            #expect(try request.fetchOne(db) == 1)
            let again = try request.fetchCursor(db)
            #expect(try again.next() == 1)
            #expect(try again.next() == 2)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCursorDoesNotRunAheadOfItsReader(kind: DatabaseKind) throws {
        // The fourth row fails (abs of the smallest integer overflows): an
        // eager fetch throws, a cursor delivers the first three rows first.
        let test = try kind.make()
        try test.writer.read { db throws in
            let request = SQLRequest<Int>(sql: """
                WITH RECURSIVE series(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM series WHERE n < 10)
                SELECT CASE WHEN n <= 3 THEN n ELSE abs(-9223372036854775807 - 1) END FROM series
                """)
            let fetchAllError = #expect(throws: DatabaseError.self) { try request.fetchAll(db) }
            #expect(fetchAllError?.message == "integer overflow")

            let cursor = try request.fetchCursor(db)
            #expect(try cursor.next() == 1)
            #expect(try cursor.next() == 2)
            #expect(try cursor.next() == 3)
            let cursorError = #expect(throws: DatabaseError.self) { try cursor.next() }
            #expect(cursorError?.message == "integer overflow")
            // A cursor ends after an error.
            #expect(try cursor.next() == nil)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func twoCursorsOverTheSameSQLAdvanceIndependently(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            let request = SQLRequest<Int>(sql: hugeSeriesSQL)
            let first = try request.fetchCursor(db)
            let second = try request.fetchCursor(db)
            #expect(try first.next() == 1)
            #expect(try first.next() == 2)
            #expect(try second.next() == 1)
            #expect(try first.next() == 3)
            #expect(try second.next() == 2)
            // A third fetch of the same SQL while both are busy.
            #expect(try SQLRequest<Int>(sql: hugeSeriesSQL).fetchOne(db) == 1)
            #expect(try second.next() == 3)
            #expect(try first.next() == 4)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func theSameSQLCanBeFetchedInsideTheLoopOfItsCursor(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let request = SQLRequest<String>(sql: "SELECT name FROM player ORDER BY id")
            let cursor = try request.fetchCursor(db)
            var pairs: [String] = []
            while let name = try cursor.next() {
                let all = try request.fetchAll(db)
                #expect(all == ["Arthur", "Barbara", "Craig", "David"])
                #expect(try request.fetchCount(db) == 4)
                pairs.append(name)
            }
            #expect(pairs == ["Arthur", "Barbara", "Craig", "David"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func anAbandonedCursorGivesItsStatementBackToTheCache(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let sql = "SELECT name FROM player ORDER BY id"
            let cached = try db.cachedStatement(sql: sql)
            for steps in [0, 1, 4, 5] {
                do {
                    let cursor = try SQLRequest<String>(sql: sql).fetchCursor(db)
                    for _ in 0..<steps { _ = try cursor.next() }
                    // While the cursor lives, its statement is not handed out.
                    if steps < 5 {
                        #expect(try db.cachedStatement(sql: sql) !== cached, "after \(steps) step(s)")
                    }
                }
                #expect(try db.cachedStatement(sql: sql) === cached, "after \(steps) step(s)")
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCursorOfRecordsDecodesLazily(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.write { db throws in
            // The third row's name is NULL: only its decoding fails.
            try db.execute(sql: "CREATE TABLE loose (id INTEGER PRIMARY KEY, teamId INTEGER, name TEXT, score INTEGER)")
            try db.execute(sql: "INSERT INTO loose SELECT * FROM player ORDER BY id")
            try db.execute(sql: "UPDATE loose SET name = NULL WHERE id = 3")
            let cursor = try SQLRequest<Player>(sql: "SELECT * FROM loose ORDER BY id").fetchCursor(db)
            #expect(try cursor.next() == .arthur)
            #expect(try cursor.next() == .barbara)
            let error = #expect(throws: RowDecodingError.self) { try cursor.next() }
            #expect(error?.column == "name")
            #expect(try cursor.next() == nil)
        }
    }
}
