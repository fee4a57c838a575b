import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// A `Decodable` type that declares `FetchableRecord` is decoded from rows:
/// columns by coding key, database conversions for database values, JSON for
/// nested values, and errors that name the column.
@Suite struct DecodableRecordTests {
    // MARK: - Records

    enum Color: String, Codable, Equatable { case red, green }
    enum Level: Int, Codable, Equatable { case low = 1, high = 2 }

    struct Address: Codable, Equatable {
        var street: String
        var zipCode: Int?
    }

    /// One property of each supported kind.
    struct Everything: Decodable, FetchableRecord, Equatable {
        var bool: Bool
        var int: Int
        var int8: Int8
        var int16: Int16
        var int32: Int32
        var int64: Int64
        var uint: UInt
        var uint8: UInt8
        var uint16: UInt16
        var uint32: UInt32
        var uint64: UInt64
        var double: Double
        var float: Float
        var string: String
        var data: Data
        var date: Date
        var uuid: UUID
        var color: Color
        var level: Level
        var address: Address
        var tags: [String]
        var scores: [String: Int]
        var optionalInt: Int?
        var optionalString: String?
        var optionalDate: Date?
        var optionalUUID: UUID?
        var optionalData: Data?
        var optionalAddress: Address?
        var optionalColor: Color?
    }

    static let everythingSQL = """
        SELECT 1 AS bool, -2 AS int, -128 AS int8, 32767 AS int16, -2147483648 AS int32,
            9223372036854775807 AS int64, 7 AS uint, 255 AS uint8, 65535 AS uint16, 4294967295 AS uint32,
            9223372036854775807 AS uint64, 1.5 AS double, 2.5 AS float, 'héllo' AS string, X'00FF' AS data,
            '2024-02-29 13:14:15.123' AS date, X'E621E1F8C36C495A93FC0C247A3E6E5F' AS uuid, 'green' AS color,
            2 AS level, '{"street":"Main St","zipCode":12345}' AS address, '["a","b"]' AS tags,
            CAST('{"x":1}' AS BLOB) AS scores, NULL AS optionalInt, 'text' AS optionalString,
            '2024-02-29T13:14:15Z' AS optionalDate, 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f' AS optionalUUID,
            X'' AS optionalData, NULL AS optionalAddress, NULL AS optionalColor
        """

    static let expectedEverything = Everything(
        bool: true, int: -2, int8: -128, int16: 32767, int32: -2_147_483_648, int64: .max, uint: 7, uint8: 255,
        uint16: 65535, uint32: 4_294_967_295, uint64: 9_223_372_036_854_775_807, double: 1.5, float: 2.5,
        string: "héllo", data: Data([0x00, 0xFF]),
        date: Date(timeIntervalSince1970: 1_709_212_455.123),
        uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, color: .green, level: .high,
        address: Address(street: "Main St", zipCode: 12345), tags: ["a", "b"], scores: ["x": 1],
        optionalInt: nil, optionalString: "text", optionalDate: Date(timeIntervalSince1970: 1_709_212_455),
        optionalUUID: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, optionalData: Data(),
        optionalAddress: nil, optionalColor: nil)

