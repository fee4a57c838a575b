#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
#if REACTIVESQLITE_INTERNAL_CHECKS
import Synchronization
#endif

/// What makes a connection yield to the writers of other connections and
/// processes, in rollback-journal mode, with `WriterYieldingVFS` (whose
/// files report `SQLITE_BUSY` for a shared lock while someone holds
/// RESERVED): a busy handler that retries soon, and a progress handler that
/// interrupts the reads of `Database.yieldingToWriters(_:)` when a writer
/// starts during them.
///
/// **The busy handler.** A yielding connection waits for every write
/// transaction of another connection to end before it reads: it should
/// read as soon as the writer is done. SQLite's own `sqlite3_busy_timeout`
/// sleeps 1, 2, 5, 10, ... up to 100 milliseconds between tries, so a read
/// could come up to 100 ms after the commit it waited for; this handler
/// sleeps 50 µs twenty times (a commit's syncs take about a millisecond),
/// then 0.1, 0.2, 0.4, 0.8, then 1 ms at most, up to
/// `Configuration.busyTimeout` in all.
///
/// **The progress handler.** A writer that takes RESERVED while a read
/// holds its shared lock fails when it tries to commit, if it has no busy
/// handler. The checks of the VFS come before the lock: a read that lasts
/// longer than the writer's way from RESERVED to EXCLUSIVE (its journal
/// writes, about a tenth of a millisecond) still meets it. Inside
/// `yieldingToWriters(_:)`, every `instructionInterval` virtual machine
/// instructions, the handler looks for a RESERVED lock, and interrupts the
/// statement when there is one: its transaction ends, the shared lock is
/// released, and the body runs again once the writer is done.
///
/// Not `Sendable`: the handlers run on the thread of the connection's
/// current access, inside SQLite's calls, and the scope is only used there.
final class WriterYielding {
    /// How often, in virtual machine instructions, the progress handler
    /// runs inside a statement: about two rows of a simple query.
    static let instructionInterval: Int32 = 16
    /// How often, at most, a read inside `yieldingToWriters(_:)` looks for
    /// a writer: each look is one `fcntl(F_GETLK)`, about a microsecond.
    /// Well under the time a writer takes from RESERVED to EXCLUSIVE.
    static let checkInterval: Duration = .microseconds(20)

    private let timeout: Duration
    private var connection: OpaquePointer?
    /// When the current wait began (the first call for a lock has count 0).
    private var waitStart = ContinuousClock.now
    /// When the progress handler last looked for a writer.
    private var lastCheck = ContinuousClock.now
    /// The depth of nested `yieldingToWriters(_:)` calls.
    var scopeDepth = 0
    /// Whether the progress handler interrupted a statement since the
    /// scope began.
    var didInterrupt = false

    #if REACTIVESQLITE_INTERNAL_CHECKS
    /// What the handlers did so far, for the tests (which read it from other threads).
    final class Statistics: Sendable {
        /// Calls of the busy handler.
        let busyCalls = Atomic<Int>(0)
        /// Statements interrupted for a writer.
        let interruptions = Atomic<Int>(0)
    }
    let statistics = Statistics()
    #endif

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Installs the handlers on `connection`, with this object as their
    /// unretained context: the owning `Database` closes the connection
    /// before it releases this object.
    func install(on connection: OpaquePointer) {
        self.connection = connection
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_busy_handler(
            connection,
            { context, count in
                Unmanaged<WriterYielding>.fromOpaque(context!).takeUnretainedValue().shouldRetry(count: count) ? 1 : 0
            }, context)
        sqlite3_progress_handler(
            connection, Self.instructionInterval,
            { context in
                Unmanaged<WriterYielding>.fromOpaque(context!).takeUnretainedValue().shouldInterrupt() ? 1 : 0
            }, context)
    }

    /// Whether to try the lock again, after a short sleep.
    private func shouldRetry(count: Int32) -> Bool {
        #if REACTIVESQLITE_INTERNAL_CHECKS
        statistics.busyCalls.add(1, ordering: .relaxed)
        #endif
        let now = ContinuousClock.now
        if count == 0 { waitStart = now }
        let remaining = timeout - (now - waitStart)
        guard remaining > .zero else { return false }
        // 50 µs for the first twenty tries (a commit's fsyncs take about a
        // millisecond), then 0.1, 0.2, 0.4, 0.8, 1, 1... ms.
        let step: Duration = count < 20 ? .microseconds(50) : .microseconds(100 << min(Int(count) - 20, 4))
        let sleep = min(step, .milliseconds(1), remaining)
        let (seconds, attoseconds) = sleep.components
        usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        return true
    }

