import DatabaseTestSupport
import ReactiveSQLite
import Testing

/// `RowIdentity.inferred(fromSQL:in:)`: the primary key of the only table a
/// query reads, when the result has all its columns; all values otherwise.
@Suite struct RowIdentityInferenceTests {
    private static let schema = """
        CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT, score INT);
        CREATE TABLE team(a TEXT, b INT, name TEXT, PRIMARY KEY (a, b));
        CREATE TABLE note(text TEXT);
        CREATE TABLE keyed(code TEXT PRIMARY KEY, label TEXT) WITHOUT ROWID;
        CREATE VIEW champion AS SELECT * FROM player WHERE score > 100;
        """

    private func infer(_ sql: String, kind: DatabaseKind = .inMemoryQueue) throws -> RowIdentity {
        let test = try kind.make(sql: Self.schema)
        return try test.writer.read { db in try RowIdentity.inferred(fromSQL: sql, in: db) }
    }

    @Test(arguments: DatabaseKind.allCases)
    func primaryKeysOfOneTable(kind: DatabaseKind) throws {
        #expect(try infer("SELECT * FROM player", kind: kind) == .primaryKey(table: "player", columns: ["id"]))
        #expect(try infer("SELECT name, b, a FROM team", kind: kind) == .primaryKey(table: "team", columns: ["a", "b"]))
        #expect(try infer("SELECT rowid, text FROM note", kind: kind) == .primaryKey(table: "note", columns: ["rowid"]))
        // SQLite names a selected rowid alias `rowid`.
        #expect(try infer("SELECT OID, text FROM note", kind: kind) == .primaryKey(table: "note", columns: ["rowid"]))
        #expect(try infer("SELECT * FROM champion", kind: kind) == .primaryKey(table: "player", columns: ["id"]))
        #expect(try infer("SELECT label, code FROM keyed", kind: kind) == .primaryKey(table: "keyed", columns: ["code"]))
        #expect(try infer("SELECT ID, name FROM player WHERE score > 3", kind: kind)
            == .primaryKey(table: "player", columns: ["id"]))
    }

    @Test func withoutTheWholeKeyOfOneTableRowsAreAllTheirValues() throws {
        #expect(try infer("SELECT name FROM player") == .allValues)
        #expect(try infer("SELECT id AS playerID FROM player") == .allValues)
        #expect(try infer("SELECT name, a FROM team") == .allValues)
        #expect(try infer("SELECT text FROM note") == .allValues)
        #expect(try infer("SELECT p.* FROM player p JOIN team t ON t.name = p.name") == .allValues)
        #expect(try infer("SELECT 1 AS id") == .allValues)
        #expect(try infer("SELECT count(*) FROM player") == .allValues)
    }

    @Test func invalidSQLThrowsTheDatabaseError() {
        #expect(throws: DatabaseError.self) { try infer("SELECT * FROM nowhere") }
        #expect(throws: DatabaseError.self) { try infer("SELEC 1") }
    }

    @Test func keyColumnsAreFoundAmongResultColumns() {
        let identity = RowIdentity.columns(["ID", "name"])
        #expect(identity.columnIndexes(in: ["name", "id", "id"]) == [1, 0])
        #expect(identity.columnIndexes(in: ["name"]) == nil)
        #expect(RowIdentity.allValues.columnIndexes(in: ["id"]) == nil)
        #expect(RowIdentity.allValues.columns == nil)
        #expect(RowIdentity.primaryKey(table: "t", columns: ["a"]).columns == ["a"])
    }
}
