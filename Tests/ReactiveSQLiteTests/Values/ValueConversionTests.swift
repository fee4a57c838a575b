import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing

/// Every `DatabaseValueConvertible` type round-trips through a real table:
/// written as a statement argument, read back through `SQLRequest` (as the
/// type and as its Optional) and through `Row` subscripts by name and index.
@Suite struct ValueConversionTests {
    @Test(arguments: DatabaseKind.allCases)
    func booleansRoundTrip(kind: DatabaseKind) throws {
        try expectRoundTrip([true, false], kind: kind)
    }

    @Test(arguments: DatabaseKind.allCases)
    func signedIntegersRoundTripUpToTheirBounds(kind: DatabaseKind) throws {
        try expectRoundTrip([0, 1, -1, Int.min, Int.max], kind: kind)
        try expectRoundTrip([0, 1, -1, Int8.min, Int8.max], kind: kind)
        try expectRoundTrip([0, 1, -1, Int16.min, Int16.max], kind: kind)
        try expectRoundTrip([0, 1, -1, Int32.min, Int32.max], kind: kind)
        try expectRoundTrip([0, 1, -1, Int64.min, Int64.max, 1 << 53, (1 << 53) + 1], kind: kind)
    }

    @Test(arguments: DatabaseKind.allCases)
    func unsignedIntegersRoundTripUpToTheirBounds(kind: DatabaseKind) throws {
        try expectRoundTrip([0, 1, UInt8.max], kind: kind)
        try expectRoundTrip([0, 1, UInt16.max], kind: kind)
        try expectRoundTrip([0, 1, UInt32.max], kind: kind)
    }

    @Test(arguments: DatabaseKind.allCases)
    func realsRoundTripIncludingInfinitiesAndNegativeZero(kind: DatabaseKind) throws {
        let doubles: [Double] = [0, 1.5, -1.5, .pi, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
                                 .infinity, -.infinity, -0.0, 1e300]
        try expectRoundTrip(doubles, kind: kind) { $0.bitPattern == $1.bitPattern }
        let floats: [Float] = [0, 1.5, -1.5, .pi, .greatestFiniteMagnitude, .infinity, -.infinity, -0.0]
        try expectRoundTrip(floats, kind: kind) { $0.bitPattern == $1.bitPattern }
    }

    /// Texts compare by UTF-8 bytes here, not Swift's canonical equivalence.
    @Test(arguments: DatabaseKind.allCases)
    func textsRoundTripByteForByte(kind: DatabaseKind) throws {
        let texts = ["", "Arthur", "a\u{0}b\u{0}", "héllo wörld 🎉", "e\u{301}", "\u{e9}", "'quoted'",
                     String(repeating: "long text ", count: 1000)]
        try expectRoundTrip(texts, kind: kind) { Array($0.utf8) == Array($1.utf8) }
    }

