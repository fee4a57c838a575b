import DatabaseTestSupport
import ReactiveSQLite
import Testing

@Suite struct ConnectionSmokeTests {
    @Test(arguments: DatabaseKind.allCases)
    func writesAreReadBack(kind: DatabaseKind) throws {
        let test = try kind.make()
        try test.writer.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
            try db.execute(sql: "INSERT INTO t (name) VALUES (?)", arguments: ["a"])
        }
        let names = try test.writer.read { db in try SQLRequest<String>(sql: "SELECT name FROM t").fetchAll(db) }
        #expect(names == ["a"])
    }
}
