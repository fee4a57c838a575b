import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import Synchronization
import Testing
import TestSupport

// Not with the SQLCipher trait: Debian's SQLCipher 3.4.1 has no `json_each`,
// so the way through pages is closed there, and its files are encrypted, so
// their pages could not be read anyway (`EncryptedWatchingTests` cover the
// tool on encrypted files, where the tracker runs the whole query).
#if !SQLCipher
/// `KeyedQueryTracker` against fresh fetches: the commits of another
/// connection, random, and after each refresh the kept rows, and the rows a
/// client rebuilds from the reported changes, equal what the query returns;
/// on a WAL database, where it reads the rows of the written pages, and on
/// one in rollback mode, where it runs the whole query each time.
@Suite(.onItsOwnThread) struct KeyedQueryTrackerTests {
    /// Queries the pages can serve on a WAL database.
    static let pageQueries = [
        "SELECT * FROM item",
        "SELECT id, name FROM item WHERE score % 3 = 0",
        "SELECT score * 2 AS double, upper(typeof(name)) AS kind, id FROM item WHERE score > 40 -- a comment",
    ]

    /// Queries the pages cannot serve, and their `--key` columns: rows in
    /// another order than their keys', a key that is not the rowid.
    static let otherKeyedQueries: [(sql: String, keys: [String])] = [
        ("SELECT * FROM item ORDER BY name, id", []),
        ("SELECT id * 3 AS code, name, score FROM item WHERE score < 80", ["code"]),
        ("SELECT name, 5000 - id AS code FROM item", ["code"]),
    ]

    enum Mode: String, CaseIterable, CustomTestStringConvertible {
        case wal, walAutoVacuum, rollback
        var testDescription: String { rawValue }
    }

    /// A WAL database of small pages (512 bytes: a deep tree from a few
    /// thousand rows, and overflow pages from rows of a few hundred bytes),
    /// its writer, and a read-only connection such as the tool's.
    struct Fixture {
        let test: TestDatabase
        let watcher: DatabaseQueue
        let isAutoVacuum: Bool

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
            isAutoVacuum = mode == .walAutoVacuum
            var configuration = Configuration()
            configuration.readonly = true
                watcher = try DatabaseQueue(path: test.path!, configuration: configuration)
        }

        func tracker(_ sql: String, keys: [String] = []) throws -> KeyedQueryTracker? {
            try watcher.writeWithoutTransaction { db in
                try KeyedQueryTracker(
                    sql: sql, identity: keys.isEmpty ? RowIdentity.inferred(fromSQL: sql, in: db) : .columns(keys),
                    columnNames: db.makeStatement(sql: sql).columnNames, in: db)
            }
        }

