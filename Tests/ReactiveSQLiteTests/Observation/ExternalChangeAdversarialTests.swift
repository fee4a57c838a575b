import DatabaseTestSupport
import Dispatch
import Foundation
@testable import ReactiveSQLite
import TestSupport
import Testing

/// Adversarial tests of `Configuration.observesExternalChanges`: another
/// connection (a plain `DatabaseQueue`, which observes nothing) or another
/// process (the `sqlite3` shell) writes the file, and after each of its
/// writes every observation of the observed queue or pool must reach the
/// value of a fresh fetch: checkpoints of every kind, log restarts, bursts,
/// long write transactions, every rollback journal mode, shrinking files,
/// journal mode switches, schema changes, files replaced or deleted,
/// commits that change nothing observed, and our own commits interleaved.
///
/// Waits are bounded (`Recorder`); no sleep decides an outcome.
#if REACTIVESQLITE_INTERNAL_CHECKS
/// Fixtures whose connections are stuck: never closed (closing them would wait for ever).
private let leakedFixtures = Locked<[ExternalChangeAdversarialTests.Fixture]>([])
private let leakedQueues = Locked<[DatabaseQueue]>([])

@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct ExternalChangeAdversarialTests {
    /// How the observed file is opened.
    enum Setup: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case rollbackQueue
        case walQueue
        case pool

        var testDescription: String { rawValue }
        var isWAL: Bool { self != .rollbackQueue }
    }

    struct Item: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "item"
        var id: Int64
        var name: String
        var score: Int64

        init(row: Row) throws {
            id = try row["id"]
            name = try row["name"]
            score = try row["score"]
        }

        var description: String { "\(id):\(name)/\(score)" }
    }

    static let rowsSQL = "SELECT * FROM item ORDER BY id"
    static let topRequest = Item.all().order(sql: "score DESC, id").limit(5)

    static func schemaSQL(rowCount: Int) -> String {
        """
        CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rowCount))
        INSERT INTO item (id, name, score) SELECT i, 'item number ' || i, i % 37 FROM n;
        CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT);
        """
    }

    /// What every observation must reach: a fresh fetch.
    struct Fresh: Equatable, Sendable, CustomStringConvertible {
        var rows: [String]
        var state: [Int64: String]
        var top: [String]
        var count: Int

        var description: String { "\(count) rows, top \(top)" }
    }

    /// A database file, the observed queue or pool, and another connection.
    final class Fixture: Sendable {
        let directory: TemporaryDirectory
        let path: String
        let setup: Setup
        let observed: any DatabaseWriter
        /// Another connection to the file, which observes nothing.
        let external: DatabaseQueue

        init(
            _ setup: Setup, rowCount: Int = 800, externalJournalMode: String? = nil,
            configure: (inout Configuration) -> Void = { _ in }
        ) throws {
            self.setup = setup
            directory = try TemporaryDirectory()
            path = directory.path("db.sqlite")
            external = try DatabaseQueue(path: path)
            if setup.isWAL {
                try external.writeSQLWithoutTransaction("PRAGMA journal_mode = WAL")
            } else if let externalJournalMode {
                try external.writeSQLWithoutTransaction("PRAGMA journal_mode = \(externalJournalMode)")
            }
            try external.writeSQL(ExternalChangeAdversarialTests.schemaSQL(rowCount: rowCount))
            var configuration = Configuration()
            configuration.label = "observed"
            configuration.observesExternalChanges = true
            configuration.externalChangePollInterval = .milliseconds(5)
            configure(&configuration)
            observed = setup == .pool
                ? try DatabasePool(path: path, configuration: configuration)
                : try DatabaseQueue(path: path, configuration: configuration)
        }

        deinit {
            observed.close()
            external.close()
        }

        var detector: ExternalChangeDetector? { (observed as? any ObservationHost)?.externalChangeDetector }

        /// The values of a fresh fetch, by the other connection.
        func fresh() throws -> Fresh {
            try external.read { db in try ExternalChangeAdversarialTests.fresh(db) }
        }

        /// Runs `sql` in the `sqlite3` shell, another process.
        func shell(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            try await ExternalChangeAdversarialTests.shell(path: path, sql, sourceLocation: sourceLocation)
        }

        /// Returns once the detector has read the file after everything
        /// done so far, and the writer has checked what it read.
        func waitForQuietPoll() async throws {
            let detector = try #require(detector)
            let start = detector.pollCount
            try await waitUntil { detector.pollCount >= start + 2 }
            try await observed.writeWithoutTransaction { _ in }
        }
    }

    static func fresh(_ db: Database) throws -> Fresh {
        let items = try Item.all().fetchAll(db)
        return Fresh(
            rows: try SQLRequest<Row>(sql: rowsSQL).fetchAll(db).map(\.description),
            state: items.reduce(into: [:]) { $0[$1.id] = $1.description },
            top: try topRequest.fetchAll(db).map(\.description),
            count: items.count)
    }

    /// "DBMOVED: message" for SQLITE_READONLY_DBMOVED, else the error.
    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError, error.extendedResultCode == .SQLITE_READONLY_DBMOVED {
            return "DBMOVED: \(error)"
        }
        return "\(error)"
    }

    static func shell(path: String, _ sql: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let outcome = try await SpawnedProcess.run("sqlite3", ["-bail", "-cmd", ".timeout 5000", path, sql])
        #expect(outcome.termination == .exit(0), "sqlite3: \(outcome.error) for \(sql)", sourceLocation: sourceLocation)
    }

    /// Four observations of the observed writer: every row (`SELECT *`),
    /// the set differences of the records (refetched incrementally), the
    /// top rows (refetched incrementally), and the count.
    final class Watch: Sendable {
        let rows = Recorder<[String]>()
        let state = Recorder<[Int64: String]>()
        let top = Recorder<[String]>()
        let count = Recorder<Int>()
        let errors = Recorder<String>()
        let differences = ValueObservation.trackingSetDifferences(Item.all())
        let topObservation = ValueObservation.trackingAll(ExternalChangeAdversarialTests.topRequest)
        private let cancellables: Locked<[AnyDatabaseCancellable]> = Locked([])

        init(_ writer: any DatabaseWriter) {
            let errors = self.errors
            let onError: @Sendable (String) -> @Sendable (any Error) -> Void = { name in
                { error in errors.append("\(name): \(ExternalChangeAdversarialTests.describe(error))") }
            }
            let rows = self.rows
            let state = self.state
            let top = self.top
            let count = self.count
            let accumulated = Locked<[Int64: String]>([:])
            cancellables.value = [
                ValueObservation.trackingAll(SQLRequest<Row>(sql: ExternalChangeAdversarialTests.rowsSQL))
                    .start(in: writer, scheduling: .observationQueue, onError: onError("rows")) {
                        rows.append($0.map(\.description))
                    },
                differences.start(in: writer, scheduling: .observationQueue, onError: onError("differences")) { difference in
                    let current = accumulated.withLock { state in
                        for item in difference.deleted { state[item.id] = nil }
                        for item in difference.inserted + difference.updated { state[item.id] = item.description }
                        return state
                    }
                    state.append(current)
                },
                topObservation.start(in: writer, scheduling: .observationQueue, onError: onError("top")) {
                    top.append($0.map(\.description))
                },
                ValueObservation.trackingOne(SQLRequest<Int>(sql: "SELECT COUNT(*) FROM item"))
                    .start(in: writer, scheduling: .observationQueue, onError: onError("count")) {
                        count.append($0 ?? -1)
                    },
            ]
        }

        deinit { cancel() }

        func cancel() {
            for cancellable in cancellables.value { cancellable.cancel() }
        }

        /// Waits until every observation delivered `fresh`; false (and an
        /// issue) when one did not in time.
        @discardableResult
        func converges(
            to fresh: Fresh, _ step: String, timeout: Duration = .seconds(15),
            sourceLocation: SourceLocation = #_sourceLocation
        ) async -> Bool {
            do {
                try await rows.wait(timeout: timeout) { $0.last == fresh.rows }
                try await state.wait(timeout: timeout) { ($0.last ?? [:]) == fresh.state }
                try await top.wait(timeout: timeout) { $0.last == fresh.top }
                try await count.wait(timeout: timeout) { $0.last == fresh.count }
                return true
            } catch {
                let delivered = state.values.last ?? [:]
                let wrong = fresh.state.filter { delivered[$0.key] != $0.value }.count
                    + delivered.keys.filter { fresh.state[$0] == nil }.count
                Issue.record(
                    """
                    \(step): never reached the fresh fetch (\(fresh)): last count \(count.values.last.map(String.init) ?? "none"), \
                    top \(top.values.last ?? []), rows \(rows.values.last?.count ?? -1), \(wrong) differing records; \
                    errors \(errors.values)
                    """,
                    sourceLocation: sourceLocation)
                return false
            }
        }

        /// The incremental fetches of the differences and top rows observations so far.
        var incrementalFetchCounts: (differences: Int, top: Int) {
            (differences.incrementalFetch!.statistics.incrementalFetchCount,
             topObservation.incrementalFetch!.statistics.incrementalFetchCount)
        }

        /// Waits until every observation delivered its first value.
        func started() async throws {
            try await rows.wait(for: 1)
            try await state.wait(for: 1)
            try await top.wait(for: 1)
            try await count.wait(for: 1)
        }
    }

    // MARK: - WAL: checkpoints and log restarts

    /// Writes of another process, with checkpoints of every kind between
    /// and after them, and writes of the same size after a log restart (the
    /// log has the same length and new salts).
    @Test(arguments: [Setup.walQueue, .pool])
    func checkpointsOfEveryKindBetweenWrites(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let watch = Watch(fixture.observed)
        try await watch.started()
        let steps = [
            "UPDATE item SET score = 1000 WHERE id = 1",
            "PRAGMA wal_checkpoint(PASSIVE)",
            "UPDATE item SET score = 1001 WHERE id = 2",
            "PRAGMA wal_checkpoint(FULL)",
            "UPDATE item SET score = 1002 WHERE id = 3",
            "PRAGMA wal_checkpoint(RESTART)",
            // The same size as the write before the restart: the log
            // restarts with new salts and as many frames.
            "UPDATE item SET score = 1003 WHERE id = 4",
            "PRAGMA wal_checkpoint(TRUNCATE)",
            "UPDATE item SET score = 1004 WHERE id = 5",
            "UPDATE item SET score = 1005 WHERE id = 6; PRAGMA wal_checkpoint(RESTART); UPDATE item SET score = 1006 WHERE id = 7",
            "UPDATE item SET score = 1007 WHERE id = 8; PRAGMA wal_checkpoint(TRUNCATE); UPDATE item SET score = 1008 WHERE id = 9",
            "UPDATE item SET score = 1009 WHERE id = 10; PRAGMA wal_checkpoint(PASSIVE); UPDATE item SET score = 1010 WHERE id = 11",
            "DELETE FROM item WHERE id BETWEEN 100 AND 120; PRAGMA wal_checkpoint(FULL)",
            "INSERT INTO item (name, score) VALUES ('appended', 2000); PRAGMA wal_checkpoint(TRUNCATE)",
            "PRAGMA wal_checkpoint(TRUNCATE)",
            "UPDATE item SET score = 1011 WHERE id = 12",
        ]
        for (index, sql) in steps.enumerated() {
            if index % 2 == 0 {
                try await fixture.shell(sql)
            } else {
                try fixture.external.writeSQLWithoutTransaction(sql)
            }
            guard await watch.converges(to: try fixture.fresh(), "step \(index): \(sql)") else { return }
        }
        #expect(watch.errors.values.isEmpty)
        // The pages of the log told the rows of most steps, across
        // checkpoints and restarts (15 to 21 of 16 steps and their commits).
        let counts = watch.incrementalFetchCounts
        #expect(counts.differences >= 8 && counts.top >= 8, "\(counts)")
    }

    /// Another process checkpoints after every commit
    /// (`wal_autocheckpoint = 1`): each commit restarts the log.
    @Test(arguments: [Setup.walQueue, .pool])
    func autocheckpointAfterEveryCommit(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let watch = Watch(fixture.observed)
        try await watch.started()
        for step in 0..<6 {
            let sql = "PRAGMA wal_autocheckpoint = 1; "
                + "UPDATE item SET score = \(3000 + step) WHERE id = \(step * 7 + 1); "
                + "UPDATE item SET name = 'renamed \(step)' WHERE id = \(step * 11 + 2); "
                + (step % 2 == 0 ? "INSERT INTO note (text) VALUES ('n');" : "DELETE FROM item WHERE id = \(200 + step);")
            try await fixture.shell(sql)
            guard await watch.converges(to: try fixture.fresh(), "step \(step)") else { return }
        }
        // The other connection too, one commit at a time.
        try fixture.external.writeSQLWithoutTransaction("PRAGMA wal_autocheckpoint = 1")
        for step in 0..<6 {
            try fixture.external.writeSQL("UPDATE item SET score = \(4000 + step) WHERE id = \(step * 13 + 3)")
            guard await watch.converges(to: try fixture.fresh(), "external step \(step)") else { return }
        }
        #expect(watch.errors.values.isEmpty)
        // Each commit restarted the log, and the pages still told the
        // rows of most (12 to 14 of 12 commits).
        let counts = watch.incrementalFetchCounts
        #expect(counts.differences >= 6 && counts.top >= 6, "\(counts)")
    }

    /// A burst of 1 000 commits of another process, as fast as it can:
    /// values may coalesce, but never go back, and end at the last state.
    @Test(arguments: Setup.allCases)
    func burstOfAThousandCommits(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 300)
        let watch = Watch(fixture.observed)
        try await watch.started()
        let commitCount = isRunningUnderThreadSanitizer ? 200 : 1000
        var sql = "PRAGMA synchronous = OFF;\n"
        for index in 0..<commitCount {
            sql += index % 4 == 3
                ? "UPDATE item SET score = \(5000 + index) WHERE id = \(index % 300 + 1);\n"
                : "INSERT INTO item (name, score) VALUES ('burst \(index)', \(index % 50));\n"
        }
        try await fixture.shell(sql)
        guard await watch.converges(to: try fixture.fresh(), "after the burst") else { return }
        let counts = watch.count.values
        #expect(counts == counts.sorted(), "counts went back: \(counts)")
        #expect(watch.errors.values.isEmpty)
    }

    // MARK: - A write transaction held open

    /// Another process holds a write transaction open, then commits. An
    /// observation that starts meanwhile never sees the uncommitted
    /// value; the other process's commit does not fail (it has no busy
    /// timeout), and every observation reaches the committed state.
    @Test(arguments: Setup.allCases)
    func aWriteTransactionHeldOpenThenCommitted(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 300)
        let watch = Watch(fixture.observed)
        try await watch.started()
        let shell = try SpawnedProcess(
            "sqlite3", ["-bail", fixture.path], standardInput: .pipe, standardOutput: .pipe, standardError: .pipe)
        let output = Recorder<String>()
        let errorOutput = Recorder<String>()
        SpawnedProcess.readToEnd(shell.outputReader!, onChunk: { output.append(String(decoding: $0, as: UTF8.self)) })
        SpawnedProcess.readToEnd(shell.errorReader!, onChunk: { errorOutput.append(String(decoding: $0, as: UTF8.self)) })
        defer { shell.signal(SIGKILL) }
        let input = shell.inputWriter!
        #expect(SpawnedProcess.writeAll(Array("""
            BEGIN IMMEDIATE;
            UPDATE item SET score = 9999 WHERE id = 1;
            DELETE FROM item WHERE id > 250;
            SELECT 'ready';

            """.utf8), to: input))
        try await output.wait { $0.joined().contains("ready") }

        // Started while the transaction is open.
        let late = Recorder<Int>()
        let lateErrors = Recorder<String>()
        let lateStart = BackgroundThread {
            ValueObservation.trackingOne(SQLRequest<Int>(sql: "SELECT COUNT(*) FROM item"))
                .start(in: fixture.observed, scheduling: .observationQueue, onError: { lateErrors.append("\($0)") }) {
                    late.append($0 ?? -1)
                }
        }
        // Not a decision: the transaction stays open a while.
        try await Task.sleep(for: .milliseconds(200))
        #expect(SpawnedProcess.writeAll(Array("COMMIT;\nSELECT 'committed';\n.quit\n".utf8), to: input))
        close(input)
        let lateCancellable = try await lateStart.value()
        defer { lateCancellable.cancel() }
        try await output.wait { $0.joined().contains("committed") }
        #expect(await shell.waitForExit(timeout: .seconds(20)) == .exit(0), "sqlite3: \(errorOutput.values.joined())")

        guard await watch.converges(to: try fixture.fresh(), "after the commit") else { return }
        try await late.wait { $0.last == 250 }
        // Never a count of the uncommitted transaction before its commit:
        // the values are 300 (before) then 250.
        #expect(Set(late.values).isSubset(of: [300, 250]), "\(late.values)")
        if setup == .rollbackQueue {
            // Its first fetch waited for the writer.
            #expect(late.values.first == 250, "\(late.values)")
        }
        #expect(lateErrors.values.isEmpty)
        #expect(watch.errors.values.isEmpty)
    }

    /// A commit of another process, followed at once by a write
    /// transaction of the same process that lasts longer than the busy
    /// timeout: the fetches of the first commit meet the second
    /// transaction. They must not end the observations with SQLITE_BUSY
    /// (ExternalChanges.md: a read that meets a writer "runs again after
    /// the commit"), and every observation reaches the final state.
    @Test(arguments: Setup.allCases)
    func aCommitFollowedByAWriteTransactionLongerThanTheBusyTimeout(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 300) { $0.busyTimeout = .milliseconds(50) }
        let watch = Watch(fixture.observed)
        try await watch.started()
        let shell = try SpawnedProcess(
            "sqlite3", ["-bail", fixture.path], standardInput: .pipe, standardOutput: .pipe, standardError: .pipe)
        let output = Recorder<String>()
        let errorOutput = Recorder<String>()
        SpawnedProcess.readToEnd(shell.outputReader!, onChunk: { output.append(String(decoding: $0, as: UTF8.self)) })
        SpawnedProcess.readToEnd(shell.errorReader!, onChunk: { errorOutput.append(String(decoding: $0, as: UTF8.self)) })
        defer { shell.signal(SIGKILL) }
        let input = shell.inputWriter!
        #expect(SpawnedProcess.writeAll(Array("""
            .timeout 5000
            UPDATE item SET score = 4321 WHERE id = 1;
            BEGIN IMMEDIATE;
            UPDATE item SET score = 4322 WHERE id = 2;
            SELECT 'ready';

            """.utf8), to: input))
        try await output.wait { $0.joined().contains("ready") }
        // Not a decision: the transaction outlasts the busy timeout.
        try await Task.sleep(for: .milliseconds(400))
        #expect(SpawnedProcess.writeAll(Array("COMMIT;\nSELECT 'committed';\n.quit\n".utf8), to: input))
        close(input)
        try await output.wait { $0.joined().contains("committed") }
        #expect(await shell.waitForExit(timeout: .seconds(20)) == .exit(0), "sqlite3: \(errorOutput.values.joined())")
        guard await watch.converges(to: try fixture.fresh(), "after the long transaction") else { return }
        #expect(watch.errors.values.isEmpty)
    }

    // MARK: - Rollback journal modes

    /// The other process and connection write in each rollback journal
    /// mode: updates, a file that shrinks (most rows deleted, then
    /// `VACUUM`), `VACUUM INTO`, and `incremental_vacuum`.
    @Test(arguments: ["DELETE", "TRUNCATE", "PERSIST", "MEMORY"])
    func everyRollbackJournalMode(journalMode: String) async throws {
        // Our connections map the file in memory: the other process shrinks it.
        let fixture = try Fixture(.rollbackQueue, rowCount: 300, externalJournalMode: journalMode) { configuration in
            configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA mmap_size = 268435456") }
        }
        let watch = Watch(fixture.observed)
        try await watch.started()
        let copy = fixture.directory.path("copy.sqlite")
        let steps: [(shell: Bool, sql: String)] = [
            (true, "UPDATE item SET score = 7000 WHERE id = 3"),
            (false, "UPDATE item SET name = 'other' WHERE id BETWEEN 10 AND 20"),
            (true, "DELETE FROM item WHERE id > 20"),
            (false, "VACUUM"),
            (true, "VACUUM INTO '\(copy)'"),
            (true, "INSERT INTO item (name, score) VALUES ('after vacuum', 36)"),
            (false, "PRAGMA auto_vacuum = INCREMENTAL"),
            (false, "VACUUM"),
            (true, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) "
                + "INSERT INTO item (name, score) SELECT printf('%.200c', 'x'), i % 41 FROM n"),
            (false, "DELETE FROM item WHERE id % 3 <> 0"),
            (true, "PRAGMA incremental_vacuum(20)"),
            (false, "PRAGMA incremental_vacuum"),
            (true, "UPDATE item SET score = -1 WHERE id = (SELECT max(id) FROM item)"),
            // Other page sizes.
            (false, "PRAGMA page_size = 1024"),
            (false, "VACUUM"),
            (true, "PRAGMA page_size = 8192; VACUUM; UPDATE item SET score = -2 WHERE id = (SELECT min(id) FROM item)"),
            (false, "DELETE FROM item WHERE id % 2 = 0"),
            (true, "VACUUM"),
        ]
        for (index, step) in steps.enumerated() {
            if step.shell {
                try await fixture.shell("PRAGMA journal_mode = \(journalMode); " + step.sql)
            } else {
                try fixture.external.writeSQLWithoutTransaction(step.sql)
            }
            guard await watch.converges(to: try fixture.fresh(), "step \(index): \(step.sql)") else { return }
        }
        #expect(watch.errors.values.isEmpty)
    }

    /// The same in WAL mode: the pages of the log tell the rows, through
    /// `VACUUM` (which renumbers no `INTEGER PRIMARY KEY`, and rewrites
    /// every page), a file that shrinks, and pages moved by
    /// `incremental_vacuum`.
    @Test(arguments: [Setup.walQueue, .pool])
    func vacuumsInWALMode(setup: Setup) async throws {
        let fixture = try Fixture(setup) { configuration in
            configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA mmap_size = 268435456") }
        }
        let watch = Watch(fixture.observed)
        try await watch.started()
        let steps: [(shell: Bool, sql: String)] = [
            (true, "DELETE FROM item WHERE id > 30"),
            (false, "VACUUM"),
            (true, "UPDATE item SET score = 8000 WHERE id = 4"),
            (false, "PRAGMA auto_vacuum = INCREMENTAL"),
            (false, "VACUUM"),
            (true, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) "
                + "INSERT INTO item (name, score) SELECT printf('%.200c', 'y'), i % 43 FROM n"),
            (false, "DELETE FROM item WHERE id % 4 <> 1"),
            (true, "PRAGMA incremental_vacuum(15)"),
            (false, "UPDATE item SET score = 8001 WHERE id = (SELECT max(id) FROM item)"),
            (true, "PRAGMA incremental_vacuum"),
            (true, "UPDATE item SET score = 8002 WHERE id = (SELECT min(id) FROM item)"),
            // Rows with overflow pages, then changes of their overflow
            // part only (SQLite rewrites the overflow page in place, and
            // not the leaf).
            (false, "UPDATE item SET name = printf('%.5000c', 'o') WHERE id IN (1, 5, 9)"),
            (true, "UPDATE item SET name = substr(name, 1, 4500) || 'Z' || substr(name, 4502) WHERE id = 5"),
            (false, "UPDATE item SET name = substr(name, 1, 4600) || 'Y' || substr(name, 4602) WHERE id = 9"),
            (true, "PRAGMA incremental_vacuum; UPDATE item SET name = substr(name, 1, 4999) || 'X' WHERE id = 1"),
        ]
        for (index, step) in steps.enumerated() {
            if step.shell {
                try await fixture.shell(step.sql)
            } else {
                try fixture.external.writeSQLWithoutTransaction(step.sql)
            }
            guard await watch.converges(to: try fixture.fresh(), "step \(index): \(step.sql)") else { return }
        }
        #expect(watch.errors.values.isEmpty)
    }

    // MARK: - Schema changes

    /// Schema changes of another process that keep the observed requests
    /// valid: every observation refetches and reaches the fresh fetch,
    /// with the new columns and their new order.
    @Test(arguments: Setup.allCases)
    func schemaChangesThatKeepTheRequestsValid(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 300)
        let watch = Watch(fixture.observed)
        try await watch.started()
        let steps: [(shell: Bool, sql: String)] = [
            (true, "CREATE INDEX item_score ON item(score)"),
            (false, "UPDATE item SET score = 9000 WHERE id = 8"),
            (true, "ALTER TABLE item ADD COLUMN flag INTEGER NOT NULL DEFAULT 0"),
            (false, "UPDATE item SET flag = 1 WHERE id = 9"),
            // The same name, other columns in another order, other rows.
            (true, """
                BEGIN;
                DROP TABLE item;
                CREATE TABLE item (score INTEGER NOT NULL, extra TEXT, name TEXT NOT NULL, id INTEGER PRIMARY KEY);
                INSERT INTO item (id, name, score, extra) VALUES (1, 'item number 1', 1, 'x'), (2, 'new two', 2, NULL), (500, 'five hundred', 99, 'y');
                COMMIT;
                """),
            (false, "INSERT INTO item (id, name, score) VALUES (3, 'three', 3)"),
            // The same columns, renamed into each other: the rows' bytes
            // do not change.
            (true, "BEGIN; ALTER TABLE item RENAME COLUMN extra TO tmp; ALTER TABLE item RENAME COLUMN name TO extra; "
                + "ALTER TABLE item RENAME COLUMN tmp TO name; UPDATE item SET name = coalesce(name, 'none'); COMMIT"),
            (false, "UPDATE item SET score = 4 WHERE id = 3"),
            // Another primary key.
            (true, """
                BEGIN;
                CREATE TABLE item2 (code TEXT PRIMARY KEY, id INTEGER, name TEXT NOT NULL, score INTEGER NOT NULL);
                INSERT INTO item2 SELECT 'c' || id, id, name, score FROM item;
                DROP TABLE item;
                ALTER TABLE item2 RENAME TO item;
                COMMIT;
                """),
            (false, "UPDATE item SET score = 5 WHERE id = 3"),
        ]
        for (index, step) in steps.enumerated() {
            if step.shell {
                try await fixture.shell(step.sql)
            } else {
                try fixture.external.writeSQLWithoutTransaction(step.sql)
            }
            guard await watch.converges(to: try fixture.fresh(), "step \(index): \(step.sql)") else { return }
        }
        #expect(watch.errors.values.isEmpty)
    }

    /// After another process added or renamed a column of an observed
    /// `SELECT *`, our own commits that change only that column are
    /// observed (the observation's region follows the new schema).
    @Test(arguments: Setup.allCases)
    func ownWritesToAColumnAnotherProcessAdded(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 300)
        let watch = Watch(fixture.observed)
        try await watch.started()
        try await fixture.shell("ALTER TABLE item ADD COLUMN flag INTEGER NOT NULL DEFAULT 0")
        guard await watch.converges(to: try fixture.fresh(), "column added") else { return }
        try await fixture.observed.write { db in try db.execute(sql: "UPDATE item SET flag = 1 WHERE id = 1") }
        guard await watch.converges(to: try fixture.fresh(), "own write of the added column") else { return }

        try await fixture.shell("ALTER TABLE item RENAME COLUMN flag TO mark")
        guard await watch.converges(to: try fixture.fresh(), "column renamed") else { return }
        try await fixture.observed.write { db in try db.execute(sql: "UPDATE item SET mark = 2 WHERE id = 2") }
        guard await watch.converges(to: try fixture.fresh(), "own write of the renamed column") else { return }

        // A table created again with other columns, then written by us.
        try await fixture.shell("""
            BEGIN;
            DROP TABLE item;
            CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL, other TEXT);
            INSERT INTO item (id, name, score) VALUES (1, 'one', 1), (2, 'two', 2);
            COMMIT;
            """)
        guard await watch.converges(to: try fixture.fresh(), "table created again") else { return }
        try await fixture.observed.write { db in try db.execute(sql: "UPDATE item SET other = 'o' WHERE id = 2") }
        guard await watch.converges(to: try fixture.fresh(), "own write of the new table's column") else { return }
        #expect(watch.errors.values.isEmpty)
    }

    /// Another process redefines a view that we observe, to read another
    /// table: our own commits to that table are then observed, by value
    /// and region observations (ENGINE.md: DROP VIEW / CREATE VIEW change
    /// what a statement reading the view reads, with no row event).
    @Test(arguments: Setup.allCases)
    func ownWritesAfterAnotherProcessRedefinedAnObservedView(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 20)
        try fixture.external.writeSQL("CREATE VIEW v AS SELECT id, score AS value FROM item WHERE id <= 3")
        let request = SQLRequest<Row>(sql: "SELECT * FROM v ORDER BY id")
        let values = Recorder<[String]>()
        let errors = Recorder<String>()
        let valueCancellable = ValueObservation.trackingAll(request)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { errors.append("\($0)") }) {
                values.append($0.map(\.description))
            }
        defer { valueCancellable.cancel() }
        let (counter, regionCancellable) = countChanges(in: fixture.observed, of: [request])
        defer { regionCancellable.cancel() }
        let external = fixture.external
        let fresh: @Sendable () throws -> [String] = {
            try external.read { db in try request.fetchAll(db).map(\.description) }
        }
        try await values.wait { $0.last == (try? fresh()) }

        try await fixture.shell("BEGIN; DROP VIEW v; CREATE VIEW v AS SELECT id, text AS value FROM note; COMMIT")
        try await values.wait { $0.last == [] }
        try await fixture.waitForQuietPoll()
        let regionCalls = counter.value
        try await fixture.observed.write { db in try db.execute(sql: "INSERT INTO note (id, text) VALUES (1, 'own')") }
        let expected = try fresh()
        #expect(expected.count == 1)
        do {
            try await values.wait(timeout: .seconds(10)) { $0.last == expected }
        } catch {
            Issue.record("the view's new table was not observed: \(values.values.last ?? []) for \(expected)")
        }
        #expect(counter.value == regionCalls + 1, "region observation: \(counter.value - regionCalls) calls")
        #expect(errors.values.isEmpty)
    }

    /// Schema changes that make the requests invalid (the table renamed
    /// away, a decoded column renamed): each observation either reaches
    /// the fresh fetch or fails with SQLite's error; none traps or keeps
    /// the old rows silently.
    @Test(arguments: Setup.allCases)
    func schemaChangesThatBreakTheRequests(setup: Setup) async throws {
        for (index, sql) in ["ALTER TABLE item RENAME COLUMN score TO points", "ALTER TABLE item RENAME TO thing"].enumerated() {
            let fixture = try Fixture(setup, rowCount: 300)
            let watch = Watch(fixture.observed)
            try await watch.started()
            try await fixture.shell(sql)
            // Every row (`SELECT *`) and the count stay valid after the column's renaming.
            if index == 0 {
                let external = fixture.external
                let rows = try synchronously {
                    try external.read { db in try SQLRequest<Row>(sql: Self.rowsSQL).fetchAll(db).map(\.description) }
                }
                try await watch.rows.wait(timeout: .seconds(15)) { $0.last == rows }
                try await watch.count.wait(timeout: .seconds(15)) { $0.last == 300 }
            }
            // The others fail, with a message that names the problem.
            let expectedNames = index == 0 ? ["differences", "top"] : ["rows", "differences", "top", "count"]
            let errors = try await watch.errors.wait(timeout: .seconds(15)) { errors in
                expectedNames.allSatisfy { name in errors.contains { $0.hasPrefix(name + ":") } }
            }
            for error in errors {
                #expect(
                    error.contains("no such table") || error.contains("no column named score")
                        || error.contains("score") || error.contains("points"),
                    "\(sql): \(error)")
            }
            #expect(errors.count == expectedNames.count, "\(sql): \(errors)")
        }
    }

    // MARK: - Journal mode switches

    /// The other process switches the file to WAL and back while we
    /// observe. SQLite refuses to leave WAL mode while another connection
    /// has the file open in WAL mode (`database is locked`): whatever the
    /// outcome, the observations follow every commit.
    @Test(arguments: Setup.allCases)
    func anotherProcessSwitchesTheJournalMode(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 300)
        let watch = Watch(fixture.observed)
        try await watch.started()
        // (A round trip in one run: `aRoundTripThroughWALModeByAnotherProcessLeavesNoConnectionStuck`.)
        let modes = ["WAL", "DELETE", "WAL"]
        for (index, mode) in modes.enumerated() {
            // Without a busy timeout: a refusal must not wait.
            let outcome = try await SpawnedProcess.run(
                "sqlite3", [fixture.path, "PRAGMA journal_mode = \(mode); SELECT 'switched';"])
            let switched = outcome.termination == .exit(0) && outcome.output.contains("switched")
            if !switched {
                #expect(outcome.error.contains("database is locked"), "\(mode): \(outcome.error)")
            }
            try await fixture.shell("UPDATE item SET score = \(10_000 + index) WHERE id = \(index + 1); "
                + "INSERT INTO item (name, score) VALUES ('after \(mode)', \(index))")
            guard await watch.converges(to: try fixture.fresh(), "after switching to \(mode) (\(switched))") else { return }
            try await fixture.observed.write { db in
                try db.execute(sql: "UPDATE item SET name = 'own \(index)' WHERE id = \(index + 20)")
            }
            guard await watch.converges(to: try fixture.fresh(), "own write after \(mode)") else { return }
        }
        #expect(watch.errors.values.isEmpty)
    }

    /// Another process takes a file in rollback mode through WAL mode and
    /// back, in one run: `PRAGMA journal_mode = WAL`, a commit, `PRAGMA
    /// journal_mode = DELETE`. Whatever the outcome (SQLite refuses to
    /// leave WAL mode while another connection has the log open), every
    /// observation reaches the committed state, and the queue closes.
    ///
    /// It failed in most runs of the whole suite, and in 3 of 5 runs of
    /// this test alone: a connection of a queue opened the log under an
    /// optimistic shared lock (`WriterYieldingVFS`: reported taken, not
    /// taken), so the other process was not refused, and deleted the log
    /// and its index. The connection then stayed in WAL mode on deleted
    /// files: its reads spun in `sqlite3WalBeginReadTransaction` or failed
    /// with `SQLITE_IOERR_SHORT_READ`, the detector's connection never read
    /// again (no later commit was observed), and `close()` waited for it
    /// for minutes. Now the lock is made real before SQLite opens a log
    /// (`SharedLockCycle.logWillOpen`): 20 runs of 20 round trips passed.
    /// The fixture of a failing run is left open rather than closed, so
    /// that the failure is not a hang.
    @Test func aRoundTripThroughWALModeByAnotherProcessLeavesNoConnectionStuck() async throws {
        // Once a return to rollback mode is refused, the file stays in WAL
        // mode: each round trip starts from a new file.
        for round in 0..<20 {
            let fixture = try Fixture(.rollbackQueue, rowCount: 20)
            // More queues on the file, each with its detector: more chances
            // for the race at each round trip.
            var configuration = Configuration()
            configuration.observesExternalChanges = true
            configuration.externalChangePollInterval = .milliseconds(5)
            let first = try #require(fixture.observed as? DatabaseQueue)
            let queues = try [first] + (0..<2).map { _ in try DatabaseQueue(path: fixture.path, configuration: configuration) }
            let sums = queues.map { _ in Recorder<Int>() }
            let cancellables = zip(queues, sums).map { queue, sum in
                ValueObservation.trackingOne(SQLRequest<Int>(sql: "SELECT sum(score) FROM item"))
                    .start(in: queue, scheduling: .observationQueue, onError: { Issue.record($0) }) { sum.append($0 ?? -1) }
            }
            for sum in sums { try await sum.wait(for: 1) }
            // Busy cores while the other process runs, as beside other
            // tests: the readings of the detectors come later, into the
            // other process's run.
            let isRunning = Locked(true)
            let spinners = (0..<2).map { _ in
                BackgroundThread {
                    var spins = 0
                    while isRunning.value { spins &+= 1 }
                    return spins
                }
            }
            let outcome = try await SpawnedProcess.run(
                "sqlite3", ["-bail", fixture.path,
                    "PRAGMA journal_mode = WAL; UPDATE item SET score = 9000 WHERE id = 1; PRAGMA journal_mode = DELETE;"])
            isRunning.value = false
            for spinner in spinners { _ = try await spinner.value() }
            let left = outcome.termination == .exit(0)
            let expected = try await fixture.external.read { db in try db.int("SELECT sum(score) FROM item") ?? -1 }
            var isStuck = false
            for (index, recorder) in sums.enumerated() {
                do {
                    try await recorder.wait(timeout: .seconds(3)) { $0.last == expected }
                } catch {
                    Issue.record("round \(round) (left WAL mode: \(left)): queue \(index) stuck at \(recorder.values.last ?? -1) for \(expected)")
                    isStuck = true
                }
            }
            for cancellable in cancellables { cancellable.cancel() }
            guard !isStuck else {
                // Closing would wait for the stuck connections.
                leakedFixtures.withLock { $0.append(fixture) }
                leakedQueues.withLock { $0 += queues }
                // The queue's own connection still reads.
                let observed = fixture.observed
                let read = BackgroundThread { try observed.read { db in try db.count("item") } }
                do {
                    _ = try await read.value(timeout: .seconds(5))
                } catch {
                    Issue.record("a read of the queue after the round trip: \(error)")
                }
                return
            }
            for queue in queues.dropFirst() { queue.close() }
        }
    }

    #if os(Linux)
    /// With a poll interval of an hour, file events alone wake the
    /// detector: a file that another process switches from rollback
    /// journal to WAL mode is still followed, each commit of it.
    @Test func fileEventsFollowASwitchToWALMode() async throws {
        let fixture = try Fixture(.rollbackQueue, rowCount: 300) { $0.externalChangePollInterval = .seconds(3600) }
        let watch = Watch(fixture.observed)
        try await watch.started()
        try await fixture.shell("UPDATE item SET score = 1 WHERE id = 1")
        guard await watch.converges(to: try fixture.fresh(), "rollback commit") else { return }
        try await fixture.shell("PRAGMA journal_mode = WAL; UPDATE item SET score = 2 WHERE id = 2")
        guard await watch.converges(to: try fixture.fresh(), "switch to WAL") else { return }
        for step in 0..<5 {
            if step % 2 == 0 {
                try await fixture.shell("UPDATE item SET score = \(100 + step) WHERE id = \(step + 3)")
            } else {
                try fixture.external.writeSQL("UPDATE item SET score = \(100 + step) WHERE id = \(step + 3)")
            }
            guard await watch.converges(to: try fixture.fresh(), "WAL commit \(step)") else { return }
        }
        #expect(watch.errors.values.isEmpty)
    }

    /// With a poll interval of an hour, file events alone wake the
    /// detector: after a long burst of commits of another process, the
    /// last state is still seen.
    @Test(arguments: [Setup.rollbackQueue, .pool])
    func fileEventsAfterALongBurst(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 50) { $0.externalChangePollInterval = .seconds(3600) }
        let count = Recorder<Int>()
        let cancellable = ValueObservation.trackingOne(SQLRequest<Int>(sql: "SELECT COUNT(*) FROM note"))
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) }) { count.append($0 ?? -1) }
        defer { cancellable.cancel() }
        try await count.wait(for: 1)
        let commitCount = 3000
        let sql = "PRAGMA synchronous = OFF;\n" + String(repeating: "INSERT INTO note (text) VALUES ('x');\n", count: commitCount)
        let outcome = try await SpawnedProcess.run("sqlite3", ["-bail", "-cmd", ".timeout 5000", fixture.path], input: sql)
        #expect(outcome.termination == .exit(0), "sqlite3: \(outcome.error)")
        do {
            try await count.wait(timeout: .seconds(10)) { $0.last == commitCount }
        } catch {
            Issue.record("the last commit was not seen: \(count.values.suffix(3)) for \(commitCount)")
        }
    }
    #endif

    // MARK: - Commits that change nothing observed

    /// A write of another process that leaves its row as it was (SQLite
    /// commits nothing, and `data_version` does not change), then writes
    /// to a table nobody observes only, then a write of an observed row:
    /// no detection for the first, and the last one is never missed. The
    /// differences observation delivers nothing for the first two.
    @Test(arguments: Setup.allCases)
    func writesThatChangeNothingObserved(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 300)
        let watch = Watch(fixture.observed)
        try await watch.started()
        let detector = try #require(fixture.detector)
        try await fixture.waitForQuietPoll()
        let detections = detector.detectionCount
        try await fixture.shell("UPDATE item SET score = score, name = name WHERE id = 1")
        try fixture.external.writeSQL("UPDATE item SET score = 1 WHERE id = 1")
        try await fixture.waitForQuietPoll()
        #expect(detector.detectionCount == detections, "a commit that wrote nothing was detected")

        let differencesCount = watch.state.values.count
        for step in 0..<4 {
            try await fixture.shell("INSERT INTO note (text) VALUES ('note \(step)')")
            try fixture.external.writeSQL("UPDATE note SET text = 'changed' WHERE id = \(step + 1)")
        }
        try fixture.external.writeSQL("UPDATE item SET score = 77 WHERE id = 5")
        guard await watch.converges(to: try fixture.fresh(), "observed row after unobserved writes") else { return }
        try await fixture.shell("INSERT INTO note (text) VALUES ('together'); UPDATE item SET score = 78 WHERE id = 6")
        guard await watch.converges(to: try fixture.fresh(), "observed row with an unobserved one") else { return }
        // Only the two differences of the observed rows.
        #expect(watch.state.values.count == differencesCount + 2, "\(watch.state.values.count - differencesCount) differences")
        #expect(watch.errors.values.isEmpty)
    }

    // MARK: - Our own commits interleaved

    /// Another connection updates a row, then our writer updates another
    /// at once, before the detector may have seen the first commit. The
    /// first value that shows our row shows the other one too: a value
    /// mixing the fetched state of our commit with the state before the
    /// other commit never existed. Then both write at the same time.
    @Test(arguments: Setup.allCases)
    func ownCommitsRightAfterExternalOnes(setup: Setup) async throws {
        let fixture = try Fixture(setup) { $0.externalChangePollInterval = .seconds(3600) }
        let watch = Watch(fixture.observed)
        try await watch.started()
        var random = SplitMix64(seed: 42)
        for step in 0..<8 {
            let externalID = Int64.random(in: 1...400, using: &random)
            let ownID = Int64.random(in: 401...800, using: &random)
            let externalScore = 20_000 + step * 2
            let ownScore = externalScore + 1
            let stateCount = watch.state.values.count
            let topCount = watch.top.values.count
            if step % 3 == 0 {
                try await fixture.shell("UPDATE item SET score = \(externalScore) WHERE id = \(externalID)")
            } else {
                try fixture.external.writeSQL("UPDATE item SET score = ? WHERE id = ?", arguments: [externalScore, externalID])
            }
            try await fixture.observed.write { db in
                try db.execute(sql: "UPDATE item SET score = ? WHERE id = ?", arguments: [ownScore, ownID])
            }
            guard await watch.converges(to: try fixture.fresh(), "step \(step)") else { return }
            let own = "\(ownID):item number \(ownID)/\(ownScore)"
            let external = "\(externalID):item number \(externalID)/\(externalScore)"
            let states = watch.state.values.dropFirst(stateCount)
            let firstOwnState = try #require(states.first { $0[ownID] == own })
            #expect(firstOwnState[externalID] == external, "step \(step): our commit's value without the earlier external one")
            let tops = watch.top.values.dropFirst(topCount)
            let firstOwnTop = try #require(tops.first { $0.contains(own) })
            #expect(firstOwnTop.contains(external), "step \(step): top \(firstOwnTop)")
        }

        // Both at once, and the shell.
        let observed = fixture.observed
        let external = fixture.external
        let commitCount = isRunningUnderThreadSanitizer ? 8 : 15
        let writers = [
            BackgroundThread {
                for index in 0..<commitCount {
                    try observed.write { db in
                        try db.execute(sql: "UPDATE item SET score = ? WHERE id = ?", arguments: [30_000 + index, index + 1])
                        try db.execute(sql: "INSERT INTO item (name, score) VALUES (?, ?)", arguments: ["own \(index)", index])
                    }
                }
            },
            BackgroundThread {
                for index in 0..<commitCount {
                    try external.write { db in
                        try db.execute(sql: "UPDATE item SET score = ? WHERE id = ?", arguments: [40_000 + index, index + 100])
                        try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [index + 200])
                    }
                }
            },
        ]
        try await fixture.shell((0..<20).map { "UPDATE item SET name = 'shell \($0)' WHERE id = \($0 + 50);" }.joined())
        for writer in writers { try await writer.value() }
        guard await watch.converges(to: try fixture.fresh(), "concurrent writers") else { return }
        #expect(watch.errors.values.isEmpty)
    }

    // MARK: - A writer that dies

    /// Another process dies in the middle of a large write transaction,
    /// after its cache spilled pages to the file (a hot journal in
    /// rollback mode, uncommitted frames in WAL mode). Nothing was
    /// committed: the observations keep their values, do not fail, and
    /// follow the next commits, of other processes and ours.
    @Test(arguments: Setup.allCases)
    func aWriterThatDiesInTheMiddleOfATransaction(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 300)
        let watch = Watch(fixture.observed)
        try await watch.started()
        let before = try fixture.fresh()
        let shell = try SpawnedProcess(
            "sqlite3", ["-bail", fixture.path], standardInput: .pipe, standardOutput: .pipe, standardError: .null)
        let output = Recorder<String>()
        SpawnedProcess.readToEnd(shell.outputReader!, onChunk: { output.append(String(decoding: $0, as: UTF8.self)) })
        #expect(SpawnedProcess.writeAll(Array("""
            PRAGMA cache_size = 2;
            BEGIN IMMEDIATE;
            UPDATE item SET name = printf('%.500c', 'z'), score = -5;
            SELECT 'ready';

            """.utf8), to: shell.inputWriter!))
        try await output.wait { $0.joined().contains("ready") }
        shell.signal(SIGKILL)
        #expect(await shell.waitForExit(timeout: .seconds(20)) == .signal(SIGKILL))
        close(shell.inputWriter!)
        if setup == .rollbackQueue {
            #expect(FileManager.default.fileExists(atPath: fixture.path + "-journal"), "no hot journal was left")
        }
        try await fixture.waitForQuietPoll()
        #expect(try fixture.fresh() == before)
        #expect(await watch.converges(to: before, "after the crash"))

        try await fixture.shell("UPDATE item SET score = 1234 WHERE id = 10")
        guard await watch.converges(to: try fixture.fresh(), "commit after the crash") else { return }
        try await fixture.observed.write { db in try db.execute(sql: "UPDATE item SET score = 1235 WHERE id = 11") }
        guard await watch.converges(to: try fixture.fresh(), "own commit after the crash") else { return }
        #expect(watch.errors.values.isEmpty)
    }

    // MARK: - Files replaced or deleted

    enum FileFate: String, CaseIterable, Sendable {
        /// Deleted, then created again at its path by another process.
        case deletedThenCreatedAgain
        /// A copy made by `VACUUM INTO`, changed, then renamed over it.
        case replacedByAVacuumedCopy
    }

    /// The file is deleted or replaced while observed: every kind of
    /// observation ends with SQLITE_READONLY_DBMOVED (the documented
    /// behaviour of the detector), none keeps the old rows for ever, and
    /// nothing hangs: our own writes, a later observation, closing.
    @Test(arguments: [Setup.rollbackQueue, .pool], FileFate.allCases)
    func aFileReplacedOrDeletedWhileObserved(setup: Setup, fate: FileFate) async throws {
        let fixture = try Fixture(setup, rowCount: 300)
        let watch = Watch(fixture.observed)
        let recordErrors = Recorder<String>()
        let recordCancellable = RecordObservation<Item>(key: 2).start(
            in: fixture.observed, scheduling: .observationQueue, onError: { recordErrors.append(Self.describe($0)) },
            onDeletion: {}, onChange: { _ in })
        defer { recordCancellable.cancel() }
        try await watch.started()
        try await fixture.waitForQuietPoll()

        switch fate {
        case .deletedThenCreatedAgain:
            #expect(unlink(fixture.path) == 0)
            try await fixture.shell(Self.schemaSQL(rowCount: 3))
        case .replacedByAVacuumedCopy:
            let copy = fixture.directory.path("copy.sqlite")
            try await fixture.shell("VACUUM INTO '\(copy)'")
            try await Self.shell(path: copy, "PRAGMA journal_mode = DELETE; DELETE FROM item WHERE id > 3")
            #expect(rename(copy, fixture.path) == 0)
        }
        let expectedNames = ["rows", "differences", "top", "count"]
        let errors = try await watch.errors.wait { errors in
            expectedNames.allSatisfy { name in errors.contains { $0.hasPrefix(name + ":") } }
        }
        for error in errors {
            #expect(error.contains(": DBMOVED: "), "\(error)")
        }
        #expect((try? await recordErrors.wait(for: 1, timeout: .seconds(10)))?.first?.hasPrefix("DBMOVED") == true, "record observation: \(recordErrors.values)")

        // A later observation ends at once, with the same error.
        let later = Recorder<String>()
        let laterCancellable = ValueObservation.trackingSetDifferences(Item.all())
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { later.append(Self.describe($0)) }, onChange: { _ in })
        defer { laterCancellable.cancel() }
        #expect(try await later.wait(for: 1).first?.hasPrefix("DBMOVED") == true, "\(later.values)")

        // Our own write: it may fail, it must not hang nor trap.
        _ = try? await fixture.observed.write { db in try db.execute(sql: "UPDATE item SET score = 1 WHERE id = 1") }
        _ = try? await fixture.observed.read { db in try db.count("item") }
        watch.cancel()
        fixture.observed.close()
    }

    /// Region observations of a file deleted, then created again by
    /// another process. Correct: they end with SQLITE_READONLY_DBMOVED, as
    /// value and record observations do, and as a region observation
    /// started later does (`onError`, or the error of `changes(in:)`);
    /// otherwise they go on silently, never told of the commits to the
    /// file now at the path, and a `for try await` loop over `changes(in:)`
    /// waits for ever.
    @Test(arguments: [Setup.rollbackQueue, .pool])
    func runningRegionObservationsEndWhenTheFileIsDeleted(setup: Setup) async throws {
        let fixture = try Fixture(setup, rowCount: 300)
        let callbackErrors = Recorder<String>()
        let callbackCancellable = DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM item"))
            .start(in: fixture.observed, onError: { callbackErrors.append(Self.describe($0)) }, onChange: { _ in })
        defer { callbackCancellable.cancel() }
        let sequenceOutcome = Recorder<String>()
        let observed = fixture.observed
        let iteration = Task {
            let changes = DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM item")).changes(in: observed)
            do {
                for try await _ in changes {}
                sequenceOutcome.append("finished without error")
            } catch {
                sequenceOutcome.append(Self.describe(error))
            }
        }
        defer { iteration.cancel() }
        // Told in the same access of the writer as the region observations.
        let valueErrors = Recorder<String>()
        let valueCancellable = ValueObservation.trackingOne(SQLRequest<Int>(sql: "SELECT COUNT(*) FROM item"))
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { valueErrors.append(Self.describe($0)) }) { _ in }
        defer { valueCancellable.cancel() }
        // The sequence registers in a later access of the writer: this one.
        try await fixture.observed.writeWithoutTransaction { _ in }
        try await fixture.waitForQuietPoll()

        #expect(unlink(fixture.path) == 0)
        try await fixture.shell(Self.schemaSQL(rowCount: 3))

        // A region observation started now fails at once.
        let later = Recorder<String>()
        let laterCancellable = DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM item"))
            .start(in: fixture.observed, onError: { later.append(Self.describe($0)) }, onChange: { _ in })
        defer { laterCancellable.cancel() }
        #expect(try await later.wait(for: 1).first?.hasPrefix("DBMOVED") == true, "\(later.values)")

        // The running ones: the value observation was told...
        #expect(try await valueErrors.wait(for: 1).first?.hasPrefix("DBMOVED") == true, "\(valueErrors.values)")
        // ... and the region observations were not.
        let sequenceEnd = try? await sequenceOutcome.wait(for: 1, timeout: .seconds(2))
        #expect(sequenceEnd?.first?.hasPrefix("DBMOVED") == true, "changes(in:): \(sequenceEnd ?? ["still waiting"])")
        let callbackError = try? await callbackErrors.wait(for: 1, timeout: .seconds(1))
        #expect(callbackError?.first?.hasPrefix("DBMOVED") == true, "onError: \(callbackError ?? ["never called"])")
    }
}
#endif
