import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// What can go wrong in a record's write is a thrown error that says what
/// and where: SQLite's failures are `DatabaseError`s with the SQL and its
/// arguments, a missing row is `RecordError.recordNotFound` with the table
/// and the key. Nothing traps.
@Suite struct RecordWriteErrorTests {
    typealias Player = RecordWriteFixtures.Player

    // Records of single tests (see `PersistableRecordTests` for why they are
    // not local types of the test functions).
    struct Team: Codable, PersistableRecord { var id: Int64 }
    struct Member: Codable, PersistableRecord { var id: Int64; var teamId: Int64 }
    struct Ghost: Codable, PersistableRecord { var id: Int64 }
    struct Extra: Codable, PersistableRecord {
        static let databaseTableName = "player"
        var id: Int64
        var name: String
        var nickname: String
    }
    struct Empty: EncodableRecord, PersistableRecord {
        static let databaseTableName = "player"
        func encode(to container: inout PersistenceContainer) throws {}
    }

    @Test(arguments: DatabaseKind.allCases)
    func constraintViolationsThrowADatabaseErrorWithTheSQLAndArguments(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var arthur = Player(id: 1, name: "Arthur", score: 100)
            try arthur.insert(db)
            // Primary key.
            var duplicate = Player(id: 1, name: "Other", score: 1)
            let primaryKey = databaseError { try duplicate.insert(db) }
            #expect(primaryKey?.extendedResultCode == ResultCode(rawValue: 1555))  // SQLITE_CONSTRAINT_PRIMARYKEY
            #expect(primaryKey?.sql == #"INSERT INTO "player" ("id", "name", "score") VALUES (?1, ?2, ?3)"#)
            #expect(primaryKey?.arguments == "[1, 'Other', 1]")
            #expect(primaryKey?.message == "UNIQUE constraint failed: player.id")
            // Unique column, through an update.
            var barbara = Player(id: 2, name: "Barbara", score: 200)
            try barbara.insert(db)
            barbara.name = "Arthur"
            let unique = databaseError { try barbara.update(db) }
            #expect(unique?.resultCode == .SQLITE_CONSTRAINT)
            #expect(unique?.sql == #"UPDATE "player" SET "name" = ?2, "score" = ?3 WHERE "id" = ?1"#)
            #expect(unique?.description.contains("player.name") == true)
            // Check constraint, through updateChanges.
            let old = barbara
            barbara.name = "Barbara"
            barbara.score = -1
            let check = databaseError { try barbara.updateChanges(db, from: old) }
            #expect(check?.resultCode == .SQLITE_CONSTRAINT)
            #expect(check?.sql?.hasPrefix("UPDATE") == true)
            // Upsert and save report the same way.
            var negative = Player(id: 3, name: "Craig", score: -5)
            let upsert = databaseError { try negative.upsert(db) }
            #expect(upsert?.sql?.contains("ON CONFLICT DO UPDATE") == true)
            let save = databaseError { try negative.save(db) }
            #expect(save?.sql?.hasPrefix("INSERT") == true)
            // The transaction goes on: the failed statements changed nothing.
            #expect(try Player.orderByPrimaryKey().fetchAll(db).map(\.name) == ["Arthur", "Barbara"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func foreignKeyViolationsThrow(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE team (id INTEGER PRIMARY KEY);
                CREATE TABLE member (id INTEGER PRIMARY KEY, teamId INTEGER NOT NULL REFERENCES team(id));
                """)
            try Team(id: 1).insert(db)
            try Member(id: 1, teamId: 1).insert(db)
            let insert = databaseError { try Member(id: 2, teamId: 2).insert(db) }
            #expect(insert?.extendedResultCode == ResultCode(rawValue: 787))  // SQLITE_CONSTRAINT_FOREIGNKEY
            let delete = databaseError { try Team(id: 1).delete(db) }
            #expect(delete?.sql == #"DELETE FROM "team" WHERE "id" = ?1"#)
            let deleteAll = databaseError { try Team.deleteAll(db) }
            #expect(deleteAll?.sql == #"DELETE FROM "team""#)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func missingRowsThrowRecordNotFoundWithTableAndKey(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var player = Player(id: 7, name: "Arthur", score: 1)
            try player.insert(db)
            #expect(try player.delete(db))
            do {
                try player.update(db)
                Issue.record("Expected RecordError")
            } catch let error as RecordError {
                #expect(error == .recordNotFound(databaseTableName: "player", key: ["id": 7.databaseValue]))
                #expect(error.description == "no row in table player with key [id: 7]")
            }
            let membership = RecordWriteFixtures.Membership(teamId: 1, playerId: 2, role: "x")
            do {
                try membership.update(db, columns: ["role"])
                Issue.record("Expected RecordError")
            } catch let error as RecordError {
                #expect(error.description == "no row in table membership with key [playerId: 2, teamId: 1]")
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aMissingTableOrColumnThrows(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            let table = databaseError { try Ghost(id: 1).insert(db) }
            #expect(table?.message == "no such table: ghost")
            let column = databaseError { try Extra(id: 1, name: "Arthur", nickname: "King").insert(db) }
            #expect(column?.message == "table player has no column named nickname")
            #expect(column?.sql?.hasPrefix("INSERT") == true)
            let empty = databaseError { try Empty().insert(db) }
            #expect(empty?.resultCode == .SQLITE_MISUSE)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aFailedWriteInsideWriteRollsBackTheTransaction(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        #expect(throws: RecordError.self) {
            try test.writer.write { db in
                var arthur = Player(name: "Arthur")
                try arthur.insert(db)
                try Player(id: 99, name: "Ghost").update(db)
            }
        }
        #expect(try test.writer.count("player") == 0)
    }
}
