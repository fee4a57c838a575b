import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Notices the commits that other connections and other processes make to
/// the database file of a `DatabaseQueue` or a `DatabasePool` whose
/// configuration has `observesExternalChanges`, and tells every
/// observation of its writer, as a change of the whole database.
///
/// SQLite's hooks only see the commits of their own connection. What every
/// connection can see is `PRAGMA data_version`:
///
/// > The integer values returned by two invocations of "PRAGMA
/// > data_version" from the same connection will be different if changes
/// > were committed to the database by any other connection in the interim.
/// > The "PRAGMA data_version" value is unchanged for changes committed on
/// > the same database connection. https://www.sqlite.org/pragma.html#pragma_data_version
///
/// Two readings of it tell an external commit from one of ours:
/// 1. The detector's own read-only connection reads it every
///    `externalChangePollInterval`, and on Linux as soon as the database
///    file, its write-ahead log or its journal is written (inotify, see
///    `DatabaseFileEvents`), on its own queue, without holding up the
///    writer. The writer is another connection to it, so this value
///    also changes after our own commits: a change only says that someone
///    committed.
/// 2. After such a change, the writer reads its own `data_version`, in an
///    access of its own: that value changes only for the commits of other
///    connections. When it changed, the broker tells every observation
///    (`ObservationBroker.databaseDidChangeExternally()`), in that
///    same access, as after a local commit.
///
/// The second reading is exact whatever the order of polls, local commits
/// and external commits: a local commit alone never changes it, and an
/// external commit always changes it before the check that follows the
/// first poll to read a value that includes that commit (so each external
/// commit is seen by a check, and the fetches that the check starts read
/// it). Several external commits between two checks make one detection.
///
/// A database file deleted or replaced under the connections (moved away,
/// or another file renamed over its path) goes on being read through their
/// open descriptors, and no commit to the new file would ever be seen:
/// every reading first compares the file at the path with the one opened
/// (device and inode), and when they differ, every observation ends with
/// `SQLITE_READONLY_DBMOVED`, as does every observation that starts later.
///
/// The dedicated connection is opened when the first observation starts,
/// and closed when the last one ends or when the database is closed: no
/// observation, no polling.
///
/// `@unchecked Sendable`: `observationCount` and `writerDataVersion` are
/// only used on the writer's queue (in its accesses); `state` is behind its
/// lock; the other properties are immutable.
final class ExternalChangeDetector: @unchecked Sendable {
    private let path: String
    private let configuration: Configuration
    /// The `PRAGMA synchronous` level of the dedicated connection, unless
    /// `prepareDatabase` sets one.
    private let defaultSynchronous: String?
    private let owner: AccessOwner
    private let writer: SerializedDatabase
    private let interval: DispatchTimeInterval
    private let leeway: DispatchTimeInterval
    /// The device and inode of the file at `path` when the writer had just
    /// opened it; nil when it could not be read (then nothing is compared).
    private let openedFile: FileIdentity?

    // Writer's queue only.
    /// The number of observations of the writer that have started and not ended.
    private var observationCount = 0
    /// The writer's `data_version` at its last check; nil while not polling.
    private var writerDataVersion: Int?

    /// The dedicated connection and its timer, for one period of polling.
    ///
    /// `@unchecked Sendable`: `lastDataVersion`, `storedHeader` and the other
    /// variables are only
    /// used on the connection's queue (its initial value is set before the timer
    /// starts); the rest is immutable (the timer is thread-safe).
    private final class Poller: @unchecked Sendable {
        let connection: SerializedDatabase
        let timer: any DispatchSourceTimer
        /// Wakes the poller when the files are written (Linux).
        var fileEvents: DatabaseFileEvents?
        var lastDataVersion: Int
        /// Whether a reading is queued and not done: the ticks and file
        /// events that come meanwhile are merged into it.
        var isReadingQueued = false
        /// Readings that found a new version, so far.
        var changeCount = 0
        /// Identifies the latest chain of readings after a file event (see
        /// `pollAfterWrite`): an older chain stops.
        var followUpGeneration = 0
        /// The stored bytes of the first page (16 to 100: the file change
        /// counter, and more of an encrypted page) read before the last
        /// reading of `data_version`, in rollback-journal mode; nil in WAL
        /// mode, or before a reading succeeded. See `poll(_:)`.
        var storedHeader: [UInt8]?
        /// Whether the last reading failed for another reason than a lock
        /// (the file is no longer a database, an I/O error): the
        /// observations were told once, and are not told again until a
        /// reading succeeds.
        var isFailing = false
        /// Whether the observations were told that the file moved.
        var hasToldMove = false

