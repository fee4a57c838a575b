import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// Records encode their columns with the conversions the decoding side
/// reverses: what a record writes, a record of the same type reads back.
@Suite struct RecordEncodingTests {
    enum Color: String, Codable, Equatable { case red, green }
    enum Level: Int, Codable, Equatable { case low = 1, high = 2 }

    struct Address: Codable, Equatable {
        var street: String
        var zipCode: Int?
    }

    /// One property of each supported kind.
    struct Everything: Codable, FetchableRecord, PersistableRecord, Equatable {
        var id: Int64
        var bool: Bool
        var int8: Int8
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
        var optionalDate: Date?
        var optionalUUID: UUID?
        var optionalAddress: Address?
        var optionalColor: Color?
    }

    struct HandWrittenPlayer: EncodableRecord, MutablePersistableRecord {
        static let databaseTableName = "player"
        var id: Int64?
        var name: String
        var score: Int?
        func encode(to container: inout PersistenceContainer) throws {
            container["id"] = id
            container["Name"] = "placeholder"
            container["name"] = name  // the same column: replaces the value, at its place
            container["score"] = score
        }
        mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    }

    class Base: Encodable {
        var id: Int64 = 1
        var name = "base"
        enum CodingKeys: CodingKey { case id, name }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
        }
    }
    final class Derived: Base, PersistableRecord {
        static let databaseTableName = "player"
        var score = 3
        enum DerivedKeys: CodingKey { case name, score }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: DerivedKeys.self)
            try super.encode(to: container.superEncoder())
            // Encoded twice: the last value wins, at its first place.
            try container.encode("derived", forKey: .name)
            try container.encode(score, forKey: .score)
        }
    }

    struct Nested: Encodable, PersistableRecord {
        static let databaseTableName = "player"
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            var nested = container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("name"))
            try nested.encode(1, forKey: AnyKey("x"))
        }
    }
    struct TooBig: Encodable, PersistableRecord {
        static let databaseTableName = "player"
        var id: UInt64 = .max
    }

    static let schemaSQL = """
        CREATE TABLE everything (
            id INTEGER PRIMARY KEY, bool, int8, uint32, uint64, double, float, string, data, date, uuid, color,
            level, address, tags, scores, optionalInt, optionalDate, optionalUUID, optionalAddress, optionalColor)
        """

    static let arthur = Everything(
        id: 1, bool: true, int8: -128, uint32: 4_294_967_295, uint64: 9_223_372_036_854_775_807, double: 1.5,
        float: 2.5, string: "héllo 'quoted'", data: Data([0x00, 0xFF]),
        date: Date(timeIntervalSince1970: 1_709_212_455.123),
        uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, color: .green, level: .high,
        address: Address(street: "Main St", zipCode: 12345), tags: ["a", "b"], scores: ["z": 1, "a": 2],
        optionalInt: nil, optionalDate: Date(timeIntervalSince1970: 0), optionalUUID: nil, optionalAddress: nil,
        optionalColor: .red)

    @Test(arguments: DatabaseKind.allCases)
    func everyKindOfValueRoundTripsThroughInsertThenFetch(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: Self.schemaSQL)
            try Self.arthur.insert(db)
            #expect(try Everything.filter(key: 1).fetchOne(db) == Self.arthur)
            var updated = Self.arthur
            updated.date = Date(timeIntervalSince1970: 1_000_000_000.5)
            updated.uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
            updated.optionalUUID = updated.uuid
            updated.optionalAddress = Address(street: "Elm St", zipCode: nil)
            updated.scores = ["b": 3]
            #expect(try updated.updateChanges(db, from: Self.arthur))
            #expect(try Everything.filter(key: 1).fetchOne(db) == updated)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func valuesAreStoredAsTheDecodingSideReadsThem(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: Self.schemaSQL)
            try Self.arthur.insert(db)
            let row = try #require(try SQLRequest<Row>(sql: """
                SELECT typeof(date), date, typeof(uuid), hex(uuid), color, level, address, tags, scores,
                    typeof(optionalInt), optionalDate, typeof(bool), bool
                FROM everything
                """).fetchOne(db))
            #expect(try row[0] as String == "text")
            #expect(try row[1] as String == "2024-02-29 13:14:15.123")
            #expect(try row[2] as String == "blob")
            #expect(try row[3] as String == "E621E1F8C36C495A93FC0C247A3E6E5F")
            #expect(try row[4] as String == "green")
            #expect(try row[5] as Int == 2)
            #expect(try row[6] as String == #"{"street":"Main St","zipCode":12345}"#)
            #expect(try row[7] as String == #"["a","b"]"#)
            // Sorted keys: equal dictionaries are equal texts.
            #expect(try row[8] as String == #"{"a":2,"z":1}"#)
            #expect(try row[9] as String == "null")
            #expect(try row[10] as String == "1970-01-01 00:00:00.000")
            #expect(try row[11] as String == "integer")
            #expect(try row[12] as Int == 1)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func anEqualJSONValueIsNoChange(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: Self.schemaSQL)
            try Self.arthur.insert(db)
            let fetched = try #require(try Everything.filter(key: 1).fetchOne(db))
            var rebuilt = fetched
            // The same dictionary, built in another order.
            rebuilt.scores = Dictionary(uniqueKeysWithValues: fetched.scores.sorted { $0.key > $1.key })
            #expect(try !rebuilt.updateChanges(db, from: fetched))
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aHandWrittenEncodingSetsColumnsByName(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            var player = HandWrittenPlayer(id: nil, name: "Arthur", score: 0)
            let statements = try StatementLog.statements(in: db) { try player.insert(db) }
            #expect(statements.last == #"INSERT INTO "player" ("id", "Name", "score") VALUES (?1, ?2, ?3)"#)
            #expect(player.id == 1)
            // NULL in a NOT NULL column.
            player.score = nil
            #expect(throws: DatabaseError.self) { try player.update(db) }
            player.score = 5
            try player.update(db)
            #expect(try RecordWriteFixtures.Player.filter(key: 1).fetchOne(db)
                == RecordWriteFixtures.Player(id: 1, name: "Arthur", score: 5))
        }
    }

    @Test func aPersistenceContainerComparesColumnNamesCaseInsensitively() {
        var container = PersistenceContainer()
        container["id"] = 1
        container["name"] = "Arthur"
        container["ID"] = 2
        container["score"] = nil as Int?
        #expect(container.count == 3)
        #expect(container.map(\.column) == ["id", "name", "score"])
        #expect(container["Id"]?.databaseValue == 2.databaseValue)
        #expect(container["score"]?.databaseValue == .null)
        #expect(container["bonus"] == nil)
        #expect(container.description == "[id: 2, name: 'Arthur', score: NULL]")
    }

    @Test(arguments: DatabaseKind.allCases)
    func aSuperclassEncodesColumnsOfTheSameRow(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            for _ in 0..<2 {  // a record with duplicate columns writes each time without a plan
                let statements = try StatementLog.statements(in: db) { try Derived().upsert(db) }
                #expect(statements.last?.hasPrefix(#"INSERT INTO "player" ("id", "name", "score")"#) == true)
            }
            #expect(try RecordWriteFixtures.Player.all().fetchAll(db)
                == [RecordWriteFixtures.Player(id: 1, name: "derived", score: 3)])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func anEncodingErrorStopsTheWriteBeforeAnyStatement(kind: DatabaseKind) throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        try test.writer.write { db in
            let statements = try StatementLog.statements(in: db) {
                #expect(throws: EncodingError.self) { try Nested().insert(db) }
                #expect(throws: EncodingError.self) { try TooBig().insert(db) }
            }
            #expect(statements.isEmpty)
        }
    }
}

/// A coding key of any name.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
