import Foundation
import Testing
import TestSupport

/// `sqlite-watch DATABASE SQL` prints the current rows, then each change
/// committed by another process (the `sqlite3` shell).
@Suite(.timeLimit(.minutes(3)))
struct WatchingTests {
    /// In WAL mode, the rows of the pages a commit wrote are read again
    /// (see `ValueObservation.trackingRowDifferences`); in rollback mode, the whole result, compared as bytes.
    @Test(arguments: ["delete", "wal"])
    func theTablePrintsTheRowsThenInsertedUpdatedAndDeletedRows(journalMode: String) async throws {
        let database = try await WatchedDatabase.players(journalMode: journalMode)
        let watch = try database.watch("SELECT * FROM player", "--count", "1")
        try await watch.waitForOutput(containing: "(3 rows)")
        try await database.execute("""
            BEGIN;
            INSERT INTO player (id, name, team, score) VALUES (4, 'Dan', 'blue', 50);
            UPDATE player SET score = 120 WHERE id = 1;
            DELETE FROM player WHERE id = 2;
            COMMIT;
            """)
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.withoutTimes == """
            +----+---------+------+-------+
            | id | name    | team | score |
            +----+---------+------+-------+
            |  1 | Arthur  | red  |   100 |
            |  2 | Barbara | blue |    80 |
            |  3 | Craig   | red  |    60 |
            +----+---------+------+-------+
            (3 rows)
            change 1 at TIME: 1 inserted, 1 updated, 1 deleted
            +----------+----+---------+------+-----------+
            | change   | id | name    | team | score     |
            +----------+----+---------+------+-----------+
            | inserted |  4 | Dan     | blue |        50 |
            | updated  |  1 | Arthur  | red  | 100 → 120 |
            | deleted  |  2 | Barbara | blue |        80 |
            +----------+----+---------+------+-----------+

            """)
        #expect(watch.errorText == "sqlite-watch: rows are identified by the primary key of player (id)\n")
    }

    /// In WAL mode, the rows of the pages a commit wrote are read again
    /// (see `ValueObservation.trackingRowDifferences`); in rollback mode, the whole result, compared as bytes.
    @Test(arguments: ["delete", "wal"])
    func jsonPrintsOneObjectPerLine(journalMode: String) async throws {
        let database = try await WatchedDatabase.players(journalMode: journalMode)
        let watch = try database.watch("SELECT * FROM player", "--format", "json", "--count", "2")
        try await watch.waitForOutput(containing: "{\"rows\":")
        try await database.execute("INSERT INTO player (id, name, team, score) VALUES (4, 'Dan', 'blue', 50)")
        try await watch.waitForOutput(containing: "\"inserted\"")
        try await database.execute("BEGIN; UPDATE player SET score = 120 WHERE id = 1; DELETE FROM player WHERE id = 2; COMMIT")
        #expect(try await watch.waitForExit() == .exit(0))
        let lines = watch.outputText.lines
        #expect(lines == [
            #"{"rows":[{"id":1,"name":"Arthur","team":"red","score":100},{"id":2,"name":"Barbara","team":"blue","score":80},{"id":3,"name":"Craig","team":"red","score":60}]}"#,
            #"{"inserted":[{"id":4,"name":"Dan","team":"blue","score":50}],"updated":[],"previous":[],"deleted":[]}"#,
            #"{"inserted":[],"updated":[{"id":1,"name":"Arthur","team":"red","score":120}],"previous":[{"score":100}],"deleted":[{"id":2,"name":"Barbara","team":"blue","score":80}]}"#,
        ])
        for line in lines {
            #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(line.utf8)) }
        }
    }

    /// `--key score`: integers, unique until a commit gives two rows the
    /// same score; from then on the rows are fetched and diffed as values
    /// (a repeated key tells its rows apart by their order), from the rows
    /// printed so far, and the changes stay exact.
    @Test(arguments: ["delete", "wal"])
    func aKeyThatStopsIdentifyingTheRowsKeepsTheChangesExact(journalMode: String) async throws {
        let database = try await WatchedDatabase.players(journalMode: journalMode)
        let watch = try database.watch(
            "SELECT id, name, score FROM player ORDER BY id", "--key", "score", "--format", "json", "--count", "3")
        try await watch.waitForOutput(containing: "{\"rows\":")
        try await database.execute("UPDATE player SET name = 'Art' WHERE id = 1")
        try await watch.waitForOutput(containing: "Art\"")
        try await database.execute("UPDATE player SET score = 100 WHERE id = 2")
        try await watch.waitForOutput(containing: "\"deleted\":[{\"id\":2")
        try await database.execute("UPDATE player SET name = 'Cat' WHERE id = 3")
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.lines == [
            // In the query's order, not the key's.
            #"{"rows":[{"id":1,"name":"Arthur","score":100},{"id":2,"name":"Barbara","score":80},{"id":3,"name":"Craig","score":60}]}"#,
            #"{"inserted":[],"updated":[{"id":1,"name":"Art","score":100}],"previous":[{"name":"Arthur"}],"deleted":[]}"#,
            #"{"inserted":[{"id":2,"name":"Barbara","score":100}],"updated":[],"previous":[],"deleted":[{"id":2,"name":"Barbara","score":80}]}"#,
            #"{"inserted":[],"updated":[{"id":3,"name":"Cat","score":60}],"previous":[{"name":"Craig"}],"deleted":[]}"#,
        ])
    }

    @Test func orderedReportsMovesInJSON() async throws {
        let database = try await WatchedDatabase.players()
        let watch = try database.watch(
            "SELECT id, name, score FROM player ORDER BY score DESC", "--ordered", "--format", "json", "--count", "1")
        try await watch.waitForOutput(containing: "{\"rows\":")
        try await database.execute("UPDATE player SET score = 200 WHERE id = 3")
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.lines.last == #"{"inserted":[],"updated":[{"id":3,"name":"Craig","score":200}],"previous":[{"score":60}],"deleted":[],"insertedAt":[],"moved":[{"from":3,"to":1,"row":{"id":3,"name":"Craig","score":200}}]}"#)
    }

    @Test func orderedTablesShowPositions() async throws {
        let database = try await WatchedDatabase.players()
        let watch = try database.watch("SELECT id, name, score FROM player ORDER BY score DESC", "--ordered", "--count", "2")
        try await watch.waitForOutput(containing: "(3 rows)")
        try await database.execute("UPDATE player SET score = 200 WHERE id = 3")
        try await watch.waitForOutput(containing: "change 1 at")
        try await database.execute("""
            BEGIN;
            DELETE FROM player WHERE id = 1;
            INSERT INTO player (id, name, team, score) VALUES (4, 'Dan', 'blue', 90);
            COMMIT;
            """)
        #expect(try await watch.waitForExit() == .exit(0))
        let changes = try #require(watch.outputText.withoutTimes.firstRange(of: "change 1 at"))
        #expect(watch.outputText.withoutTimes[changes.lowerBound...] == """
            change 1 at TIME: 1 updated, 1 moved
            +----------------+----------+----+-------+----------+
            | change         | position | id | name  | score    |
            +----------------+----------+----+-------+----------+
            | moved, updated | 3 → 1    |  3 | Craig | 60 → 200 |
            +----------------+----------+----+-------+----------+
            change 2 at TIME: 1 inserted, 1 deleted
            +----------+----------+----+--------+-------+
            | change   | position | id | name   | score |
            +----------+----------+----+--------+-------+
            | deleted  | 2        |  1 | Arthur |   100 |
            | inserted | 2        |  4 | Dan    |    90 |
            +----------+----------+----+--------+-------+

            """)
    }

    /// In WAL mode, the rows of the pages a commit wrote are read again
    /// (see `ValueObservation.trackingRowDifferences`); in rollback mode, the whole result, compared as bytes.
    @Test(arguments: ["delete", "wal"])
    func countExitsAfterThatManyChanges(journalMode: String) async throws {
        let database = try await WatchedDatabase.players(journalMode: journalMode)
        let watch = try database.watch("SELECT * FROM player", "--count", "2")
        try await watch.waitForOutput(containing: "(3 rows)")
        try await database.execute("UPDATE player SET score = 1 WHERE id = 1")
        try await watch.waitForOutput(containing: "change 1 at")
        // A commit that changes nothing the query returns is not a change.
        try await database.execute("UPDATE player SET score = 1 WHERE id = 1")
        try await database.execute("UPDATE player SET score = 2 WHERE id = 1")
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.occurrences(of: "change 1 at") == 1)
        #expect(watch.outputText.occurrences(of: "change 2 at") == 1)
        #expect(watch.outputText.contains("| updated |  1 | Arthur | red  | 1 → 2 |"))
    }

    @Test(arguments: ["delete", "wal"])
    func aSchemaChangeShowsTheNewColumnsThenGoesOn(journalMode: String) async throws {
        let database = try await WatchedDatabase(
            "PRAGMA journal_mode = \(journalMode); CREATE TABLE t (id INTEGER PRIMARY KEY, a); INSERT INTO t VALUES (1, 'x')")
        let watch = try database.watch("SELECT * FROM t", "--count", "1")
        try await watch.waitForOutput(containing: "(1 row)")
        try await database.execute("ALTER TABLE t ADD COLUMN b DEFAULT 7")
        try await watch.waitForOutput(containing: "the query's columns changed")
        try await database.execute("UPDATE t SET b = 8")
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(watch.outputText.withoutTimes == """
            +----+---+
            | id | a |
            +----+---+
            |  1 | x |
            +----+---+
            (1 row)
            the query's columns changed; the new result:
            +----+---+---+
            | id | a | b |
            +----+---+---+
            |  1 | x | 7 |
            +----+---+---+
            (1 row)
            change 1 at TIME: 1 updated
            +---------+----+---+-------+
            | change  | id | a | b     |
            +---------+----+---+-------+
            | updated |  1 | x | 7 → 8 |
            +---------+----+---+-------+

            """)
    }

    /// Thousands of rows in WAL mode, and random commits of other processes
    /// (some rewrite every page, some restart the log): a reader that
    /// applies each JSON line holds what a fresh query returns.
    @Test func aLargeResultFollowsRandomCommitsOfOtherProcesses() async throws {
        let database = try await WatchedDatabase("""
            PRAGMA journal_mode = wal;
            CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, score INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
            INSERT INTO item SELECT i, 'item ' || i, i % 100 FROM n;
            """)
        let sql = "SELECT id, name, score FROM item WHERE score % 2 = 0"
        let watch = try database.watch(sql, "--format", "json")
        try await watch.waitForOutput(containing: "\n")
        var random = SplitMix64(seed: 21)
        for burst in 0..<12 {
            let statements = (0..<8).map { _ in
                let id = Int.random(in: 1...5_200, using: &random)
                return switch Int.random(in: 0..<10, using: &random) {
                case 0: "DELETE FROM item WHERE id BETWEEN \(id) AND \(id + 40)"
                case 1: "INSERT OR REPLACE INTO item VALUES (\(id), 'new', \(id % 100))"
                case 2: "UPDATE item SET name = randomblob(3000) WHERE id = \(id)"
                case 3: burst % 4 == 3 ? "VACUUM" : "PRAGMA wal_checkpoint(TRUNCATE)"
                default: "UPDATE item SET score = \(Int.random(in: 0..<100, using: &random)) WHERE id = \(id)"
                }
            }
            try await database.commit(statements)
        }
        let expected = try await database.currentRows(sql, ordered: false, keys: ["id"]).comparableRows
        try await watch.waitForOutput { text in
            var replica = JSONRowReplica(keys: ["id"], isOrdered: false)
            for (index, line) in text.split(separator: "\n").enumerated() {
                replica.apply(event: index == 0 ? "rows" : "diff", data: String(line))
            }
            return replica.inconsistency == nil && replica.comparableRows == expected
        }
        watch.signal(SIGTERM)
        _ = try await watch.waitForExit()
    }

    @Test func ctrlCExitsCleanly() async throws {
        let database = try await WatchedDatabase.players()
        let watch = try database.watch("SELECT * FROM player")
        try await watch.waitForOutput(containing: "(3 rows)")
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == .exit(0))
        #expect(!watch.errorText.contains("error"))
    }

    @Test func sigtermExitsCleanly() async throws {
        let database = try await WatchedDatabase.players()
        let watch = try database.watch("SELECT * FROM player", "--format", "json")
        try await watch.waitForOutput(containing: "{\"rows\":")
        watch.signal(SIGTERM)
        #expect(try await watch.waitForExit() == .exit(0))
    }
}
