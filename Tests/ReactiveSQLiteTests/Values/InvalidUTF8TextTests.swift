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
@Suite(.onItsOwnThread) struct InvalidUTF8TextTests {
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

    /// Fragments of texts: valid UTF-8 of every length, and the invalid
    /// sequences a repair treats differently (a truncated 4-byte sequence
    /// of 3 bytes is repaired into one U+FFFD of 3 bytes: the same length).
    static let textFragments: [[UInt8]] = [
        Array("a".utf8), Array("Player 1".utf8), Array("é".utf8), Array("€".utf8), Array("😀".utf8), [0x00],
        [0xE9], [0x80], [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x98], [0xF0, 0x9F], [0xE2, 0x82],
        [0xF5, 0x80, 0x80, 0x80], [0xF4, 0x90, 0x80, 0x80],
    ]

    /// Random texts of those fragments, valid or not, seeded.
    static func randomTexts(count: Int, seed: UInt64) -> [[UInt8]] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            (0..<Int.random(in: 0...4, using: &generator)).flatMap { _ in textFragments.randomElement(using: &generator)! }
        }
    }

    /// Every text read from the database is the value of its exact bytes,
    /// as the standard library's validation decides: a `String` when they
    /// are valid UTF-8, the bytes otherwise. The read makes the string
    /// without validating first; this checks it against validation.
    @Test(arguments: DatabaseKind.allCases)
    func readTextsAreTheirExactBytes(kind: DatabaseKind) throws {
        let test = try kind.make(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        let texts = Self.randomTexts(count: 400, seed: 16)
        try test.writer.write { db in
            for (id, bytes) in texts.enumerated() {
                try db.execute(sql: "INSERT INTO t VALUES (?, CAST(? AS TEXT))", arguments: [id, Data(bytes)])
            }
        }
        let rows = try test.writer.read { db in try SQLRequest<Row>(sql: "SELECT id, name, typeof(name) FROM t ORDER BY id").fetchAll(db) }
        #expect(rows.count == texts.count)
        for (row, bytes) in zip(rows, texts) {
            #expect(try row[2] as String == "text")
            let value = row.databaseValues[1]
            let valid = String(validating: bytes, as: UTF8.self)
            #expect(value.textBytes == Data(bytes), "\(bytes)")
            #expect(value.isInvalidUTF8Text == (valid == nil), "\(bytes)")
            #expect(value == DatabaseValue(textBytes: bytes))
            if let valid {
                #expect(value == DatabaseValue(storage: .text(valid)))
                #expect(try row[1] as String == valid)
            } else {
                #expect(try row[1] as String == String(decoding: bytes, as: UTF8.self))
            }
        }
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
