import DatabaseTestSupport
import Foundation
@testable import ReactiveSQLite
import Synchronization
import TestSupport
import Testing

/// The connections of a database that observes external changes yield to
/// the writers of other processes, in every rollback-journal mode: a read
/// never takes its shared lock while a writer holds RESERVED (it waits for
/// the commit), and a read of `yieldingToWriters(_:)` that a writer meets is
/// interrupted and runs again after the commit. The writer is the `sqlite3`
/// shell with no busy timeout, which fails at once when a reader holds a
/// shared lock as it commits.
///
/// The outcomes do not depend on timing: each step waits for the one
/// before (the shell's output, the connection's counters, bounded).
#if REACTIVESQLITE_INTERNAL_CHECKS
@Suite(.timeLimit(.minutes(2)), .onItsOwnThread) struct WriterYieldingTests {
    static let journalModes = ["delete", "truncate", "persist"]

    /// A file with one row, and a queue that observes external changes on it.
    struct Fixture {
        let directory: TemporaryDirectory
        let path: String
        let queue: DatabaseQueue

        init(journalMode: String) throws {
            directory = try TemporaryDirectory()
            path = directory.path("db.sqlite")
            let setup = try DatabaseQueue(path: path)
            try setup.writeSQLWithoutTransaction("PRAGMA journal_mode = \(journalMode)")
            try setup.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO t VALUES (1, 1);")
            setup.close()
            var configuration = Configuration()
            configuration.observesExternalChanges = true
            queue = try DatabaseQueue(path: path, configuration: configuration)
        }

        /// The counters of the queue's connection.
        var yielding: WriterYielding.Statistics {
            get throws { try #require(queue.writer.database.writerYielding).statistics }
        }
    }

    /// A read waits for the commit of a writer that holds RESERVED: `read`,
    /// and `readYieldingToWriters` (the reads of `sqlite-watch` beside its
    /// observation), which then reads without a real shared lock: the next
    /// writer, which may start as soon as the first is done, never meets it.
    @Test(arguments: journalModes, [false, true])
    func aReadWaitsForTheCommitOfAWriterThatHoldsItsLock(journalMode: String, yields: Bool) async throws {
        let fixture = try Fixture(journalMode: journalMode)
        let yielding = try fixture.yielding
        let shell = try InteractiveSQLiteShell(path: fixture.path)
        defer { shell.stop() }
        shell.send("BEGIN; UPDATE t SET v = 2; SELECT 'reserved';")
        try await shell.waitForOutput(containing: "reserved")

        let busyCalls = yielding.busyCalls.load(ordering: .relaxed)
        // A child task, which runs on the test's own thread: an
        // unstructured task would wait for Swift's cooperative pool, which
        // the parallel run holds for tens of seconds at times (the read
        // then started after `waitUntil` had given up: the failure of a
        // full run, all three journal modes at once).
        let queue = fixture.queue
        async let read = yields
            ? queue.readYieldingToWriters { db in try SQLRequest<Int>(sql: "SELECT v FROM t").fetchOne(db) }
            : queue.read { db in try SQLRequest<Int>(sql: "SELECT v FROM t").fetchOne(db) }
        // The read waits: it did not take its lock, so the commit succeeds.
        try await waitUntil { yielding.busyCalls.load(ordering: .relaxed) > busyCalls }
        shell.send("COMMIT; SELECT 'committed';")
        try await shell.waitForOutput(containing: "committed")
        #expect(shell.errorText.isEmpty)
        // And it reads the committed state.
        #expect(try await read == 2)
        if yields {
            // Nor did the queue take one when it opened (it reads the schema).
            #expect(SharedLockCycle.realSharedLockCount(path: fixture.path) == 0)
        }
    }

    @Test(arguments: journalModes)
    func aReadThatAWriterMeetsStopsAndRunsAgainAfterTheCommit(journalMode: String) async throws {
        let fixture = try Fixture(journalMode: journalMode)
        let yielding = try fixture.yielding
        let shell = try InteractiveSQLiteShell(path: fixture.path)
        defer { shell.stop() }
        let reading = Signal()
        let firstValues = Locked<[Int64]>([])
        // A child task, on the test's own thread (see above).
        async let read: Void = fixture.queue.writeWithoutTransaction { db in
            do {
                try db.yieldingToWriters {
                    var isFirstRow = true
                    // Long enough to still run when the writer starts; the
                    // CTE drives the loop (CROSS JOIN), so rows come at once.
                    try db.forEachRawRow(sql: """
                        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000)
                        SELECT v FROM c CROSS JOIN t
                        """) { row in
                        guard isFirstRow else { return }
                        isFirstRow = false
                        guard case .integer(let value) = row[0] else { return }
                        firstValues.withLock { $0.append(value) }
                        if firstValues.value.count == 1 { reading.open() } else { throw StopReading() }
                    }
                }
            } catch is StopReading {}
        }
        // The read holds its shared lock: the shell takes RESERVED beside it.
        try await reading.wait()
        shell.send("BEGIN; UPDATE t SET v = 2; SELECT 'reserved';")
        try await shell.waitForOutput(containing: "reserved")
        // The read stops for the writer, and waits for its commit.
        try await waitUntil { yielding.interruptions.load(ordering: .relaxed) > 0 }
        shell.send("COMMIT; SELECT 'committed';")
        try await shell.waitForOutput(containing: "committed")
        #expect(shell.errorText.isEmpty)
        try await read
        // Run again after the commit, it reads the committed state.
        #expect(firstValues.value == [1, 2])
    }

    /// The reads of `yieldingToWriters(_:)` take no lock in rollback mode:
    /// a writer without a busy handler commits while a read, descheduled
    /// (here: paused between two rows), is under way; the read met the
    /// commit, so it runs again, and reads the committed state.
    @Test(arguments: journalModes)
    func aPausedReadHoldsNoLockThatAWriterMeets(journalMode: String) async throws {
        let runs = try await Self.runsOfAReadPaused(
            in: try Fixture(journalMode: journalMode), sql: "SELECT v FROM t UNION ALL SELECT v FROM t",
            whileTheShellRuns: "UPDATE t SET v = 2;")
        // The first run read across the commit: thrown away, run again.
        #expect(runs == [["1", "1"], ["2", "2"]])
    }

    /// A connection in `PRAGMA locking_mode = EXCLUSIVE` keeps its shared
    /// lock after a read, optimistic here: a read that met a commit runs
    /// again once, with a real lock. (It ran again for ever, its lock
    /// validated against the first bytes of the first run each time.)
    @Test func aReadInExclusiveLockingModeThatMetACommitRunsAgainOnce() async throws {
        let runs = try await Self.runsOfAReadPaused(
            in: try Fixture(journalMode: "delete"), sql: "SELECT v FROM t UNION ALL SELECT v FROM t",
            whileTheShellRuns: "UPDATE t SET v = 2;",
            firstRunStartsWith: "PRAGMA locking_mode = EXCLUSIVE", realSharedLocksAfterThePause: 1)
        #expect(runs == [["1", "1"], ["2", "2"]])
    }

    /// A read that met a schema change runs again with the new schema.
    @Test(arguments: journalModes)
    func aReadThatMetASchemaChangeRunsAgainWithTheNewSchema(journalMode: String) async throws {
        let runs = try await Self.runsOfAReadPaused(
            in: try Fixture(journalMode: journalMode), sql: "SELECT * FROM t UNION ALL SELECT * FROM t",
            whileTheShellRuns: "ALTER TABLE t ADD COLUMN w DEFAULT 7;")
        // Paused with 2 columns; the run after the change reads 3.
        #expect(runs == [["1|1", "1|1"], ["1|1|7", "1|1|7"]])
    }

    /// A writer whose transaction outgrows its page cache writes
    /// uncommitted pages into the file (a spill), and its rollback puts
    /// them back: the first page is the same before and after, yet a read
    /// under way may have read a spilled page. The read is thrown away and
    /// runs again (it ran once, validated by the first page alone). Linux
    /// only: the writes are counted through inotify.
    #if os(Linux)
    @Test(arguments: journalModes)
    func aReadThatMetAWriterThatSpilledAndRolledBackRunsAgain(journalMode: String) async throws {
        let fixture = try Fixture(journalMode: journalMode)
        try await fixture.queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE padding (b BLOB)")
        }
        let runs = try await Self.runsOfAReadPaused(
            in: fixture, sql: "SELECT v FROM t UNION ALL SELECT v FROM t",
            whileTheShellRuns: """
                PRAGMA cache_size = 10; BEGIN; UPDATE t SET v = 2; \
                INSERT INTO padding WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500) \
                SELECT randomblob(1000) FROM c; ROLLBACK;
                """)
        #expect(runs == [["1", "1"], ["1", "1"]])
    }
    #endif

    /// The rows of each run of `sql` in `yieldingToWriters(_:)` (values
    /// joined by `|`), whose first run pauses after its first row, its
    /// statement under way, while the `sqlite3` shell (no busy timeout)
    /// runs `statement`, which must not fail. The first run executes
    /// `setup` first, if any. The connection takes
    /// `realSharedLocksAfterThePause` real shared locks from the pause on.
    static func runsOfAReadPaused(
        in fixture: Fixture, sql: String, whileTheShellRuns statement: String,
        firstRunStartsWith setup: String? = nil, realSharedLocksAfterThePause: Int = 0
    ) async throws -> [[String]] {
        let shell = try InteractiveSQLiteShell(path: fixture.path)
        defer { shell.stop() }
        let paused = Signal()
        let resume = Signal()
        let runs = Locked<[[String]]>([])
        // A child task, on the test's own thread (see above).
        async let read: Void = fixture.queue.writeWithoutTransaction { db in
            try db.yieldingToWriters {
                if let setup, runs.value.isEmpty { try db.execute(sql: setup) }
                var run: [String] = []
                try db.forEachRawRow(sql: sql) { row in
                    run.append((0..<row.count).map { index in
                        if case .integer(let value) = row[index] { "\(value)" } else { "?" }
                    }.joined(separator: "|"))
                    if runs.value.isEmpty, run.count == 1 {
                        paused.open()
                        _ = resume.waitBlocking()
                    }
                }
                runs.withLock { $0.append(run) }
            }
        }
        try await paused.wait()
        // The access that runs the read read the schema version first,
        // with a real lock (a write access); none from now on.
        let realSharedLocks = SharedLockCycle.realSharedLockCount(path: fixture.path)
        // Two lines: the second runs even when the first fails.
        shell.send(statement)
        shell.send("SELECT 'done';")
        try await shell.waitForOutput(containing: "done")
        #expect(shell.errorText.isEmpty, "the writer failed beside the paused read")
        resume.open()
        try await read
        // The run thrown away was rolled back without reading the schema
        // version with a real lock after it (right after a writer).
        #expect(SharedLockCycle.realSharedLockCount(path: fixture.path) == realSharedLocks + realSharedLocksAfterThePause)
        return runs.value
    }

    /// What a read that met a writer read is thrown away: the pages SQLite
    /// keeps (here, a page changed in the file behind its back, with the
    /// same change counter: SQLite keeps its copy until told), and its
    /// copy of the schema (here, a schema rewritten without a new cookie).
    /// With SQLCipher's older SQLite, which lacks `SQLITE_FCNTL_RESET_CACHE`,
    /// the VFS's fallback drops the pages.
    @Test func discardedReadsLeaveNeitherPagesNorSchemaBehind() async throws {
        let fixture = try Fixture(journalMode: "delete")
        try await fixture.queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE word (w TEXT); INSERT INTO word VALUES ('aaaa-aaaa')")
        }
        let read = {
            try await fixture.queue.read { db in
                [try SQLRequest<String>(sql: "SELECT w FROM word").fetchOne(db) ?? "",
                 "\(try SQLRequest<Row>(sql: "PRAGMA table_info(word)").fetchAll(db).count) columns"]
            }
        }
        #expect(try await read() == ["aaaa-aaaa", "1 columns"])
        // Behind SQLite's back, in place: the row's text, and the table's
        // definition (of the same lengths).
        let file = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        let handle = try #require(FileHandle(forUpdatingAtPath: fixture.path))
        for (old, new) in [("aaaa-aaaa", "bbbb-bbbb"), ("CREATE TABLE word (w TEXT)", "CREATE TABLE word (w, x  )")] {
            let range = try #require(file.range(of: Data(old.utf8)))
            try handle.seek(toOffset: UInt64(range.lowerBound))
            handle.write(Data(new.utf8))
        }
        try handle.close()
        #expect(try await read() == ["aaaa-aaaa", "1 columns"], "SQLite keeps its pages and schema")
        try await fixture.queue.writeWithoutTransaction { db in
            let cycle = try #require(db.mainFileSharedLockCycle())
            db.discardReads(of: cycle)
            db.forgetSchemaOfConnection()
        }
        #expect(try await read() == ["bbbb-bbbb", "2 columns"])
    }

    @Test func aWALDatabaseIsReadBesideItsWriters() async throws {
        let fixture = try Fixture(journalMode: "wal")
        let shell = try InteractiveSQLiteShell(path: fixture.path)
        defer { shell.stop() }
        shell.send("BEGIN; UPDATE t SET v = 2; SELECT 'writing';")
        try await shell.waitForOutput(containing: "writing")
        // Readers never block writers in WAL mode: no wait.
        #expect(try await fixture.queue.read { db in try SQLRequest<Int>(sql: "SELECT v FROM t").fetchOne(db) } == 1)
        shell.send("COMMIT; SELECT 'committed';")
        try await shell.waitForOutput(containing: "committed")
        #expect(shell.errorText.isEmpty)
        #expect(try await fixture.queue.read { db in try SQLRequest<Int>(sql: "SELECT v FROM t").fetchOne(db) } == 2)
    }

    /// A read that a writer meets at every run (here, a writer of another
    /// connection commits in the middle of each run) gives up with
    /// `SQLITE_BUSY` after the busy timeout, and never holds the writer
    /// up. It fell back on a real lock after 100 runs thrown away, and
    /// the writer's next commit, with its own short busy timeout, failed.
    @Test func aReadThatWritersLeaveNoTimeGivesUpWithoutHoldingThemUp() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        var writerConfiguration = Configuration()
        writerConfiguration.busyTimeout = .milliseconds(100)
        let writer = try DatabaseQueue(path: path, configuration: writerConfiguration)
        defer { writer.close() }
        try writer.writeSQL("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO t VALUES (1, 1);")
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        configuration.busyTimeout = .milliseconds(500)
        let reader = try DatabaseQueue(path: path, configuration: configuration)
        defer { reader.close() }
        let runs = Locked(0)
        let failedWrites = Locked<[String]>([])
        let outcome: Result<Void, any Error>
        do {
            try await reader.writeWithoutTransaction { db in
                try db.yieldingToWriters {
                    runs.withLock { $0 += 1 }
                    try db.forEachRawRow(sql: "SELECT v FROM t") { _ in
                        do {
                            try writer.writeSQL("UPDATE t SET v = v + 1")
                        } catch {
                            failedWrites.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        #expect(failedWrites.value.isEmpty)
        // Each run met a commit: one update each, none failed. (How many
        // runs fit in the busy timeout depends on the machine.)
        #expect(runs.value >= 1)
        #expect(try await writer.read { db in try SQLRequest<Int>(sql: "SELECT v FROM t").fetchOne(db) } == 1 + runs.value)
        guard case .failure(let error as DatabaseError) = outcome else {
            Issue.record("the read did not give up: \(outcome)")
            return
        }
        #expect(error.resultCode == .SQLITE_BUSY)
    }

    @Test func aReadGivesUpAfterTheBusyTimeout() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try DatabaseQueue(path: path).writeSQL("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1);")
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        configuration.busyTimeout = .milliseconds(100)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let shell = try InteractiveSQLiteShell(path: path)
        defer { shell.stop() }
        shell.send("BEGIN; UPDATE t SET v = 2; SELECT 'reserved';")
        try await shell.waitForOutput(containing: "reserved")
        let error = await #expect(throws: DatabaseError.self) {
            try await queue.read { db in try SQLRequest<Int>(sql: "SELECT v FROM t").fetchOne(db) }
        }
        #expect(error?.resultCode.primaryResultCode == .SQLITE_BUSY)
        shell.send("COMMIT; SELECT 'committed';")
        try await shell.waitForOutput(containing: "committed")
        #expect(shell.errorText.isEmpty)
    }

    private struct StopReading: Error {}
}

/// The `sqlite3` shell in a child process, fed statements one line at a
/// time, with no busy timeout (it fails at once on a lock, as many scripts
/// do).
final class InteractiveSQLiteShell: Sendable {
    private let process: SpawnedProcess
    private let output = Locked("")
    private let error = Locked("")

    init(path: String) throws {
        process = try SpawnedProcess(
            "sqlite3", [path], standardInput: .pipe, standardOutput: .pipe, standardError: .pipe)
        // A thread per pipe, which reads until the end of the output.
        for (descriptor, text) in [(process.outputReader, output), (process.errorReader, error)] {
            guard let descriptor else { continue }
            SpawnedProcess.readToEnd(descriptor, onChunk: { chunk in
                text.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
            })
        }
    }

    var errorText: String { error.value }

    func send(_ sql: String) {
        guard let input = process.inputWriter else { return }
        SpawnedProcess.writeAll(Array((sql + "\n").utf8), to: input)
    }

    func waitForOutput(containing text: String) async throws {
        let output = self.output
        try await waitUntil { output.value.contains(text) }
    }

    /// Closes the shell's input and ends it; called once.
    func stop() {
        if let input = process.inputWriter { close(input) }
        process.signal(SIGTERM)
    }
}
#endif
