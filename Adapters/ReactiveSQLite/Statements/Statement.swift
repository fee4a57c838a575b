#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import DatabaseRegions

/// A compiled SQL statement.
///
/// Create one with `Database.makeStatement(sql:)` or take one from the
/// connection's cache with `Database.cachedStatement(sql:)`, then run it as
/// many times as needed:
///
/// ```swift
/// let insert = try db.cachedStatement(sql: "INSERT INTO player (name, score) VALUES (?, ?)")
/// for (name, score) in players {
///     try insert.execute(arguments: [name, score])
/// }
/// ```
///
/// A statement belongs to its connection and to the access that created it:
/// like `Database`, it is not `Sendable`, and using it outside the access
/// closure, or releasing it there (by returning it from the closure), is a
/// programmer error that stops the program with a message saying so.
public final class Statement {
    /// The `sqlite3_stmt *` handle, finalized in `deinit`.
    let handle: OpaquePointer
    /// Strong: a statement released after its connection was closed still
    /// finalizes its handle safely. The connection's statement cache makes a
    /// cycle, broken when the connection closes.
    let database: Database

    /// The SQL of the statement, as SQLite compiled it.
    public let sql: String

    /// The names of the columns of the statement's result rows (empty for a
    /// statement that returns no rows).
    ///
    /// When a schema change makes SQLite recompile the statement (a table
    /// dropped and created again with other columns under `SELECT *`), the
    /// names follow from the next run on.
    public private(set) var columnNames: [String]

    /// Whether the statement leaves the database unchanged (`sqlite3_stmt_readonly`).
    public let isReadOnly: Bool

    /// What the statement reads, recorded by SQLite's authorizer while it was
    /// compiled: tables and columns, views replaced by their base tables.
    let region: DatabaseRegion

    /// The views the statement reads. Observations register them by name
    /// besides `region`, so that a view dropped or redefined reaches them.
    let readViews: [String]

    /// `region`, with the views the statement reads as tables: what an
    /// observation of the statement registers with the broker.
    let observedRegion: DatabaseRegion

    /// Whether running the statement changes the schema (CREATE, DROP, ALTER...).
    let changesSchema: Bool

    /// Whether running the statement rolls back a transaction or a
    /// savepoint (`ROLLBACK`, `ROLLBACK TO`), which may undo a schema change.
    let rollsBack: Bool

    /// Whether the statement is one SELECT, without subquery, that calls
    /// only built-in functions whose result depends on their arguments
    /// alone (see `RegionRecorder.isRowLocal`). The authorizer reports
    /// neither LIMIT, GROUP BY, DISTINCT, nor `x IN table`: whether a row
    /// belongs to the result depends on that row alone only if the SQL has
    /// none of them either (see `SQLLexer.isRowLocalFragment`).
    let isRowLocal: Bool

    /// What the statement may change, and its savepoint action, for the
    /// observation broker.
    let effects: StatementEffects

    /// For each parameter index (1-based, so element 0 is parameter 1): its
    /// name without prefix, or nil for a positional parameter (`?`, `?NNN`).
    let parameterNames: [String?]
    let hasNamedParameters: Bool

    /// Shared by every row the statement produces.
    private(set) lazy var layout = RowLayout(columnNames: columnNames, sql: sql)

    /// Whether a cursor is iterating the statement's rows.
    var isBusy = false
    /// Whether the statement has been stepped since it was last reset.
    private var needsReset = false
    /// Whether the statement has run to its end (`SQLITE_DONE` or an
    /// error) since it was last reset. Stepped but not ended, it ends
    /// inside `sqlite3_reset`, which may commit there.
    private var hasEnded = false
    /// Whether the broker heard of the statement's start and waits for its
    /// end, and how it follows the run.
    ///
    /// This and `quietGeneration` are read at each run of the statement
    /// while something observes the connection: `@exclusivity(unchecked)`,
    /// as the broker's properties (see `ObservationBroker`). Both are used
    /// inside accesses of the connection only, which never overlap.
    @exclusivity(unchecked) private var brokerAwaitsEnd = BrokerFollowing.none
    /// The generation of the broker's statement contexts in which the
    /// statement was found to write no watched table (see
    /// `ObservationBroker.statementWillStart(_:)`); -1 when it was not.
    @exclusivity(unchecked) var quietGeneration = -1
    /// How many times SQLite recompiled the statement after a schema change
    /// (`SQLITE_STMTSTATUS_REPREPARE`), as last seen.
    private var recompilationCount: Int32 = 0
    /// The arguments of the current run, for error messages.
    private var arguments = StatementArguments()
    /// How many rows the last `fetchKeyedRows(...)` of the statement
    /// returned: the capacity the next one reserves (a set-difference
    /// observation started again on the same request fetches about as many
    /// rows), so that its values do not grow by copies.
    var keyedRowCountHint = 0

