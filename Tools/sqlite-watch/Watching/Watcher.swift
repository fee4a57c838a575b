import CMemory
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ReactiveSQLite

/// Watches a query on a database file: opens it read-only with external
/// change observation, prints the current rows, then each change.
///
/// Everything runs on the main queue: the observation delivers its values
/// there, and the timers of the file check and of the retries fire there.
@MainActor
final class Watcher {
    struct Settings {
        var path: String
        var sql: String
        var keys: [String] = []
        var isOrdered = false
        /// Exit after this many changes; nil: never.
        var count: Int?
        var busyTimeout: Duration = .seconds(5)
        var renderer: any ResultRenderer
        /// The passphrase of an encrypted database (`--passphrase-file`).
        var passphrase: String?
    }

    /// How long to wait before trying again after a lock outlasted the busy
    /// timeout (the busy timeout itself is the real wait: this pause only
    /// lets signals through).
    static let retryDelay: DispatchTimeInterval = .milliseconds(50)

    private let settings: Settings
    private var database: DatabaseQueue?
    private var inspection: QueryInspection?
    /// The rows printed by the tracker when it gave up: the first
    /// difference of the observation that follows starts from them.
    private var rowsPrintedByTracker: [Row]?
    /// Keeps the rows of a query identified by one integer column, and
    /// compares them without making them into `Row` values (see
    /// `KeyedQueryTracker`), when the query qualifies.
    private var tracker: KeyedQueryTracker?
    /// False once the tracker met rows that its key does not identify:
    /// from then on, the query is fetched again and diffed as `Row` values.
    private var mayTrack = true
    /// Whether the next first value follows a change of the result's
    /// columns (it is printed as such).
    private var isAfterColumnsChange = false
    /// Whether the note that says how rows are identified was printed.
    private var hasExplainedIdentity = false
    private var cancellable: AnyDatabaseCancellable?
    private var fileMonitor: DatabaseFileMonitor?
    private var changeCount = 0
    private var isWaitingForLock = false
    /// Whether the observation started once: from then on, each check of
    /// the file monitor also reads the database (see `probe()`).
    private var isWatching = false
    private var isProbing = false

    init(settings: Settings) {
        self.settings = settings
    }

    /// Starts watching. Failures end the process (see `Lifecycle`).
    func start() {
        do {
            let monitor = try DatabaseFileMonitor(path: settings.path)
            monitor.start(onFailure: { error in Lifecycle.fail(error) }, onCheck: { [weak self] in self?.probe() })
            fileMonitor = monitor
        } catch {
            fail(error)
        }
        connect()
    }

    // MARK: - Opening

    /// Opens the database and inspects the query, then starts the
    /// observation; waits and tries again while the database is locked.
    private func connect() {
        do {
            let database = try self.database ?? open()
            self.database = database
            let settings = self.settings
            inspection = try database.read { db in
                try QueryInspection(sql: settings.sql, keys: settings.keys, in: db)
            }
            observe()
        } catch {
            retryOrFail(error) { $0.connect() }
        }
    }

    private func open() throws -> DatabaseQueue {
        do {
            return try WatchedDatabase.open(
                path: settings.path, busyTimeout: settings.busyTimeout, passphrase: settings.passphrase)
        } catch let error as WatchError {
            // A deleted or replaced file explains the failure better.
            throw fileMonitor?.failure ?? error
        }
    }

    // MARK: - Observing

    private func observe() {
        guard let database else { return }
        isWatching = true
        if !settings.isOrdered, mayTrack, let inspection {
            let sql = settings.sql
            // Any failure here (a lock) leaves the general way, which reports it.
            if let tracker = try? database.writeWithoutTransaction({ db in
                try KeyedQueryTracker(
                    sql: sql, identity: inspection.identity, columnNames: inspection.columnNames, in: db)
            }) {
                observe(with: tracker)
                return
            }
        }
        let observation = ValueObservation.trackingRowDifferences(
            sql: settings.sql, identifiedBy: inspection?.identity ?? .allValues, isOrdered: settings.isOrdered,
            initialRows: rowsPrintedByTracker)
        rowsPrintedByTracker = nil
        cancellable = observation.start(
            in: database,
            scheduling: .async(onQueue: .main),
            onError: { [self] error in
                MainActor.assumeIsolated {
                    cancellable = nil
                    retryOrFail(error) { $0.observe() }
                }
            },
            onChange: { [self] value in
                MainActor.assumeIsolated { receive(value) }
            })
    }

