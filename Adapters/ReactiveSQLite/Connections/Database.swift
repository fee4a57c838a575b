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
import DatabaseRegions
import Synchronization

/// A connection to a SQLite database, as seen inside an access closure.
///
/// You never create a `Database`: a `DatabaseQueue` or a `DatabasePool` hands
/// one to the closures of `read`, `write` and `writeWithoutTransaction`.
///
/// ```swift
/// try dbQueue.write { db in
///     try db.execute(sql: "INSERT INTO player (name) VALUES (?)", arguments: ["Arthur"])
///     let id = db.lastInsertedRowID
/// }
/// ```
///
/// `Database` is not `Sendable`, and the compiler keeps it inside its
/// closure. Using it anyway outside its closure, or from another thread (for
/// example through an unsafe pointer or a stored reference), is a programmer
/// error that stops the program with a message saying so.
public final class Database {
    /// The configuration of the connection.
    public let configuration: Configuration

    /// The label of the connection: `Configuration.label` and the connection's
    /// role (`main`, `writer`, `reader.2`).
    public let label: String

    /// Whether this is a `DatabaseQueue`'s connection (not one of a pool's,
    /// nor the one that watches external changes).
    let isQueueConnection: Bool

    /// The raw `sqlite3 *` handle; nil once closed.
    private(set) var connection: OpaquePointer?

    /// The thread running the current access, or nil outside accesses.
    private var accessThread: pthread_t?

    /// Whether a read transaction outlives the current access on purpose:
    /// between `beginPinnedRead()` and `endPinnedRead()`, which run in two
    /// accesses of a pool's reader.
    var isPinningRead = false

    /// The busy and progress handlers of a connection whose files yield to
    /// writers (see `WriterYieldingVFS`); nil for SQLite's own busy timeout.
    let writerYielding: WriterYielding?

    /// Whether `inTransaction` runs its body (it does not nest: its `BEGIN`
    /// fails inside a transaction).
    var isRunningManagedTransaction = false

    /// The error after which SQLite rolled back the transaction of
    /// `inTransaction` by itself (a conflict resolved with ROLLBACK,
    /// `RAISE(ROLLBACK)`, SQLITE_FULL, a failed COMMIT run by hand): from
    /// then on until `inTransaction` ends, statements throw SQLITE_ABORT
    /// instead of running outside of the transaction, each committed alone.
    var transactionRolledBackBySQLite: DatabaseError?

    /// A statement failed with `error`: notes a rollback SQLite made by
    /// itself in the transaction of `inTransaction`.
    func statementDidFail(_ error: DatabaseError) {
        if isRunningManagedTransaction, transactionRolledBackBySQLite == nil, !isInsideTransaction {
            transactionRolledBackBySQLite = error
        }
    }

    /// The error of a statement that would run after SQLite rolled back the
    /// transaction of `inTransaction` (see `transactionRolledBackBySQLite`);
    /// `sql` nil for the end of `inTransaction`.
    func transactionAbortedError(sql: String?) -> DatabaseError? {
        guard let cause = transactionRolledBackBySQLite else { return nil }
        return DatabaseError(
            resultCode: .SQLITE_ABORT,
            message: "SQLite rolled back the transaction after an error (\(cause.message ?? "\(cause.extendedResultCode)")): "
                + (sql == nil ? "nothing was committed" : "no statement runs until the transaction ends"),
            sql: sql ?? cause.sql, connectionLabel: label)
    }

    /// Whether the current access is a read (`DatabaseQueue.read`), which
    /// `PRAGMA query_only` keeps from writing: a statement that sets that
    /// pragma throws there (it could turn it off, then write).
    var isReadOnlyAccess = false

    /// Whether a rollback reads the schema version afterwards (see
    /// `refreshSchemaCacheAfterRollback()`): not while
    /// `yieldingToWriters(_:)` throws a read away, because that reading
    /// would take a real shared lock, right after a writer of another
    /// process was met, which its commit could then meet.
    var refreshesSchemaAfterRollback = true