    init(
        handle: OpaquePointer, database: Database, region: DatabaseRegion, readViews: [String] = [],
        changesSchema: Bool, rollsBack: Bool, isRowLocal: Bool = false, effects: StatementEffects
    ) {
        self.readViews = readViews
        self.observedRegion = readViews.reduce(into: region) { $0.formUnion(DatabaseRegion(table: $1)) }
        var effects = effects
        self.sql = SQLLexer.trimmingWhitespace(String(cString: sqlite3_sql(handle)))
        effects.recordText(of: sql)
        self.effects = effects
        self.isRowLocal = isRowLocal
        self.handle = handle
        self.database = database
        self.region = region
        self.changesSchema = changesSchema
        self.rollsBack = rollsBack
        self.isReadOnly = sqlite3_stmt_readonly(handle) != 0
        let columnCount = sqlite3_column_count(handle)
        self.columnNames = (0..<columnCount).map { String(cString: sqlite3_column_name(handle, $0)) }
        let parameterCount = sqlite3_bind_parameter_count(handle)
        self.parameterNames = parameterCount == 0 ? [] : (1...parameterCount).map { index in
            guard let name = sqlite3_bind_parameter_name(handle, index) else { return nil }
            let text = String(cString: name)
            return text.hasPrefix("?") ? nil : StatementArguments.parameterName(text)
        }
        self.hasNamedParameters = parameterNames.contains { $0 != nil }
    }

    deinit {
        // Stopped before its end, the statement ends here (a statement that
        // writes may commit): the broker hears of it, as from `reset()`.
        if needsReset, !hasEnded, database.isAccessedByCurrentThread { reset() }
        database.finalizeStatement(handle)
    }

    /// The number of columns of the result rows.
    public var columnCount: Int { columnNames.count }

    /// The names of the statement's named parameters, without their prefix
    /// (`team` for `:team`, `@team` or `$team`), in the order they first
    /// appear, each once.
    public var namedParameters: [String] {
        var seen = Set<String>()
        return parameterNames.compactMap { $0 }.filter { seen.insert($0).inserted }
    }

    /// The number of positional parameters (`?`, `?NNN`).
    public var positionalParameterCount: Int {
        parameterNames.count { $0 == nil }
    }

    // MARK: - Running

    /// Runs the statement to completion with the given arguments.
    ///
    /// - Throws: A `DatabaseError` when the arguments do not fit the
    ///   statement's parameters (before it runs), or when SQLite fails.
    public func execute(arguments: StatementArguments = StatementArguments()) throws {
        database.checkAccess()
        try setArguments(arguments)
        try run(arguments: arguments)
    }

    /// Resets the statement and binds `arguments`, which must fit exactly.
    func setArguments(_ arguments: StatementArguments) throws {
        var consumer = ArgumentConsumer(arguments)
        try bind(&consumer, requireAllConsumed: true)
    }

    /// Makes the statement ready for a run with `arguments`, before its
    /// parameters are bound: resets it, and adds its region to the
    /// observation's selection being recorded, if any.
    private func prepareForRun(arguments: StatementArguments) {
        if isBusy {
            // fatalError rather than precondition: the message shows in release builds too.
            fatalError(
                "A statement was run again while a cursor iterates its rows: finish the cursor first, "
                    + "or use a distinct statement (sql: \(sql))")
        }
        reset()
        self.arguments = arguments
        if database.selectionRegion != nil { database.selectionRegion!.formUnion(observedRegion) }
    }

    /// Resets the statement and binds `values` to its parameters in order:
    /// the value at index `i` to parameter `?(i + 1)`. The statements of
    /// records number their parameters after the record's columns, and may
    /// use only some of them (an UPDATE of some columns): values beyond the
    /// statement's last parameter are not bound. No intermediate array.
    func setRecordValues(_ values: [DatabaseValue]) throws {
        prepareForRun(arguments: StatementArguments(databaseValues: values))
        for index in 0..<min(values.count, parameterNames.count) {
            try bind(values[index], at: Int32(index + 1))
        }
    }

