import DatabaseTestSupport
import DatabaseRegions
import ReactiveSQLite
import Testing

/// One statement or request, and the description of the region SQLite's
/// authorizer records for it.
struct RegionCase: Sendable, CustomTestStringConvertible {
    var label: String
    var expected: String
    var region: @Sendable (Database) throws -> DatabaseRegion

    /// The region of a raw SQL statement (`SQLRequest`).
    init(_ sql: String, _ expected: String) {
        label = sql
        self.expected = expected
        region = { db in try SQLRequest<Row>(sql: sql).databaseRegion(db) }
    }

    /// The region of a request expression.
    init(request label: String, _ expected: String, _ region: @escaping @Sendable (Database) throws -> DatabaseRegion) {
        self.label = label
        self.expected = expected
        self.region = region
    }

    var testDescription: String { "\(label) → \(expected)" }
}

private typealias F = RequestFixtures

extension RegionCase {
    /// The region table: what SQLite 3.40.1 reports, checked statement by statement.
    static let all: [RegionCase] = [
        // Columns
        RegionCase("SELECT name FROM player", "player(name)"),
        RegionCase("SELECT id, name FROM player", "player(id,name)"),
        RegionCase("SELECT * FROM player", "player(*)"),
        RegionCase("SELECT id, teamId, name, score FROM player", "player(*)"),
        RegionCase("SELECT name FROM player WHERE score > 100 ORDER BY teamId", "player(name,score,teamid)"),
        // Whole table: COUNT(*), no column used, rowid
        RegionCase("SELECT COUNT(*) FROM player", "player(*)"),
        RegionCase("SELECT 1 FROM player", "player(*)"),
        RegionCase("SELECT rowid FROM logEntry", "logentry(*)"),
        // rowid: the column that aliases it, or the whole table
        RegionCase("SELECT name FROM player WHERE rowid = 1", "player(id,name)"),
        RegionCase("SELECT name FROM team WHERE _rowid_ = 1", "team(id,name)"),
        RegionCase("SELECT name FROM country WHERE rowid = 1", "country(*)"),
        // Joins
        RegionCase(
            "SELECT player.name, team.name FROM player JOIN team ON team.id = player.teamId",
            "player(name,teamid), team(id,name)"),
        RegionCase(
            "SELECT player.name FROM player LEFT JOIN team ON team.id = player.teamId WHERE team.color IS NULL",
            "player(name,teamid), team(color,id)"),
        RegionCase("SELECT a.name FROM player a JOIN player b ON b.teamId = a.teamId", "player(name,teamid)"),
        // The side b only uses the rowid alias: SQLite reports the whole table.
        RegionCase("SELECT a.name FROM player a JOIN player b ON b.id = a.teamId", "player(*)"),
        // Subqueries
        RegionCase(
            "SELECT name FROM player WHERE teamId IN (SELECT id FROM team WHERE color = 'red')",
            "player(name,teamid), team(color,id)"),
        RegionCase(
            "SELECT name FROM team WHERE EXISTS (SELECT 1 FROM player WHERE player.teamId = team.id)",
            "player(teamid), team(id,name)"),
        RegionCase("SELECT EXISTS (SELECT 1 FROM player)", "player(*)"),
        RegionCase(
            "SELECT name, (SELECT name FROM team WHERE team.id = player.teamId) FROM player",
            "player(name,teamid), team(id,name)"),
        RegionCase("SELECT name FROM player WHERE score > (SELECT AVG(score) FROM player)", "player(name,score)"),
        // Views, resolved to their base tables
        RegionCase("SELECT * FROM playerSummary", "player(id,name)"),
        RegionCase("SELECT name FROM playerSummary", "player(id,name)"),
        RegionCase("SELECT COUNT(*) FROM playerSummary", "player(*)"),
        RegionCase("SELECT shout FROM shoutedPlayer", "player(id,name)"),
        RegionCase("SELECT * FROM roster", "player(name,teamid), team(id,name)"),
        // Aggregates
        RegionCase("SELECT teamId, MAX(score) FROM player GROUP BY teamId", "player(score,teamid)"),
        RegionCase(
            "SELECT teamId, MAX(score) FROM player GROUP BY teamId HAVING COUNT(*) > 1", "player(score,teamid)"),
        RegionCase("SELECT SUM(score) FROM player", "player(score)"),
        // Common table expressions, compound selects
        RegionCase(
            """
            WITH best AS (SELECT teamId, MAX(score) AS top FROM player GROUP BY teamId)
            SELECT team.name, best.top FROM best JOIN team ON team.id = best.teamId
            """,
            "player(score,teamid), team(id,name)"),
        RegionCase("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 3) SELECT x FROM n", "empty"),
        RegionCase("SELECT name FROM player UNION SELECT name FROM team", "player(name), team(name)"),
        RegionCase("SELECT name FROM player EXCEPT SELECT name FROM team WHERE id = 1", "player(name), team(id,name)"),
        // WITHOUT ROWID tables
        RegionCase("SELECT c FROM pair WHERE a = 'x'", "pair(a,c)"),
        RegionCase("SELECT * FROM pair", "pair(*)"),
        RegionCase("SELECT COUNT(*) FROM pair", "pair(*)"),
        // Names in any case
        RegionCase("SELECT NAME FROM PLAYER", "player(name)"),
        RegionCase("select Name from Player where Score > 1", "player(name,score)"),
        RegionCase("SELECT label FROM award", "award(label)"),
        RegionCase("SELECT * FROM AWARD", "award(*)"),
        // Nothing read; the schema tables are not part of regions
        RegionCase("SELECT 1", "empty"),
        RegionCase("SELECT name FROM sqlite_master", "empty"),
        RegionCase("SELECT name FROM sqlite_schema WHERE type = 'table'", "empty"),
        RegionCase("SELECT name FROM sqlite_temp_master", "empty"),
        RegionCase(
            "SELECT player.name FROM player JOIN sqlite_master ON sqlite_master.name = player.name", "player(name)"),
        // Table-valued functions are not tables
        RegionCase("SELECT value FROM json_each('[1, 2]')", "empty"),
        RegionCase("SELECT name FROM pragma_table_info('player')", "empty"),
        RegionCase("SELECT player.name FROM player, json_each('[1]') WHERE json_each.value = player.id", "player(id,name)"),

        // Requests of record types
        RegionCase(request: "Player.all()", "player(*)") { db in try F.Player.all().databaseRegion(db) },
        RegionCase(request: "Player.filter(key: 1)", "player(*)[1]") { db in
            try F.Player.filter(key: 1).databaseRegion(db)
        },
        RegionCase(request: "Player.filter(keys: [1, 2])", "player(*)[1,2]") { db in
            try F.Player.filter(keys: [1, 2]).databaseRegion(db)
        },
        RegionCase(request: "Player.filter(keys: [])", "empty") { db in
            try F.Player.filter(keys: [Int]()).databaseRegion(db)
        },
        RegionCase(request: "Country.filter(keys: [])", "empty") { db in
            try F.Country.filter(keys: [String]()).databaseRegion(db)
        },
        RegionCase(request: "Player.filter(key: nil)", "empty") { db in
            try F.Player.filter(key: nil as Int?).databaseRegion(db)
        },
        RegionCase(request: "Player.filter(key: 2.0)", "player(*)[2]") { db in
            try F.Player.filter(key: 2.0).databaseRegion(db)
        },
        RegionCase(request: "Player.filter(key: \"1\") (SQLite converts text)", "player(*)") { db in
            try F.Player.filter(key: "1").databaseRegion(db)
        },
        RegionCase(request: "Player.filter(key: [\"ID\": 3])", "player(*)[3]") { db in
            try F.Player.filter(key: ["ID": 3]).databaseRegion(db)
        },
        RegionCase(request: "Player.filter(keys: [1, 2]).filter(keys: [2, 3])", "player(*)[2]") { db in
            try F.Player.filter(keys: [1, 2]).filter(keys: [2, 3]).databaseRegion(db)
        },
        RegionCase(request: "Player.filter(keys: [1, 2]).orderByPrimaryKey().limit(1)", "player(*)[1,2]") { db in
            try F.Player.filter(keys: [1, 2]).orderByPrimaryKey().limit(1).databaseRegion(db)
        },
        RegionCase(request: "Player.filter(key: 1).asRequest(of: Row.self)", "player(*)[1]") { db in
            try F.Player.filter(key: 1).asRequest(of: Row.self).databaseRegion(db)
        },
        RegionCase(request: "Hero.filter(key: 1) (databaseTableName player)", "player(*)[1]") { db in
            try F.Hero.filter(key: 1).databaseRegion(db)
        },
        RegionCase(request: "Award.filter(key: 3)", "award(*)[3]") { db in
            try F.Award.filter(key: 3).databaseRegion(db)
        },
        RegionCase(request: "LogEntry.filter(key: 7) (rowid)", "logentry(*)[7]") { db in
            try F.LogEntry.filter(key: 7).databaseRegion(db)
        },
        // Table-precise keys: not the rowid
        RegionCase(request: "Country.filter(key: \"FR\") (TEXT primary key)", "country(*)") { db in
            try F.Country.filter(key: "FR").databaseRegion(db)
        },
        RegionCase(request: "Descending.filter(key: 5) (INTEGER PRIMARY KEY DESC)", "descending(*)") { db in
            try F.Descending.filter(key: 5).databaseRegion(db)
        },
        RegionCase(request: "Pair.filter(key: [\"a\": \"x\", \"b\": 1]) (WITHOUT ROWID)", "pair(*)") { db in
            try F.Pair.filter(key: ["a": "x", "b": 1]).databaseRegion(db)
        },
        // SQL fragments keep the region table-precise, for every table they read
        RegionCase(
            request: "Player.filter(key: 1).filter(sql: teamId IN (SELECT id FROM team WHERE color = ?))",
            "player(*), team(color,id)"
        ) { db in
            try F.Player.filter(key: 1)
                .filter(sql: "teamId IN (SELECT id FROM team WHERE color = ?)", arguments: ["red"])
                .databaseRegion(db)
        },
        RegionCase(
            request: "Player.filter(key: 1).filter(sql: score > (SELECT AVG(score) FROM player))", "player(*)"
        ) { db in
            try F.Player.filter(key: 1).filter(sql: "score > (SELECT AVG(score) FROM player)").databaseRegion(db)
        },
        RegionCase(request: "Player.filter(key: 1).filter(sql: score > 10)", "player(*)") { db in
            try F.Player.filter(key: 1).filter(sql: "score > 10").databaseRegion(db)
        },
        RegionCase(
            request: "Player.filter(keys: [1, 2]).order(sql: (SELECT COUNT(*) FROM team))", "player(*), team(*)"
        ) { db in
            try F.Player.filter(keys: [1, 2]).order(sql: "(SELECT COUNT(*) FROM team)").databaseRegion(db)
        },
        RegionCase(request: "Player.filter(keys: []).filter(sql: ...team...)", "empty") { db in
            try F.Player.filter(keys: [Int]()).filter(sql: "teamId IN (SELECT id FROM team)").databaseRegion(db)
        },
        // Other requests
        RegionCase(request: "PlayerSummary.all() (a view)", "player(id,name)") { db in
            try F.PlayerSummary.all().databaseRegion(db)
        },
        RegionCase(request: "SQLRequest: SELECT * FROM player WHERE id = 1 (raw SQL)", "player(*)") { db in
            try SQLRequest<Row>(sql: "SELECT * FROM player WHERE id = ?", arguments: [1]).databaseRegion(db)
        },
        RegionCase(request: "DatabaseRegion(table: player, rowIDs: [1])", "player(*)[1]") { db in
            try DatabaseRegion(table: "player", rowIDs: [1]).databaseRegion(db)
        },
    ]
}