    /// Whether the connection is closed, readable from any thread: statements
    /// released after the close finalize their handles under this lock.
    private let closedState = Mutex(false)

    /// Compiled statements by their SQL, byte for byte (two texts that
    /// differ only by Unicode normalization, such as two spellings of a
    /// quoted name, are two statements for SQLite).
    private var statementCache: [ExactText: Statement] = [:]
    var schemaCache = SchemaCache()

    /// How records write their tables, by record type: a few plans per type,
    /// one per list of encoded columns (see `RecordWritePlan`). Forgotten
    /// with the statement cache.
    var recordWritePlans: [ObjectIdentifier: [RecordWritePlan]] = [:]

    /// Emptied containers of records, kept with their storage for the next
    /// record's write (see `withPersistenceContainer(of:_:)`).
    var spareContainers: [PersistenceContainer] = []

    /// The function `trace(options:_:)` installed, and its options.
    var tracer: (options: TracingOptions, trace: (TraceEvent) -> Void)?

    /// Collects what the statement being compiled reads (see `Database+Authorizer.swift`).
    var regionRecorder: RegionRecorder?

    /// The table or view a DROP statement being compiled (or recompiled by
    /// SQLite) drops, until the authorizer answers its SQLITE_DELETE (see
    /// `Database+Authorizer.swift`).
    var droppedTableName: String?

    /// Collects what the statement being compiled may change (see `StatementEffects`).
    var effectsRecorder: StatementEffects?

    /// The change hooks of the connection, created when first observed (see
    /// `ObservationBroker`).
    private(set) lazy var observationBroker = ObservationBroker(database: self)

    /// The observation broker, once something observes the connection:
    /// statements report their start and end to it.
    var activeObservationBroker: ObservationBroker? {
        guard let broker = installedObservationBroker, broker.isObserving else { return nil }
        return broker
    }
    /// The observation broker, once it installed its hooks.
    var installedObservationBroker: ObservationBroker?

    /// While an observation fetches its value, the union of the regions of
    /// the statements it runs; nil otherwise.
    var selectionRegion: DatabaseRegion?

    /// While `observedRegion(of:)` runs, the views of the statements whose
    /// regions it asks for; nil otherwise.
    var readViewsRecorder: [String]?

    /// Whether a `PRAGMA synchronous` that sets the main database's level
    /// was compiled on this connection (see `Database+Authorizer.swift`):
    /// then `Configuration.prepareDatabase` chose the level, and the
    /// connection's default does not replace it.
    var compiledSynchronousPragma = false