    /// Whether a read of the current scope should stop for a writer.
    private func shouldInterrupt() -> Bool {
        guard scopeDepth > 0, let connection else { return false }
        let now = ContinuousClock.now
        guard now - lastCheck >= Self.checkInterval else { return false }
        lastCheck = now
        var pointer: UnsafeMutableRawPointer?
        guard sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, &pointer) == SQLITE_OK,
            let file = pointer?.assumingMemoryBound(to: sqlite3_file.self),
            let check = file.pointee.pMethods?.pointee.xCheckReservedLock
        else { return false }
        var isReserved: Int32 = 0
        guard check(file, &isReserved) == SQLITE_OK, isReserved != 0 else { return false }
        didInterrupt = true
        #if REACTIVESQLITE_INTERNAL_CHECKS
        statistics.interruptions.add(1, ordering: .relaxed)
        #endif
        return true
    }
}

extension Database {
    /// Runs `body`, a read (such as an observation's fetch), on a
    /// connection that yields to writers (see `WriterYielding`), and runs it
    /// again when it may have disturbed a writer or met one; on other
    /// connections, and inside a transaction, it just runs `body`.
    ///
    /// In rollback-journal mode, its shared locks are optimistic (see
    /// "Reads without a lock" in `WriterYieldingVFS`): no writer meets its
    /// reads. A run whose reads may have met a writer is thrown away, with
    /// its result or its error, the pages it read, and SQLite's copy of the
    /// schema when the schema may have changed; the next run waits for the
    /// writer. Elsewhere its reads take their locks, and the progress
    /// handler interrupts them when a writer starts.
    ///
    /// SQLite's copy of the schema is forgotten at the start of the next
    /// run, inside its scope: forgetting it reads the main schema again,
    /// and that reading, right after a writer was met, must not take a
    /// real lock that the writer's next commit could meet. A run that
    /// meets a writer there is thrown away too.
    ///
    /// `body` must be a read that may run several times: its effects are
    /// those of its last run.
    ///
    /// Beside writers that leave it no time to read (each run meets one),
    /// it gives up once `Configuration.busyTimeout` has passed since its
    /// first run, and throws `SQLITE_BUSY`, as a lock refused for that
    /// long does. It never falls back on a real lock: the next writer's
    /// commit would meet it, and a writer without a busy handler would
    /// fail.
    package func yieldingToWriters<T>(_ body: () throws -> T) throws -> T {
        guard let yielding = writerYielding, !isInsideTransaction, yielding.scopeDepth == 0 else { return try body() }
        let cycle = mainFileSharedLockCycle()
        let start = ContinuousClock.now
        var forgetsSchema = false
        while true {
            yielding.scopeDepth += 1
            cycle?.allowsOptimism = true
            cycle?.metWriter = false
            cycle?.schemaMayHaveChanged = false
            if forgetsSchema {
                forgetsSchema = false
                forgetSchemaOfConnection()
            }
            let result = Result { try body() }
            yielding.scopeDepth = 0
            let interrupted = yielding.didInterrupt
            yielding.didInterrupt = false
            let endCode = cycle?.endScope(timeout: configuration.busyTimeout) ?? SQLITE_OK
            if let cycle, cycle.metWriter {
                discardReads(of: cycle)
                if cycle.schemaMayHaveChanged { forgetsSchema = true }
                // SQLite keeps its lock beyond the scope (`locking_mode =
                // EXCLUSIVE`): real from now on.
                try check(cycle.makeRealAfterDiscard(timeout: configuration.busyTimeout))
                try checkTimeToRead(since: start)
                continue
            }
            switch result {
            case .failure(let error as DatabaseError) where error.resultCode == .SQLITE_INTERRUPT && interrupted:
                // The interrupted read may have left its transaction open.
                rollbackDiscardedRead()
                try checkTimeToRead(since: start)
            case .failure(let error):
                throw error
            case .success(let value):
                try check(endCode)
                return value
            }
        }
    }

