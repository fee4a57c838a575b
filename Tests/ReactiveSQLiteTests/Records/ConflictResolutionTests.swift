import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// `insert(_:onConflict:)` runs `INSERT OR <resolution>`: SQLite's answer
/// to a constraint violation, as documented for each resolution.
@Suite struct ConflictResolutionTests {
    typealias Player = RecordWriteFixtures.Player

    /// A database with Arthur (id 1), inside a transaction that already
    /// inserted Barbara (id 2), then an insert of another Arthur (a
    /// violation of the unique name) with `resolution`: the players at
    /// the end of the transaction, the error of the insert, and the id the
    /// record learned.
    private func insertConflictingPlayer(
        _ kind: DatabaseKind, _ resolution: Database.ConflictResolution?
    ) throws -> (players: [Player], error: DatabaseError?, id: Int64?) {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var arthur = Player(id: 1, name: "Arthur", score: 100)
            try arthur.insert(db)
        }
        var error: DatabaseError?
        var conflicting = Player(name: "Arthur", score: 1)
        try test.writer.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN")
            var barbara = Player(id: 2, name: "Barbara", score: 200)
            try barbara.insert(db)
            do {
                try conflicting.insert(db, onConflict: resolution)
            } catch let caught as DatabaseError {
                error = caught
            }
            if db.isInsideTransaction { try db.execute(sql: "COMMIT") }
        }
        let players = try test.writer.read { db in try Player.orderByPrimaryKey().fetchAll(db) }
        return (players, error, conflicting.id)
    }

    @Test(arguments: DatabaseKind.allCases)
    func abortFailsTheStatementAndKeepsTheTransaction(kind: DatabaseKind) throws {
        for resolution in [nil, Database.ConflictResolution.abort, .fail] {
            let (players, error, id) = try insertConflictingPlayer(kind, resolution)
            #expect(error?.extendedResultCode == ResultCode(rawValue: 2067))  // SQLITE_CONSTRAINT_UNIQUE
            #expect(error?.sql?.hasPrefix("INSERT") == true)
            #expect(id == nil)
            #expect(players.map(\.name) == ["Arthur", "Barbara"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func rollbackFailsAndRollsTheTransactionBack(kind: DatabaseKind) throws {
        let (players, error, id) = try insertConflictingPlayer(kind, .rollback)
        #expect(error?.resultCode == .SQLITE_CONSTRAINT)
        #expect(error?.sql?.hasPrefix("INSERT OR ROLLBACK") == true)
        #expect(id == nil)
        #expect(players.map(\.name) == ["Arthur"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func ignoreSkipsTheRowWithoutErrorAndWithoutDidInsert(kind: DatabaseKind) throws {
        let (players, error, id) = try insertConflictingPlayer(kind, .ignore)
        #expect(error == nil)
        // The last inserted rowid is Barbara's: didInsert must not see it.
        #expect(id == nil)
        #expect(players == [Player(id: 1, name: "Arthur", score: 100), Player(id: 2, name: "Barbara", score: 200)])
    }

    @Test(arguments: DatabaseKind.allCases)
    func replaceDeletesTheConflictingRow(kind: DatabaseKind) throws {
        let (players, error, id) = try insertConflictingPlayer(kind, .replace)
        #expect(error == nil)
        #expect(id == 3)
        #expect(players == [Player(id: 2, name: "Barbara", score: 200), Player(id: 3, name: "Arthur", score: 1)])
    }

    @Test(arguments: DatabaseKind.allCases)
    func eachResolutionHasItsOwnStatement(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var statements: [String] = []
            for (index, resolution) in [nil, Database.ConflictResolution.abort, .fail, .ignore, .replace, .rollback]
                .enumerated()
            {
                var player = Player(id: Int64(index + 1), name: "Player \(index)")
                statements += try StatementLog.statements(in: db) { try player.insert(db, onConflict: resolution) }
            }
            let verbs = statements.filter { $0.hasPrefix("INSERT") }.map { $0.prefix(while: { $0 != "\"" }) }
            #expect(verbs == [
                "INSERT INTO ", "INSERT OR ABORT INTO ", "INSERT OR FAIL INTO ", "INSERT OR IGNORE INTO ",
                "INSERT OR REPLACE INTO ", "INSERT OR ROLLBACK INTO ",
            ])
            #expect(try db.count("player") == 6)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func ignoreSkipsAnyViolationNotOnlyKeys(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            // A CHECK violation.
            var negative = Player(id: 1, name: "Negative", score: -1)
            try negative.insert(db, onConflict: .ignore)
            #expect(negative.id == 1)  // not learned: it was the record's own
            #expect(try db.count("player") == 0)
            #expect(throws: DatabaseError.self) { try negative.insert(db) }
        }
    }
}