        init(connection: SerializedDatabase, timer: any DispatchSourceTimer, lastDataVersion: Int) {
            self.connection = connection
            self.timer = timer
            self.lastDataVersion = lastDataVersion
        }
    }

    private struct State {
        /// The database was closed: never poll again.
        var isClosed = false
        /// The current poller, while at least one observation runs.
        var poller: Poller?
        #if REACTIVESQLITE_INTERNAL_CHECKS
        /// Dedicated connections opened and not closed yet.
        var openConnectionCount = 0
        /// Readings of `data_version` by the dedicated connections.
        var pollCount = 0
        /// Readings of the writer's own `data_version`.
        var writerCheckCount = 0
        /// Checks that found an external commit (and notified).
        var detectionCount = 0
        #endif
        /// A check could not read the writer's `data_version`: the next
        /// poll asks for another check, changed or not.
        var isCheckDue = false
    }
    private let state = LockedState(State())

    /// A detector for a database whose configuration observes external
    /// changes, or nil: for a configuration that does not, and for an
    /// in-memory database, which no other connection writes.
    ///
    /// - Parameter defaultSynchronous: The `PRAGMA synchronous` level of the
    ///   dedicated connection unless `Configuration.prepareDatabase` sets
    ///   one, as for the other connections of the queue or pool.
    static func ifEnabled(
        path: String, configuration: Configuration, owner: AccessOwner, writer: SerializedDatabase,
        defaultSynchronous: String? = nil
    ) -> ExternalChangeDetector? {
        guard configuration.observesExternalChanges, path != ":memory:", !path.isEmpty else { return nil }
        return ExternalChangeDetector(
            path: path, configuration: configuration, owner: owner, writer: writer,
            defaultSynchronous: defaultSynchronous)
    }

    private init(
        path: String, configuration: Configuration, owner: AccessOwner, writer: SerializedDatabase,
        defaultSynchronous: String?
    ) {
        let duration = configuration.externalChangePollInterval
        if duration <= .zero {
            // fatalError rather than precondition: the message shows in release builds too.
            fatalError(
                "Configuration.externalChangePollInterval must be positive when observesExternalChanges is true "
                    + "(got \(duration))")
        }
        let nanoseconds = duration.clampedNanoseconds(minimum: 1)
        self.path = path
        self.configuration = configuration
        self.defaultSynchronous = defaultSynchronous
        self.owner = owner
        self.writer = writer
        openedFile = FileIdentity(path: path)
        interval = .nanoseconds(nanoseconds)
        leeway = .nanoseconds(max(1, nanoseconds / 10))
    }

    deinit {
        // Normally stopped already: observations keep their database alive
        // until they end, and the last one to end stops polling.
        if let poller = state.withLock({ $0.poller }) {
            poller.timer.cancel()
            poller.fileEvents?.cancel()
            poller.connection.closeAfterPendingAccesses()
        }
    }

    // MARK: - Observations

    /// Counts an observation that starts; the first one starts polling.
    /// Called on the writer, before the observation's first fetch: an
    /// external commit made after that fetch began is then detected.
    ///
    /// Every call that returns must be balanced by one `observationDidEnd()`.
    ///
    /// - Throws: The `DatabaseError` of opening the dedicated connection.
    func observationWillStart(_ db: Database) throws {
        if let error = movedFileError() { throw error }
        observationCount += 1
        guard observationCount == 1 else { return }
        do {
            try startPolling(db)
        } catch {
            observationCount -= 1
            throw error
        }
    }

    /// Counts an observation that ended; after the last one, polling stops
    /// and the dedicated connection closes. Called on the writer.
    func observationDidEnd() {
        assert(observationCount > 0, "an observation ended that had not started")
        observationCount -= 1
        guard observationCount == 0 else { return }
        writerDataVersion = nil
        let poller = state.withLock { state in
            defer { state.poller = nil }
            return state.poller
        }
        guard let poller else { return }
        poller.timer.cancel()
        poller.fileEvents?.cancel()
        poller.connection.closeAfterPendingAccesses()
        // After the close, on the same serial queue.
        #if REACTIVESQLITE_INTERNAL_CHECKS
        poller.connection.queue.async { [state] in state.withLock { $0.openConnectionCount -= 1 } }
        #endif
    }

