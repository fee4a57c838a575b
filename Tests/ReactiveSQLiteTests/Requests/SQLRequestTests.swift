import DatabaseTestSupport
import ReactiveSQLite
import Testing

private typealias Player = RequestFixtures.Player

@Suite struct SQLRequestTests {
    // MARK: - Elements

    @Test(arguments: DatabaseKind.allCases)
    func rowsAreFetchedInOrder(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let request = SQLRequest<Row>(sql: "SELECT id, name, score FROM player WHERE id >= ? ORDER BY id", arguments: [3])
            #expect(try request.fetchAll(db) == [
                Row(["id": 3, "name": "Craig", "score": 150]),
                Row(["id": 4, "name": "David", "score": nil]),
            ])
            #expect(try request.fetchOne(db) == Row(["id": 3, "name": "Craig", "score": 150]))
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player WHERE 0").fetchOne(db) == nil)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player WHERE 0").fetchAll(db) == [])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func valuesAreTheFirstColumn(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try SQLRequest<String>(sql: "SELECT name, id FROM player ORDER BY id").fetchAll(db)
                == ["Arthur", "Barbara", "Craig", "David"])
            #expect(try SQLRequest<Int64>(sql: "SELECT id FROM player ORDER BY id DESC").fetchOne(db) == 4)
            #expect(try SQLRequest<Int>(sql: "SELECT score FROM player WHERE 0").fetchOne(db) == nil)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func optionalValuesTellNoRowFromNull(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try SQLRequest<String?>(sql: "SELECT color FROM team ORDER BY id").fetchAll(db) == ["red", nil])
            #expect(try SQLRequest<Int?>(sql: "SELECT score FROM player ORDER BY id").fetchAll(db) == [100, 200, 150, nil])

            let noRow = try SQLRequest<String?>(sql: "SELECT color FROM team WHERE id = 3").fetchOne(db)
            let nullRow = try SQLRequest<String?>(sql: "SELECT color FROM team WHERE id = 2").fetchOne(db)
            let valueRow = try SQLRequest<String?>(sql: "SELECT color FROM team WHERE id = 1").fetchOne(db)
            #expect(noRow == String??.none)
            #expect(nullRow == String??.some(nil))
            #expect(valueRow == String??.some("red"))
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func nullInANonOptionalValueThrows(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let request = SQLRequest<String>(sql: "SELECT color FROM team ORDER BY id")
            let error = #expect(throws: RowDecodingError.self) { try request.fetchAll(db) }
            #expect(error?.kind == .valueMismatch)
            #expect(error?.column == "color")
            #expect(error?.sql == "SELECT color FROM team ORDER BY id")
            // The failed fetch left the statement ready to run again.
            #expect(try request.fetchOne(db) == "red")
        }
    }

    /// `fetchOne` of a non-optional value gives nil for a NULL, as for no
    /// row, as GRDB's does: the aggregate of an empty table (`MAX`, `SUM`)
    /// is one row with a NULL. A value of another type still throws.
    @Test(arguments: DatabaseKind.allCases)
    func fetchOneOfANonOptionalValueGivesNilForNullAsGRDB(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try Int.fetchOne(db, sql: "SELECT MAX(score) FROM player WHERE 0") == nil)
            #expect(try SQLRequest<String>(sql: "SELECT color FROM team WHERE id = 2").fetchOne(db) == nil)
            #expect(try Int.fetchOne(db, sql: "SELECT MAX(score) FROM player") == 200)
            let error = #expect(throws: RowDecodingError.self) { try Int.fetchOne(db, sql: "SELECT 'abc'") }
            #expect(error?.kind == .valueMismatch)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func recordsAreDecodedFromRows(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let request = SQLRequest<Player>(sql: "SELECT * FROM player ORDER BY id")
            #expect(try request.fetchAll(db) == [.arthur, .barbara, .craig, .david])
            #expect(try request.fetchOne(db) == .arthur)
            #expect(try SQLRequest<Player>(sql: "SELECT * FROM player WHERE name = ?", arguments: ["David"]).fetchOne(db) == .david)
            #expect(try SQLRequest<Player>(sql: "SELECT * FROM player WHERE 0").fetchOne(db) == nil)
        }
    }

    // MARK: - fetchCount

    @Test(arguments: DatabaseKind.allCases)
    func fetchCountCountsTheRowsOfTheSQL(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player").fetchCount(db) == 4)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player;").fetchCount(db) == 4)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player ; ;\n").fetchCount(db) == 4)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player -- every player").fetchCount(db) == 4)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player; -- every player").fetchCount(db) == 4)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player /* all */ ;").fetchCount(db) == 4)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player WHERE 0").fetchCount(db) == 0)
            #expect(try SQLRequest<Row>(sql: "SELECT teamId FROM player GROUP BY teamId").fetchCount(db) == 3)
            #expect(try SQLRequest<Row>(sql: "SELECT name, name FROM player").fetchCount(db) == 4)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func fetchCountTakesArgumentsOrderAndLimit(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player WHERE score > ?", arguments: [120]).fetchCount(db) == 2)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player WHERE score > :min", arguments: ["min": 100]).fetchCount(db) == 2)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player ORDER BY score DESC LIMIT 3").fetchCount(db) == 3)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player ORDER BY id LIMIT 10 OFFSET 3").fetchCount(db) == 1)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player ORDER BY id LIMIT ?", arguments: [2]).fetchCount(db) == 2)
            #expect(try SQLRequest<Row>(
                sql: "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?) SELECT x FROM n",
                arguments: [1000]
            ).fetchCount(db) == 1000)
            #expect(try SQLRequest<Row>(sql: "SELECT name FROM player UNION ALL SELECT name FROM team").fetchCount(db) == 6)
            #expect(try SQLRequest<Row>(sql: "VALUES (1), (2), (3)").fetchCount(db) == 3)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func fetchCountCountsTheRowsOfStatementsThatCannotBeSubqueries(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            #expect(try SQLRequest<Row>(sql: "PRAGMA table_info(player)").fetchCount(db) == 4)
        }
        try test.writer.write { db throws in
            #expect(try SQLRequest<Row>(sql: "DELETE FROM player WHERE score > ? RETURNING id", arguments: [120]).fetchCount(db) == 2)
            #expect(try SQLRequest<Row>(sql: "SELECT * FROM player").fetchCount(db) == 2)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func fetchCountAgreesWithFetchAll(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            for sql in ["SELECT * FROM player", "SELECT * FROM team WHERE color IS NULL", "SELECT 1", "SELECT 1 WHERE 0"] {
                let request = SQLRequest<Row>(sql: sql)
                #expect(try request.fetchCount(db) == request.fetchAll(db).count, "\(sql)")
            }
        }
    }

    // MARK: - Errors

    @Test(arguments: DatabaseKind.allCases)
    func missingArgumentsThrowBeforeRunning(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let sql = "SELECT * FROM player WHERE id = ? AND name = ?"
            let request = SQLRequest<Row>(sql: sql, arguments: [1])
            for fetch in Self.fetches(request) {
                let error = #expect(throws: DatabaseError.self) { try fetch(db) }
                #expect(error?.resultCode == .SQLITE_RANGE)
                #expect(error?.sql == sql)
                #expect(error?.description.contains("missing argument for parameter 2") == true)
                #expect(error?.description.contains(sql) == true)
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func leftoverArgumentsThrowBeforeRunning(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.write { db throws in
            let sql = "INSERT INTO team (name) VALUES (?) RETURNING id"
            let request = SQLRequest<Row>(sql: sql, arguments: ["Green", "Yellow"])
            for fetch in Self.fetches(request) {
                let error = #expect(throws: DatabaseError.self) { try fetch(db) }
                #expect(error?.resultCode == .SQLITE_RANGE)
                #expect(error?.description.contains("too many arguments: 1 positional value(s) left unused") == true)
                #expect(error?.description.contains(sql) == true)
            }
            // Nothing ran.
            #expect(try SQLRequest<Int>(sql: "SELECT COUNT(*) FROM team").fetchOne(db) == 2)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func unknownArgumentNamesThrowBeforeRunning(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.write { db throws in
            let sql = "INSERT INTO team (name) VALUES (:name) RETURNING id"
            let request = SQLRequest<Row>(sql: sql, arguments: ["name": "Green", "color": "green"])
            for fetch in Self.fetches(request) {
                let error = #expect(throws: DatabaseError.self) { try fetch(db) }
                #expect(error?.resultCode == .SQLITE_RANGE)
                #expect(error?.description.contains("unknown argument name(s): color") == true)
                #expect(error?.description.contains(sql) == true)
            }
            #expect(try SQLRequest<Int>(sql: "SELECT COUNT(*) FROM team").fetchOne(db) == 2)
            // Named arguments that fit.
            #expect(try SQLRequest<Int>(sql: sql, arguments: ["name": "Green"]).fetchOne(db) == 3)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func invalidSQLThrows(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let invalid = #expect(throws: DatabaseError.self) { try SQLRequest<Row>(sql: "SELECT * FROM nowhere").fetchAll(db) }
            #expect(invalid?.resultCode == .SQLITE_ERROR)
            #expect(invalid?.message == "no such table: nowhere")
            #expect(invalid?.sql == "SELECT * FROM nowhere")

            let countError = #expect(throws: DatabaseError.self) { try SQLRequest<Row>(sql: "SELECT * FROM nowhere").fetchCount(db) }
            #expect(countError?.message == "no such table: nowhere")

            for sql in ["SELECT 1; SELECT 2", "-- nothing"] {
                let error = #expect(throws: DatabaseError.self, "\(sql)") { try SQLRequest<Row>(sql: sql).fetchAll(db) }
                #expect(error?.resultCode == .SQLITE_MISUSE)
                let countError = #expect(throws: DatabaseError.self, "\(sql)") { try SQLRequest<Row>(sql: sql).fetchCount(db) }
                #expect(countError?.resultCode == .SQLITE_MISUSE)
                let regionError = #expect(throws: DatabaseError.self, "\(sql)") { try SQLRequest<Row>(sql: sql).databaseRegion(db) }
                #expect(regionError?.resultCode == .SQLITE_MISUSE)
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aValueRequestWithoutColumnThrows(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.write { db throws in
            let request = SQLRequest<Int>(sql: "UPDATE player SET score = 0 WHERE id = 1")
            let error = #expect(throws: RowDecodingError.self) { try request.fetchOne(db) }
            #expect(error?.kind == .columnNotFound)
            // Nothing ran.
            #expect(try SQLRequest<Int>(sql: "SELECT score FROM player WHERE id = 1").fetchOne(db) == 100)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func schemaChangesMadeThroughRequestsAreSeen(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.write { db throws in
            #expect(throws: DatabaseError.self) { try RequestFixtures.Ghost.orderByPrimaryKey().asRequest(of: Row.self).fetchAll(db) }
            _ = try SQLRequest<Row>(sql: "CREATE TABLE ghost (name TEXT PRIMARY KEY)").fetchAll(db)
            _ = try SQLRequest<Row>(sql: "INSERT INTO ghost VALUES ('b'), ('a') RETURNING name").fetchAll(db)
            let names = try RequestFixtures.Ghost.orderByPrimaryKey().asRequest(of: String.self).fetchAll(db)
            #expect(names == ["a", "b"])
        }
    }

    /// Every way to run a request: each must check its arguments first.
    private static func fetches(_ request: SQLRequest<Row>) -> [(Database) throws -> Void] {
        [
            { db in _ = try request.fetchAll(db) },
            { db in _ = try request.fetchOne(db) },
            { db in _ = try request.fetchCount(db) },
            { db in _ = try request.fetchCursor(db).next() },
        ]
    }
}
