import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// A record's row is the one of the primary key the schema declares:
/// compound, text, `WITHOUT ROWID`, not the rowid, or the rowid itself for a
/// table that declares none.
@Suite struct RecordKeyTests {
    typealias Fixtures = RecordWriteFixtures

    struct WordSpy: Encodable, PersistableRecord {
        static let databaseTableName = "word"
        let spelling: String
        let language: String
        let inserted: Recorded<InsertionSuccess>
        enum CodingKeys: CodingKey { case spelling, language }
        func didInsert(_ inserted: InsertionSuccess) { self.inserted.value = inserted }
    }

    struct Item: Codable, FetchableRecord, PersistableRecord, Equatable {
        var id: Int64
        var code: String
        var label: String
    }

    /// A membership without its player: half a key.
    struct LooseMembership: Encodable, PersistableRecord {
        static let databaseTableName = "membership"
        var teamId: Int64
        var role: String
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTextKeyIdentifiesTheRow(kind: DatabaseKind) throws {
        let test = try Fixtures.makeDatabase(kind)
        try test.writer.write { db in
            try Fixtures.Country(code: "FR", name: "France").insert(db)
            try Fixtures.Country(code: "fr", name: "Lowercase").insert(db)  // BINARY: another key
            let statements = try StatementLog.statements(in: db) {
                try Fixtures.Country(code: "FR", name: "République française").update(db)
            }
            #expect(statements == [#"UPDATE "country" SET "name" = ?2 WHERE "code" = ?1"#])
            #expect(try Fixtures.Country.filter(key: "FR").fetchOne(db)?.name == "République française")
            #expect(try Fixtures.Country(code: "fr", name: "").delete(db))
            #expect(try Fixtures.Country.all().fetchAll(db) == [Fixtures.Country(code: "FR", name: "République française")])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCompoundKeyIdentifiesTheRow(kind: DatabaseKind) throws {
        typealias Membership = Fixtures.Membership
        let test = try Fixtures.makeDatabase(kind)
        try test.writer.write { db in
            try Membership(teamId: 1, playerId: 1, role: "captain").insert(db)
            try Membership(teamId: 1, playerId: 2, role: "player").insert(db)
            try Membership(teamId: 2, playerId: 1, role: "player").insert(db)
            let old = Membership(teamId: 1, playerId: 2, role: "player")
            var new = old
            new.role = "coach"
            let statements = try StatementLog.statements(in: db) { try new.updateChanges(db, from: old) }
            #expect(statements == [#"UPDATE "membership" SET "role" = ?3 WHERE "teamId" = ?1 AND "playerId" = ?2"#])
            #expect(try Membership(teamId: 2, playerId: 1, role: "").delete(db))
            #expect(try !Membership(teamId: 2, playerId: 1, role: "").exists(db))
            #expect(try Membership(teamId: 1, playerId: 1, role: "").exists(db))
            try Membership(teamId: 1, playerId: 1, role: "player").upsert(db)
            #expect(try Membership.orderByPrimaryKey().fetchAll(db) == [
                Membership(teamId: 1, playerId: 1, role: "player"),
                Membership(teamId: 1, playerId: 2, role: "coach"),
            ])
            #expect(throws: RecordError.recordNotFound(
                databaseTableName: "membership", key: ["teamId": 3.databaseValue, "playerId": 3.databaseValue])
            ) {
                try Membership(teamId: 3, playerId: 3, role: "").update(db)
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aWithoutRowIDTableWritesWithoutRowids(kind: DatabaseKind) throws {
        typealias Word = Fixtures.Word
        let test = try Fixtures.makeDatabase(kind)
        try test.writer.write { db in
            let spy = WordSpy(spelling: "chat", language: "fr", inserted: Recorded())
            try spy.insert(db)
            #expect(spy.inserted.value?.rowID == 0)
            #expect(spy.inserted.value?.rowIDColumn == nil)
            try Word(spelling: "chat", language: "en", meaning: "talk").insert(db)
            try Word(spelling: "chat", language: "fr", meaning: "cat").update(db)
            let upsert = Word(spelling: "chien", language: "fr", meaning: "dog")
            let statements = try StatementLog.statements(in: db) { try upsert.upsert(db) }
            #expect(statements.count == 1)
            #expect(!statements[0].contains("RETURNING"))
            try Word(spelling: "chien", language: "fr", meaning: "hound").upsert(db)
            #expect(try Word.orderByPrimaryKey().fetchAll(db) == [
                Word(spelling: "chat", language: "en", meaning: "talk"),
                Word(spelling: "chat", language: "fr", meaning: "cat"),
                Word(spelling: "chien", language: "fr", meaning: "hound"),
            ])
            #expect(try Word(spelling: "chat", language: "en", meaning: nil).delete(db))
            #expect(try Word.deleteOne(db, key: ["spelling": "chien", "language": "fr"]))
            #expect(try Word.all().fetchCount(db) == 1)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTableWithoutPrimaryKeyIdentifiesRowsByRowid(kind: DatabaseKind) throws {
        typealias Note = Fixtures.Note
        let test = try Fixtures.makeDatabase(kind)
        try test.writer.write { db in
            var first = Note(text: "first", rank: 1)
            try first.insert(db)
            #expect(first.rowid == 1)
            var second = Note(text: "second", rank: 2)
            try second.insert(db)
            #expect(second.rowid == 2)
            var third = Note(rowid: 10, text: "third", rank: nil)
            try third.insert(db)
            second.rank = 20
            let statements = try StatementLog.statements(in: db) { try second.update(db) }
            #expect(statements == [#"UPDATE "note" SET "text" = ?2, "rank" = ?3 WHERE "rowid" = ?1"#])
            #expect(try first.delete(db))
            var upserted = Note(rowid: 10, text: "third!", rank: 3)
            try upserted.upsert(db)
            #expect(upserted.rowid == 10)
            let notes = try SQLRequest<Note>(sql: "SELECT rowid, * FROM note ORDER BY rowid").fetchAll(db)
            #expect(notes == [second, upserted])
            // insertAndFetch returns the hidden rowid, which `*` leaves out.
            let fetched = try Note(text: "fourth", rank: 4).insertAndFetch(db)
            #expect(fetched == Note(rowid: 11, text: "fourth", rank: 4))
            #expect(try Note.deleteOne(db, key: 11))
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRecordThatDoesNotEncodeItsKeyInsertsButCannotIdentifyItsRow(kind: DatabaseKind) throws {
        typealias AnonymousNote = Fixtures.AnonymousNote
        let test = try Fixtures.makeDatabase(kind)
        try test.writer.write { db in
            let note = AnonymousNote(text: "anonymous", rank: nil)
            try note.insert(db)
            try note.save(db)  // no key: an insert
            #expect(try db.count("note") == 2)
            for write in [{ try note.update(db) }, { _ = try note.delete(db) }, { _ = try note.exists(db) }] {
                let error = databaseError { try write() }
                #expect(error?.resultCode == .SQLITE_MISUSE)
                #expect(error?.message?.contains("rowid") == true)
            }
            let membership = databaseError { try LooseMembership(teamId: 1, role: "").delete(db) }
            #expect(membership?.message?.contains("does not encode playerId") == true)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func anIntegerPrimaryKeyDescIsAKeyNotTheRowid(kind: DatabaseKind) throws {
        typealias Descending = Fixtures.Descending
        let test = try Fixtures.makeDatabase(kind)
        try test.writer.write { db in
            try Descending(id: 5, label: "five").insert(db)
            try Descending(id: 5, label: "FIVE").update(db)
            #expect(try Descending.filter(key: 5).fetchOne(db) == Descending(id: 5, label: "FIVE"))
            #expect(try Descending(id: 5, label: nil).delete(db))
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aSchemaChangeIsSeenByTheNextWrite(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, code TEXT, label TEXT)")
            try Item(id: 1, code: "a", label: "one").insert(db)
            try Item(id: 1, code: "a", label: "uno").update(db)
            // Same table name, another primary key.
            try db.execute(sql: """
                DROP TABLE item;
                CREATE TABLE item (id INTEGER, code TEXT PRIMARY KEY, label TEXT);
                INSERT INTO item VALUES (7, 'a', 'x');
                """)
            let statements = try StatementLog.statements(in: db) {
                try Item(id: 9, code: "a", label: "alpha").update(db)
            }
            #expect(statements.last == #"UPDATE "item" SET "id" = ?1, "label" = ?3 WHERE "code" = ?2"#)
            #expect(try Item.all().fetchAll(db) == [Item(id: 9, code: "a", label: "alpha")])
        }
    }
}

/// A value a non-mutating `didInsert` records.
final class Recorded<Value> {
    var value: Value?
}