    /// An empty blob reads back as empty Data, not NULL.
    @Test(arguments: DatabaseKind.allCases)
    func blobsRoundTripIncludingTheEmptyBlob(kind: DatabaseKind) throws {
        let blobs = [Data(), Data([0]), Data([0, 1, 0x7F, 0x80, 0xFF]), Data((0..<4096).map { UInt8($0 % 256) })]
        try expectRoundTrip(blobs, kind: kind)
        let test = try kind.make()
        try test.writer.write { db throws in
            try db.execute(sql: "CREATE TABLE t (v)")
            try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [Data()])
            #expect(try SQLRequest<String>(sql: "SELECT typeof(v) FROM t").fetchOne(db) == "blob")
            #expect(try SQLRequest<Data?>(sql: "SELECT v FROM t").fetchOne(db) == .some(Data()))
        }
    }

    /// Dates round-trip to the millisecond, before 1970 and up to year 9999;
    /// dates the text cannot hold are stored as numbers and round-trip too.
    @Test(arguments: DatabaseKind.allCases)
    func datesRoundTripToTheMillisecond(kind: DatabaseKind) throws {
        let milliseconds: [Int64] = [
            0, 1, -1, 999, 1_700_000_000_123, -1_500, -86_400_000 * 365 * 300 + 7,
            253_402_300_799_999,  // 9999-12-31 23:59:59.999
            -62_167_219_200_000,  // 0000-01-01 00:00:00.000
        ]
        var dates = milliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        dates += [Date.distantPast, Date.distantFuture, Date(timeIntervalSince1970: 1e12),
                  Date(timeIntervalSince1970: -1e12)]
        try expectRoundTrip(dates, kind: kind)
    }

    @Test(arguments: DatabaseKind.allCases)
    func uuidsRoundTripAsSixteenByteBlobs(kind: DatabaseKind) throws {
        let uuids = [UUID(), UUID(), UUID(uuidString: "00000000-0000-0000-0000-000000000000")!,
                     UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!]
        try expectRoundTrip(uuids, kind: kind)
        let test = try kind.make()
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let hex = try test.writer.read { db throws in
            try SQLRequest<String>(sql: "SELECT hex(?)", arguments: [uuid]).fetchOne(db)
        }
        #expect(hex == "E621E1F8C36C495A93FC0C247A3E6E5F")
    }

    @Test(arguments: DatabaseKind.allCases)
    func databaseValuesRoundTripWithTheirStorageClass(kind: DatabaseKind) throws {
        let values: [DatabaseValue] = [.null, 1.databaseValue, Int64.min.databaseValue, 1.5.databaseValue,
                                       "".databaseValue, "text".databaseValue, Data().databaseValue,
                                       Data([1, 2]).databaseValue]
        try expectRoundTrip(values, kind: kind, includesNull: true) { $0.description == $1.description }
    }

    /// NULL reads back as nil into an Optional; a NaN is stored as NULL.
    @Test(arguments: DatabaseKind.allCases)
    func nullReadsAsNilIntoOptionals(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            #expect(try SQLRequest<Int?>(sql: "SELECT NULL").fetchOne(db) == .some(nil))
            #expect(try SQLRequest<String?>(sql: "SELECT NULL").fetchAll(db) == [nil])
            #expect(try SQLRequest<Date?>(sql: "SELECT NULL").fetchAll(db) == [nil])
            #expect(try SQLRequest<UUID?>(sql: "SELECT NULL").fetchAll(db) == [nil])
            #expect(try SQLRequest<Data?>(sql: "SELECT NULL").fetchAll(db) == [nil])
            #expect(try SQLRequest<Double?>(sql: "SELECT ?", arguments: [Double.nan]).fetchAll(db) == [nil])
            #expect(try SQLRequest<DatabaseValue>(sql: "SELECT NULL").fetchAll(db) == [.null])
            // No row at all is nil too, for fetchOne.
            #expect(try SQLRequest<Int?>(sql: "SELECT 1 WHERE 0").fetchOne(db) == nil)
        }
    }

    /// Text that is not valid UTF-8 never traps: it reads as a String with
    /// U+FFFD in place of the invalid bytes, and as Data with its stored
    /// bytes (see `InvalidUTF8TextTests`).
    @Test(arguments: DatabaseKind.allCases)
    func invalidUTF8TextIsRepairedNeverTrapped(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db throws in
            try db.execute(sql: "CREATE TABLE t (v)")
            try db.execute(sql: "INSERT INTO t (v) VALUES (CAST(X'C328' AS TEXT))")
            #expect(try SQLRequest<String>(sql: "SELECT typeof(v) FROM t").fetchOne(db) == "text")
            #expect(try SQLRequest<String>(sql: "SELECT v FROM t").fetchOne(db) == "\u{FFFD}(")
            let row = try #require(try SQLRequest<Row>(sql: "SELECT v FROM t").fetchOne(db))
            #expect(try row["v"] as String == "\u{FFFD}(")
            #expect(try SQLRequest<Data>(sql: "SELECT v FROM t").fetchOne(db) == Data([0xC3, 0x28]))
            #expect(try SQLRequest<Data>(sql: "SELECT CAST(v AS BLOB) FROM t").fetchOne(db) == Data([0xC3, 0x28]))
        }
    }

    /// Booleans, integers and reals convert where the value is exact.
    @Test(arguments: DatabaseKind.allCases)
    func numbersConvertWhereExact(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.read { db throws in
            #expect(try SQLRequest<Int>(sql: "SELECT 3.0").fetchOne(db) == 3)
            #expect(try SQLRequest<Double>(sql: "SELECT 3").fetchOne(db) == 3.0)
            #expect(try SQLRequest<Bool>(sql: "SELECT 2").fetchOne(db) == true)
            #expect(try SQLRequest<Bool>(sql: "SELECT 0.0").fetchOne(db) == false)
            #expect(try SQLRequest<UInt8>(sql: "SELECT 255").fetchOne(db) == 255)
            #expect(try SQLRequest<Data>(sql: "SELECT 'abc'").fetchOne(db) == Data("abc".utf8))
        }
    }

    @Test func uuidsDecodeFromTextInEitherCaseWithOrWithoutDashes() {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        #expect(UUID.fromDatabaseValue("E621E1F8-C36C-495A-93FC-0C247A3E6E5F".databaseValue) == uuid)
        #expect(UUID.fromDatabaseValue("e621e1f8-c36c-495a-93fc-0c247a3e6e5f".databaseValue) == uuid)
        #expect(UUID.fromDatabaseValue("E621E1F8C36C495A93FC0C247A3E6E5F".databaseValue) == uuid)
        #expect(UUID.fromDatabaseValue(uuid.databaseValue) == uuid)
        let invalid: [DatabaseValue] = [
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5".databaseValue,  // 35 characters
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5FF".databaseValue,  // 37 characters
            "E621E1F8C-36C-495A-93FC-0C247A3E6E5F".databaseValue,  // misplaced dash
            "G621E1F8-C36C-495A-93FC-0C247A3E6E5F".databaseValue,  // not hexadecimal
            "E621E1F8-C36C-495A-93FC-0C247A3E6É".databaseValue,  // 36 bytes, not ASCII
            "".databaseValue, Data(count: 15).databaseValue, Data(count: 17).databaseValue,
            1.databaseValue, 1.5.databaseValue, .null,
        ]
        for value in invalid {
            #expect(UUID.fromDatabaseValue(value) == nil, "\(value)")
        }
    }
}

