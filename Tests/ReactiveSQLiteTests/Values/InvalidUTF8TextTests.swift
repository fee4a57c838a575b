import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// SQLite stores any bytes in a TEXT value. A text that is not valid UTF-8
/// (a Latin-1 `café`: 63 61 66 E9) keeps its exact bytes: equality,
/// hashing, binding and change detection decide on them, never on the
/// lossy `String` that `storage` shows.
@Suite struct InvalidUTF8TextTests {
    static let latin1Cafe = Data([0x63, 0x61, 0x66, 0xE9])  // café, Latin-1
    static let latin1Cafe2 = Data([0x63, 0x61, 0x66, 0xE8])  // cafè, Latin-1: the same U+FFFD repair

    @Test(arguments: DatabaseKind.allCases)
    func readTextKeepsItsBytes(kind: DatabaseKind) throws {
        let test = try kind.make()
        let row = try test.writer.read { db in
            try SQLRequest<Row>(sql: "SELECT CAST(X'636166E9' AS TEXT), CAST(X'636166E8' AS TEXT), 'café'").fetchOne(db)
        }
        let values = try #require(row).databaseValues
        #expect(values[0].isInvalidUTF8Text && values[1].isInvalidUTF8Text && !values[2].isInvalidUTF8Text)
        #expect(values[0].textBytes == Self.latin1Cafe)
        #expect(values[2].textBytes == Data("café".utf8))
        // Shown the same, different values.
        guard case .text(let shown0) = values[0].storage, case .text(let shown1) = values[1].storage else {
            Issue.record("not texts")
            return
        }
        #expect(shown0 == "caf\u{FFFD}" && shown0 == shown1)
        #expect(values[0] != values[1])
        #expect(values[0] == DatabaseValue(textBytes: Self.latin1Cafe))
        #expect(values[0] != DatabaseValue(storage: .text("caf\u{FFFD}")))
        #expect(Set(values).count == 3)
        #expect(values[1] < values[0])  // E8 < E9
        #expect(values[0].description == "CAST(X'636166E9' AS TEXT)")
        #expect(Data.fromDatabaseValue(values[0]) == Self.latin1Cafe)
    }

    @Test(arguments: DatabaseKind.allCases)
    func boundTextWritesItsBytesBack(kind: DatabaseKind) throws {
        let test = try kind.make(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        let value = DatabaseValue(textBytes: Self.latin1Cafe)
        let stored = try test.writer.write { db -> Row? in
            try db.execute(sql: "INSERT INTO t(id, name) VALUES (1, ?)", arguments: [value])
            return try SQLRequest<Row>(sql: "SELECT hex(name) AS hex, typeof(name) AS type, name FROM t").fetchOne(db)
        }
        let row = try #require(stored)
        #expect(try row["hex"] as String == "636166E9")
        #expect(try row["type"] as String == "text")
        #expect(row.databaseValues[2] == value)
        // Valid bytes make an ordinary text.
        #expect(!DatabaseValue(textBytes: Data("café".utf8)).isInvalidUTF8Text)
    }

    /// An update from one invalid text to another that the repair shows
    /// the same is a change: `removeDuplicates` delivers it, and drops a
    /// write of the same bytes.
    @Test(arguments: DatabaseKind.allCases)
    func observationsSeeChangesBetweenInvalidTexts(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: """
            CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO t VALUES (1, CAST(X'636166E9' AS TEXT));
            """)
        let recorder = Recorder<[Row]>()
        let cancellable = ValueObservation.trackingAll(SQLRequest<Row>(sql: "SELECT * FROM t"), removeDuplicates: true)
            .start(in: test.writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        try test.writer.writeSQL("UPDATE t SET name = CAST(X'636166E9' AS TEXT)")  // the same bytes
        try test.writer.writeSQL("UPDATE t SET name = CAST(X'636166E8' AS TEXT)")
        let values = try await recorder.wait(for: 2)
        #expect(values.map { $0[0].databaseValues[1].textBytes } == [Self.latin1Cafe, Self.latin1Cafe2])
    }

    /// Set differences report the update, and never report the row updated
    /// when other rows change (the kept values compare with the statement's
    /// columns byte for byte).
    @Test(arguments: DatabaseKind.allCases)
    func setDifferencesDecideOnBytes(kind: DatabaseKind) async throws {
        struct Named: FetchableRecord, TableRecord, Sendable {
            static let databaseTableName = "t"
            var id: Int64
            var name: Data
            init(row: Row) throws {
                id = try row["id"]
                name = try row["name"]
            }
        }
        let test = try kind.make(sql: """
            CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO t VALUES (1, CAST(X'636166E9' AS TEXT)), (2, 'b');
            """)
        let recorder = Recorder<SetDifference<Named>>()
        let cancellable = ValueObservation.trackingSetDifferences(Named.all())
            .start(in: test.writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        try test.writer.writeSQL("UPDATE t SET name = 'c' WHERE id = 2")
        try test.writer.writeSQL("UPDATE t SET name = CAST(X'636166E8' AS TEXT) WHERE id = 1")
        let values = try await recorder.wait(for: 3)
        #expect(values[1].updated.map(\.id) == [2])
        #expect(values[2].updated.map(\.id) == [1])
        #expect(values[2].updated.first?.name == Self.latin1Cafe2)
    }
}