    private func receive(_ value: RowsWithDifference) {
        lockReleased()
        switch value.change {
        case .initial:
            if !hasExplainedIdentity {
                hasExplainedIdentity = true
                StandardStreams.note(value.identity.explanation)
            }
            writeFirstResult(columnNames: value.columnNames, batches: CollectionOfOne(value.rows))
        case .columnsChanged:
            if value.identity != .allValues, value.identity.columnIndexes(in: value.columnNames) == nil {
                StandardStreams.note("the key columns are no longer in the result: rows are identified by all their values")
            }
            write(settings.renderer.columnsChanged(columnNames: value.columnNames, rows: value.rows))
        case .difference(let difference):
            printChanges(difference, columnNames: value.columnNames)
        }
    }

    private func printChanges(_ changes: RowDifference, columnNames: [String]) {
        changeCount += 1
        write(settings.renderer.changes(changes, number: changeCount, columnNames: columnNames))
        if let count = settings.count, changeCount >= count {
            Lifecycle.exit(.success)
        }
    }

    /// Prints the first result, or the result after its columns changed.
    private func writeFirstResult(columnNames: [String], batches: some Sequence<[Row]>) {
        settings.renderer.streamInitialResult(
            columnNames: columnNames, afterColumnsChange: isAfterColumnsChange, batches: batches,
            write: { text in
                write(text)
                return true
            })
        isAfterColumnsChange = false
    }

    // MARK: - Observing with the tracker of a keyed query

