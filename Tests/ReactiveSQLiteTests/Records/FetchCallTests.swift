import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// The fetch calls GRDB apps type, as static methods of what they return:
/// records of a table by key or all of them, records, rows and values of
/// SQL, and the errors of each.
@Suite struct FetchCallTests {
    struct Player: Codable, FetchableRecord, PersistableRecord, Equatable {
        var id: Int64
        var name: String
        var score: Int
    }

    /// A record of SQL only: no table.
    struct Score: Decodable, FetchableRecord, Equatable {
        var name: String
        var score: Int
    }

    /// A table without a declared primary key: rows are found by rowid.
    struct Note: Codable, FetchableRecord, PersistableRecord, Equatable {
        var text: String
    }

    static let schema = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
        INSERT INTO player VALUES (1, 'Arthur', 100), (2, 'Barbara', 80), (3, 'Craig', 60);
        CREATE TABLE note (text TEXT);
        INSERT INTO note VALUES ('first'), ('second');
        """
    static let arthur = Player(id: 1, name: "Arthur", score: 100)
    static let barbara = Player(id: 2, name: "Barbara", score: 80)
    static let craig = Player(id: 3, name: "Craig", score: 60)

    @Test(arguments: DatabaseKind.allCases)
    func recordsOfATable(kind: DatabaseKind) throws {
        let test = try kind.make(sql: Self.schema)
        try test.writer.read { db in
            #expect(try Player.fetchAll(db).sorted { $0.id < $1.id } == [Self.arthur, Self.barbara, Self.craig])
            #expect(try Player.fetchCount(db) == 3)
            #expect(try Player.fetchOne(db, key: 2) == Self.barbara)
            #expect(try Player.fetchOne(db, key: 9) == nil)
            #expect(try Player.fetchAll(db, keys: [3, 9, 1]).sorted { $0.id < $1.id } == [Self.arthur, Self.craig])
            #expect(try Player.fetchAll(db, keys: [Int]()) == [])
            #expect(try Player.find(db, key: 3) == Self.craig)
            #expect(try Note.find(db, key: 2) == Note(text: "second"))
            // One row read, not the table.
            let statements = try StatementLog.statements(in: db) { _ = try Player.fetchOne(db) }
            #expect(statements.count == 1 && statements[0].hasSuffix("LIMIT 1"), "\(statements)")
        }
        try test.writer.write { db in
            try db.execute(sql: "DELETE FROM player")
            #expect(try Player.fetchOne(db) == nil)
            #expect(try Player.fetchAll(db) == [])
            #expect(try Player.fetchCount(db) == 0)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func findThrowsWhenThereIsNoSuchRow(kind: DatabaseKind) throws {
        let test = try kind.make(sql: Self.schema)
        try test.writer.read { db in
            #expect(throws: RecordError.recordNotFound(databaseTableName: "player", key: ["id": 9.databaseValue])) {
                try Player.find(db, key: 9)
            }
            #expect(throws: RecordError.recordNotFound(databaseTableName: "note", key: ["rowid": 7.databaseValue])) {
                try Note.find(db, key: 7)
            }
            // A text key that is not a player's integer key.
            #expect(throws: RecordError.self) { try Player.find(db, key: "one") }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func recordsRowsAndValuesOfSQL(kind: DatabaseKind) throws {
        let test = try kind.make(sql: Self.schema)
        try test.writer.read { db in
            let sql = "SELECT name, score FROM player WHERE score >= ? ORDER BY score DESC"
            #expect(try Score.fetchAll(db, sql: sql, arguments: [80]) == [
                Score(name: "Arthur", score: 100), Score(name: "Barbara", score: 80),
            ])
            #expect(try Score.fetchOne(db, sql: sql, arguments: [90]) == Score(name: "Arthur", score: 100))
            #expect(try Score.fetchOne(db, sql: sql, arguments: [1000]) == nil)
            let scores = try Score.fetchCursor(db, sql: sql, arguments: [0])
            var names: [String] = []
            while let score = try scores.next() { names.append(score.name) }
            #expect(names == ["Arthur", "Barbara", "Craig"])
            #expect(try Player.fetchAll(db, sql: "SELECT * FROM player WHERE id = :id", arguments: ["id": 2]) == [Self.barbara])

            #expect(try Row.fetchAll(db, sql: "SELECT id FROM player ORDER BY id").map { try $0["id"] as Int64 } == [1, 2, 3])
            let craig = try #require(try Row.fetchOne(db, sql: "SELECT name FROM player WHERE id = ?", arguments: [3]))
            #expect(try craig["name"] as String == "Craig")
            #expect(try Row.fetchOne(db, sql: "SELECT name FROM player WHERE id = 9") == nil)
            let rows = try Row.fetchCursor(db, sql: "SELECT id FROM player ORDER BY id DESC")
            let first = try #require(try rows.next())
            #expect(try first["id"] as Int64 == 3)

            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player") == 3)
            #expect(try Int.fetchOne(db, sql: "SELECT score FROM player WHERE id = 9") == nil)
            #expect(try String.fetchAll(db, sql: "SELECT name FROM player ORDER BY name") == ["Arthur", "Barbara", "Craig"])
            let values = try Int.fetchCursor(db, sql: "SELECT score FROM player ORDER BY score")
            #expect(try values.next() == 60)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func badSQLArgumentsAndDataThrowClearErrors(kind: DatabaseKind) throws {
        let test = try kind.make(sql: Self.schema)
        try test.writer.read { db in
            let syntax = #expect(throws: DatabaseError.self) { try Row.fetchAll(db, sql: "SELEKT 1") }
            #expect(syntax?.resultCode == .SQLITE_ERROR)
            #expect("\(syntax.map { "\($0)" } ?? "")".contains("SELEKT 1"))
            #expect(throws: DatabaseError.self) { try Int.fetchAll(db, sql: "SELECT score FROM player WHERE id = ?") }
            #expect(throws: DatabaseError.self) { try Player.fetchAll(db, sql: "SELECT * FROM nothing") }
            // A NULL for a non-optional value (`fetchOne` gives nil for it,
            // as GRDB's), a text for an integer field.
            #expect(throws: RowDecodingError.self) { try Int.fetchAll(db, sql: "SELECT NULL") }
            #expect(throws: (any Error).self) { try Score.fetchAll(db, sql: "SELECT name, name AS score FROM player") }
        }
        // A table that does not exist.
        try test.writer.read { db in
            struct Ghost: Codable, FetchableRecord, TableRecord {}
            #expect(throws: DatabaseError.self) { try Ghost.fetchAll(db) }
            #expect(throws: DatabaseError.self) { try Ghost.fetchCount(db) }
        }
    }
}