        /// The query's rows, by key, fetched afresh.
        func freshRows(_ sql: String, keyIndex: Int) throws -> [Int64: Row] {
            let rows = try watcher.read { db in try SQLRequest<Row>(sql: sql).fetchAll(db) }
            return Dictionary(uniqueKeysWithValues: try rows.map { row in (try row[keyIndex] as Int64, row) })
        }
    }

    /// One random transaction (or statement) of the writer.
    static func randomChange(using random: inout SplitMix64) -> String {
        let id = Int.random(in: 1...2_200, using: &random)
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

    static func inKeyOrder(_ rows: [Int64: Row]) -> [Row] {
        rows.keys.sorted().compactMap { rows[$0] }
    }

    /// With auto-vacuum (`walAutoVacuum`), commits move pages (overflow
    /// pages included) without writing the leaves that point to them.
    @Test(arguments: pageQueries, [Mode.wal, .rollback])
    func keptRowsEqualAFreshFetchAfterEveryRefresh(sql: String, mode: Mode) throws {
        try Self.checkRandomCommits(
            sql: sql, fixture: try Fixture(rows: 2_000, mode: mode), tracksPages: mode == .wal,
            isKeyOrdered: sql == "SELECT * FROM item" ? true : nil)
    }

    @Test func pagesMovedByAutoVacuumKeepTheRowsExact() throws {
        try Self.checkRandomCommits(
            sql: "SELECT * FROM item", fixture: try Fixture(rows: 2_000, mode: .walAutoVacuum), tracksPages: true,
            isKeyOrdered: true)
    }

    /// Rows that come out of key order go through a sort: some refreshes
    /// say so.
    @Test(arguments: otherKeyedQueries.indices, [Mode.wal, .rollback])
    func otherKeyedQueriesEqualAFreshFetchAfterEveryRefresh(query: Int, mode: Mode) throws {
        let (sql, keys) = Self.otherKeyedQueries[query]
        try Self.checkRandomCommits(
            sql: sql, keys: keys, fixture: try Fixture(rows: 2_000, mode: mode), tracksPages: false,
            isKeyOrdered: sql.contains("ORDER BY") || sql.contains("5000 - id") ? false : nil)
    }

    /// Random commits of another connection, a refresh after each one to
    /// three, and the comparisons with a fresh fetch.
    static func checkRandomCommits(
        sql: String, keys: [String] = [], fixture: Fixture, tracksPages: Bool, isKeyOrdered: Bool? = nil
    ) throws {
        let tracker = try #require(try fixture.tracker(sql, keys: keys))
        #expect(tracker.tracksPages == tracksPages)
        let keyIndex = try #require(tracker.columnNames.firstIndex(of: keys.first ?? "id"))
        try fixture.watcher.writeWithoutTransaction { db in try tracker.start(db) }
        var replica = try fixture.freshRows(sql, keyIndex: keyIndex)
        #expect(tracker.keptRows.all == inKeyOrder(replica))

        var random = SplitMix64(seed: UInt64(sql.utf8.count) &+ (fixture.isAutoVacuum ? 7 : 0) &+ (tracksPages ? 0 : 3))
        for step in 0..<150 {
            var statements: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                statements.append(randomChange(using: &random))
                try fixture.test.writer.writeSQLWithoutTransaction(statements[statements.count - 1])
            }
            let refresh = try fixture.watcher.writeWithoutTransaction { db in try tracker.refresh(db) }
            if case .changed(let changes) = refresh {
                for entry in changes.deleted {
                    #expect(replica.removeValue(forKey: try entry.row[keyIndex]) != nil, "step \(step): deleted a missing row")
                }
                for entry in changes.inserted {
                    #expect(replica.updateValue(entry.row, forKey: try entry.row[keyIndex]) == nil, "step \(step): inserted a present row")
                }
                for update in changes.updated {
                    let key: Int64 = try update.row[keyIndex]
                    #expect(replica[key] == update.previous, "step \(step): updated from other values")
                    replica[key] = update.row
                }
            } else {
                #expect(refresh.isUnchanged, "step \(step)")
            }
            let fresh = try fixture.freshRows(sql, keyIndex: keyIndex)
            let kept = tracker.keptRows.all
            guard replica == fresh, kept == inKeyOrder(fresh) else {
                let wrong = Set(replica.keys).union(fresh.keys).filter { replica[$0] != fresh[$0] }.sorted()
                let examples = wrong.prefix(3).map { key in
                    "\(replica[key].map(String.init(describing:)) ?? "nil") instead of \(fresh[key].map(String.init(describing:)) ?? "nil")"
                }
                Issue.record("""
                    step \(step), after \(statements), \(tracker.statistics): \(wrong.count) rows differ from a fresh \
                    fetch, keys \(wrong.prefix(20)): \(examples); kept rows equal: \(kept == inKeyOrder(fresh))
                    """)
                return
            }
        }
        let statistics = tracker.statistics
        if tracksPages {
            // Most refreshes read the written pages only (VACUUM, big changes,
            // restarts of the log between two refreshes fetch everything).
            #expect(statistics.incremental > 120, "\(statistics)")
        } else {
            #expect(statistics.incremental == 0 && statistics.full == 150, "\(statistics)")
        }
        // Rows out of key order are sorted from the first refresh on;
        // an index on `score` sends those of a filter on it out of order.
        if let isKeyOrdered { #expect(statistics.unordered == (isKeyOrdered ? 0 : 150), "\(statistics)") }
    }

    @Test func aRefreshReadsTheRowsOfTheWrittenPagesOnly() throws {
        let fixture = try Fixture(rows: 20_000)
        let tracker = try #require(try fixture.tracker("SELECT * FROM item"))
        try fixture.watcher.writeWithoutTransaction { db in try tracker.start(db) }
        try fixture.test.writer.writeSQL("UPDATE item SET score = -1 WHERE id = 12345")
        let refresh = try fixture.watcher.writeWithoutTransaction { db in try tracker.refresh(db) }
        guard case .changed(let changes) = refresh else { Issue.record("\(refresh)"); return }
        #expect(try changes.updated.map { try $0.row["id"] as Int64 } == [12345])
        #expect(changes.updated.first?.changedColumns == [2])
        #expect(tracker.statistics.incremental == 1)
        // The rows of one leaf of 512 bytes, not 20 000.
        #expect(tracker.statistics.rowsRead < 40, "\(tracker.statistics)")
    }

    /// Queries whose rows may depend on other rows, or on other tables: no
    /// way through pages.
    @Test func otherQueriesDoNotTrackPages() throws {
        let fixture = try Fixture(rows: 10)
        for sql in [
            "SELECT * FROM item LIMIT 5",
            "SELECT * FROM item WHERE score > (SELECT avg(score) FROM item)",
            "SELECT DISTINCT * FROM item",
            "SELECT id, sum(score) OVER () FROM item",
            "SELECT * FROM item UNION ALL SELECT * FROM item",
            "SELECT name FROM item",
            "SELECT * FROM item WHERE EXISTS (SELECT 1 FROM other WHERE b = item.id)",
            "SELECT item.* FROM item, json_each('[1, 2]')",
        ] {
            #expect(try fixture.tracker(sql)?.tracksPages != true, "\(sql)")
        }
    }

    /// The first rows are printed as the query returns them; the kept
    /// rows are in key order.
    @Test func theFirstRowsComeInTheQuerysOrder() throws {
        let fixture = try Fixture(rows: 300)
        for sql in ["SELECT * FROM item ORDER BY score DESC, id", "SELECT * FROM item"] {
            let tracker = try #require(try fixture.tracker(sql))
            try fixture.watcher.writeWithoutTransaction { db in try tracker.start(db) }
            let fresh = try fixture.watcher.read { db in try SQLRequest<Row>(sql: sql).fetchAll(db) }
            #expect(tracker.takeStartRows().all == fresh, "\(sql)")
            let inKeyOrder = Self.inKeyOrder(try fixture.freshRows(sql, keyIndex: 0))
            #expect(tracker.keptRows.all == inKeyOrder, "\(sql)")
            // Taken once.
            #expect(tracker.takeStartRows().all == inKeyOrder, "\(sql)")
        }
    }

    /// A refresh whose read may have met a writer (a read without a lock,
    /// in rollback mode: see `Database.yieldingToWriters`) is thrown away
    /// and made again, from the same kept rows: the changes the thrown-away
    /// read saw are told by the read that holds. Before, the thrown-away
    /// read had applied them already, unseen, and the next one told only
    /// the rest: under load in CI, a watch never printed one update of
    /// 1 000 (row 33 stayed at 832 after 932 and 933 were committed).
    @Test func aRefreshThatMetAWriterIsReadAgainFromTheSameRows() throws {
        let test = try TestDatabase.rollbackQueue(pageSize: 4096, sql: """
            CREATE TABLE item(id INTEGER PRIMARY KEY, n INTEGER);
            INSERT INTO item VALUES (1, 0), (2, 0), (3, 0);
            """)
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        let watcher = try DatabaseQueue(path: test.path!, configuration: configuration)
        let sql = "SELECT * FROM item"
        let tracker = try #require(try watcher.writeWithoutTransaction { db in
            try KeyedQueryTracker(
                sql: sql, identity: RowIdentity.inferred(fromSQL: sql, in: db),
                columnNames: db.makeStatement(sql: sql).columnNames, in: db)
        })
        try watcher.writeWithoutTransaction { db in try tracker.start(db) }
        try test.writer.writeSQL("UPDATE item SET n = 1 WHERE id = 1")
        // Another connection commits while the first read of the refresh
        // ends its transaction: that read may have met it.
        let commits = Mutex(0)
        let refresh = try watcher.writeWithoutTransaction { db in
            db.trace { event in
                guard event.sql == "COMMIT", commits.withLock({ $0 += 1; return $0 == 1 }) else { return }
                try? test.writer.writeSQL("UPDATE item SET n = 2 WHERE id = 2")
            }
            defer { db.trace(nil) }
            return try tracker.refreshYieldingToWriters(db)
        }
        #expect(commits.withLock { $0 } == 2, "the first read was not made again")
        guard case .changed(let changes) = refresh else { Issue.record("\(refresh)"); return }
        #expect(try changes.updated.map { try $0.row["id"] as Int64 } == [1, 2])
        #expect(try tracker.keptRows.all.map { try $0["n"] as Int64 } == [1, 2, 0])
    }

    @Test func aDatabaseInRollbackModeIsTrackedWithoutPages() throws {
        let fixture = try Fixture(rows: 10, mode: .rollback)
        let tracker = try #require(try fixture.tracker("SELECT * FROM item"))
        #expect(!tracker.tracksPages)
    }

    /// Rows identified by several columns, or by all their values, are not
    /// for the tracker.
    @Test func rowsWithoutOneKeyColumnAreNotTracked() throws {
        let fixture = try Fixture(rows: 10)
        #expect(try fixture.tracker("SELECT name, score FROM item") == nil)
        #expect(try fixture.tracker("SELECT * FROM item", keys: ["name", "score"]) == nil)
    }

    /// A key column of texts, or of integers that repeat, cannot identify
    /// the rows: `start` says so, and a refresh that meets a repeated key
    /// ends the tracking with the rows it had.
    @Test func rowsThatTheKeyDoesNotIdentifyEndTheTracking() throws {
        let fixture = try Fixture(rows: 200)
        for (sql, key) in [("SELECT * FROM item", "name"), ("SELECT * FROM item", "score")] {
            let tracker = try #require(try fixture.tracker(sql, keys: [key]))
            #expect(throws: KeyedQueryTracker.UnkeyedRows.self, "\(key)") {
                try fixture.watcher.writeWithoutTransaction { db in try tracker.start(db) }
            }
        }
        let sql = "SELECT * FROM item WHERE id <= 50"
        let tracker = try #require(try fixture.tracker(sql, keys: ["score"]))
        try fixture.watcher.writeWithoutTransaction { db in try tracker.start(db) }
        let before = tracker.keptRows.all
        #expect(before.count == 50)
        try fixture.test.writer.writeSQL("UPDATE item SET score = 1 WHERE id = 2")
        let refresh = try fixture.watcher.writeWithoutTransaction { db in try tracker.refresh(db) }
        guard case .unkeyed = refresh else { Issue.record("\(refresh)"); return }
        #expect(tracker.keptRows.all == before)
    }

    /// A commit that changes most rows rebuilds the kept rows in one pass.
    @Test(arguments: [Mode.wal, .rollback])
    func aCommitThatChangesEveryRowKeepsTheRowsExact(mode: Mode) throws {
        let fixture = try Fixture(rows: 3_000, mode: mode)
        let sql = "SELECT * FROM item"
        let tracker = try #require(try fixture.tracker(sql))
        try fixture.watcher.writeWithoutTransaction { db in try tracker.start(db) }
        for change in [
            "UPDATE item SET score = score + 1", "DELETE FROM item WHERE id % 2 = 0",
            "INSERT INTO item SELECT id + 1, 'back', 0 FROM item", "DELETE FROM item",
            "INSERT INTO item VALUES (1, 'one', 1)",
        ] {
            try fixture.test.writer.writeSQL(change)
            let refresh = try fixture.watcher.writeWithoutTransaction { db in try tracker.refresh(db) }
            #expect(!refresh.isUnchanged, "\(change)")
            #expect(tracker.keptRows.all == Self.inKeyOrder(try fixture.freshRows(sql, keyIndex: 0)), "\(change)")
        }
    }

    /// A view redefined over another table, a table made again without a
    /// rowid key: the same columns, and rows the pages can no longer name.
    @Test func aSchemaChangeThatKeepsTheColumnsKeepsTheRowsExact() throws {
        let fixture = try Fixture(rows: 300)
        try fixture.test.writer.writeSQL("CREATE TABLE item2(id INTEGER PRIMARY KEY, name, score INTEGER); CREATE VIEW v AS SELECT * FROM item")
        let sql = "SELECT * FROM v"
        let tracker = try #require(try fixture.tracker(sql))
        try fixture.watcher.writeWithoutTransaction { db in try tracker.start(db) }
        func check(_ step: String) throws {
            _ = try fixture.watcher.writeWithoutTransaction { db in try tracker.refresh(db) }
            #expect(tracker.keptRows.all == Self.inKeyOrder(try fixture.freshRows(sql, keyIndex: 0)), "\(step)")
        }
        try fixture.test.writer.writeSQL("DROP VIEW v; CREATE VIEW v AS SELECT * FROM item2; INSERT INTO item2 VALUES (1, 'a', 1)")
        try check("view over item2")
        try fixture.test.writer.writeSQL("INSERT INTO item2 VALUES (2, 'b', 2); UPDATE item2 SET score = 5 WHERE id = 1")
        try check("item2 changed")
        try fixture.test.writer.writeSQL("UPDATE item SET score = 5 WHERE id = 1")
        try check("item changed")
        try fixture.test.writer.writeSQL("""
            DROP VIEW v; DROP TABLE item2;
            CREATE TABLE item2(id INT PRIMARY KEY, name, score INTEGER) WITHOUT ROWID;
            INSERT INTO item2 VALUES (7, 'c', 3);
            CREATE VIEW v AS SELECT * FROM item2
            """)
        try check("without rowid")
        try fixture.test.writer.writeSQL("INSERT INTO item2 VALUES (8, 'd', 4)")
        try check("without rowid, changed")
    }

    @Test func newColumnsEndTheTracking() throws {
        let fixture = try Fixture(rows: 100)
        let tracker = try #require(try fixture.tracker("SELECT * FROM item"))
        try fixture.watcher.writeWithoutTransaction { db in try tracker.start(db) }
        try fixture.test.writer.writeSQL("ALTER TABLE item ADD COLUMN extra")
        let refresh = try fixture.watcher.writeWithoutTransaction { db in try tracker.refresh(db) }
        guard case .columnsChanged = refresh else { Issue.record("\(refresh)"); return }
        let after = try fixture.watcher.writeWithoutTransaction { db in try tracker.refresh(db) }
        #expect(after.isUnchanged)
    }
}

extension KeyedQueryTracker.Refresh {
    var isUnchanged: Bool {
        if case .unchanged = self { return true }
        return false
    }
}
#endif
