import DatabaseTestSupport
import ReactiveSQLite
import Testing

/// What `Database` tells of a table's schema.
@Suite struct SchemaTests {
    @Test(arguments: DatabaseKind.allCases)
    func primaryKeyColumnsAreTheDeclaredKeyInKeyOrder(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: """
                CREATE TABLE aliased (id INTEGER PRIMARY KEY, name TEXT);
                CREATE TABLE compound (b TEXT, a INTEGER, c TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;
                CREATE TABLE texts (code TEXT PRIMARY KEY COLLATE NOCASE);
                CREATE TABLE descending (id INTEGER PRIMARY KEY DESC);
                CREATE TABLE keyless (name TEXT);
                CREATE VIEW names AS SELECT name FROM aliased;
                """)
            #expect(try db.primaryKeyColumns(ofTable: "aliased") == ["id"])
            #expect(try db.primaryKeyColumns(ofTable: "ALIASED") == ["id"])
            #expect(try db.primaryKeyColumns(ofTable: "compound") == ["a", "b"])
            #expect(try db.primaryKeyColumns(ofTable: "texts") == ["code"])
            #expect(try db.primaryKeyColumns(ofTable: "descending") == ["id"])
            #expect(try db.primaryKeyColumns(ofTable: "keyless") == [])
            #expect(try db.primaryKeyColumns(ofTable: "names") == nil)
            #expect(try db.primaryKeyColumns(ofTable: "missing") == nil)
            // The schema changed in this transaction: the answer follows.
            try db.execute(sql: "DROP TABLE keyless; CREATE TABLE keyless (name TEXT PRIMARY KEY)")
            #expect(try db.primaryKeyColumns(ofTable: "keyless") == ["name"])
        }
    }
}
