import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Testing
import TestSupport

// Not with the SQLCipher trait: Debian's SQLCipher 3.4.1 has no `json_each`,
// so rows are never read by key there, and its files are encrypted, so
// their pages could not be read anyway (`EncryptedWatchingTests` cover
// `sqlite-watch` on encrypted files).
#if !SQLCipher && REACTIVESQLITE_INTERNAL_CHECKS
/// `trackingRowDifferences` with rows kept as bytes (one integer key),
/// against fresh fetches: under random commits of another connection, the
/// value after each commit, and the rows a client rebuilds from the
/// differences, equal what the query returns; on a WAL database, where a
/// commit makes it read again the rows of the pages it wrote, and on one in
/// rollback mode, where it runs the whole query each time. The observing
/// connection is a read-only queue that observes external changes, as
/// `sqlite-watch`'s.
///
/// Waits are bounded (`Recorder`): a value that never reaches the fresh
/// fetch's rows is a failure.
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct RowDifferencesIncrementalTests {
    /// Queries whose rows a commit's pages tell on a WAL database.
    static let pageQueries = [
        "SELECT * FROM item",
        "SELECT id, name FROM item WHERE score % 3 = 0",
        "SELECT score * 2 AS double, upper(typeof(name)) AS kind, id FROM item WHERE score > 40 -- a comment",
    ]

    /// Queries identified by one integer column that pages cannot tell, and
    /// their key columns: rows in another order than their keys', a key
    /// that is not the rowid.
    static let otherKeyedQueries: [(sql: String, keys: [String])] = [
        ("SELECT * FROM item ORDER BY name, id", []),
        ("SELECT id * 3 AS code, name, score FROM item WHERE score < 80", ["code"]),
        ("SELECT name, 5000 - id AS code FROM item", ["code"]),
    ]

    enum Mode: String, CaseIterable, CustomTestStringConvertible {
        case wal, walAutoVacuum, rollback
        var testDescription: String { rawValue }
    }

    /// A database of small pages (512 bytes: a deep tree from a few
    /// thousand rows, and overflow pages from rows of a few hundred bytes),
    /// its writer, and a read-only connection that observes external
    /// changes, such as `sqlite-watch`'s.
    struct Fixture {
        let test: TestDatabase
        let observed: DatabaseQueue
        let mode: Mode

        init(rows: Int, mode: Mode = .wal) throws {
            let sql = """
                CREATE TABLE item(id INTEGER PRIMARY KEY, name, score INTEGER);
                CREATE TABLE other(a, b);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
                INSERT INTO item SELECT i, 'item ' || i, i % 100 FROM n;
                """
            test = switch mode {
            case .wal, .walAutoVacuum: try TestDatabase.walPool(pageSize: 512, autoVacuum: mode == .walAutoVacuum, sql: sql)
            case .rollback: try TestDatabase.rollbackQueue(pageSize: 512, sql: sql)
            }
            self.mode = mode
            var configuration = Configuration()
            configuration.readonly = true
            configuration.observesExternalChanges = true
            configuration.externalChangePollInterval = .milliseconds(5)
            observed = try DatabaseQueue(path: test.path!, configuration: configuration)
        }

        /// The query's rows, fetched afresh by the writer.
        func freshRows(_ sql: String) throws -> [Row] {
            try test.writer.read { db in try SQLRequest<Row>(sql: sql).fetchAll(db) }
        }
    }

    /// One random transaction (or statement) of the writer.
    static func randomChange(using random: inout SplitMix64) -> String {
        let id = Int.random(in: 1...1_100, using: &random)
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<25: return "UPDATE item SET score = \(Int.random(in: 0..<100, using: &random)) WHERE id = \(id)"
        case 25..<35: return "DELETE FROM item WHERE id = \(id)"
        case 35..<40: return "DELETE FROM item WHERE id BETWEEN \(id) AND \(id + Int.random(in: 1...200, using: &random))"
        case 40..<48: return "INSERT OR REPLACE INTO item VALUES (\(id), 'new \(id)', \(id % 100))"
        // Rowid reuse: the largest rowid deleted, then a row without id.
        case 48..<52: return "DELETE FROM item WHERE id = (SELECT max(id) FROM item); INSERT INTO item (name, score) VALUES ('reused', 7)"
        // Rows that overflow their page, then changes of their overflow pages only.
        case 52..<58: return "UPDATE item SET name = randomblob(1500) WHERE id = \(id)"
        case 58..<64: return "UPDATE item SET name = substr(name, 1, 1000) || randomblob(500) WHERE id IN (SELECT id FROM item WHERE length(name) = 1500 LIMIT 3)"
        case 64..<70: return "UPDATE item SET name = 'short' WHERE id IN (SELECT id FROM item WHERE length(name) = 1500 LIMIT 1)"
        case 70..<76: return "BEGIN; UPDATE item SET score = 1 WHERE id = \(id); SAVEPOINT s; DELETE FROM item WHERE id < \(id); ROLLBACK TO s; RELEASE s; COMMIT"
        case 76..<80: return "BEGIN; SAVEPOINT s; INSERT INTO item (name, score) VALUES ('kept', 3); RELEASE s; COMMIT"
        case 80..<84: return "INSERT INTO other VALUES (randomblob(300), \(id))"
        case 84..<87: return "PRAGMA wal_checkpoint(\(["PASSIVE", "RESTART", "TRUNCATE"][Int.random(in: 0..<3, using: &random)]))"
        case 87..<89: return "VACUUM"
        case 89..<91: return "CREATE INDEX IF NOT EXISTS item_score ON item(score)"
        case 91..<93: return "DROP INDEX IF EXISTS item_score"
        case 93..<95: return "UPDATE item SET score = score + 1 WHERE id % 7 = \(id % 7)"
        default: return "INSERT INTO item (name, score) SELECT 'many', id % 100 FROM item WHERE id % 50 = \(id % 50)"
        }
    }

    @Test(arguments: pageQueries, [Mode.wal, .rollback])
    func rowsEqualAFreshFetchAfterEveryCommit(sql: String, mode: Mode) async throws {
        try await Self.checkRowsAndPages(sql: sql, mode: mode)
    }

    /// With auto-vacuum, commits move pages (overflow pages included)
    /// without writing the leaves that point to them.
    @Test func pagesMovedByAutoVacuumKeepTheRowsExact() async throws {
        try await Self.checkRowsAndPages(sql: "SELECT * FROM item", mode: .walAutoVacuum)
    }

    static func checkRowsAndPages(sql: String, mode: Mode) async throws {
        let statistics = try await Self.checkRandomCommits(sql: sql, fixture: try Fixture(rows: 1_000, mode: mode))
        if mode == .rollback {
            #expect(statistics.incrementalFetchCount == 0, "\(statistics)")
        } else {
            // Most commits make it read the written pages only: VACUUM, big
            // changes and restarts of the log between two fetches read
            // everything, and so do rows out of key order. An index on
            // `score` (created and dropped by random steps) serves
            // `score > 40`, and with this seed it exists for most steps:
            // measured 7 or 8 incremental fetches of about 47, and 4 when
            // commits coalesced under load, which made a bound of steps / 8
            // fail. Other queries: 35 to 44 of about 50.
            let mayBeServedByTheIndex = sql.contains("score >")
            #expect(
                statistics.incrementalFetchCount >= (mayBeServedByTheIndex ? 1 : Self.steps / 4),
                "incremental \(statistics.incrementalFetchCount), unknown rows \(statistics.unknownRowsFetchCount), full \(statistics.fullFetchCount)")
        }
    }

    @Test(arguments: otherKeyedQueries.indices)
    func otherKeyedQueriesEqualAFreshFetchAfterEveryCommit(query: Int) async throws {
        let (sql, keys) = Self.otherKeyedQueries[query]
        let statistics = try await Self.checkRandomCommits(
            sql: sql, keys: keys, fixture: try Fixture(rows: 1_000, mode: .wal))
        #expect(statistics.incrementalFetchCount == 0, "\(statistics)")
    }

    /// The checks of a random run (each waits for the observation: a run
    /// of ten cases beside the whole suite stays far within its time limit).
    static let steps = 40

    /// Random commits of another connection, one to three between two
    /// checks, and after each check the comparisons with a fresh fetch:
    /// the rows of the last value (in the query's order when it has one),
    /// and the rows rebuilt from the differences, by key.
    static func checkRandomCommits(
        sql: String, keys: [String] = [], fixture: Fixture
    ) async throws -> IncrementalFetchStatistics {
        let observation = ValueObservation.trackingRowDifferences(
            sql: sql, identifiedBy: keys.isEmpty ? nil : .columns(keys))
        let statistics = try #require(observation.incrementalFetch?.statistics)
        let recorder = Recorder<RowsWithDifference>()
        let cancellable = observation.start(
            in: fixture.observed, onError: { Issue.record("observation failed: \($0)") },
            onChange: { recorder.append($0) })
        defer { cancellable.cancel() }
        let keyColumn = keys.first ?? "id"
        let isOrderedByQuery = sql.contains("ORDER BY")
        func key(_ row: Row) throws -> Int64 { try row[keyColumn] }

        let first = try #require(try await recorder.wait(for: 1).first)
        #expect(first.change == .initial)
        var replica = Dictionary(uniqueKeysWithValues: try first.rows.map { (try key($0), $0) })
        var seen = 1

        var random = SplitMix64(seed: UInt64(sql.utf8.count) &+ UInt64(fixture.mode.rawValue.utf8.count))
        for step in 0..<steps {
            var statements: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                statements.append(randomChange(using: &random))
                try fixture.test.writer.writeSQLWithoutTransaction(statements[statements.count - 1])
            }
            let fresh = try fixture.freshRows(sql)
            let freshValues = fresh.map(\.databaseValues)
            let values = try await recorder.wait { values in
                let rows = values.last?.rows.map(\.databaseValues) ?? []
                return isOrderedByQuery ? rows == freshValues : Set(rows) == Set(freshValues)
            }
            for value in values[seen...] {
                let difference = try #require(value.difference, "step \(step): \(value.change)")
                for entry in difference.deleted {
                    #expect(replica.removeValue(forKey: try key(entry.row)) != nil, "step \(step): deleted a missing row")
                }
                for entry in difference.inserted {
                    #expect(replica.updateValue(entry.row, forKey: try key(entry.row)) == nil, "step \(step): inserted a present row")
                }
                for update in difference.updated {
                    #expect(replica[try key(update.row)] == update.previous, "step \(step): updated from other values")
                    #expect(update.changedColumns == update.row.changedColumns(from: update.previous))
                    replica[try key(update.row)] = update.row
                }
            }
            seen = values.count
            let freshByKey = Dictionary(uniqueKeysWithValues: try fresh.map { (try key($0), $0) })
            guard replica == freshByKey else {
                let wrong = Set(replica.keys).union(freshByKey.keys).filter { replica[$0] != freshByKey[$0] }.sorted()
                Issue.record("step \(step), after \(statements), \(statistics): \(wrong.count) rebuilt rows differ, keys \(wrong.prefix(20))")
                break
            }
        }
        return statistics
    }

    /// One update of a large table: one fetch, which reads that row again.
    @Test func aCommitOfOneRowIsReadByItself() async throws {
        let fixture = try Fixture(rows: 20_000)
        let observation = ValueObservation.trackingRowDifferences(sql: "SELECT * FROM item")
        let statistics = try #require(observation.incrementalFetch?.statistics)
        let recorder = Recorder<RowsWithDifference>()
        let cancellable = observation.start(in: fixture.observed, onError: { Issue.record("\($0)") }, onChange: { recorder.append($0) })
        defer { cancellable.cancel() }
        _ = try await recorder.wait(for: 1)
        try fixture.test.writer.writeSQL("UPDATE item SET score = -1 WHERE id = 12345")
        let values = try await recorder.wait(for: 2)
        let difference = try #require(values[1].difference)
        #expect(difference.updated.map { try? $0.row["id"] as Int64 } == [12345])
        #expect(difference.updated.first?.changedColumns == [2])
        #expect(difference.inserted.isEmpty && difference.deleted.isEmpty)
        #expect(statistics.incrementalFetchCount == 1 && statistics.fullFetchCount == 0, "\(statistics)")
        #expect(values[1].rows.count == 20_000)
    }

    /// The rows of a value, read by position, by iteration and in batches,
    /// are the query's, in its order: key order, and another order.
    @Test(arguments: ["SELECT * FROM item", "SELECT * FROM item ORDER BY name DESC"])
    func rowsKeptAsBytesReadInTheQuerysOrder(sql: String) async throws {
        let fixture = try Fixture(rows: 1_000)
        let recorder = Recorder<RowsWithDifference>()
        let cancellable = ValueObservation.trackingRowDifferences(sql: sql).start(
            in: fixture.observed, onError: { Issue.record("\($0)") }, onChange: { recorder.append($0) })
        defer { cancellable.cancel() }
        let rows = try #require(try await recorder.wait(for: 1).first).rows
        let fresh = try fixture.freshRows(sql)
        #expect(rows.count == fresh.count)
        #expect(Array(rows) == fresh)
        #expect(rows.indices.map { rows[$0] } == fresh)
        #expect(Array(rows.batches(of: 128).joined()) == fresh)
        #expect(rows.batches(of: 300).map(\.count) == [300, 300, 300, 100])
        #expect(rows == ResultRows(fresh))
        #expect(rows.hashValue == ResultRows(fresh).hashValue)
    }

    /// A key column whose values stop identifying the rows (the same value
    /// twice, then a text) goes on with rows compared as `Row` values, and
    /// comes back to bytes when the columns change.
    @Test func rowsThatTheKeyStopsIdentifyingAreComparedAsRows() async throws {
        let fixture = try Fixture(rows: 10)
        let recorder = Recorder<RowsWithDifference>()
        let cancellable = ValueObservation.trackingRowDifferences(
            sql: "SELECT score AS k, name FROM item", identifiedBy: .columns(["k"])
        ).start(in: fixture.observed, onError: { Issue.record("\($0)") }, onChange: { recorder.append($0) })
        defer { cancellable.cancel() }
        _ = try await recorder.wait(for: 1)
        try fixture.test.writer.writeSQL("UPDATE item SET score = 1 WHERE id = 2")
        var values = try await recorder.wait(for: 2)
        var difference = try #require(values[1].difference)
        // Two rows of key 1: the second one is new, the row of key 2 gone.
        #expect(difference.inserted.map { try? $0.row["name"] as String } == ["item 2"])
        #expect(difference.deleted.map { try? $0.row["name"] as String } == ["item 2"])
        try fixture.test.writer.writeSQL("UPDATE item SET score = 'x' WHERE id = 3; UPDATE item SET name = 'one' WHERE id = 1")
        values = try await recorder.wait(for: 3)
        difference = try #require(values[2].difference)
        #expect(difference.updated.map { try? $0.row["name"] as String } == ["one"])
        #expect(Set(values[2].rows.map(\.databaseValues)) == Set(try fixture.freshRows("SELECT score AS k, name FROM item").map(\.databaseValues)))
    }

    /// An observation given the rows of an earlier value kept as bytes
    /// starts with the difference from them.
    @Test func initialRowsKeptAsBytesGiveTheFirstDifference() async throws {
        let fixture = try Fixture(rows: 1_000)
        let sql = "SELECT * FROM item"
        let first = Recorder<RowsWithDifference>()
        var cancellable = ValueObservation.trackingRowDifferences(sql: sql).start(
            in: fixture.observed, onError: { Issue.record("\($0)") }, onChange: { first.append($0) })
        let earlier = try #require(try await first.wait(for: 1).first).rows
        cancellable.cancel()
        try fixture.test.writer.writeSQL("UPDATE item SET name = 'renamed' WHERE id = 7; DELETE FROM item WHERE id = 8; INSERT INTO item VALUES (5000, 'new', 1)")
        let second = Recorder<RowsWithDifference>()
        cancellable = ValueObservation.trackingRowDifferences(sql: sql, initialRows: earlier).start(
            in: fixture.observed, onError: { Issue.record("\($0)") }, onChange: { second.append($0) })
        defer { cancellable.cancel() }
        let difference = try #require(try await second.wait(for: 1).first?.difference)
        #expect(difference.updated.map { try? $0.row["id"] as Int64 } == [7])
        #expect(difference.deleted.map { try? $0.row["id"] as Int64 } == [8])
        #expect(difference.inserted.map { try? $0.row["id"] as Int64 } == [5000])
    }
}
#endif
