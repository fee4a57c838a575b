import DatabaseTestSupport
import DatabaseRegions
@testable import ReactiveSQLite
import Testing

/// SQLite compares identifiers byte for byte (ASCII letters without regard
/// to case): `"é"` precomposed (U+00E9) and decomposed (`e` + U+0301) are two
/// names, which Swift's `String.==` says are equal (canonical equivalence).
/// Row lookups, the statement cache, the schema cache and the hooks' table
/// metadata tell them apart.
@Suite struct UnicodeNameTests {
    static let precomposed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test func theTwoSpellingsAreEqualStringsButTwoNames() {
        #expect(Self.precomposed == Self.decomposed)
        #expect(!SQLiteIdentifier.areEqual(Self.precomposed, Self.decomposed))
    }

    @Test(arguments: DatabaseKind.allCases)
    func rowLookupsTellNamesThatDifferOnlyByNormalizationApart(kind: DatabaseKind) throws {
        let test = try kind.make()
        let row = try #require(try test.writer.read { db throws in
            try SQLRequest<Row>(sql: "SELECT 1 AS \"\(Self.precomposed)\", 2 AS \"\(Self.decomposed)\"").fetchOne(db)
        })
        #expect(row.index(ofColumn: Self.precomposed) == 0)
        #expect(row.index(ofColumn: Self.decomposed) == 1)
        #expect(try row[Self.precomposed] as Int == 1)
        #expect(try row[Self.decomposed] as Int == 2)
        // Upper ASCII letters still match lower ones.
        #expect(try row["CAFE\u{301}"] as Int == 2)
    }

    @Test(arguments: DatabaseKind.allCases)
    func theSchemaCacheKeepsTwoTablesWhoseNamesDifferOnlyByNormalization(kind: DatabaseKind) throws {
        let test = try kind.make(sql: """
            CREATE TABLE "\(Self.precomposed)" (a INTEGER);
            CREATE TABLE "\(Self.decomposed)" (b INTEGER, c INTEGER);
            """)
        try test.writer.read { db throws in
            #expect(try db.tableSchema(named: Self.precomposed)?.columns == ["a"])
            #expect(try db.tableSchema(named: Self.decomposed)?.columns == ["b", "c"])
            // Asked again, from the cache.
            #expect(try db.tableSchema(named: Self.precomposed)?.columns == ["a"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func theStatementCacheKeepsTwoTextsThatDifferOnlyByNormalization(kind: DatabaseKind) throws {
        let test = try kind.make(sql: """
            CREATE TABLE "\(Self.precomposed)" (a INTEGER); INSERT INTO "\(Self.precomposed)" VALUES (1);
            CREATE TABLE "\(Self.decomposed)" (a INTEGER); INSERT INTO "\(Self.decomposed)" VALUES (2);
            """)
        try test.writer.read { db throws in
            for _ in 1...2 {
                // Requests compile through the statement cache.
                #expect(try SQLRequest<Int>(sql: "SELECT a FROM \"\(Self.precomposed)\"").fetchAll(db) == [1])
                #expect(try SQLRequest<Int>(sql: "SELECT a FROM \"\(Self.decomposed)\"").fetchAll(db) == [2])
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aGeneratedColumnIsNotTakenForItsTwinName(kind: DatabaseKind) throws {
        let test = try kind.make(sql: """
            CREATE TABLE t (x INTEGER, "\(Self.precomposed)" AS (x + 1) VIRTUAL, "\(Self.decomposed)" INTEGER);
            """)
        try test.writer.read { db throws in
            let schema = try #require(try db.tableSchema(named: "t"))
            let info = TableHookInfo(schema: schema, database: db, readsReplaceResolution: false)
            #expect(info.generatedColumns.count == 1)
            #expect(info.virtualColumns.count == 1)
            #expect(info.virtualColumns.first.map { SQLiteIdentifier.areEqual($0.name, Self.precomposed) } == true)
        }
    }
}