    /// Resets the statement and binds its parameters from `consumer`.
    func bind(_ consumer: inout ArgumentConsumer, requireAllConsumed: Bool) throws {
        prepareForRun(arguments: consumer.arguments)
        for (offset, name) in parameterNames.enumerated() {
            guard let value = consumer.value(forParameterNamed: name) else {
                throw DatabaseError(
                    resultCode: .SQLITE_RANGE,
                    message: "missing argument for parameter \(offset + 1) (\(name.map { ":" + $0 } ?? "?"))"
                        + " of a statement with \(parameterNames.count) parameter(s)",
                    sql: sql, arguments: consumer.arguments, connectionLabel: database.label)
            }
            try bind(value, at: Int32(offset + 1))
        }
        if requireAllConsumed {
            try consumer.checkAllConsumed(sql: sql, label: database.label)
        }
    }

    private func bind(_ value: DatabaseValue, at index: Int32) throws {
        try database.check(Self.bind(value, to: handle, at: index), sql: sql, arguments: arguments)
    }

    /// Binds `value` to parameter `index` of a prepared statement, and
    /// returns SQLite's result code. Texts and blobs are copied by SQLite;
    /// invalid UTF-8 text keeps its bytes.
    static func bind(_ value: DatabaseValue, to handle: OpaquePointer, at index: Int32) -> Int32 {
        if case .invalidUTF8Text(let bytes) = value.representation {
            // The exact bytes read, written back as they were.
            return bytes.withUnsafeBytes { bytes in
                bytes.withMemoryRebound(to: CChar.self) {
                    sqlite3_bind_text64(
                        handle, index, $0.baseAddress, UInt64($0.count), _rsqlite_transient(), UInt8(SQLITE_UTF8))
                }
            }
        }
        switch value.storage {
        case .null:
            return sqlite3_bind_null(handle, index)
        case .integer(let integer):
            return sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            return sqlite3_bind_double(handle, index, real)
        case .text(var text):
            return text.withUTF8 { bytes in
                // A nil pointer would bind NULL, not an empty text.
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return sqlite3_bind_text(handle, index, "", 0, nil)
                }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), _rsqlite_transient(), UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let data):
            return data.withUnsafeBytes { bytes in
                // A nil pointer would bind NULL, not an empty blob.
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), _rsqlite_transient())
            }
        }
    }

    /// Steps the statement until it is done, ignoring rows, then resets it.
    func run(arguments: StatementArguments) throws {
        defer { reset() }
        while try step() {}
    }

    /// Runs `body`, which steps the statement, then resets the statement.
    /// A statement that writes and was stopped before its end (an
    /// `INSERT ... RETURNING` read with `fetchOne`) ends inside
    /// `sqlite3_reset`, where it may commit, or fail to: that error is thrown.
    ///
    /// - Throws: The error of `body`, or that of the statement's end.
    @usableFromInline
    func fetching<T>(_ body: (Statement) throws -> T) throws -> T {
        let result: T
        do {
            result = try body(self)
        } catch {
            reset()
            throw error
        }
        try resetThrowingEndError()
        return result
    }

    /// Advances to the next row: true when a row is available, false when done.
    ///
    /// - Throws: A `DatabaseError`, or the error of a `TransactionObserver`
    ///   that vetoed the commit of this statement.
    @usableFromInline @inline(__always)
    func step() throws -> Bool {
        let isFirstStep = !needsReset
        if isFirstStep {
            // The statements of a read access could turn `PRAGMA query_only`
            // off, and then write: they cannot set it.
            if database.isReadOnlyAccess, effects.setsQueryOnly { throw database.makeWriteInReadAccessError(sql: sql) }
            if database.transactionRolledBackBySQLite != nil, let error = database.transactionAbortedError(sql: sql) {
                throw error
            }
            willStart()
        }
        needsReset = true
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW:
            if isFirstStep { checkRecompilation() }
            return true
        case SQLITE_DONE:
            if let observerError = didEnd(resultCode: code) { throw observerError }
            return false
        default:
            // Made before `didEnd` may run other statements.
            let error = database.makeError(code, sql: sql, arguments: arguments)
            // A transaction observer vetoed the commit: its error, not
            // SQLITE_CONSTRAINT_COMMITHOOK, reaches the writer.
            let observerError = didEnd(resultCode: code)
            database.statementDidFail(error)
            throw observerError ?? error
        }
    }

    /// The statement starts: the broker hears of it when it observes the
    /// connection, or when the statement begins, releases or rolls back a
    /// savepoint (which the broker follows even before anything observes).
    @inline(__always)
    private func willStart() {
        hasEnded = false
        if let broker = database.activeObservationBroker {
            brokerAwaitsEnd = broker.statementWillStart(self) ? .quiet : .everything
        } else if effects.savepoint != nil {
            _ = database.observationBroker.statementWillStart(self)
            brokerAwaitsEnd = .everything
        }
    }

    /// The statement ended, with `SQLITE_DONE`, an error, or the result of
    /// the `sqlite3_reset` that ended it. Updates the schema caches, and
    /// tells the broker, which notifies a commit or a rollback.
    ///
    /// - Returns: The error of a user observer that vetoed a commit.
    private func didEnd(resultCode: Int32) -> (any Error)? {
        hasEnded = true
        // Before observers are told of the commit: they may compile statements.
        if changesSchema { database.clearSchemaCache() }
        var observerError: (any Error)?
        switch brokerAwaitsEnd {
        case .none:
            break
        case .everything:
            brokerAwaitsEnd = .none
            observerError = database.observationBroker.statementDidEnd(self, resultCode: resultCode)
        case .quiet:
            brokerAwaitsEnd = .none
            observerError = database.observationBroker.quietStatementDidEnd(self)
        }
        // After a rollback, forget the caches when it undid a schema change
        // (the schema version tells), and keep them otherwise: a rolled-back
        // write does not cost the next one its compiled statements.
        if rollsBack { database.refreshSchemaCacheAfterRollback() }
        return observerError
    }

    /// How the observation broker follows a run of the statement.
    private enum BrokerFollowing {
        /// It does not (nothing observes the connection).
        case none
        /// Its row events, in a level of its own (see `ChangeLevelStack`).
        case everything
        /// Its end only: it writes no watched table.
        case quiet
    }

    /// The handle's count of recompilations (`SQLITE_STMTSTATUS_REPREPARE`).
    var recompilationsSoFar: Int32 { _rsqlite_recompilation_count(handle) }

    /// Reads the columns again when SQLite recompiled the statement during
    /// its first step, after a schema change that this connection's caches
    /// did not see (made by another connection in the middle of an access),
    /// and takes the statement out of the cache, since its region may be stale.
    private func checkRecompilation() {
        let count = _rsqlite_recompilation_count(handle)
        guard count != recompilationCount else { return }
        recompilationCount = count
        let names = (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
        if names != columnNames {
            columnNames = names
            layout = RowLayout(columnNames: names, sql: sql)
        }
        database.removeFromCache(self)
    }

    /// Makes the statement ready to run again (`sqlite3_reset`), releasing
    /// the read lock a stepped statement holds. A statement stopped before
    /// its end ends here: the broker hears of it (a commit may happen here),
    /// but its error is lost: use `resetThrowingEndError()` where it can be thrown.
    ///
    /// - Precondition: Called inside an access of the connection, or after
    ///   it is closed (then there is nothing to reset).
    func reset() {
        _ = try? resetThrowingEndError()
    }

    /// Resets the statement, and throws the error of its end when it ends
    /// here: a commit that fails inside `sqlite3_reset` (a deferred foreign
    /// key, a vetoing `TransactionObserver`, SQLITE_BUSY) rolls back there,
    /// and the result of `sqlite3_reset` is then its only report.
    ///
    /// > If the most recent call to sqlite3_step(S) for the prepared statement
    /// > S indicated an error, then sqlite3_reset(S) returns an appropriate
    /// > error code. https://www.sqlite.org/c3ref/reset.html
    ///
    /// The error of a statement that already ended was thrown by its step.
    func resetThrowingEndError() throws {
        guard needsReset, database.mayResetStatement() else { return }
        let code = sqlite3_reset(handle)
        needsReset = false
        isBusy = false
        guard !hasEnded else { return }
        let error = code == SQLITE_OK ? nil : database.makeError(code, sql: sql, arguments: arguments)
        let observerError = didEnd(resultCode: code == SQLITE_OK ? SQLITE_DONE : code)
        if let error { database.statementDidFail(error) }
        if let error = observerError ?? error { throw error }
    }

    // MARK: - Reading the current row

    /// The value of column `index` of the current row.
    @usableFromInline @inline(__always)
    func columnValue(at index: Int32) -> DatabaseValue {
        Self.readColumnValue(handle, index)
    }

    /// The value of column `index` of the current row of the statement `handle`.
    @inline(__always)
    static func readColumnValue(_ handle: OpaquePointer, _ index: Int32) -> DatabaseValue {
        readValue(sqlite3_column_value(handle, index))
    }

    /// The value of `column`, a column of the current row of a statement
    /// (`sqlite3_column_value`), read before the statement steps again.
    ///
    /// One `sqlite3_column_*` call reaches the column (each of them
    /// validates the statement and the index, and checks for a memory
    /// failure afterwards); the `sqlite3_value_*` calls only read it.
    /// > The sqlite3_value objects returned by sqlite3_column_value() are
    /// > unprotected. [...] If the sqlite3_value object returned by
    /// > sqlite3_column_value() is used in any other way, including calls to
    /// > routines like sqlite3_value_int(), sqlite3_value_text(), or
    /// > sqlite3_value_bytes(), the behavior is not threadsafe.
    /// > https://www.sqlite.org/c3ref/column_blob.html
    /// Connections are opened with SQLITE_OPEN_NOMUTEX, and used by one
    /// thread at a time: there is no other thread to be safe from.
    @inline(__always)
    static func readValue(_ column: OpaquePointer?) -> DatabaseValue {
        switch sqlite3_value_type(column) {
        case SQLITE_INTEGER:
            return DatabaseValue(storage: .integer(sqlite3_value_int64(column)))
        case SQLITE_FLOAT:
            return DatabaseValue(storage: .real(sqlite3_value_double(column)))
        case SQLITE_TEXT:
            // > call sqlite3_column_text() first to force the result into the
            // > desired format, then invoke sqlite3_column_bytes() to find the
            // > size of the result. (The same for sqlite3_value_text() and
            // > sqlite3_value_bytes().) https://www.sqlite.org/c3ref/column_blob.html
            let text = sqlite3_value_text(column)
            let count = Int(sqlite3_value_bytes(column))
            // Text that is not valid UTF-8 keeps its exact bytes.
            return DatabaseValue(textBytes: UnsafeBufferPointer(start: text, count: count))
        case SQLITE_BLOB:
            let bytes = sqlite3_value_blob(column)
            let count = Int(sqlite3_value_bytes(column))
            guard let bytes, count > 0 else { return DatabaseValue(storage: .blob(Data())) }
            return DatabaseValue(storage: .blob(Data(bytes: bytes, count: count)))
        default:
            return .null
        }
    }

    /// The text of `column`, a column of the current row of a statement
    /// (see `readValue(_:)`) whose type is `SQLITE_TEXT`, as a `String` (a
    /// record's typed read): invalid UTF-8 is repaired with U+FFFD, never
    /// trapped on. `columnValue(at:)` keeps the exact bytes of such a text.
    @inline(__always)
    static func readText(_ column: OpaquePointer?) -> String {
        let text = sqlite3_value_text(column)
        let count = Int(sqlite3_value_bytes(column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Decodes a record from the current row, through a row that reads the
    /// statement in place, whose storage is `statementRow` (made by
    /// `makeStatementRow()` after a step).
    ///
    /// `statementRow` serves the next rows too, unless the record kept its
    /// row: the values are then copied before the statement moves on, and
    /// `statementRow` is replaced.
    ///
    /// - Throws: The error of `init(row:)`.
    @inlinable @inline(__always)
    func decodeRecord<Record: FetchableRecord>(
        _: Record.Type, from statementRow: inout StatementRow
    ) throws -> Record {
        defer {
            // Also when `init(row:)` throws: its error may hold the row.
            if !isKnownUniquelyReferenced(&statementRow) {
                statementRow.detach()
                statementRow = makeStatementRow()
            }
        }
        return try Record(row: Row(statementRow))
    }

    /// The storage of rows that read the current row in place. The layout
    /// is read after the step, so it follows a recompilation by SQLite.
    @usableFromInline
    func makeStatementRow() -> StatementRow {
        StatementRow(statement: self)
    }

    /// A copy of the current row.
    @usableFromInline
    func currentRow() -> Row {
        var values: [DatabaseValue] = []
        values.reserveCapacity(columnNames.count)
        for index in 0..<columnNames.count {
            values.append(columnValue(at: Int32(index)))
        }
        return Row(layout: layout, values: values)
    }
}

extension Database {
    /// Every row of one statement: a convenience for the package's own schema queries.
    func fetchRows(sql: String, arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try SQLRequest<Row>(sql: sql, arguments: arguments).fetchAll(self)
    }
}