    /// Date, UUID and Data use the database conversions, not their own
    /// Decodable implementations (which would expect a number, a string, an
    /// array of bytes); enums read the raw value; structs, arrays and
    /// dictionaries read JSON text or blobs.
    @Test(arguments: DatabaseKind.allCases)
    func everySupportedPropertyTypeDecodes(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            let request = SQLRequest<Everything>(sql: Self.everythingSQL)
            #expect(try request.fetchAll(db) == [Self.expectedEverything])
            #expect(try request.fetchOne(db) == Self.expectedEverything)
            let cursor = try request.fetchCursor(db)
            #expect(try cursor.next() == Self.expectedEverything)
            #expect(try cursor.next() == nil)
            let row = try #require(try SQLRequest<Row>(sql: Self.everythingSQL).fetchOne(db))
            #expect(try Everything(row: row) == Self.expectedEverything)
        }
    }

    struct Player: Decodable, FetchableRecord, Equatable {
        var id: Int64
        var name: String
        var score: Double
        var bonus: Int?
        var lastPlayed: Date?
    }

    /// The benchmarked shape, read from a real table with many rows.
    @Test(arguments: DatabaseKind.allCases)
    func recordsDecodeFromATable(kind: DatabaseKind) throws {
        let test = try kind.make()
        let players = (1...500).map { index in
            Player(id: Int64(index), name: "Player \(index)", score: Double(index) / 4,
                   bonus: index.isMultiple(of: 3) ? nil : index,
                   lastPlayed: index.isMultiple(of: 5) ? nil : Date(timeIntervalSince1970: Double(index) * 1000.125))
        }
        try test.writer.write { db throws in
            try db.execute(sql: """
                CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT, score REAL, bonus INTEGER, lastPlayed DATETIME)
                """)
            for player in players {
                try db.execute(sql: "INSERT INTO player VALUES (?, ?, ?, ?, ?)",
                               arguments: [player.id, player.name, player.score, player.bonus, player.lastPlayed])
            }
        }
        let fetched = try test.writer.read { db throws in
            try SQLRequest<Player>(sql: "SELECT * FROM player ORDER BY id").fetchAll(db)
        }
        #expect(fetched == players)
    }

    /// Optional properties are nil when their column is missing from the row.
    @Test(arguments: DatabaseKind.allCases)
    func optionalPropertiesMissingFromTheRowAreNil(kind: DatabaseKind) throws {
        let test = try kind.make()
        let player = try test.writer.read { db throws in
            try SQLRequest<Player>(sql: "SELECT 1 AS id, 'Arthur' AS name, 10 AS score").fetchOne(db)
        }
        #expect(player == Player(id: 1, name: "Arthur", score: 10, bonus: nil, lastPlayed: nil))
    }

    /// Column names match coding keys ASCII case-insensitively.
    @Test(arguments: DatabaseKind.allCases)
    func columnNamesMatchInAnyCase(kind: DatabaseKind) throws {
        let test = try kind.make()
        let player = try test.writer.read { db throws in
            try SQLRequest<Player>(
                sql: "SELECT 1 AS ID, 'Arthur' AS NAME, 10 AS Score, 3 AS BONUS, NULL AS LASTPLAYED"
            ).fetchOne(db)
        }
        #expect(player == Player(id: 1, name: "Arthur", score: 10, bonus: 3, lastPlayed: nil))
    }

    /// The leftmost of two columns with the same name wins, as for `Row` subscripts.
    @Test(arguments: DatabaseKind.allCases)
    func theLeftmostDuplicateColumnWins(kind: DatabaseKind) throws {
        let test = try kind.make()
        let player = try test.writer.read { db throws in
            try SQLRequest<Player>(sql: "SELECT 1 AS id, 'Arthur' AS name, 10 AS score, 2 AS id, 'Barbara' AS Name")
                .fetchOne(db)
        }
        #expect(player?.id == 1)
        #expect(player?.name == "Arthur")
    }

    struct Renamed: Decodable, FetchableRecord, Equatable {
        var identifier: Int
        var fullName: String
        var nickname: String?

        enum CodingKeys: String, CodingKey {
            case identifier = "id"
            case fullName = "full_name"
            case nickname = "nick"
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func codingKeysNameTheColumns(kind: DatabaseKind) throws {
        let test = try kind.make()
        let record = try test.writer.read { db throws in
            try SQLRequest<Renamed>(sql: "SELECT 'Arthur Dent' AS full_name, 42 AS id, 'AD' AS NICK").fetchOne(db)
        }
        #expect(record == Renamed(identifier: 42, fullName: "Arthur Dent", nickname: "AD"))
    }

    /// Properties declared in another order than the columns, or decoded
    /// twice, find their columns anyway.
    struct Reordered: Decodable, FetchableRecord, Equatable {
        var c: String
        var a: Int
        var b: Double?

        init(c: String, a: Int, b: Double?) {
            self.c = c
            self.a = a
            self.b = b
        }

        enum CodingKeys: CodingKey { case a, b, c }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            c = try container.decode(String.self, forKey: .c)
            a = try container.decode(Int.self, forKey: .a)
            b = try container.decodeIfPresent(Double.self, forKey: .b)
            // Again, after the last column, and backwards.
            guard try container.decode(String.self, forKey: .c) == c, try container.decode(Int.self, forKey: .a) == a
            else {
                throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "changed"))
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func keysDecodeInAnyOrder(kind: DatabaseKind) throws {
        let test = try kind.make()
        let records = try test.writer.read { db throws in
            try SQLRequest<Reordered>(sql: "SELECT 1 AS a, 2.5 AS b, 'x' AS c UNION ALL SELECT 3, NULL, 'y'")
                .fetchAll(db)
        }
        #expect(records == [Reordered(c: "x", a: 1, b: 2.5), Reordered(c: "y", a: 3, b: nil)])
    }

    /// `contains`, `decodeNil` and `allKeys` see the row's columns.
    struct Inspector: Decodable, FetchableRecord {
        var allKeys: [String]
        var containsName: Bool
        var containsMissing: Bool
        var nameIsNil: Bool
        var bonusIsNil: Bool
        var missingNilError: (any Error)?

        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            allKeys = container.allKeys.map(\.stringValue)
            containsName = container.contains(AnyKey(stringValue: "NAME"))
            containsMissing = container.contains(AnyKey(stringValue: "missing"))
            nameIsNil = try container.decodeNil(forKey: AnyKey(stringValue: "name"))
            bonusIsNil = try container.decodeNil(forKey: AnyKey(stringValue: "bonus"))
            do {
                _ = try container.decodeNil(forKey: AnyKey(stringValue: "missing"))
            } catch {
                missingNilError = error
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func containsDecodeNilAndAllKeysSeeTheColumns(kind: DatabaseKind) throws {
        let test = try kind.make()
        let inspector = try #require(try test.writer.read { db throws in
            try SQLRequest<Inspector>(sql: "SELECT 1 AS id, 'Arthur' AS name, NULL AS bonus, 2 AS ID").fetchOne(db)
        })
        #expect(inspector.allKeys == ["id", "name", "bonus"])
        #expect(inspector.containsName)
        #expect(!inspector.containsMissing)
        #expect(!inspector.nameIsNil)
        #expect(inspector.bonusIsNil)
        let error = try #require(inspector.missingNilError as? RowDecodingError)
        #expect(error.kind == .columnNotFound)
        #expect(error.column == "missing")
    }

    /// A class hierarchy reads the superclass's columns from the same row.
    class Base: Decodable {
        var id: Int64
    }

    final class Derived: Base, FetchableRecord {
        var name: String

        enum CodingKeys: CodingKey { case name }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            try super.init(from: container.superDecoder())
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aSuperclassDecodesFromTheSameRow(kind: DatabaseKind) throws {
        let test = try kind.make()
        let record = try #require(try test.writer.read { db throws in
            try SQLRequest<Derived>(sql: "SELECT 7 AS id, 'Arthur' AS name").fetchOne(db)
        })
        #expect(record.id == 7)
        #expect(record.name == "Arthur")
    }

    // MARK: - Errors

    /// One way for a record to fail, and the column the error must name.
    struct Failure: Sendable, CustomTestStringConvertible {
        var name: String
        var sql: String
        var column: String
        var kind: RowDecodingError.Kind
        var fetch: @Sendable (Database, String) throws -> Void = { db, sql in
            _ = try SQLRequest<Player>(sql: sql).fetchAll(db)
        }
        var testDescription: String { name }
    }

    static let failures: [Failure] = [
        Failure(name: "missing non-optional column", sql: "SELECT 1 AS id, 10 AS score",
                column: "name", kind: .columnNotFound),
        Failure(name: "NULL into a non-optional", sql: "SELECT 1 AS id, NULL AS name, 10 AS score",
                column: "name", kind: .valueMismatch),
        Failure(name: "text into Double", sql: "SELECT 1 AS id, 'Arthur' AS name, 'ten' AS score",
                column: "score", kind: .valueMismatch),
        Failure(name: "real into Int?", sql: "SELECT 1 AS id, 'Arthur' AS name, 10 AS score, 1.5 AS bonus",
                column: "bonus", kind: .valueMismatch),
        Failure(name: "invalid date into Date?",
                sql: "SELECT 1 AS id, 'Arthur' AS name, 10 AS score, '2024-02-30' AS lastPlayed",
                column: "lastPlayed", kind: .valueMismatch),
        Failure(name: "Int64.max into Int32", sql: "SELECT 9223372036854775807 AS value",
                column: "value", kind: .valueMismatch,
                fetch: { db, sql in _ = try SQLRequest<NarrowValue>(sql: sql).fetchAll(db) }),
        Failure(name: "negative into UInt64", sql: "SELECT -1 AS value",
                column: "value", kind: .valueMismatch,
                fetch: { db, sql in _ = try SQLRequest<UnsignedValue>(sql: sql).fetchAll(db) }),
    ]

    struct NarrowValue: Decodable, FetchableRecord {
        var value: Int32
    }

    struct UnsignedValue: Decodable, FetchableRecord {
        var value: UInt64
    }

    @Test(arguments: DatabaseKind.allCases, failures)
    func decodingErrorsNameTheColumnAndTheSQL(kind: DatabaseKind, failure: Failure) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            let error = try #require(throws: RowDecodingError.self) { try failure.fetch(db, failure.sql) }
            #expect(error.kind == failure.kind)
            #expect(error.column == failure.column)
            #expect(error.sql == failure.sql)
            #expect(error.description.contains(failure.column))
            #expect(error.description.contains(failure.sql))
        }
    }

    struct WithNested: Decodable, FetchableRecord {
        var address: Address
        var color: Color?
    }

    /// Invalid JSON, JSON of the wrong shape, NULL for a nested value, and an
    /// unknown raw value throw errors naming the column.
    @Test(arguments: DatabaseKind.allCases)
    func nestedValueErrorsNameTheColumn(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            let invalidJSON = try #require(throws: RowDecodingError.self) {
                try SQLRequest<WithNested>(sql: "SELECT '{not json' AS address").fetchOne(db)
            }
            #expect(invalidJSON.kind == .dataCorrupted)
            #expect(invalidJSON.column == "address")
            #expect(invalidJSON.description.contains("JSON"))

            let wrongShape = try #require(throws: RowDecodingError.self) {
                try SQLRequest<WithNested>(sql: #"SELECT '{"street":1}' AS address"#).fetchOne(db)
            }
            #expect(wrongShape.kind == .dataCorrupted)
            #expect(wrongShape.column == "address")
            #expect(wrongShape.message.contains("street"))

            let null = try #require(throws: RowDecodingError.self) {
                try SQLRequest<WithNested>(sql: "SELECT NULL AS address").fetchOne(db)
            }
            #expect(null.kind == .valueMismatch)
            #expect(null.column == "address")

            let number = try #require(throws: RowDecodingError.self) {
                try SQLRequest<WithNested>(sql: "SELECT 12 AS address").fetchOne(db)
            }
            #expect(number.kind == .valueMismatch)

            let unknownColor = try #require(throws: RowDecodingError.self) {
                try SQLRequest<WithNested>(sql: #"SELECT '{"street":"Main St"}' AS address, 'blue' AS color"#)
                    .fetchOne(db)
            }
            #expect(unknownColor.kind == .dataCorrupted)
            #expect(unknownColor.column == "color")
            #expect(unknownColor.description.contains("blue"))

            let wrongRawType = try #require(throws: RowDecodingError.self) {
                try SQLRequest<WithNested>(sql: #"SELECT '{"street":"Main St"}' AS address, 1 AS color"#)
                    .fetchOne(db)
            }
            #expect(wrongRawType.kind == .valueMismatch)
            #expect(wrongRawType.column == "color")
        }
    }

    /// A whole row is decoded through a keyed container only: other
    /// containers throw a DecodingError, never trap.
    struct SingleValue: Decodable, FetchableRecord {
        var value: Int
        init(from decoder: any Decoder) throws {
            value = try decoder.singleValueContainer().decode(Int.self)
        }
    }

    struct Unkeyed: Decodable, FetchableRecord {
        var values: [Int]
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            values = [try container.decode(Int.self)]
        }
    }

    struct NestedContainer: Decodable, FetchableRecord {
        enum CodingKeys: CodingKey { case address, street }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            _ = try container.nestedContainer(keyedBy: CodingKeys.self, forKey: .address)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func unsupportedContainersThrowDecodingErrors(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            #expect(throws: DecodingError.self) { try SQLRequest<SingleValue>(sql: "SELECT 1").fetchAll(db) }
            #expect(throws: DecodingError.self) { try SQLRequest<Unkeyed>(sql: "SELECT 1").fetchAll(db) }
            #expect(throws: DecodingError.self) {
                try SQLRequest<NestedContainer>(sql: #"SELECT '{"street":"x"}' AS address"#).fetchAll(db)
            }
        }
    }
}
