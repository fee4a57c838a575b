import DatabaseTestSupport
import Dispatch
import Foundation
@testable import ReactiveSQLite
import TestSupport
import Testing

/// `Configuration.observesExternalChanges`: observations see the commits of
/// other connections (a second `DatabaseQueue`) and other processes (the
/// `sqlite3` shell), on a file queue in rollback-journal and WAL modes, on a
/// pool, and on a read-only queue.
///
/// Waits are bounded (`Recorder`, `waitUntil`). Where a test must know that
/// the detector has looked at the file after some commit, it waits until two
/// more polls were counted (the first one may have read the file before the
/// commit), then makes one access of the writer, which runs after the check
/// those polls asked for (see `ExternalChangeDetector.poll`).
///
/// Some tests wait on async sequences: the time limit turns a hang into a failure.
///
/// The detector's counters exist in builds with `REACTIVESQLITE_INTERNAL_CHECKS`
/// (debug, and release with `REACTIVESQLITE_INTERNAL_CHECKS=1`, as CI runs it).
#if REACTIVESQLITE_INTERNAL_CHECKS
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct ExternalChangeTests {
    /// How the observed file is opened.
    enum Setup: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case rollbackJournalQueue
        case walQueue
        case pool

        var testDescription: String { rawValue }
    }

    /// The schema of the tests: players, and a table no observation reads.
    static let schemaSQL = playerSchemaSQL + """
        CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT);
        """

    static let scores = SQLRequest<Int>(sql: "SELECT score FROM player ORDER BY id")
    static let playerCount = SQLRequest<Int>(sql: "SELECT COUNT(*) FROM player")

    /// A database file, an observed connection on it, and a second queue
    /// that writes it as another connection would.
    final class Fixture: Sendable {
        let directory: TemporaryDirectory
        let path: String
        /// The queue or pool whose observations watch external changes.
        let observed: any DatabaseWriter
        /// Another connection to the same file (no observation).
        let external: DatabaseQueue

        init(_ setup: Setup, configure: (inout Configuration) -> Void = { _ in }) throws {
            directory = try TemporaryDirectory()
            path = directory.path("db.sqlite")
            external = try DatabaseQueue(path: path)
            try external.writeSQLWithoutTransaction(
                setup == .rollbackJournalQueue ? "PRAGMA journal_mode = DELETE" : "PRAGMA journal_mode = WAL")
            try external.writeSQL(ExternalChangeTests.schemaSQL)
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

        var detector: ExternalChangeDetector? { Self.detector(of: observed) }

        static func detector(of writer: any DatabaseWriter) -> ExternalChangeDetector? {
            (writer as? any ObservationHost)?.externalChangeDetector
        }

        /// Returns once the detector has read the file after everything done
        /// so far, and the writer has checked what it read.
        func waitForQuietPoll() async throws {
            try await Self.waitForQuietPoll(of: observed)
        }

        static func waitForQuietPoll(of writer: any DatabaseWriter) async throws {
            let found = detector(of: writer)
            let detector = try #require(found)
            let start = detector.pollCount
            try await waitUntil { detector.pollCount >= start + 2 }
            try await writer.writeWithoutTransaction { _ in }
        }
    }

    // MARK: - Value observations

    /// After a file event in WAL mode, the detector reads at once, then
    /// again after 1, 2, 4... ms. A change found by the reading at once may
    /// be the commit *before* the one whose write was the event (that one
    /// may not have updated the wal-index yet): the follow-ups go on. A
    /// change found by a later reading is that commit's, or a later one's:
    /// they stop. (They stopped at the first change, and the last commit of
    /// a burst could go unseen until the next poll.)
    @Test func followUpsAfterAFileEventGoOnAfterAChangeFoundByTheFirstReading() {
        var chain = FollowUpChain()
        // The first reading found a change: the count went from 4 to 5.
        let decisions = [5, 5, 6, 6].map { chain.readsAgain(changeCount: $0) }
        // The first follow-up reads whatever the first reading found; the
        // next reads again (no change found since); a follow-up found a
        // change: the chain ends.
        #expect(decisions == [true, true, false, false])
    }

    /// The connections of a queue that observes external changes take no
    /// real shared lock on a file in rollback-journal mode: each would be a
    /// moment when a writer of another process, without a busy handler,
    /// fails at its commit. Not when they open (they read the schema), not
    /// when observations start, nor when the observations' reads meet
    /// commits and are thrown away: every read is optimistic (see
    /// `WriterYieldingVFS`).
    @Test(arguments: ["delete", "truncate", "persist"])
    func observingARollbackJournalFileTakesNoRealSharedLock(journalMode: String) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let external = try DatabaseQueue(path: path)
        defer { external.close() }
        try external.writeSQLWithoutTransaction("PRAGMA journal_mode = \(journalMode)")
        try external.writeSQL(Self.schemaSQL)
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        configuration.externalChangePollInterval = .milliseconds(1)
        let observed = try DatabaseQueue(path: path, configuration: configuration)
        defer { observed.close() }
        let scores = Recorder<[Int]>()
        let rowScores = Recorder<Set<Int>>()
        let values = ValueObservation.trackingAll(Self.scores)
            .start(in: observed, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: scores.append)
        defer { values.cancel() }
        // As `sqlite-watch` observes.
        let rows = ValueObservation.trackingRowDifferences(sql: "SELECT * FROM player")
            .map { differences in Set(try differences.rows.map { row -> Int in try row["score"] }) }
            .start(in: observed, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: rowScores.append)
        defer { rows.cancel() }
        _ = try await scores.wait(for: 1)
        _ = try await rowScores.wait(for: 1)
        // Commits one after the other, which the observations' reads meet;
        // a short gap after each, where they can read: back to back, they
        // left no moment free of a RESERVED lock, and the reads, which wait
        // for writers, gave up after the busy timeout (database is locked).
        // Every fifth commit, the writer waits for both observations to
        // catch up. Without these waits, under load or the thread
        // sanitizer, an observation whose reads were slower than the gaps
        // met commit after commit: it gave up after the busy timeout, or
        // after 100 runs thrown away took a real lock (`yieldingToWriters`).
        for score in 1...300 {
            try external.writeSQL("UPDATE player SET score = \(score) WHERE id = \(score % 3 + 1)")
            try await Task.sleep(for: .microseconds(500))
            if score % 5 == 0 {
                // Each player's last score, in the order of their ids.
                let latest = (score - 2...score).sorted { $0 % 3 < $1 % 3 }
                _ = try await scores.wait(forLast: latest)
                _ = try await rowScores.wait(forLast: Set(latest))
            }
        }
        _ = try await observed.readYieldingToWriters { db in try Self.playerCount.fetchOne(db) }
        #expect(SharedLockCycle.realSharedLockCount(path: path) == 0)
    }

    @Test(arguments: Setup.allCases)
    func valueObservationSeesTheCommitsOfAnotherConnection(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let recorder = Recorder<[Int]>()
        let cancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        #expect(try await recorder.wait(for: 1) == [[100, 200, 150]])

        try fixture.external.writeSQL("UPDATE player SET score = 300 WHERE id = 2")
        try await recorder.wait(forLast: [100, 300, 150])
        try fixture.external.writeSQL("DELETE FROM player WHERE id = 1")
        let values = try await recorder.wait(forLast: [300, 150])
        // In commit order (a detection may fetch a state already delivered).
        #expect(isOrderedSubsequence(
            values.removingAdjacentDuplicates(), of: [[100, 200, 150], [100, 300, 150], [300, 150]]))
    }

    #if os(Linux)
    /// On Linux, a write to the database file, its log or its journal wakes
    /// the detector at once (inotify): with a poll interval of an hour, the
    /// commits of another connection are still seen, each of them.
    @Test(arguments: Setup.allCases)
    func fileEventsWakeTheDetectorBetweenPolls(setup: Setup) async throws {
        let fixture = try Fixture(setup) { $0.externalChangePollInterval = .seconds(3600) }
        let recorder = Recorder<[Int]>()
        let cancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        #expect(try await recorder.wait(for: 1) == [[100, 200, 150]])
        for score in 301...310 {
            try fixture.external.writeSQL("UPDATE player SET score = ? WHERE id = 2", arguments: [score])
            try await recorder.wait(forLast: [100, score, 150])
        }
        // Readings came from file events: the timer first fires in an hour.
        #expect(try #require(fixture.detector).pollCount >= 10)
    }
    #endif

    /// Another process overwrites the file's header: the detector's reading
    /// fails, and the observations fetch again and fail with SQLite's error,
    /// though no commit came.
    ///
    /// In rollback-journal mode only: in WAL mode, readers take committed
    /// pages from the log and its shared-memory index, and SQLite itself
    /// does not read the main file's header again before a checkpoint
    /// (`sqlite-watch` checks the header itself).
    @Test func aFileThatStopsBeingADatabaseFailsTheObservations() async throws {
        let fixture = try Fixture(.rollbackJournalQueue)
        let errors = Recorder<DatabaseError?>()
        let cancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { error in
                errors.append(error as? DatabaseError)
            }, onChange: { _ in })
        defer { cancellable.cancel() }
        try await Fixture.waitForQuietPoll(of: fixture.observed)
        fixture.external.close()
        // Another process, as `dd` would: closing a descriptor of the file
        // here would drop this process's own SQLite locks.
        let dd = try await SpawnedProcess.run(
            "/bin/dd", ["if=/dev/zero", "of=\(fixture.path)", "bs=100", "count=1", "conv=notrunc", "status=none"])
        #expect(dd.termination == .exit(0), "dd: \(dd.error)")
        let reported = try await errors.wait(for: 1)
        let code = try #require(reported[0]?.resultCode)
        #expect(code == .SQLITE_NOTADB || code == .SQLITE_CORRUPT, "\(reported)")
    }

    enum FileFate: String, CaseIterable, Sendable { case deleted, replaced }

    /// The file is deleted, or another database is renamed over its path:
    /// the connections go on reading the file they opened, which nobody
    /// can change any more. Every observation ends with
    /// SQLITE_READONLY_DBMOVED, and so does an observation started later
    /// (without it, both would show the old rows for ever).
    @Test(arguments: Setup.allCases, FileFate.allCases)
    func aDeletedOrReplacedFileEndsTheObservations(setup: Setup, fate: FileFate) async throws {
        let fixture = try Fixture(setup)
        let errors = Recorder<DatabaseError?>()
        let values = Recorder<[Int]>()
        let cancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { error in
                errors.append(error as? DatabaseError)
            }, onChange: values.append)
        defer { cancellable.cancel() }
        _ = try await values.wait(for: 1)
        try await fixture.waitForQuietPoll()
        switch fate {
        case .deleted:
            #expect(unlink(fixture.path) == 0)
        case .replaced:
            let other = fixture.directory.path("other.sqlite")
            let queue = try DatabaseQueue(path: other)
            try queue.writeSQL("CREATE TABLE player (id INTEGER PRIMARY KEY, score INTEGER)")
            queue.close()
            #expect(rename(other, fixture.path) == 0)
        }
        let reported = try await errors.wait(for: 1)
        let error = try #require(reported[0])
        #expect(error.extendedResultCode == .SQLITE_READONLY_DBMOVED)
        #expect(error.message?.contains(fate == .deleted ? "was deleted or moved away" : "was replaced by another file") == true)
        #expect(error.message?.contains(fixture.path) == true)

        // A later observation ends at once, with the same error.
        let later = Recorder<DatabaseError?>()
        let laterCancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { error in
                later.append(error as? DatabaseError)
            }, onChange: { _ in })
        defer { laterCancellable.cancel() }
        #expect(try await later.wait(for: 1).first??.extendedResultCode == .SQLITE_READONLY_DBMOVED)
    }

    @Test(arguments: Setup.allCases)
    func valueObservationSeesTheCommitsOfTheSQLiteShell(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM player"))
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        // Twenty transactions in another process, as fast as it can.
        let inserts = (4..<24).map { "INSERT INTO player (id, name, score) VALUES (\($0), 'P\($0)', \($0));" }
        try await runSQLiteShell(path: fixture.path, sql: inserts.joined(separator: "\n"))
        let values = try await recorder.wait(forLast: 23)
        // In commit order, never back in time; bursts may coalesce.
        #expect(values.first == 3)
        #expect(values == values.sorted())
    }

    @Test(arguments: Setup.allCases)
    func asyncValuesSeeExternalCommits(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        var iterator = ValueObservation.trackingOne(Self.playerCount)
            .values(in: fixture.observed, bufferingPolicy: .unbounded).makeAsyncIterator()
        #expect(try await iterator.next() == 3)
        try fixture.external.writeSQL("DELETE FROM player")
        // The value of the external commit, maybe after a value fetched
        // again before it (the initial value, once more).
        var value = try await iterator.next()
        while value == 3 { value = try await iterator.next() }
        #expect(value == 0)
    }

    @Test(arguments: Setup.allCases)
    func externalCommitsFetchAgainAndRemoveDuplicatesDeliversNothingNew(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let deduplicated = Recorder<[Int]>()
        let everyFetch = Recorder<[Int]>()
        let cancellables = [
            ValueObservation.trackingAll(Self.scores, removeDuplicates: true)
                .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) },
                       onChange: deduplicated.append),
            ValueObservation.trackingAll(Self.scores)
                .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) },
                       onChange: everyFetch.append),
        ]
        defer { cancellables.forEach { $0.cancel() } }
        try await deduplicated.wait(for: 1)
        try await everyFetch.wait(for: 1)

        // A table nobody reads: the whole database counts as changed, so
        // both observations fetch again; the same value is delivered by the
        // one that keeps duplicates only.
        try fixture.external.writeSQL("INSERT INTO note (text) VALUES ('hello')")
        #expect(try await everyFetch.wait(for: 2) == [[100, 200, 150], [100, 200, 150]])

        // Both fetches came from the same detection: the deduplicated
        // observation's one read the same state, and delivered nothing.
        try fixture.external.writeSQL("UPDATE player SET score = 0 WHERE id = 3")
        try await everyFetch.wait(forLast: [100, 200, 0])
        #expect(try await deduplicated.wait(for: 2) == [[100, 200, 150], [100, 200, 0]])
    }

    @Test(arguments: Setup.allCases)
    func differencesOfExternalCommitsAreDeliveredWhenNotEmpty(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let differences = Recorder<String>()
        let everyFetch = Recorder<[Int]>()
        let cancellables = [
            ValueObservation.trackingSetDifferences(ObservedPlayer.all())
                .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) }) { difference in
                    differences.append(
                        "\(difference.inserted.map(\.id)) \(difference.updated.map(\.id)) \(difference.deleted.map(\.id))")
                },
            ValueObservation.trackingAll(Self.scores)
                .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) },
                       onChange: everyFetch.append),
        ]
        defer { cancellables.forEach { $0.cancel() } }
        try await differences.wait(for: 1)
        try await everyFetch.wait(for: 1)

        // Fetched again by the same detection as `everyFetch`: an empty
        // difference, not delivered.
        try fixture.external.writeSQL("INSERT INTO note (text) VALUES ('hello')")
        try await everyFetch.wait(for: 2)
        try fixture.external.writeSQL("UPDATE player SET score = 0 WHERE id = 3; DELETE FROM player WHERE id = 1")
        try await everyFetch.wait(forLast: [200, 0])
        #expect(try await differences.wait(for: 2) == ["[1, 2, 3] [] []", "[] [3] [1]"])
    }

    @Test(arguments: Setup.allCases)
    func recordObservationFollowsExternalChanges(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let records = Recorder<ObservedPlayer>()
        let deleted = Signal()
        let cancellable = RecordObservation<ObservedPlayer>(key: 2).start(
            in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) },
            onDeletion: deleted.open, onChange: records.append)
        defer { cancellable.cancel() }
        try await records.wait(for: 1)

        try fixture.external.writeSQL("UPDATE player SET name = 'Barbra' WHERE id = 2")
        #expect(try await records.wait(for: 2).map(\.name) == ["Barbara", "Barbra"])
        try fixture.external.writeSQL("DELETE FROM player WHERE id = 2")
        try await deleted.wait()
        #expect(records.values.count == 2)
    }

    // MARK: - Region observations

    @Test(arguments: Setup.allCases)
    func regionObservationIsCalledOncePerDetectionOnTheWritersQueue(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let counts = Recorder<Int>()
        let queueLabels = Locked<Set<String>>([])
        let cancellable = DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM player"))
            .start(in: fixture.observed, onError: { Issue.record($0) }) { db in
                queueLabels.withLock { $0.insert(currentDispatchQueueLabel() ?? "none") }
                // The writer's Database, usable here: it sees the external commit.
                counts.append((try? db.int("SELECT COUNT(*) FROM player")) ?? -1)
            }
        defer { cancellable.cancel() }

        try fixture.external.writeSQL("INSERT INTO player (id, name, score) VALUES (4, 'Dan', 0)")
        try await counts.wait(forLast: 4)
        try fixture.external.writeSQL("INSERT INTO player (id, name, score) VALUES (5, 'Eve', 0)")
        try await counts.wait(forLast: 5)
        try await fixture.waitForQuietPoll()

        let detector = try #require(fixture.detector)
        #expect(counts.values.count == detector.detectionCount)
        #expect(queueLabels.value == [setup == .pool ? "observed.writer" : "observed.queue"])
    }

    @Test(arguments: Setup.allCases)
    func ownCommitsAreNotReportedAsExternal(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let (counter, cancellable) = countChanges(in: fixture.observed, of: [SQLRequest<Row>(sql: "SELECT * FROM player")])
        defer { cancellable.cancel() }
        let detector = try #require(fixture.detector)

        for score in 1...3 {
            try fixture.observed.writeSQL("UPDATE player SET score = ? WHERE id = 1", arguments: [score])
        }
        try await fixture.waitForQuietPoll()
        // The detector's connection saw our commits, the writer checked them,
        // and found nothing external: each commit notified once, by its hook.
        #expect(detector.writerCheckCount >= 1)
        #expect(detector.detectionCount == 0)
        #expect(counter.value == 3)

        try fixture.external.writeSQL("UPDATE player SET score = 0 WHERE id = 1")
        try await waitUntil { counter.value == 4 }
        try await fixture.waitForQuietPoll()
        #expect(detector.detectionCount == 1)
        #expect(counter.value == 4)
    }

    @Test(arguments: Setup.allCases)
    func localAndExternalCommitsInterleave(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let values = Recorder<Int?>()
        let valueCancellable = ValueObservation.trackingOne(Self.playerCount)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: values.append)
        defer { valueCancellable.cancel() }
        let (counter, regionCancellable) = countChanges(in: fixture.observed, of: [Self.playerCount])
        defer { regionCancellable.cancel() }
        try await values.wait(for: 1)

        let commitCount = isRunningUnderThreadSanitizer ? 10 : 30
        let observed = fixture.observed
        let external = fixture.external
        let writers = [
            BackgroundThread {
                for index in 0..<commitCount {
                    try observed.writeSQL("INSERT INTO player (name) VALUES (?)", arguments: ["local \(index)"])
                }
            },
            BackgroundThread {
                for index in 0..<commitCount {
                    try external.writeSQL("INSERT INTO player (name) VALUES (?)", arguments: ["external \(index)"])
                }
            },
        ]
        for writer in writers { try await writer.value() }
        let delivered = try await values.wait(forLast: 3 + 2 * commitCount).map { $0! }
        #expect(delivered == delivered.sorted())

        try await fixture.waitForQuietPoll()
        let detector = try #require(fixture.detector)
        #expect(detector.detectionCount >= 1)
        #expect(counter.value == commitCount + detector.detectionCount)
    }

    // MARK: - Read-only queues

    @Test(arguments: [Setup.rollbackJournalQueue, .walQueue])
    func readOnlyQueueObservesAnotherProcess(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        var configuration = Configuration()
        configuration.readonly = true
        configuration.observesExternalChanges = true
        configuration.externalChangePollInterval = .milliseconds(5)
        let readonly = try DatabaseQueue(path: fixture.path, configuration: configuration)
        defer { readonly.close() }

        let values = Recorder<[Int]>()
        let valueCancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: readonly, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: values.append)
        defer { valueCancellable.cancel() }
        // A read-only queue commits nothing: its region observation is
        // called for external commits only.
        let (counter, regionCancellable) = countChanges(in: readonly, of: [Self.scores])
        defer { regionCancellable.cancel() }
        try await values.wait(for: 1)

        try await runSQLiteShell(path: fixture.path, sql: "UPDATE player SET score = score + 1;")
        try await values.wait(forLast: [101, 201, 151])
        try await runSQLiteShell(path: fixture.path, sql: "UPDATE player SET score = 7 WHERE id = 1;")
        try await values.wait(forLast: [7, 201, 151])
        try await Fixture.waitForQuietPoll(of: readonly)
        let detector = try #require(Fixture.detector(of: readonly))
        #expect(counter.value == detector.detectionCount)
        #expect(counter.value >= 2)
    }

    // MARK: - When polling happens

    @Test(arguments: [DatabaseKind.fileQueue, .pool])
    func nothingIsPolledWhenTheOptionIsOff(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL)
        let path = try #require(test.path)
        let descriptors = openDescriptorCount(ofFile: path)
        let recorder = Recorder<[Int]>()
        let cancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: test.writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        // No detector, and no connection opened for one (with the option
        // on, the detector's connection is open when `start` returns).
        #expect(Fixture.detector(of: test.writer) == nil)
        #expect(openDescriptorCount(ofFile: path) == descriptors)
    }

    @Test func inMemoryDatabasesIgnoreTheOption() throws {
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        let queue = try DatabaseQueue(configuration: configuration)
        #expect(Fixture.detector(of: queue) == nil)
    }

    @Test(arguments: Setup.allCases)
    func pollingRunsOnlyWhileObservationsRun(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let detector = try #require(fixture.detector)
        // No observation: no connection, no poll.
        try fixture.external.writeSQL("UPDATE player SET score = 1")
        #expect(!detector.isPolling)
        #expect(detector.openConnectionCount == 0)
        #expect(detector.pollCount == 0)

        let values = Recorder<[Int]>()
        let valueCancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: values.append)
        // Started before `start` returns.
        #expect(detector.isPolling)
        #expect(detector.openConnectionCount == 1)
        #expect(detector.pollCount >= 1)
        let (counter, regionCancellable) = countChanges(in: fixture.observed, of: [Self.scores])
        var changes: AsyncDatabaseRegionChanges.Iterator? = DatabaseRegionObservation(tracking: Self.scores)
            .changes(in: fixture.observed).makeAsyncIterator()
        // The sequence registers in a later access of the writer: this one.
        try await fixture.observed.writeWithoutTransaction { _ in }
        try await values.wait(for: 1)

        // One connection whatever the number of observations; it stays
        // until the last one ends.
        valueCancellable.cancel()
        regionCancellable.cancel()
        try fixture.external.writeSQL("UPDATE player SET score = 2")
        #expect(try await changes?.next() != nil)
        try await fixture.waitForQuietPoll()
        #expect(detector.isPolling)
        #expect(detector.openConnectionCount == 1)
        #expect(counter.value == 0)
        #expect(values.values.count == 1)

        // Releasing the iterator ends the last observation.
        changes = nil
        try await waitUntil { !detector.isPolling && detector.openConnectionCount == 0 }
        let pollCount = detector.pollCount
        try fixture.external.writeSQL("UPDATE player SET score = 3")
        try await fixture.observed.writeWithoutTransaction { _ in }
        #expect(detector.pollCount == pollCount)

        // A new observation polls again, and sees the commit made meanwhile.
        let restarted = Recorder<[Int]>()
        let restartedCancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: restarted.append)
        defer { restartedCancellable.cancel() }
        #expect(detector.isPolling)
        #expect(try await restarted.wait(for: 1) == [[3, 3, 3]])
        try fixture.external.writeSQL("UPDATE player SET score = 4")
        try await restarted.wait(forLast: [4, 4, 4])
    }

    @Test(arguments: Setup.allCases)
    func closingTheDatabaseStopsPolling(setup: Setup) async throws {
        let fixture = try Fixture(setup)
        let detector = try #require(fixture.detector)
        let recorder = Recorder<[Int]>()
        let cancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { _ in }, onChange: recorder.append)
        try await recorder.wait(for: 1)
        #expect(detector.isPolling)

        fixture.observed.close()
        #expect(!detector.isPolling)
        #expect(detector.openConnectionCount == 0)
        let pollCount = detector.pollCount
        try fixture.external.writeSQL("UPDATE player SET score = 0")
        // Another observer of the file sees the commit: the closed one does not poll.
        try await Self.observeUntil(path: fixture.path, scores: [0, 0, 0])
        #expect(detector.pollCount == pollCount)
        cancellable.cancel()
    }

    @Test func anObservationThatFailsToStartStopsPolling() async throws {
        let fixture = try Fixture(.rollbackJournalQueue)
        let detector = try #require(fixture.detector)
        let failed = Signal()
        let cancellable = ValueObservation.tracking { db in try SQLRequest<Int>(sql: "SELECT missing FROM player").fetchAll(db) }
            .start(in: fixture.observed, scheduling: .observationQueue, onError: { _ in failed.open() }, onChange: { _ in })
        defer { cancellable.cancel() }
        try await failed.wait()
        try await waitUntil { !detector.isPolling && detector.openConnectionCount == 0 }
    }

    // MARK: - Helpers

    /// Waits until a new queue that observes external changes on `path`
    /// delivers `scores`.
    static func observeUntil(path: String, scores: [Int]) async throws {
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        configuration.externalChangePollInterval = .milliseconds(5)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { queue.close() }
        let recorder = Recorder<[Int]>()
        let cancellable = ValueObservation.trackingAll(Self.scores)
            .start(in: queue, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(forLast: scores)
    }
}

extension Array where Element: Equatable {
    /// The elements, without those equal to the one before.
    func removingAdjacentDuplicates() -> [Element] {
        var result: [Element] = []
        for element in self where result.last != element { result.append(element) }
        return result
    }
}

/// The number of open file descriptors of the process on the file at `path`.
func openDescriptorCount(ofFile path: String) -> Int {
    let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.filter { descriptor in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor)) == target
    }.count
}

/// Runs `sql` in the `sqlite3` shell, in a child process, and waits for it
/// to exit (bounded). The shell waits up to 5 seconds for locks, and stops
/// at the first error.
func runSQLiteShell(path: String, sql: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let outcome = try await SpawnedProcess.run("sqlite3", ["-bail", "-cmd", ".timeout 5000", path, sql])
    #expect(outcome.termination == .exit(0), "sqlite3: \(outcome.error)", sourceLocation: sourceLocation)
}
#endif