    /// Throws `SQLITE_BUSY` when the runs of a read that writers keep
    /// meeting began `Configuration.busyTimeout` ago or more.
    private func checkTimeToRead(since start: ContinuousClock.Instant) throws {
        guard ContinuousClock.now - start >= configuration.busyTimeout else { return }
        throw DatabaseError(
            resultCode: .SQLITE_BUSY,
            message: "database is locked: writers of other connections left no time to read for \(configuration.busyTimeout)",
            connectionLabel: label)
    }

    /// Rolls back the transaction a thrown-away read left open, if any,
    /// without reading the schema version afterwards: that reading would
    /// take a real shared lock (the scope has ended), right after a writer
    /// was met, and its next commit could meet it. The next access reads
    /// the version, inside its own scope.
    private func rollbackDiscardedRead() {
        refreshesSchemaAfterRollback = false
        defer { refreshesSchemaAfterRollback = true }
        rollbackIfInsideTransaction()
    }

    /// The shared-lock cycle of the main database file, when
    /// `WriterYieldingVFS` opened it.
    func mainFileSharedLockCycle() -> SharedLockCycle? {
        var pointer: UnsafeMutableRawPointer?
        guard sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, &pointer) == SQLITE_OK,
            let file = pointer?.assumingMemoryBound(to: sqlite3_file.self)
        else { return nil }
        return WriterYieldingVFS.cycle(ofMainFile: file)
    }

    /// Throws away what a run that may have met a writer read: its
    /// transaction, and SQLite's copy of the pages it read. Reads nothing.
    func discardReads(of cycle: SharedLockCycle) {
        rollbackDiscardedRead()
        // SQLITE_FCNTL_RESET_CACHE (SQLite 3.44 and later, and some
        // earlier builds); else the VFS makes the next reading of the
        // file's version differ, which drops the pages too.
        let resetCache: Int32 = 42
        if sqlite3_file_control(connection, "main", resetCache, nil) != SQLITE_OK {
            cycle.forgetsPages = true
            // A connection that keeps its lock (`locking_mode = EXCLUSIVE`)
            // does not read the file's version again: its unused pages
            // are freed instead (none is in use after the rollback).
            sqlite3_db_release_memory(connection)
        }
    }

    /// Makes SQLite forget its copy of every schema of the connection (a
    /// read that met a writer may have left one that mixes two states): it
    /// reads them again, the main one at once. Inside `yieldingToWriters`,
    /// that reading is optimistic too, and validated with the run.
    func forgetSchemaOfConnection() {
        // A transaction that changes the temporary schema and rolls back
        // makes SQLite forget every schema of the connection, which it reads
        // again when it next needs it: the one way that works on every
        // SQLite we run on (`PRAGMA writable_schema = RESET` is missing from
        // SQLCipher's). Creating the table reads the main schema first (a
        // shared lock on the main database). `query_only` would refuse the
        // temporary table: lifted for the time of it.
        let isQueryOnly = (try? SQLRequest<Bool>(sql: "PRAGMA query_only").fetchOne(self)) == true
        if isQueryOnly { sqlite3_exec(connection, "PRAGMA query_only = 0", nil, nil, nil) }
        sqlite3_exec(connection, "BEGIN; CREATE TEMP TABLE reactivesqlite_schema_reset(x); ROLLBACK", nil, nil, nil)
        // A statement that failed midway leaves the transaction open.
        if sqlite3_get_autocommit(connection) == 0 { sqlite3_exec(connection, "ROLLBACK", nil, nil, nil) }
        if isQueryOnly { sqlite3_exec(connection, "PRAGMA query_only = 1", nil, nil, nil) }
        observationBroker.forgetInternalRollback()
        // Our own copy too: the run may have read the schema version and
        // table schemas of a mixed state (reads nothing).
        clearSchemaCache()
    }
}

extension Database {
    /// Whether the main database is in WAL mode, as this connection last
    /// found it (`PRAGMA journal_mode`, which takes no lock once the
    /// schema is read).
    package func isInWALMode() throws -> Bool {
        try SQLRequest<String>(sql: "PRAGMA journal_mode").fetchOne(self)?.lowercased() == "wal"
    }
}
