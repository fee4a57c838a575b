import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// A value that does not fit the requested type throws a `RowDecodingError`
/// naming the column and the SQL, through every way of reading it. Nothing traps.
@Suite struct RowDecodingErrorTests {
    /// One way to fail: a single-column SQL and the type it cannot be read as.
    struct Failure: Sendable, CustomTestStringConvertible {
        var name: String
        var sql: String
        var column: String
        /// Reads the first column as the wrong type, the four ways: fetchAll,
        /// fetchOne, a row subscript by name, a Decodable record.
        var readings: [@Sendable (Database) throws -> Void]
        var testDescription: String { name }

        init<Value: DatabaseValueConvertible & Decodable & Sendable>(
            _ name: String, sql: String, column: String, as type: Value.Type
        ) {
            self.name = name
            self.sql = sql
            self.column = column
            // `fetchOne` gives nil for a NULL, as GRDB's does
            // (`fetchOneOfANonOptionalValueGivesNilForNullAsGRDB`).
            let fetchOne: [@Sendable (Database) throws -> Void] = sql.contains("NULL")
                ? [] : [{ db in _ = try SQLRequest<Value>(sql: sql).fetchOne(db) }]
            readings = fetchOne + [
                { db in _ = try SQLRequest<Value>(sql: sql).fetchAll(db) },
                { db in
                    let row = try SQLRequest<Row>(sql: sql).fetchOne(db)!
                    _ = try row[column] as Value
                },
                { db in _ = try SQLRequest<SingleColumnRecord<Value>>(sql: sql).fetchAll(db) },
            ]
        }
    }

    static let failures: [Failure] = [
        Failure("NULL into a non-optional", sql: "SELECT NULL AS score", column: "score", as: Int.self),
        Failure("text into Int", sql: "SELECT 'abc' AS score", column: "score", as: Int.self),
        Failure("300 into UInt8", sql: "SELECT 300 AS level", column: "level", as: UInt8.self),
        Failure("-1 into UInt32", sql: "SELECT -1 AS level", column: "level", as: UInt32.self),
        Failure("Int64.max into Int32", sql: "SELECT 9223372036854775807 AS big", column: "big", as: Int32.self),
        Failure("real 1.5 into Int", sql: "SELECT 1.5 AS ratio", column: "ratio", as: Int.self),
        Failure("blob into String", sql: "SELECT X'00FF' AS name", column: "name", as: String.self),
        Failure("integer into String", sql: "SELECT 42 AS name", column: "name", as: String.self),
        Failure("text into Double", sql: "SELECT '1.5' AS score", column: "score", as: Double.self),
        Failure("invalid date text into Date", sql: "SELECT '2024-13-01' AS day", column: "day", as: Date.self),
        Failure("short blob into UUID", sql: "SELECT X'0011' AS uuid", column: "uuid", as: UUID.self),
        Failure("NULL into Date", sql: "SELECT NULL AS day", column: "day", as: Date.self),
    ]

    @Test(arguments: DatabaseKind.allCases, failures)
    func aValueThatDoesNotFitThrowsAValueMismatch(kind: DatabaseKind, failure: Failure) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            for reading in failure.readings {
                let error = try #require(throws: RowDecodingError.self) { try reading(db) }
                #expect(error.kind == .valueMismatch)
                #expect(error.column == failure.column)
                #expect(error.sql == failure.sql)
                #expect(error.description.contains(failure.column))
                #expect(error.description.contains(failure.sql))
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aMissingColumnThrowsByNameAndByIndex(kind: DatabaseKind) throws {
        let test = try kind.make()
        let sql = "SELECT 1 AS id, 'Arthur' AS name"
        try test.writer.read { db throws in
            let row = try #require(try SQLRequest<Row>(sql: sql).fetchOne(db))

            let byName = try #require(throws: RowDecodingError.self) { try row["score"] as Int }
            #expect(byName.kind == .columnNotFound)
            #expect(byName.column == "score")
            #expect(byName.description.contains("score"))
            #expect(byName.description.contains(sql))

            for index in [2, -1] {
                let byIndex = try #require(throws: RowDecodingError.self) { try row[index] as Int? }
                #expect(byIndex.kind == .columnNotFound)
                #expect(byIndex.column == "#\(index)")
                #expect(byIndex.description.contains(sql))
            }

            // Optional types too: a missing column is an error for a subscript.
            #expect(throws: RowDecodingError.self) { try row["score"] as Int? }
        }
    }

    @Test func theDescriptionNamesTheValueTheTypeTheColumnAndTheSQL() {
        let error = RowDecodingError(kind: .valueMismatch, column: "score", sql: "SELECT 'abc' AS score",
                                     message: "could not decode Int from 'abc' in column score")
        #expect(error.description == "could not decode Int from 'abc' in column score - while reading `SELECT 'abc' AS score`")
        let withoutSQL = RowDecodingError(kind: .columnNotFound, column: "id", sql: nil, message: "no column named id")
        #expect(withoutSQL.description == "no column named id")
    }

    @Test(arguments: DatabaseKind.allCases)
    func theMessageNamesTheValueAndTheType(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            let error = try #require(throws: RowDecodingError.self) {
                try SQLRequest<UInt8>(sql: "SELECT 300 AS level").fetchOne(db)
            }
            #expect(error.message == "could not decode UInt8 from 300 in column level")
            let null = try #require(throws: RowDecodingError.self) {
                try SQLRequest<String>(sql: "SELECT NULL AS name").fetchAll(db)
            }
            #expect(null.message == "could not decode String from NULL in column name")
        }
    }
}

/// A record of one column, the first one, whatever its name.
private struct SingleColumnRecord<Value: Decodable>: Decodable, FetchableRecord {
    var value: Value

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        guard let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "no column"))
        }
        value = try container.decode(Value.self, forKey: key)
    }
}