// MARK: - Round trips

/// Inserts `values` into a table, reads them back in every way, and expects
/// each read value to be the same as the written one.
///
/// - Parameters:
///   - includesNull: Whether `values` holds NULL already; when false, a NULL
///     is written too, and read back as nil through the Optional type.
///   - isSame: The comparison of a read value with the written one.
private func expectRoundTrip<Value: DatabaseValueConvertible>(
    _ values: [Value], kind: DatabaseKind, includesNull: Bool = false,
    isSame: (Value, Value) -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let test = try kind.make()
    try test.writer.write { db throws in
        try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
        for value in values {
            try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [value])
        }
    }
    try test.writer.read { db throws in
        let fetched = try SQLRequest<Value>(sql: "SELECT v FROM t ORDER BY id").fetchAll(db)
        let rows = try SQLRequest<Row>(sql: "SELECT id, v FROM t ORDER BY id").fetchAll(db)
        let cursor = try SQLRequest<Value>(sql: "SELECT v FROM t ORDER BY id").fetchCursor(db)
        var iterated: [Value] = []
        while let value = try cursor.next() { iterated.append(value) }
        let byName: [Value] = try rows.map { try $0["V"] }
        let byIndex: [Value] = try rows.map { try $0[1] }
        for (way, read) in [("fetchAll", fetched), ("fetchCursor", iterated), ("row[name]", byName),
                            ("row[index]", byIndex)]
        {
            #expect(read.count == values.count, "\(way)", sourceLocation: sourceLocation)
            for (written, read) in zip(values, read) {
                #expect(isSame(written, read), "\(way): wrote \(written), read \(read)", sourceLocation: sourceLocation)
            }
        }
    }
    guard !includesNull else { return }
    // The Optional type: NULL reads back as nil, the rest as before.
    try test.writer.write { db throws in
        try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [Value?.none])
        let optionals = try SQLRequest<Value?>(sql: "SELECT v FROM t ORDER BY id").fetchAll(db)
        let rows = try SQLRequest<Row>(sql: "SELECT v FROM t ORDER BY id").fetchAll(db)
        let byName: [Value?] = try rows.map { try $0["v"] }
        for read in [optionals, byName] {
            #expect(read.count == values.count + 1, sourceLocation: sourceLocation)
            #expect(read.last.map { $0 == nil } == true, "NULL reads as nil", sourceLocation: sourceLocation)
            for (written, read) in zip(values, read) {
                #expect(read.map { isSame(written, $0) } == true, "wrote \(written), read \(String(describing: read))",
                        sourceLocation: sourceLocation)
            }
        }
    }
}

private func expectRoundTrip<Value: DatabaseValueConvertible & Equatable>(
    _ values: [Value], kind: DatabaseKind, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    try expectRoundTrip(values, kind: kind, isSame: ==, sourceLocation: sourceLocation)
}
