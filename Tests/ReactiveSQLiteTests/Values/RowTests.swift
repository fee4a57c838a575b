import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// `Row`: ordered columns read by index or by case-insensitive name, the
/// leftmost duplicate winning; equality and hashing on raw values.
@Suite struct RowTests {
    @Test(arguments: DatabaseKind.allCases)
    func subscriptsReadByIndexAndByCaseInsensitiveName(kind: DatabaseKind) throws {
        let test = try kind.make()
        let row = try #require(try test.writer.read { db throws in
            try SQLRequest<Row>(sql: "SELECT 1 AS id, 'Arthur' AS Name, NULL AS score").fetchOne(db)
        })
        #expect(row.count == 3)
        #expect(row.columnNames == ["id", "Name", "score"])
        #expect(try row[0] as Int64 == 1)
        #expect(try row[1] as String == "Arthur")
        #expect(try row[2] as Int? == nil)
        #expect(try row["ID"] as Int == 1)
        #expect(try row["name"] as String == "Arthur")
        #expect(try row["NAME"] as String == "Arthur")
        #expect(try row["Score"] as Double? == nil)
        #expect(try row["score"] as DatabaseValue == .null)
        #expect(row.hasColumn("nAmE"))
        #expect(!row.hasColumn("nam"))
        #expect(row.index(ofColumn: "SCORE") == 2)
        #expect(row.index(ofColumn: "missing") == nil)
    }

    /// Only ASCII letters are case-insensitive, as in SQLite.
    @Test func onlyASCIILettersIgnoreCase() throws {
        let row = Row(["é": 1, "straße": 2])
        #expect(row.hasColumn("é"))
        #expect(!row.hasColumn("É"))
        #expect(row.hasColumn("STRAßE"))
        #expect(!row.hasColumn("STRASSE"))
    }

    @Test(arguments: DatabaseKind.allCases)
    func theLeftmostDuplicateColumnWins(kind: DatabaseKind) throws {
        let test = try kind.make()
        let row = try #require(try test.writer.read { db throws in
            try SQLRequest<Row>(sql: "SELECT 1 AS a, 2 AS A, 3 AS b, 4 AS a").fetchOne(db)
        })
        #expect(row.columnNames == ["a", "A", "b", "a"])
        #expect(try row["a"] as Int == 1)
        #expect(try row["A"] as Int == 1)
        #expect(row.index(ofColumn: "A") == 0)
        #expect(try row[1] as Int == 2)
        #expect(try row[3] as Int == 4)
    }

    @Test(arguments: DatabaseKind.allCases)
    func rowsFetchedFromSQLEqualRowsBuiltInSwift(kind: DatabaseKind) throws {
        let test = try kind.make()
        let fetched = try test.writer.read { db throws in
            try SQLRequest<Row>(sql: "SELECT 1 AS id, 'Arthur' AS name, NULL AS score, X'00' AS data").fetchAll(db)
        }
        let built = Row(["id": 1, "name": "Arthur", "score": nil, "data": Data([0])])
        #expect(fetched == [built])
        #expect(fetched.first?.hashValue == built.hashValue)
    }

    /// Equality compares raw values (1 equals 1.0, canonically equivalent
    /// texts differ) and column names in order.
    @Test func hashableComparesRawValues() {
        #expect(Row(["a": 1]) == Row(["a": 1.0]))
        #expect(Row(["a": 1]).hashValue == Row(["a": 1.0]).hashValue)
        #expect(Row(["a": "e\u{301}"]) != Row(["a": "\u{e9}"]))
        #expect(Set([Row(["a": "e\u{301}"]), Row(["a": "\u{e9}"])]).count == 2)
        #expect(Row(["a": 1]) != Row(["a": "1"]))
        #expect(Row(["a": 1]) != Row(["b": 1]))
        #expect(Row(["a": 1, "b": 2]) != Row(["b": 2, "a": 1]))
        #expect(Row(["a": nil]) == Row(["a": nil]))
        #expect(Row(["a": Data()]) != Row(["a": nil]))
        #expect(Row(["a": ""]) != Row(["a": Data()]))
    }

    @Test func descriptionShowsColumnsAndSQLLiterals() {
        let row = Row(["id": 1, "name": "O'Brien", "score": 1.5, "bonus": nil, "data": Data([0xAB])])
        #expect(row.description == "[id:1 name:'O''Brien' score:1.5 bonus:NULL data:X'AB']")
        #expect(Row([:]).description == "[]")
    }

    @Test func rowsBuiltInSwiftHaveNoSQLInTheirErrors() throws {
        let row = Row(["id": "x"])
        let error = try #require(throws: RowDecodingError.self) { try row["id"] as Int }
        #expect(error.sql == nil)
        #expect(error.description == "could not decode Int from 'x' in column id")
    }
}
