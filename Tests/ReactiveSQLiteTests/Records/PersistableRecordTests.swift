import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// Records write their own rows: each method runs the one statement it
/// names, on the row of the record's primary key.
@Suite struct PersistableRecordTests {
    typealias Player = RecordWriteFixtures.Player
    typealias Country = RecordWriteFixtures.Country

    // Records of single tests. Local types of test functions are avoided:
    // with Swift 6.3.1, a closure inside `#expect(...)` and another one of
    // the same function that use local types can be miscompiled into one.

    struct InsertionSpy: Encodable, MutablePersistableRecord {
        static let databaseTableName = "player"
        var id: Int64?
        var name: String
        var inserted: InsertionSuccess?
        enum CodingKeys: String, CodingKey { case id, name }
        mutating func didInsert(_ inserted: InsertionSuccess) { self.inserted = inserted }
    }

    struct NewPlayer: Encodable, PersistableRecord {
        static let databaseTableName = "player"
        var name: String
    }

    struct StoredPlayer: Codable, FetchableRecord, PersistableRecord, Equatable {
        static let databaseTableName = "player"
        var id: Int64?
        var name: String
        var score: Int?
    }

    struct Partial: EncodableRecord, PersistableRecord {
        static let databaseTableName = "player"
        var columns: [(String, (any DatabaseValueConvertible)?)]
        func encode(to container: inout PersistenceContainer) throws {
            for (column, value) in columns { container[column] = value }
        }
    }

    // MARK: - Insert