    /// Watches with `tracker`: after each commit of another process, it
    /// reads the rows of the pages the commit wrote, or runs the query and
    /// compares its rows as bytes.
    private func observe(with tracker: KeyedQueryTracker) {
        guard let database else { return }
        self.tracker = tracker
        // Registered first, so that no commit after the first fetch goes
        // unseen. An external commit counts as a change of every region.
        cancellable = DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: settings.sql)).start(
            in: database,
            onError: { [self] error in
                MainActor.assumeIsolated { retryOrFail(error) { $0.observe() } }
            },
            onChange: { [self] db in
                let fullRefreshes = tracker.statistics.full
                // A writer of another process that starts during the refresh
                // interrupts it: it runs again, from the same kept rows,
                // once the writer is done.
                let refresh = Result { try tracker.refreshYieldingToWriters(db) }
                // A run of the whole query freed buffers of the result's size.
                if tracker.statistics.full > fullRefreshes { cmemory_release_free_memory() }
                DispatchQueue.main.async { MainActor.assumeIsolated { self.receive(refresh, from: tracker) } }
            })
        do {
            let rows = try database.writeWithoutTransaction { db in
                try tracker.start(db)
                return tracker.takeStartRows()
            }
            lockReleased()
            if !hasExplainedIdentity, let inspection {
                hasExplainedIdentity = true
                StandardStreams.note(inspection.identity.explanation)
            }
            writeFirstResult(columnNames: tracker.columnNames, batches: rows.batches())
            // Give back to the system the memory of the first fetch and of
            // its text, which glibc keeps otherwise.
            cmemory_release_free_memory()
        } catch is KeyedQueryTracker.UnkeyedRows {
            // Keys that are not integers, or not unique: watch by fetching.
            stopTracking()
            observe()
        } catch {
            cancellable = nil
            retryOrFail(error) { $0.observe() }
        }
    }

    /// Ends the watch by `tracker`: the next `observe()` fetches the rows
    /// and diffs them as `Row` values.
    private func stopTracking() {
        tracker = nil
        cancellable = nil
        mayTrack = false
    }

    private func receive(_ refresh: Result<KeyedQueryTracker.Refresh, any Error>, from tracker: KeyedQueryTracker) {
        guard tracker === self.tracker else { return }
        switch refresh {
        case .success(.unchanged):
            lockReleased()
        case .success(.changed(let changes)):
            lockReleased()
            printChanges(changes, columnNames: tracker.columnNames)
        case .success(.unkeyed):
            // Go on from the rows printed so far: the first fetch of the
            // other way is diffed against them.
            stopTracking()
            rowsPrintedByTracker = tracker.keptRows.all
            observe()
        case .success(.columnsChanged):
            // Inspect the query again: its key may have moved, or gone.
            self.tracker = nil
            cancellable = nil
            isAfterColumnsChange = true
            connect()
        case .failure(let error):
            retryOrFail(error) { watcher in
                guard let database = watcher.database, tracker === watcher.tracker else { return }
                Task { @MainActor in
                    do {
                        let refresh = try await database.writeWithoutTransaction { db in try tracker.refresh(db) }
                        watcher.receive(.success(refresh), from: tracker)
                    } catch {
                        watcher.receive(.failure(error), from: tracker)
                    }
                }
            }
        }
    }

    private func write(_ text: String) {
        fileMonitor?.noteWriteAheadLog()
        switch StandardStreams.output(text) {
        case .written: break
        // The reader of the output is gone: nothing more to do.
        case .closed: Lifecycle.exit(.success)
        case .failed(let reason): Lifecycle.fail(.outputFailed(reason))
        }
    }

    // MARK: - Probing

    /// Reads the schema, as any fetch would, off the main thread: a read
    /// that waits longer than the busy timeout for another process's lock
    /// prints the lock note (once per lock episode), and a database that
    /// can no longer be read (overwritten, corrupted) ends the tool, even
    /// when no commit comes to make the observation fetch again.
    ///
    /// The read comes only while another process holds a write lock (and
    /// it waits for its end, see `Configuration.observesExternalChanges`):
    /// in rollback-journal mode, a read at any other moment could be the one
    /// that a writer of another process meets when it commits, and a writer
    /// without a busy handler would then fail. Without such a lock, no read
    /// waits; commits are seen by the observation.
    private func probe() {
        guard isWatching, let database, !isProbing else { return }
        guard fileMonitor?.anotherProcessHoldsWriteLock ?? true else {
            lockReleased()
            return
        }
        isProbing = true
        Task { @MainActor [self] in
            do {
                _ = try await database.read { db in
                    try SQLRequest<Int>(sql: "SELECT count(*) FROM sqlite_master").fetchOne(db)
                }
                isProbing = false
                lockReleased()
            } catch let error as DatabaseError where error.isLockContention {
                isProbing = false
                noteLock()
            } catch let error as DatabaseError
                where [.SQLITE_NOTADB, .SQLITE_CORRUPT].contains(error.resultCode)
            {
                if let failure = fileMonitor?.failure { Lifecycle.fail(failure) }
                Lifecycle.fail(.noLongerADatabase(settings.path, reason: error.summary))
            } catch {
                // Another failure: the observation meets it too, and reports it.
                isProbing = false
            }
        }
    }

    // MARK: - Failures

    /// Waits and calls `retry` when the database is locked for longer than
    /// the busy timeout; otherwise ends the process with the error.
    private func retryOrFail(_ error: any Error, retry: @escaping @MainActor (Watcher) -> Void) {
        if let error = error as? DatabaseError, error.isLockContention, fileMonitor?.failure == nil {
            noteLock()
            DispatchQueue.main.asyncAfter(deadline: .now() + Self.retryDelay) { [self] in
                MainActor.assumeIsolated { retry(self) }
            }
            return
        }
        fail(error)
    }

    private func fail(_ error: any Error) -> Never {
        Lifecycle.fail(error, watching: settings.sql, monitor: fileMonitor)
    }

    private func noteLock() {
        guard !isWaitingForLock else { return }
        isWaitingForLock = true
        StandardStreams.note(Self.lockNote(busyTimeout: settings.busyTimeout))
    }

    /// The note printed once per lock that outlasts the busy timeout, by
    /// the watch and by the server.
    static func lockNote(busyTimeout: Duration) -> String {
        let seconds = Double(busyTimeout.components.seconds) + Double(busyTimeout.components.attoseconds) / 1e18
        return "the database is locked by another connection or process for longer than the busy timeout "
            + "(\(seconds.formatted())s): waiting, and retrying until it is released"
    }

    private func lockReleased() {
        guard isWaitingForLock else { return }
        isWaitingForLock = false
        StandardStreams.note("the database is no longer locked")
    }
}

extension Double {
    /// `5`, `0.2`: without a useless fractional part.
    fileprivate func formatted() -> String {
        rounded() == self ? String(Int(self)) : String(self)
    }
}
