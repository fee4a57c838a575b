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
    /// The rows printed last: after a failure, the observation that takes
    /// over starts its first difference from them.
    private var printedRows: ResultRows?
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
            // Without a lock a writer of another process could meet.
            inspection = try database.readYieldingToWriters { db in
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

    /// Watches the query with `ValueObservation.trackingRowDifferences`:
    /// rows identified by one integer column are kept as bytes, and, in WAL
    /// mode, only the rows of the pages another process's commit wrote are
    /// read again.
    private func observe() {
        guard let database else { return }
        isWatching = true
        // Given `--key` columns identify the rows; otherwise the observation
        // infers the key, again when the result's columns change.
        let identity = settings.keys.isEmpty ? nil : inspection?.identity
        let observation = ValueObservation.trackingRowDifferences(
            sql: settings.sql, identifiedBy: identity, isOrdered: settings.isOrdered, initialRows: printedRows)
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
        printedRows = value.rows
        switch value.change {
        case .initial:
            if !hasExplainedIdentity {
                hasExplainedIdentity = true
                StandardStreams.note(value.identity.explanation)
            }
            writeWholeResult(value, afterColumnsChange: false)
        case .columnsChanged:
            if value.identity != .allValues, value.identity.columnIndexes(in: value.columnNames) == nil {
                StandardStreams.note("the key columns are no longer in the result: rows are identified by all their values")
            }
            writeWholeResult(value, afterColumnsChange: true)
        case .difference(let difference):
            changeCount += 1
            write(settings.renderer.changes(difference, number: changeCount, columnNames: value.columnNames))
            if let count = settings.count, changeCount >= count {
                Lifecycle.exit(.success)
            }
        }
    }

    /// Prints the first result, or the result after its columns changed,
    /// in parts.
    private func writeWholeResult(_ value: RowsWithDifference, afterColumnsChange: Bool) {
        settings.renderer.streamInitialResult(
            columnNames: value.columnNames, afterColumnsChange: afterColumnsChange,
            batches: value.rows.batches(of: 128),
            write: { text in
                write(text)
                return true
            })
        // Give back to the system the memory of the whole fetch and of its
        // text, which glibc keeps otherwise.
        cmemory_release_free_memory()
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
                // After the writer's commit, without a lock the next writer
                // could meet (see `Configuration.observesExternalChanges`).
                _ = try await database.readYieldingToWriters { db in
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