    /// Stops polling for good and closes the dedicated connection, waiting
    /// for a poll in progress. Called when the database closes.
    func close() {
        let poller = state.withLock { state in
            state.isClosed = true
            defer { state.poller = nil }
            return state.poller
        }
        guard let poller else { return }
        poller.timer.cancel()
        poller.fileEvents?.cancel()
        poller.connection.close()
        #if REACTIVESQLITE_INTERNAL_CHECKS
        state.withLock { $0.openConnectionCount -= 1 }
        #endif
    }

    // MARK: - Polling

    /// On the writer: reads the writer's version, then opens the dedicated
    /// connection and reads its version, and starts the timer.
    ///
    /// Both readings happen before the first fetch of the observation: a
    /// commit made between them is seen by that fetch (and may be detected
    /// once more, which costs one fetch that finds nothing new).
    private func startPolling(_ db: Database) throws {
        guard !state.withLock({ $0.isClosed }) else { return }
        writerDataVersion = try db.yieldingToWriters { try db.dataVersion() }
        let connection = try SerializedDatabase(
            path: path, configuration: configuration, role: "watcher", readonly: true,
            defaultSynchronous: defaultSynchronous, owner: owner)
        let initialVersion: Int
        do {
            initialVersion = try connection.sync { db in try db.yieldingToWriters { try db.dataVersion() } }
        } catch {
            connection.close()
            writerDataVersion = nil
            throw error
        }
        let timer = DispatchSource.makeTimerSource(queue: connection.queue)
        let poller = Poller(connection: connection, timer: timer, lastDataVersion: initialVersion)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: leeway)
        // Weak references: the timer belongs to the poller.
        timer.setEventHandler { [weak self, weak poller] in
            guard let self, let poller else { return }
            poll(poller)
        }
        poller.fileEvents = DatabaseFileEvents(path: path, queue: connection.queue) { [weak self, weak poller] in
            guard let self, let poller else { return }
            pollAfterWrite(poller)
        }
        let isStarted = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            state.poller = poller
            #if REACTIVESQLITE_INTERNAL_CHECKS
            state.openConnectionCount += 1
            state.pollCount += 1
            #endif
            return true
        }
        guard isStarted else {
            // Closed meanwhile.
            writerDataVersion = nil
            timer.cancel()
            poller.fileEvents?.cancel()
            connection.close()
            return
        }
        timer.resume()
    }

    /// The longest delay between two readings that follow a file event.
    static let longestFollowUpDelay = 512

    /// On the dedicated connection's queue, when a file of the database was
    /// written: reads at once, then, in WAL mode, again after 1, 2, 4, ...
    /// 512 milliseconds, until a reading *after the first* finds a new
    /// version. In WAL mode the last step of a commit is the update of the
    /// shared-memory index, which no file event reports: the first readings
    /// may come before it, a later one comes after. A write that is not a
    /// commit (pages of a transaction under way, a checkpoint) costs these
    /// ten readings.
    ///
    /// The first reading may find the commit *before* the one that wrote:
    /// the log had been written by the next commit (which waits for the
    /// previous one to be complete) before the reading that would have
    /// found the previous one ran. A change found there says nothing of the
    /// commit that wrote, so it does not end the chain (`FollowUpChain`):
    /// it ended there once, and that last commit of a burst was never seen
    /// (`ExternalChangeAdversarialTests.ownCommitsRightAfterExternalOnes`,
    /// pool, under load). Any change found after the first reading comes
    /// from that commit or a later one.
    ///
    /// In rollback-journal mode, the last write of a commit (the journal
    /// deleted, truncated or zeroed) comes before the writer releases its
    /// locks, and a reading that finds the writer's RESERVED lock waits for
    /// that release (`WriterYieldingVFS`): the reading of the last event
    /// sees the commit, and no later reading is needed. Readings that
    /// come at random moments are the ones that can meet the next writer
    /// of a busy file (see `poll(_:)`): there are none.
    private func pollAfterWrite(_ poller: Poller) {
        poll(poller)
        guard poller.storedHeader == nil else { return }
        poller.followUpGeneration += 1
        followUp(poller, generation: poller.followUpGeneration, chain: FollowUpChain(), delay: 1)
    }

    private func followUp(_ poller: Poller, generation: Int, chain: FollowUpChain, delay: Int) {
        poller.connection.queue.asyncAfter(deadline: .now() + .milliseconds(delay)) { [weak self, weak poller] in
            // The first reading (queued by `pollAfterWrite`, on this serial
            // queue) and its completion ran before this block.
            var chain = chain
            guard let self, let poller, poller.followUpGeneration == generation,
                chain.readsAgain(changeCount: poller.changeCount)
            else { return }
            poll(poller)
            if delay < Self.longestFollowUpDelay {
                followUp(poller, generation: generation, chain: chain, delay: delay * 2)
            }
        }
    }

    /// On the dedicated connection's queue, at each tick: reads its version,
    /// and when it changed asks the writer for a check.
    ///
    /// The timer runs on the connection's queue, and the reading is the next
    /// block of that queue: ticks that come while a reading waits (for a
    /// lock held by another process) are merged into one.
    ///
    /// In rollback-journal mode, a reading takes a shared lock on the file,
    /// and a writer of another process that wants to commit meanwhile fails
    /// unless it has a busy handler. So the reading first compares the
    /// bytes of the first page as stored (SQLite increments the file change
    /// counter there at each commit, and SQLCipher writes the whole page
    /// anew) with those read before the last reading, without any lock,
    /// through SQLite's own file handle: the same bytes mean no commit
    /// since, and no lock is taken. Bytes read while a writer writes them
    /// may be torn or roll back: they only cause one more reading.
    private func poll(_ poller: Poller) {
        if let error = movedFileError() {
            guard !poller.hasToldMove else { return }
            poller.hasToldMove = true
            writer.asyncWithoutWaiting { [self] db in
                guard writerDataVersion != nil else { return }  // No observation now.
                db.observationBroker.databaseFileDidMove(error)
            }
            return
        }
        guard !poller.isReadingQueued else { return }
        poller.isReadingQueued = true
        poller.connection.asyncAccess({ db in try Self.readDataVersion(db, poller) }, completion: { [self] result in
            poller.isReadingQueued = false
            let version: Int
            switch result {
            case .success(nil):
                // The first page is as it was: no commit since the last reading.
                version = poller.lastDataVersion
            case .success(let value?):
                version = value
                poller.isFailing = false
            case .failure(let error as DatabaseError) where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED:
                // The file was locked, or its writers left no time to read,
                // for longer than the busy timeout: keep the previous
                // version, and read again soon. Not at the next tick alone:
                // ticks may be an hour apart, and the file events of the
                // writer's last commits came while this reading was queued,
                // which made no other (`isReadingQueued`).
                poller.connection.queue.asyncAfter(deadline: .now() + .milliseconds(10)) { [weak self, weak poller] in
                    guard let self, let poller, state.withLock({ $0.poller === poller }) else { return }  // Stopped.
                    poll(poller)
                }
                return
            case .failure:
                // The file may no longer be a database (overwritten,
                // truncated, unreadable): the observations fetch again, once
                // per failing episode, and meet the error themselves if
                // their reads fail too.
                guard !poller.isFailing else { return }
                poller.isFailing = true
                writer.asyncWithoutWaiting { [self] db in
                    guard writerDataVersion != nil else { return }  // No observation now.
                    Self.tellObservations(db)
                }
                return
            }
            let hasChanged = version != poller.lastDataVersion
            poller.lastDataVersion = version
            if hasChanged { poller.changeCount += 1 }
            let isCheckDue = state.withLock { state -> Bool? in
                guard state.poller === poller else { return nil }
                defer { state.isCheckDue = false }
                return state.isCheckDue
            }
            guard let isCheckDue else { return }  // Stopped meanwhile.
            if hasChanged || isCheckDue {
                writer.asyncWithoutWaiting { [self] db in checkWriter(db) }
            }
            #if REACTIVESQLITE_INTERNAL_CHECKS
            // Counted once the check is scheduled: a check asked by this
            // reading runs before any writer access that starts after the
            // count is seen (tests rely on it).
            state.withLock { state in
                if state.poller === poller { state.pollCount += 1 }
            }
            #endif
        })
    }

    /// The error of a file that is no longer at its path, or nil while the
    /// path names the file the writer opened (or when that is unknown).
    private func movedFileError() -> DatabaseError? {
        guard let openedFile else { return nil }
        let current = FileIdentity(path: path)
        guard current != openedFile else { return nil }
        let what = current == nil ? "was deleted or moved away" : "was replaced by another file"
        return DatabaseError(
            resultCode: .SQLITE_READONLY_DBMOVED,
            message: "the database file \(path) \(what) since it was opened: its connections read a file that "
                + "is no longer there, and would never see its changes (open the database again)",
            connectionLabel: "\(configuration.label).watcher")
    }

    /// On the dedicated connection: its `data_version`, or nil when the
    /// file's first page, read without a lock, is as it was before the
    /// last reading in rollback-journal mode (see `poll(_:)`).
    ///
    /// The page is read before `data_version`: a commit between the two
    /// is in the version, and changes the page from the one kept, which
    /// only costs one more reading later; the other order could keep the
    /// page of a commit whose version was never read.
    private static func readDataVersion(_ db: Database, _ poller: Poller) throws -> Int? {
        let header = try? db.readStoredFile(.database, offset: 16, count: 84)
        if let header, header == poller.storedHeader { return nil }
        // Without a lock in rollback mode (see `WriterYieldingVFS`); the
        // journal mode too, which reads the schema when SQLite forgot it
        // (after a read that met a schema change). Known once the reading
        // opened the file (the log, in WAL mode).
        let (version, isInWALMode) = try db.yieldingToWriters { (try db.dataVersion(), try db.isInWALMode()) }
        poller.storedHeader = isInWALMode ? nil : header
        return version
    }

    /// On the writer: when its own `data_version` changed, an external
    /// commit happened: every observation is told.
    private func checkWriter(_ db: Database) {
        guard let previousVersion = writerDataVersion else { return }  // No observation now.
        #if REACTIVESQLITE_INTERNAL_CHECKS
        state.withLock { $0.writerCheckCount += 1 }
        #endif
        // An access starts outside of any transaction (one left open is
        // rolled back when its access ends: see `Database.withAccess`).
        // Inside one, the writer would read its own snapshot: look again
        // after the next poll.
        guard !db.isInsideTransaction, let version = try? db.yieldingToWriters({ try db.dataVersion() }) else {
            state.withLock { $0.isCheckDue = true }
            return
        }
        guard version != previousVersion else { return }
        writerDataVersion = version
        #if REACTIVESQLITE_INTERNAL_CHECKS
        state.withLock { $0.detectionCount += 1 }
        #endif
        Self.tellObservations(db)
    }

    /// On the writer: every observation fetches again, as after a local
    /// commit. The file may have changed its schema: what depends on it is
    /// forgotten first, before the observations compile their fetches (a
    /// failure leaves the check to the next access that reads the schema).
    private static func tellObservations(_ db: Database) {
        try? db.yieldingToWriters { try db.refreshSchemaCacheIfNeeded() }
        db.observationBroker.databaseDidChangeExternally()
    }

    #if REACTIVESQLITE_INTERNAL_CHECKS
    // MARK: - Instrumentation (tests; REACTIVESQLITE_INTERNAL_CHECKS builds only)

    /// Whether a dedicated connection polls now.
    var isPolling: Bool { state.withLock { $0.poller != nil } }
    /// Dedicated connections opened and not closed yet.
    var openConnectionCount: Int { state.withLock { $0.openConnectionCount } }
    /// Readings of `data_version` by the dedicated connections so far.
    var pollCount: Int { state.withLock { $0.pollCount } }
    /// Readings of the writer's own `data_version` so far.
    var writerCheckCount: Int { state.withLock { $0.writerCheckCount } }
    /// External commits detected so far (several commits between two
    /// checks count as one detection).
    var detectionCount: Int { state.withLock { $0.detectionCount } }
    #endif
}

/// The readings that follow a file event in WAL mode (see
/// `ExternalChangeDetector.pollAfterWrite`): whether each follow-up reads.
struct FollowUpChain {
    /// The count of readings that found a new version, after the first
    /// reading that followed the event; nil before the first follow-up.
    private var baseline: Int?

    /// Whether the follow-up due now reads, given the count of readings
    /// that found a new version so far: yes until a reading after the
    /// first one found one. The first follow-up always reads (a change
    /// found by the first reading may be an earlier commit's).
    mutating func readsAgain(changeCount: Int) -> Bool {
        guard let baseline else {
            baseline = changeCount
            return true
        }
        return changeCount == baseline
    }
}

/// Which file a path names: its device and inode.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file at `path` (symbolic links followed), or nil
    /// when there is none.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