    @Test(arguments: DatabaseKind.allCases)
    func insertWritesTheRowAndDidInsertLearnsTheAutoIncrementedID(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            // The table's schema is read first: the trace shows the write alone.
            _ = try db.primaryKeyColumns(ofTable: "player")
            var arthur = Player(name: "Arthur", score: 100)
            let statements = try StatementLog.statements(in: db) { try arthur.insert(db) }
            #expect(statements == [#"INSERT INTO "player" ("id", "name", "score") VALUES (?1, ?2, ?3)"#])
            #expect(arthur.id == 1)
            var barbara = Player(name: "Barbara", score: 200)
            try barbara.insert(db)
            #expect(barbara.id == 2)
            var craig = Player(id: 10, name: "Craig")
            try craig.insert(db)
            #expect(craig.id == 10)
            #expect(try Player.orderByPrimaryKey().fetchAll(db) == [arthur, barbara, craig])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func didInsertReceivesTheInsertedColumnsWithTheRowID(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var spy = InsertionSpy(name: "Arthur")
            try spy.insert(db)
            let inserted = try #require(spy.inserted)
            #expect(inserted.rowID == 1)
            #expect(inserted.rowIDColumn == "id")
            #expect(inserted.persistenceContainer.map(\.column) == ["id", "name"])
            #expect(inserted.persistenceContainer["id"]?.databaseValue == 1.databaseValue)
            #expect(inserted.persistenceContainer["NAME"]?.databaseValue == "Arthur".databaseValue)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func insertAndFetchReturnsTheRowAsStored(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            // The score is not encoded: the column's default applies.
            try NewPlayer(name: "Arthur").insert(db)
            let stored = StoredPlayer(id: nil, name: "Barbara", score: nil)
            let statements = try StatementLog.statements(in: db) {
                // NULL in a NOT NULL column with a default: the insert fails.
                #expect(throws: DatabaseError.self) { try stored.insertAndFetch(db) }
            }
            #expect(statements.count == 1)
            #expect(statements[0].hasSuffix("RETURNING *"))
            let fetched = try StoredPlayer(id: nil, name: "Barbara", score: 7).insertAndFetch(db)
            #expect(fetched == StoredPlayer(id: 2, name: "Barbara", score: 7))
            #expect(try Player.filter(key: 1).fetchOne(db) == Player(id: 1, name: "Arthur", score: 0))
        }
    }

    // MARK: - Update

    @Test(arguments: DatabaseKind.allCases)
    func updateWritesEveryColumnButTheKey(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var player = Player(name: "Arthur", score: 100)
            try player.insert(db)
            player.name = "Arthur II"
            player.score = 101
            let statements = try StatementLog.statements(in: db) { try player.update(db) }
            #expect(statements == [#"UPDATE "player" SET "name" = ?2, "score" = ?3 WHERE "id" = ?1"#])
            #expect(try Player.fetchAllByKey(db) == [player])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func updateOfSomeColumnsWritesOnlyThem(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var player = Player(name: "Arthur", score: 100)
            try player.insert(db)
            var changed = player
            changed.name = "Not written"
            changed.score = 101
            let statements = try StatementLog.statements(in: db) {
                try changed.update(db, columns: ["SCORE", "id"])
            }
            #expect(statements == [#"UPDATE "player" SET "score" = ?3 WHERE "id" = ?1"#])
            player.score = 101
            #expect(try Player.fetchAllByKey(db) == [player])

            // Only the key: the row's existence is checked, nothing changes.
            try changed.update(db, columns: ["id"])
            #expect(try Player.fetchAllByKey(db) == [player])
            var missing = changed
            missing.id = 99
            #expect(throws: RecordError.self) { try missing.update(db, columns: ["id"]) }

            let error = databaseError { try changed.update(db, columns: ["scroe"]) }
            #expect(error?.resultCode == .SQLITE_MISUSE)
            #expect(error?.message?.contains("scroe") == true)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func updateChangesWritesOnlyTheChangedColumns(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var old = Player(name: "Arthur", score: 100)
            try old.insert(db)
            let inserted = old
            var new = inserted
            new.score = 101
            var changed = false
            let statements = try StatementLog.statements(in: db) { changed = try new.updateChanges(db, from: old) }
            #expect(changed)
            #expect(statements == [#"UPDATE "player" SET "score" = ?3 WHERE "id" = ?1"#])
            new.name = "Arthur II"
            new.score = 102
            let both = try StatementLog.statements(in: db) { try new.updateChanges(db, from: old) }
            #expect(both == [#"UPDATE "player" SET "name" = ?2, "score" = ?3 WHERE "id" = ?1"#])
            #expect(try Player.fetchAllByKey(db) == [new])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func updateChangesOfAnUnchangedRecordRunsNoStatementAtAll(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        // In its own write: the table's schema is not read yet.
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO player (id, name, score) VALUES (1, 'Arthur', 100)")
        }
        try test.writer.write { db in
            let player = Player(id: 1, name: "Arthur", score: 100)
            var changed = true
            let statements = try StatementLog.statements(in: db) {
                changed = try player.updateChanges(db, from: player)
                // Equal database values: 100 and 100.0 are one value.
                changed = try player.updateChanges(db, from: Player(id: 1, name: "Arthur", score: 100)) || changed
            }
            #expect(!changed)
            #expect(statements.isEmpty)
        }
        // A missing row is only noticed when something changed.
        try test.writer.write { db throws in
            let ghost = Player(id: 99, name: "Ghost", score: 1)
            #expect(try !ghost.updateChanges(db, from: ghost))
            var changedGhost = ghost
            changedGhost.score = 2
            #expect(throws: RecordError.recordNotFound(databaseTableName: "player", key: ["id": 99.databaseValue])) {
                try changedGhost.updateChanges(db, from: ghost)
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func updateChangesComparesRecordsThatEncodeOtherColumns(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            try db.execute(sql: "INSERT INTO player (id, name, score) VALUES (1, 'Arthur', 100)")
            // Records that encode their columns in another order, or not all of them.
            let old = Partial(columns: [("score", 100), ("name", "Arthur"), ("id", 1)])
            let same = Partial(columns: [("id", 1), ("Name", "Arthur"), ("score", 100)])
            #expect(try !same.updateChanges(db, from: old))
            let new = Partial(columns: [("id", 1), ("name", "Arthur"), ("score", 200)])
            #expect(try new.updateChanges(db, from: old))
            // A column the old record does not encode is a change.
            let older = Partial(columns: [("id", 1), ("name", "Arthur")])
            let statements = try StatementLog.statements(in: db) { try new.updateChanges(db, from: older) }
            #expect(statements == [#"UPDATE "player" SET "score" = ?3 WHERE "id" = ?1"#])
            #expect(try Player.fetchAllByKey(db) == [Player(id: 1, name: "Arthur", score: 200)])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func updateOfAMissingRowThrowsRecordNotFound(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            let ghost = Player(id: 42, name: "Ghost")
            #expect(throws: RecordError.recordNotFound(databaseTableName: "player", key: ["id": 42.databaseValue])) {
                try ghost.update(db)
            }
            do {
                try Country(code: "FR", name: "France").update(db)
                Issue.record("Expected RecordError")
            } catch let error as RecordError {
                #expect(error.description == "no row in table country with key [code: 'FR']")
            }
            // A NULL key has no row: nothing runs.
            let statements = try StatementLog.statements(in: db) {
                #expect(throws: RecordError.recordNotFound(databaseTableName: "player", key: ["id": .null])) {
                    try Player(name: "Nobody").update(db)
                }
            }
            #expect(statements.isEmpty)
        }
    }

    // MARK: - Upsert

    @Test(arguments: DatabaseKind.allCases)
    func upsertInsertsOrUpdatesEveryColumnButTheKey(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            // The table's schema is read first: the trace shows the write alone.
            _ = try db.primaryKeyColumns(ofTable: "player")
            var arthur = Player(name: "Arthur", score: 100)
            let statements = try StatementLog.statements(in: db) { try arthur.upsert(db) }
            #expect(statements == [
                #"INSERT INTO "player" ("id", "name", "score") VALUES (?1, ?2, ?3) "#
                    + #"ON CONFLICT DO UPDATE SET "name" = excluded."name", "score" = excluded."score" RETURNING rowid"#
            ])
            #expect(arthur.id == 1)
            var barbara = Player(name: "Barbara", score: 200)
            try barbara.upsert(db)
            #expect(barbara.id == 2)

            // Conflict on the primary key: the row is updated.
            var renamed = Player(id: 1, name: "Arthur II", score: 101)
            try renamed.upsert(db)
            #expect(renamed.id == 1)
            // Conflict on the unique name: that row is updated, and its id learned.
            var sameName = Player(id: nil, name: "Barbara", score: 201)
            try sameName.upsert(db)
            #expect(sameName.id == 2)
            #expect(try Player.fetchAllByKey(db) == [renamed, sameName])

            try Country(code: "FR", name: "France").upsert(db)
            try Country(code: "FR", name: "République française").upsert(db)
            #expect(try Country.all().fetchAll(db) == [Country(code: "FR", name: "République française")])
        }
    }

    // MARK: - Save

    @Test(arguments: DatabaseKind.allCases)
    func saveInsertsNewRecordsAndUpdatesExistingOnes(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            // The table's schema is read first: the trace shows the write alone.
            _ = try db.primaryKeyColumns(ofTable: "player")
            var arthur = Player(name: "Arthur", score: 100)
            // A NULL key: an insert at once.
            let insert = try StatementLog.statements(in: db) { try arthur.save(db) }
            #expect(insert.count == 1)
            #expect(insert[0].hasPrefix("INSERT"))
            #expect(arthur.id == 1)
            arthur.score = 101
            let update = try StatementLog.statements(in: db) { try arthur.save(db) }
            #expect(update.count == 1)
            #expect(update[0].hasPrefix("UPDATE"))
            // A key no row has: the update finds nothing, then the insert runs.
            var barbara = Player(id: 5, name: "Barbara", score: 200)
            let both = try StatementLog.statements(in: db) { try barbara.save(db) }
            let verbs = both.map { $0.prefix(6) }
            #expect(verbs == ["UPDATE", "INSERT"])
            #expect(barbara.id == 5)
            #expect(try Player.fetchAllByKey(db) == [arthur, barbara])

            let france = Country(code: "FR", name: "France")
            try france.save(db)
            try Country(code: "FR", name: "France!").save(db)
            #expect(try Country.all().fetchAll(db) == [Country(code: "FR", name: "France!")])
        }
    }

    // MARK: - Delete and exists

    @Test(arguments: DatabaseKind.allCases)
    func deleteAndExistsFindTheRowOfTheKey(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var arthur = Player(name: "Arthur", score: 100)
            try arthur.insert(db)
            var barbara = Player(name: "Barbara", score: 200)
            try barbara.insert(db)
            #expect(try arthur.exists(db))
            let statements = try StatementLog.statements(in: db) { () throws in
                #expect(try arthur.delete(db))
            }
            #expect(statements == [#"DELETE FROM "player" WHERE "id" = ?1"#])
            #expect(try !arthur.exists(db))
            #expect(try !arthur.delete(db))
            #expect(try Player.fetchAllByKey(db) == [barbara])
            // A NULL key: no statement, no row.
            let none = try StatementLog.statements(in: db) { () throws in
                #expect(try !Player(name: "Nobody").exists(db))
                #expect(try !Player(name: "Nobody").delete(db))
            }
            #expect(none.isEmpty)
        }
        try test.writer.read { db throws in
            #expect(try Player(id: 2, name: "Barbara").exists(db))
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func deleteAllAndDeleteOneDeleteByKey(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            for index in 1...1200 {
                var player = Player(id: Int64(index), name: "Player \(index)")
                try player.insert(db)
            }
            #expect(try Player.deleteOne(db, key: 1))
            #expect(try !Player.deleteOne(db, key: 1))
            // More keys than one statement takes, a key twice, and missing keys.
            let keys: [Int64] = Array(2...1101) + [2, 5000]
            var deleted = 0
            let statements = try StatementLog.statements(in: db) { deleted = try Player.deleteAll(db, keys: keys) }
            #expect(deleted == 1100)
            #expect(statements.count == 3)
            #expect(try Player.deleteAll(db, keys: [Int64]()) == 0)
            #expect(try db.count("player") == 99)
            #expect(try Player.deleteAll(db) == 99)
            #expect(try db.count("player") == 0)

            try RecordWriteFixtures.Membership(teamId: 1, playerId: 2, role: "captain").insert(db)
            #expect(try RecordWriteFixtures.Membership.deleteOne(db, key: ["TEAMID": 1, "playerId": 2]))
            #expect(throws: DatabaseError.self) { try RecordWriteFixtures.Membership.deleteOne(db, key: 1) }
        }
    }
}

extension RecordWriteFixtures.Player {
    /// Every player, by id.
    static func fetchAllByKey(_ db: Database) throws -> [Self] {
        try orderByPrimaryKey().fetchAll(db)
    }
}