    /// Opens a connection and prepares it, in this order: the C-level
    /// settings (extended result codes, busy timeout, foreign keys, the
    /// authorizer), none of which reads the file; `Configuration.prepareDatabase`;
    /// `PRAGMA synchronous = <defaultSynchronous>` unless `prepareDatabase`
    /// set a level; a read of the schema, so that a file that is not a
    /// database fails here.
    ///
    /// `prepareDatabase` runs before the first statement that reads the file
    /// (`PRAGMA synchronous` reads the schema: on a file that is not a
    /// database, or that is encrypted and has no key yet, it fails with
    /// `SQLITE_NOTADB`), so that a key it sets is there for every read.
    ///
    /// - Parameter defaultSynchronous: The `PRAGMA synchronous` level of the
    ///   connection unless `prepareDatabase` sets one (`"NORMAL"` for the
    ///   connections of a `DatabasePool`), or nil to keep SQLite's default.
    /// - Throws: The error of opening the file, the error thrown by
    ///   `prepareDatabase` (unchanged), or the `DatabaseError` of a later
    ///   step. The connection is closed before any error is thrown.
    init(
        path: String, configuration: Configuration, role: String, readonly: Bool, defaultSynchronous: String? = nil
    ) throws {
        self.configuration = configuration
        self.label = configuration.label + "." + role
        self.isQueueConnection = role == "queue"
        // SQLite reads the path as a C string: it would open the file named
        // by the text before a NUL character.
        guard !path.utf8.contains(0) else {
            throw DatabaseError(
                resultCode: .SQLITE_CANTOPEN, message: "the path contains a NUL character (\(path.debugDescription))",
                connectionLabel: configuration.label + "." + role)
        }
        var handle: OpaquePointer?
        let flags = (readonly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX
        // A database watched for other processes' commits must not make
        // their writes fail: its files yield to writers (see `WriterYieldingVFS`).
        let yieldsToWriters = configuration.observesExternalChanges && path != ":memory:" && !path.isEmpty
        let vfs = yieldsToWriters ? WriterYieldingVFS.name : nil
        writerYielding = yieldsToWriters && vfs != nil ? WriterYielding(timeout: configuration.busyTimeout) : nil
        let code = sqlite3_open_v2(path, &handle, flags, vfs)
        guard code == SQLITE_OK, let handle else {
            // > Whether or not an error occurs when it is opened, resources
            // > associated with the database connection handle should be
            // > released by passing it to sqlite3_close() when it is no longer
            // > required. https://www.sqlite.org/c3ref/open.html
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            let extendedCode = handle.map { sqlite3_extended_errcode($0) } ?? code
            sqlite3_close_v2(handle)
            throw DatabaseError(
                resultCode: ResultCode(rawValue: extendedCode), message: "\(message) (\(path))",
                connectionLabel: configuration.label + "." + role)
        }
        connection = handle
        do {
            try setUp(defaultSynchronous: defaultSynchronous)
        } catch {
            close()
            throw error
        }
    }

    private func setUp(defaultSynchronous: String?) throws {
        guard let connection else { return }
        // Nothing here reads the file before `prepareDatabase`, which may
        // set a key (SQLCipher) that every read needs.
        sqlite3_extended_result_codes(connection, 1)
        if let writerYielding {
            writerYielding.install(on: connection)
        } else {
            sqlite3_busy_timeout(connection, configuration.busyTimeoutMilliseconds)
        }
        var enabled: Int32 = 0
        let code = _rsqlite_db_config_int(
            connection, SQLITE_DBCONFIG_ENABLE_FKEY, configuration.foreignKeysEnabled ? 1 : 0, &enabled)
        try check(code)
        installAuthorizer()
        if let prepareDatabase = configuration.prepareDatabase {
            // An access of its own: a transaction it leaves open is rolled
            // back, and throws `SQLITE_MISUSE`.
            try withAccess { try prepareDatabase(self) }
        }
        // Both read the schema: without a lock another process's writer
        // could meet, when the database observes external changes (see
        // `yieldingToWriters(_:)`).
        try withAccess {
            try yieldingToWriters {
                // The default level comes after `prepareDatabase`: setting it
                // reads the schema. A level that `prepareDatabase` set wins.
                if let defaultSynchronous, !compiledSynchronousPragma {
                    try execute(sql: "PRAGMA synchronous = \(defaultSynchronous)")
                }
                // Opening is lazy in SQLite: read the schema now, so that a
                // file that is not a database, or a missing file, fails here
                // with a clear error instead of at the first statement.
                try execute(sql: "SELECT 1 FROM sqlite_master LIMIT 1")
            }
        }
    }

    deinit {
        close()
    }

    /// Finalizes the cached statements and closes the connection. Statements
    /// still referenced elsewhere keep the connection alive as a zombie until
    /// they are released (`sqlite3_close_v2`), so nothing leaks.
    ///
    /// Runs on the connection's queue, or where nothing else can use the
    /// connection (`deinit` of its owner).
    func close() {
        guard let connection else { return }
        // The cached statements are finalized here, as in an access.
        let previous = accessThread
        accessThread = pthread_self()
        statementCache.removeAll()
        recordWritePlans.removeAll()
        if tracer != nil { uninstallTraceHook() }
        // Observers hold their queues and what their closures capture:
        // released now, even if their observations are never cancelled.
        installedObservationBroker?.connectionWillClose()
        accessThread = previous
        closedState.withLock { isClosed in
            sqlite3_close_v2(connection)
            isClosed = true
        }
        self.connection = nil
    }

    var isClosed: Bool { connection == nil }

    // MARK: - Access control

    /// Runs `body` as an access of the current thread: `Database` methods
    /// called from `body` on this thread are allowed. Every access of a
    /// queue or pool, of the user or of the library, runs through here.
    ///
    /// When the outermost access ends, statements left running (by a cursor
    /// that escaped its closure) are reset, so that they release their locks
    /// and the snapshot of their read transaction; then a transaction left
    /// open is rolled back (see `endAccess()`).
    ///
    /// - Throws: A `DatabaseError` (`SQLITE_MISUSE`) when the connection is
    ///   closed, or when `body` returns with a transaction open; the error
    ///   of `body`, which wins over the other.
    func withAccess<T>(_ body: () throws -> T) throws -> T {
        guard connection != nil else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE, message: "the connection is closed", connectionLabel: label)
        }
        let previous = accessThread
        accessThread = pthread_self()
        defer { accessThread = previous }
        // A nested access ends with the outermost one.
        guard previous == nil else { return try body() }
        let result: T
        do {
            result = try body()
        } catch {
            try? endAccess()
            throw error
        }
        try endAccess()
        return result
    }

    /// Ends the outermost access: resets the statements left running, then
    /// rolls back a transaction left open, unless it is a pinned read.
    ///
    /// Every managed transaction (of `read`, `write`, `inTransaction`, an
    /// observation's fetch) has ended by now: a transaction still open was
    /// begun by the user's SQL (a `BEGIN` without `COMMIT` in
    /// `writeWithoutTransaction`, or in a commit observer). Kept open, it
    /// would let the next access, maybe another caller's, see or commit its
    /// uncommitted changes, or fail to begin its own transaction.
    ///
    /// - Throws: A `DatabaseError` (`SQLITE_MISUSE`) when a transaction was
    ///   left open (it is rolled back first).
    private func endAccess() throws {
        resetRunningStatements()
        guard !isPinningRead, let connection else { return }
        guard sqlite3_get_autocommit(connection) == 0 else {
            endOrphanReadTransaction(connection)
            return
        }
        rollbackIfInsideTransaction()
        throw DatabaseError(
            resultCode: .SQLITE_MISUSE,
            message: "the access left a transaction open: it was rolled back; "
                + "commit or roll back inside the closure, or use write",
            connectionLabel: label)
    }

    /// Ends a read transaction that outlived every statement, in autocommit
    /// mode.
    ///
    /// SQLite sometimes leaves one behind. Seen on 3.40.1 with the update
    /// hook: after an `INSERT OR REPLACE` into a table whose trigger writes
    /// an FTS5 table (a module that runs statements of its own) failed on a
    /// foreign key outside of any transaction, the connection was still in
    /// a read transaction (`sqlite3_txn_state`), with autocommit on and no
    /// statement running, pinned to the snapshot of that moment. It then
    /// reads that old snapshot: its `PRAGMA data_version` stays as it was
    /// after another connection's commit (the external change goes
    /// unnoticed: `ExternalChangeDetector`, whose differential test found
    /// it), a fetch reads old rows, and a write that starts there may fail
    /// with `SQLITE_BUSY_SNAPSHOT`. A statement that reads the file ends it
    /// when it ends (SQLite commits in autocommit mode once no statement
    /// runs); `PRAGMA data_version` is one of the cheapest.
    ///
    /// Nothing to do in the usual case: one call of `sqlite3_txn_state`.
    /// SQLCipher's SQLite 3.15 cannot tell: nothing is done there.
    private func endOrphanReadTransaction(_ connection: OpaquePointer) {
        guard _rsqlite_txn_state(connection) > 0 else { return }
        sqlite3_exec(connection, "PRAGMA data_version", nil, nil, nil)
    }

    /// Whether the current thread runs an access of this connection (or closes it).
    @inline(__always)
    var isAccessedByCurrentThread: Bool {
        guard let accessThread else { return false }
        return pthread_equal(accessThread, pthread_self()) != 0
    }

    /// Resets the statements of the connection that are still running.
    ///
    /// - Complexity: O(n), where n is the number of statements of the
    ///   connection (cached or alive elsewhere).
    private func resetRunningStatements() {
        guard let connection else { return }
        var handle = sqlite3_next_stmt(connection, nil)
        var foundRunning = false
        while let current = handle {
            if sqlite3_stmt_busy(current) != 0 {
                foundRunning = true
                break
            }
            handle = sqlite3_next_stmt(connection, current)
        }
        guard foundRunning else { return }
        // Cached statements are reset through their `Statement`, which then
        // leaves the cache's "busy" state; the others directly.
        for statement in statementCache.values {
            statement.reset()
            statement.isBusy = false
        }
        handle = sqlite3_next_stmt(connection, nil)
        while let current = handle {
            if sqlite3_stmt_busy(current) != 0 { sqlite3_reset(current) }
            handle = sqlite3_next_stmt(connection, current)
        }
    }

    /// Finalizes the handle of a statement being deinitialized.
    ///
    /// A statement is released inside its access closure, or after its
    /// connection is closed. Released elsewhere (returned from an access,
    /// kept in a variable outside), it would race with the accesses of
    /// other threads: a programmer error, which stops the program.
    func finalizeStatement(_ handle: OpaquePointer) {
        if isAccessedByCurrentThread {
            sqlite3_finalize(handle)
            return
        }
        let finalized = closedState.withLock { isClosed in
            // A closed connection is a zombie that only its remaining
            // statements use: this lock serializes their finalization.
            if isClosed { sqlite3_finalize(handle) }
            return isClosed
        }
        if !finalized {
            statementMisuse("A Statement or a DatabaseCursor was released")
        }
    }

    /// Whether a statement of the connection may be reset on the current
    /// thread: true in an access; false after the connection is closed
    /// (there is nothing left to reset). Stops the program otherwise.
    func mayResetStatement() -> Bool {
        if isAccessedByCurrentThread { return true }
        if closedState.withLock({ $0 }) { return false }
        statementMisuse("A Statement or a DatabaseCursor was used")
    }

    private func statementMisuse(_ what: String) -> Never {
        fatalError(
            "\(what) outside of the closure of read, write or writeWithoutTransaction that created it, "
                + "or from another thread (connection \(label)). Statements and cursors belong to their access: "
                + "do not return them from the closure or keep them after it returns.")
    }

    /// Stops the program when the database is used outside of its access
    /// closure or from another thread: a programmer error.
    @inline(__always)
    func checkAccess(_ function: StaticString = #function) {
        guard let accessThread, pthread_equal(accessThread, pthread_self()) != 0 else {
            misuse(function)
        }
    }

    /// fatalError rather than preconditionFailure: the message shows in
    /// release builds too.
    private func misuse(_ function: StaticString) -> Never {
        fatalError(
            "Database.\(function) was called outside of the closure of read, write or writeWithoutTransaction, "
                + "or from another thread (connection \(label)). Use a Database only inside the closure that "
                + "received it, on the thread that runs it.")
    }

    // MARK: - Connection state

    /// The rowid of the last row inserted by this connection (`sqlite3_last_insert_rowid`).
    public var lastInsertedRowID: Int64 {
        checkAccess()
        return sqlite3_last_insert_rowid(connection)
    }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE (`sqlite3_changes`).
    public var changesCount: Int {
        checkAccess()
        return Int(sqlite3_changes(connection))
    }

    /// The number of rows changed since the connection was opened (`sqlite3_total_changes`).
    public var totalChangesCount: Int {
        checkAccess()
        return Int(sqlite3_total_changes(connection))
    }

    /// Whether a transaction is open (the connection is not in autocommit mode).
    public var isInsideTransaction: Bool {
        checkAccess()
        return sqlite3_get_autocommit(connection) == 0
    }

    // MARK: - Errors

    /// Throws a `DatabaseError` for a result code other than `SQLITE_OK`.
    func check(_ code: Int32, sql: String? = nil, arguments: StatementArguments? = nil) throws {
        guard code != SQLITE_OK else { return }
        throw makeError(code, sql: sql, arguments: arguments)
    }

    func makeError(_ code: Int32, sql: String? = nil, arguments: StatementArguments? = nil) -> DatabaseError {
        let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        // sqlite3_extended_errcode reports the last error of the connection;
        // keep it only when it refines the code we were given.
        let resultCode = (extended & 0xFF) == (code & 0xFF) ? extended : code
        return DatabaseError(
            resultCode: ResultCode(rawValue: resultCode), message: message, sql: sql,
            arguments: arguments, connectionLabel: label)
    }

    // MARK: - Statements

    /// Compiles one statement.
    ///
    /// - Throws: A `DatabaseError` for invalid SQL, for SQL that holds more
    ///   than one statement (use `execute(sql:arguments:)` for those), and
    ///   (`SQLITE_MISUSE`) for SQL that contains a NUL character, whose text
    ///   after the NUL SQLite would ignore.
    public func makeStatement(sql: String) throws -> Statement {
        checkAccess()
        return try withCompilableText(of: sql) { base in
            var offset = 0
            guard let statement = try prepareStatement(base, offset: &offset, sql: sql) else {
                throw DatabaseError(
                    resultCode: .SQLITE_MISUSE, message: "the SQL holds no statement", sql: sql,
                    connectionLabel: label)
            }
            guard SQLLexer.isBlank(base + offset) else {
                throw DatabaseError(
                    resultCode: .SQLITE_MISUSE,
                    message: "the SQL holds more than one statement: use execute(sql:arguments:) to run several",
                    sql: sql, connectionLabel: label)
            }
            return statement
        }
    }

    /// Returns a compiled statement from the connection's cache, compiling it
    /// the first time.
    ///
    /// The cache keys statements by their exact SQL. A cached statement that is
    /// still being iterated by a cursor is not handed out again: a fresh one
    /// is compiled instead.
    ///
    /// - Throws: The errors of `makeStatement(sql:)`, when the statement is
    ///   compiled.
    /// - Complexity: Amortized O(1) after the first call (a hash of the SQL).
    public func cachedStatement(sql: String) throws -> Statement {
        checkAccess()
        if let statement = statementCache[ExactText(sql)] {
            if !statement.isBusy { return statement }
            return try makeStatement(sql: sql)
        }
        let statement = try makeStatement(sql: sql)
        statementCache[ExactText(sql)] = statement
        return statement
    }

    /// Calls `body` with the SQL as the C string that `prepareStatement`
    /// compiles: the only way SQL text reaches SQLite.
    ///
    /// SQLite reads SQL up to its first NUL character, and would silently
    /// ignore the text after one (`"INSERT ...\0; DROP TABLE t"` would
    /// run the INSERT alone): such SQL throws instead, before anything runs.
    ///
    /// - Throws: A `DatabaseError` (`SQLITE_MISUSE`) when `sql` contains a
    ///   NUL character, with its offset in UTF-8 bytes; the error of `body`.
    /// - Complexity: O(n), where n is the length of the SQL in bytes (much
    ///   less than compiling it).
    private func withCompilableText<T>(of sql: String, _ body: (UnsafePointer<CChar>) throws -> T) throws -> T {
        try sql.withCString { base in
            // The C string of a Swift string holds its embedded NULs: the
            // first one ends it early.
            let length = strlen(base)
            guard length == sql.utf8.count else {
                throw DatabaseError(
                    resultCode: .SQLITE_MISUSE, message: "the SQL contains a NUL character at byte offset \(length)",
                    sql: sql, connectionLabel: label)
            }
            return try body(base)
        }
    }

    /// Compiles the statement that starts at `base + offset` and advances
    /// `offset` past it. Returns nil when only blanks and comments remain.
    /// `base` comes from `withCompilableText(of:_:)`.
    ///
    /// Compiling records the statement's region (see `Database+Authorizer.swift`).
    func prepareStatement(_ base: UnsafePointer<CChar>, offset: inout Int, sql: String) throws -> Statement? {
        let recorder = RegionRecorder()
        let previousRecorder = regionRecorder
        let previousEffects = effectsRecorder
        regionRecorder = recorder
        effectsRecorder = StatementEffects()
        defer { effectsRecorder = previousEffects }
        var handle: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let start = base + offset
        let code = sqlite3_prepare_v3(connection, start, -1, 0, &handle, &tail)
        regionRecorder = previousRecorder
        guard code == SQLITE_OK else {
            sqlite3_finalize(handle)
            throw makeError(code, sql: SQLLexer.trimmingWhitespace(String(cString: start)))
        }
        offset += tail.map { start.distance(to: $0) } ?? 0
        guard let handle else { return nil }
        var region: DatabaseRegion
        let views: [String]
        do {
            (region, views) = try recorder.region(in: self)
            region = regionIncludingOpenedTables(region, statement: handle)
        } catch {
            sqlite3_finalize(handle)
            throw error
        }
        var effects = effectsRecorder ?? StatementEffects()
        effects.changesSchema = recorder.changesSchema
        return Statement(
            handle: handle, database: self, region: region, readViews: views, changesSchema: recorder.changesSchema,
            rollsBack: recorder.rollsBack, isRowLocal: recorder.isRowLocal, effects: effects)
    }

    // MARK: - Execution

    /// Runs one or several statements, separated by semicolons.
    ///
    /// Positional arguments are consumed in order by the statements that have
    /// parameters; named arguments are available to every statement. Each
    /// statement checks its arguments before it runs; values left over after
    /// the last statement throw a `DatabaseError` (after the previous
    /// statements have run: inside `write`, the transaction rolls back).
    ///
    /// ```swift
    /// try db.execute(sql: """
    ///     INSERT INTO player (name) VALUES (?);
    ///     INSERT INTO player (name) VALUES (?);
    ///     """, arguments: ["Arthur", "Barbara"])
    /// ```
    ///
    /// - Throws: A `DatabaseError` for invalid SQL, for arguments that do not
    ///   fit, when a statement fails (the statements before it have run), and
    ///   (`SQLITE_MISUSE`, before any statement runs) for SQL that contains a
    ///   NUL character, whose text after the NUL SQLite would ignore.
    public func execute(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        checkAccess()
        try withCompilableText(of: sql) { base in
            var offset = 0
            var consumer = ArgumentConsumer(arguments)
            while let statement = try prepareStatement(base, offset: &offset, sql: sql) {
                let isLast = SQLLexer.isBlank(base + offset)
                try statement.bind(&consumer, requireAllConsumed: isLast)
                try statement.run(arguments: arguments)
                if isLast { return }
            }
            try consumer.checkAllConsumed(sql: sql, label: label)
        }
    }

    /// Forgets the cached schema information (columns, primary keys, views),
    /// and the cached statements, whose regions were recorded against the
    /// previous schema (SQLite recompiles them without our authorizer
    /// recording anything).
    func clearSchemaCache() {
        schemaCache = SchemaCache()
        statementCache.removeAll()
        recordWritePlans.removeAll()
        installedObservationBroker?.schemaDidChange()
    }

    /// Removes a statement from the cache, if it is there: SQLite recompiled
    /// it after a schema change, so its recorded region may be stale.
    ///
    /// - Complexity: O(n), where n is the number of cached statements.
    func removeFromCache(_ statement: Statement) {
        if let key = statementCache.first(where: { $0.value === statement })?.key {
            statementCache[key] = nil
        }
        // Records' plans may hold it: they are rebuilt on demand.
        recordWritePlans.removeAll()
    }
}
