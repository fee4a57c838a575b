import Foundation
import Testing

/// Rows are identified by the primary key of the query's only table, else by
/// `--key` columns, else by all their values: that decides whether a changed
/// row is reported as updated, or as deleted and inserted.
@Suite(.timeLimit(.minutes(3)))
struct RowIdentityTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var sql: String
        var keys: [String] = []
        /// The note on standard error that names the identity.
        var note: String
        /// The JSON line of the change.
        var change: String

        var testDescription: String { sql + keys.map { " --key \($0)" }.joined() }
    }

    static let updated = #"{"inserted":[],"updated":[{"id":1,"score":101}],"previous":[{"score":100}],"deleted":[]}"#
    static let replaced = #"{"inserted":[{"name":"Arthur","score":101}],"updated":[],"previous":[],"deleted":[{"name":"Arthur","score":100}]}"#

    static let cases: [Case] = [
        Case(
            sql: "SELECT id, score FROM player WHERE score > 70",
            note: "rows are identified by the primary key of player (id)", change: updated),
        Case(
            sql: "SELECT name, score FROM player WHERE id = 1",
            note: "rows are identified by all their values", change: replaced),
        Case(
            sql: "SELECT id, score FROM ranking WHERE id = 1",
            note: "rows are identified by the primary key of player (id)", change: updated),
        Case(
            sql: "SELECT player.id, score FROM player JOIN team ON team.name = player.team WHERE player.id = 1",
            note: "rows are identified by all their values",
            change: #"{"inserted":[{"id":1,"score":101}],"updated":[],"previous":[],"deleted":[{"id":1,"score":100}]}"#),
        Case(
            sql: "SELECT player.id, score FROM player JOIN team ON team.name = player.team WHERE player.id = 1",
            keys: ["id"], note: "rows are identified by --key id", change: updated),
        Case(
            sql: "SELECT name, score FROM player WHERE id = 1", keys: ["NAME"],
            note: "rows are identified by --key NAME",
            change: #"{"inserted":[],"updated":[{"name":"Arthur","score":101}],"previous":[{"score":100}],"deleted":[]}"#),
        Case(
            sql: "SELECT * FROM result",
            note: "rows are identified by the primary key of result (player, game)",
            change: #"{"inserted":[],"updated":[{"player":"Arthur","game":1,"points":8}],"previous":[{"points":7}],"deleted":[]}"#),
        Case(
            sql: "SELECT rowid, label FROM note",
            note: "rows are identified by the primary key of note (rowid)",
            change: #"{"inserted":[],"updated":[{"rowid":1,"label":"b"}],"previous":[{"label":"a"}],"deleted":[]}"#),
    ]

    @Test(arguments: cases)
    func identity(_ testCase: Case) async throws {
        let database = try await WatchedDatabase("""
            CREATE TABLE team (name TEXT PRIMARY KEY);
            CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, team TEXT REFERENCES team, score INTEGER);
            CREATE VIEW ranking AS SELECT * FROM player ORDER BY score DESC;
            CREATE TABLE result (player TEXT, game INTEGER, points INTEGER, PRIMARY KEY (player, game)) WITHOUT ROWID;
            CREATE TABLE note (label TEXT);
            INSERT INTO team VALUES ('red');
            INSERT INTO player VALUES (1, 'Arthur', 'red', 100);
            INSERT INTO result VALUES ('Arthur', 1, 7);
            INSERT INTO note VALUES ('a');
            """)
        let keyArguments = testCase.keys.flatMap { ["--key", $0] }
        let watch = try database.watch(
            [testCase.sql, "--format", "json", "--count", "1"] + keyArguments)
        try await watch.waitForOutput(containing: "{\"rows\":")
        try await database.execute("""
            BEGIN;
            UPDATE player SET score = 101 WHERE id = 1;
            UPDATE result SET points = 8;
            UPDATE note SET label = 'b';
            COMMIT;
            """)
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.lines.last == testCase.change)
        #expect(watch.errorText.contains(testCase.note))
    }

    @Test func keyIdentifiesTheRowsOfAnAggregate() async throws {
        let database = try await WatchedDatabase.players()
        let sql = "SELECT team, count(*) AS size FROM player GROUP BY team ORDER BY team"
        let withKey = try database.watch([sql, "--key", "team", "--format", "json", "--count", "1"])
        let withoutKey = try database.watch([sql, "--format", "json", "--count", "1"])
        try await withKey.waitForOutput(containing: "{\"rows\":")
        try await withoutKey.waitForOutput(containing: "{\"rows\":")
        try await database.execute("INSERT INTO player (id, name, team, score) VALUES (4, 'Dan', 'blue', 50)")
        #expect(try await withKey.waitForExit() == .exit(0))
        #expect(try await withoutKey.waitForExit() == .exit(0))
        #expect(withKey.outputText.lines.last == #"{"inserted":[],"updated":[{"team":"blue","size":2}],"previous":[{"size":1}],"deleted":[]}"#)
        #expect(withoutKey.outputText.lines.last == #"{"inserted":[{"team":"blue","size":2}],"updated":[],"previous":[],"deleted":[{"team":"blue","size":1}]}"#)
    }

    @Test func rowsWithTheSameValuesAreCountedOneByOne() async throws {
        let database = try await WatchedDatabase.players()
        let watch = try database.watch(["SELECT team FROM player", "--format", "json", "--count", "2"])
        try await watch.waitForOutput(containing: "{\"rows\":")
        try await database.execute("INSERT INTO player (id, name, team, score) VALUES (4, 'Dan', 'red', 50)")
        try await watch.waitForOutput(containing: "\"inserted\"")
        try await database.execute("DELETE FROM player WHERE team = 'red'")
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.lines.suffix(2) == [
            #"{"inserted":[{"team":"red"}],"updated":[],"previous":[],"deleted":[]}"#,
            #"{"inserted":[],"updated":[],"previous":[],"deleted":[{"team":"red"},{"team":"red"},{"team":"red"}]}"#,
        ])
    }
}