@Suite struct RegionRecordingTests {
    @Test func theRegionTableCoversEnoughStatements() {
        #expect(RegionCase.all.count >= 15)
    }

    @Test(arguments: DatabaseKind.allCases, RegionCase.all)
    func regionIsRecordedByTheAuthorizer(kind: DatabaseKind, regionCase: RegionCase) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        // Pools read on reader connections, queues on their only connection.
        let region = try test.writer.read { db in try regionCase.region(db) }
        #expect(region.description == regionCase.expected, "\(regionCase.label)")
    }

    @Test(arguments: DatabaseKind.allCases)
    func regionIsTheSameFromTheStatementCache(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let request = SQLRequest<Row>(sql: "SELECT name FROM player WHERE teamId IN (SELECT id FROM team)")
            let first = try request.databaseRegion(db)
            _ = try request.fetchAll(db)
            let second = try request.databaseRegion(db)
            #expect(first == second)
            #expect(second.description == "player(name,teamid), team(id)")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRegionDoesNotRunTheRequest(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.write { db throws in
            // The foreign key check reads the parent key.
            let request = SQLRequest<Row>(sql: "DELETE FROM player RETURNING name")
            #expect(try request.databaseRegion(db).description == "player(name), team(id)")
            #expect(try F.Player.all().fetchCount(db) == 4)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func regionFollowsAViewRedefinedOnTheSameConnection(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.write { db throws in
            try db.execute(sql: "CREATE VIEW chosen AS SELECT name FROM player")
            let request = SQLRequest<String>(sql: "SELECT * FROM chosen ORDER BY 1")
            #expect(try request.databaseRegion(db).description == "player(name)")
            #expect(try request.fetchAll(db) == ["Arthur", "Barbara", "Craig", "David"])
            try db.execute(sql: "DROP VIEW chosen; CREATE VIEW chosen AS SELECT name FROM team")
            #expect(try request.fetchAll(db) == ["Blue", "Red"])
            #expect(try request.databaseRegion(db).description == "team(name)")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func regionFollowsAViewRedefinedByAnotherConnection(kind: DatabaseKind) throws {
        // A pool's readers see the writer's schema changes; a queue has one
        // connection, for which this is the test above.
        let test = try RequestFixtures.makeDatabase(kind)
        let request = SQLRequest<String?>(sql: "SELECT * FROM roster ORDER BY 1")
        try test.writer.write { db throws in
            try db.execute(sql: "DROP VIEW roster; CREATE VIEW roster AS SELECT name FROM player")
        }
        try test.writer.read { db throws in
            #expect(try request.databaseRegion(db).description == "player(name)")
            #expect(try request.fetchAll(db) == ["Arthur", "Barbara", "Craig", "David"])
        }
        try test.writer.write { db throws in
            try db.execute(sql: "DROP VIEW roster; CREATE VIEW roster AS SELECT color FROM team")
        }
        try test.writer.read { db throws in
            #expect(try request.fetchAll(db) == [nil, "red"])
            #expect(try request.databaseRegion(db).description == "team(color)")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTableCreatedByAnotherConnectionIsFound(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.read { db throws in
            let error = #expect(throws: DatabaseError.self) { try F.Ghost.filter(key: 1).asRequest(of: Row.self).fetchOne(db) }
            #expect(error?.message == "no such table: ghost")
        }
        try test.writer.write { db throws in
            try db.execute(sql: "CREATE TABLE ghost (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO ghost VALUES (1, 'Boo')")
        }
        try test.writer.read { db throws in
            let row = try F.Ghost.filter(key: 1).asRequest(of: Row.self).fetchOne(db)
            #expect(row == Row(["id": 1, "name": "Boo"]))
            #expect(try F.Ghost.filter(key: 1).databaseRegion(db).description == "ghost(*)[1]")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func dropStatementsDrop(kind: DatabaseKind) throws {
        // The authorizer ignores deletions (to see each deleted row), which
        // must not turn DROP TABLE or DROP VIEW into no-ops.
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.write { db throws in
            try db.execute(sql: "DROP VIEW roster; DROP TABLE logEntry")
            let drop = try db.makeStatement(sql: "DROP TABLE IF EXISTS scratch")
            for _ in 0..<3 {
                try db.execute(sql: "CREATE TABLE scratch (a)")
                try db.cachedStatement(sql: "DROP TABLE scratch").execute()
                try db.execute(sql: "CREATE TABLE scratch (a)")
                // Compiled before the table existed: SQLite recompiles it.
                try drop.execute()
            }
            let names = try SQLRequest<String>(
                sql: "SELECT name FROM sqlite_master WHERE name IN ('roster', 'logEntry', 'scratch')"
            ).fetchAll(db)
            #expect(names == [])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRolledBackSchemaChangeIsForgotten(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.writeWithoutTransaction { db throws in
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "DROP TABLE descending; CREATE TABLE descending (id INTEGER PRIMARY KEY, label TEXT)")
            #expect(try F.Descending.filter(key: 5).databaseRegion(db).description == "descending(*)[5]")
            try db.execute(sql: "ROLLBACK")
            // INTEGER PRIMARY KEY DESC again: not the rowid, table-precise.
            #expect(try F.Descending.filter(key: 5).databaseRegion(db).description == "descending(*)")
        }
    }

    /// A rollback that undoes no schema change keeps the compiled statements:
    /// a rolled-back write does not cost the next one its statement cache.
    @Test(arguments: DatabaseKind.allCases)
    func aRollbackWithoutSchemaChangeKeepsTheStatementCache(kind: DatabaseKind) throws {
        let test = try RequestFixtures.makeDatabase(kind)
        try test.writer.write { db in try db.execute(sql: "CREATE TABLE rolledBack (a)") }
        try test.writer.writeWithoutTransaction { db throws in
            let statement = try db.cachedStatement(sql: "INSERT INTO rolledBack (a) VALUES (1)")
            try db.execute(sql: "BEGIN")
            try statement.execute()
            try db.execute(sql: "ROLLBACK")
            #expect(try db.cachedStatement(sql: "INSERT INTO rolledBack (a) VALUES (1)") === statement)
            #expect(try db.int("SELECT COUNT(*) FROM rolledBack") == 0)
            // A savepoint rolled back inside a transaction: the same.
            try db.execute(sql: "BEGIN; SAVEPOINT s")
            try statement.execute()
            try db.execute(sql: "ROLLBACK TO s; RELEASE s; COMMIT")
            #expect(try db.cachedStatement(sql: "INSERT INTO rolledBack (a) VALUES (1)") === statement)
        }
    }
}
