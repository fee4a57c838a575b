import DatabaseTestSupport
import ReactiveSQLite
@testable import sqlite_watch
import Testing

/// How the tool identifies the rows of a query, and the errors of a query
/// it cannot watch, in process.
@Suite struct QueryInspectionTests {
    private static let schema = """
        CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT, score INT);
        CREATE TABLE team(a TEXT, b INT, name TEXT, PRIMARY KEY (a, b));
        CREATE TABLE note(text TEXT);
        CREATE VIEW champion AS SELECT * FROM player WHERE score > 100;
        """

    private func inspect(_ sql: String, keys: [String] = []) throws -> QueryInspection {
        let test = try DatabaseKind.inMemoryQueue.make(sql: Self.schema)
        return try test.writer.read { db in try QueryInspection(sql: sql, keys: keys, in: db) }
    }

    @Test func keysGivenOrInferred() throws {
        #expect(try inspect("SELECT * FROM player").identity == .primaryKey(table: "player", columns: ["id"]))
        #expect(try inspect("SELECT * FROM player").columnNames == ["id", "name", "score"])
        #expect(try inspect("SELECT name FROM player").identity == .allValues)
        #expect(try inspect("SELECT name FROM player", keys: ["NAME"]).identity == .columns(["NAME"]))
    }

    @Test func queriesThatCannotBeWatchedExitWithStatus2() {
        for (sql, keys, fragment) in [
            ("SELEC * FROM player", [String](), "SELEC"),
            ("DELETE FROM player", [], "DELETE"),
            ("SELECT * FROM nowhere", [], "nowhere"),
            ("SELECT name FROM player", ["id"], "id"),
        ] {
            #expect {
                _ = try inspect(sql, keys: keys)
            } throws: { error in
                guard let error = error as? WatchError else { return false }
                return error.status == .queryError && error.message.contains(fragment)
            }
        }
    }
}
