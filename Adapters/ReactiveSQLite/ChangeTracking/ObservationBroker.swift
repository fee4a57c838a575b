#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import DatabaseRegions

/// The one place where a writer connection's changes meet its observers.
///
/// Its jobs, each in a type or file of its own:
/// - `ChangeHooks` installs SQLite's commit, rollback and pre-update (or
///   update) hooks, with this broker as their context;
/// - `PreUpdateChangeTracking` and `UpdateHookChangeTracking` turn what a
///   hook reports into `DatabaseEvent`s, each with the knowledge its hook
///   gives;
/// - `ObserverRegistry` holds the observations and their regions, and
///   finds those an event concerns;
/// - `StatementContexts` keeps the context of each running statement (the
///   metadata of the tables it writes, whether observations watch them),
///   which this type installs and removes as statements start and end
///   (`statementWillStart(_:)`, `statementDidEnd(_:resultCode:)`);
/// - `CommitOutcome` keeps the marks of the transaction, its savepoints and
///   its running statements (`ChangeLevelStack`), so that whatever SQLite
///   undoes leaves no trace, and the commit or rollback the hooks reported
///   until the statement's end confirms it;
/// - `UserTransactionObservers` holds the user's `TransactionObserver`s;
/// - this type owns them, dispatches each event, and tells observers of
///   each commit, with its payload (`DatabaseCommit`).
///
/// Commit or rollback is decided from what SQLite says: the commit hook ran
/// and the connection is back in autocommit mode (a failed commit leaves
/// the transaction open, or runs the rollback hook); a statement that
/// failed kept its changes only when SQLite says so (see
/// `keepsChangesOfFailedStatement`).
///
/// Everything here runs on the writer's queue, inside accesses.
///
/// The properties that each row event reads are `@exclusivity(unchecked)`
/// (here and in the parts): the run-time exclusivity check of a class
/// property costs as much as the rest of the work of an event that
/// concerns nobody. No access to one of them overlaps another access to it
/// (checked by reading: a debug build with enforcement on traps on an
/// overlap, the unchecked ones aside), and all of them are used on the
/// writer's queue only.
final class ObservationBroker {
    unowned let database: Database
    let usesPreUpdateHook: Bool
    @exclusivity(unchecked) private(set) var hooksInstalled = false
    /// The observations, their regions, the tables they watch.
    let registry = ObserverRegistry()
    /// The running statement, and those it interrupted.
    let statements = StatementContexts()
    /// The transaction's marks, and its commit or rollback.
    let outcome = CommitOutcome()
    /// The user's `TransactionObserver`s.
    let userObservers = UserTransactionObservers()
    /// Evaluates the row filters of observations on the rows the pre-update
    /// hook shows.
    private let filterEvaluator = RowFilterEvaluator()

    init(database: Database) {
        self.database = database
        let preUpdateAvailable = sqlite3_compileoption_used("ENABLE_PREUPDATE_HOOK") != 0
        usesPreUpdateHook = preUpdateAvailable && database.configuration.changeTracking == .automatic
    }

    /// The number of row filters run so far, for tests of the values index.
    var filterEvaluationCount: Int { filterEvaluator.evaluationCount }

    #if REACTIVESQLITE_INTERNAL_CHECKS
    /// The number of row events the row hook received so far, and of quiet
    /// runs of statements that write, for the tests of quiet statements.
    @exclusivity(unchecked) var rowEventCount = 0
    private(set) var quietRunCount = 0
    #endif

    /// Whether statements must report to the broker.
    var isObserving: Bool { hooksInstalled && (!registry.isEmpty || !userObservers.isEmpty) }

    /// The number of the last commit (`DatabaseCommit.number`), 0 before
    /// the first one: what an observation that registers has seen.
    var lastCommitNumber: Int { outcome.lastCommitNumber }

    // MARK: - Registration

    /// Registers an observation with its region; returns its identifier.
    ///
    /// - Parameter rowIDTable: A table whose changed rowids the observation
    ///   wants with each commit (`DatabaseCommit.changedRowIDs`).
    /// - Parameter filter: The `WHERE` clause of the observation's request:
    ///   a row change that it matches neither before nor after does not
    ///   concern the observation (pre-update hook only, which shows both rows).
    /// - Parameter window: The boundary of the filter's window, which the
    ///   observation keeps up to date (see `RowWindow`).
    func register(
        _ observer: any DatabaseCommitObserver, region: DatabaseRegion, rowIDTable: String? = nil,
        filter: RowFilter? = nil, window: WindowBoundary? = nil
    ) -> Int {
        installHooksIfNeeded()
        if filter != nil, filterEvaluator.encoding == nil {
            filterEvaluator.encoding = try? SQLRequest<String>(sql: "PRAGMA encoding").fetchOne(database)
        }
        // The update hook misses the rows that `INSERT OR REPLACE` deletes,
        // and the old rowid of an UPDATE that changes it: no rowids there.
        let id = registry.register(
            observer, region: region, rowIDTable: usesPreUpdateHook ? rowIDTable : nil,
            filter: usesPreUpdateHook ? filter : nil, pin: usesPreUpdateHook ? filter.flatMap(valuePin(of:)) : nil,
            window: usesPreUpdateHook ? window : nil)
        statements.forgetPreparedContext()
        return id
    }

    /// The first term of a filter that pins a column the index can look up
    /// by value: a stored column (not generated, not the rowid) whose
    /// collation is `BINARY`, `NOCASE` or `RTRIM`, with constants that the
    /// private database converts with the column's affinity, as SQLite
    /// does before comparing them with the column (none NULL).
    private func valuePin(of filter: RowFilter) -> (pin: ValuePin, collation: PinnedColumn.Collation)? {
        guard !filter.pinnedColumns.isEmpty, let connection = database.connection,
            let info = statements.hookInfo(forTable: filter.table, database: database, usesPreUpdateHook: usesPreUpdateHook),
            !info.isVirtual
        else { return nil }
        for pinned in filter.pinnedColumns {
            let column = pinned.column.lowercasedIdentifier
            guard info.storedColumns.contains(where: { $0.name.utf8.elementsEqual(column.utf8) }),
                !info.generatedColumns.contains(column),
                !info.rowIDColumns.contains(column)
            else { continue }
            var declaredType: UnsafePointer<CChar>?
            var collationName: UnsafePointer<CChar>?
            guard sqlite3_table_column_metadata(connection, nil, filter.table, column, &declaredType, &collationName, nil, nil, nil)
                == SQLITE_OK,
                let affinity = PinnedColumn.affinity(ofDeclaredType: declaredType.map { String(cString: $0) } ?? ""),
                let collation = PinnedColumn.Collation(name: collationName.map { String(cString: $0) } ?? "BINARY"),
                let values = filterEvaluator.indexedValues(of: pinned.constants, affinity: affinity, collation: collation)
            else { continue }
            return (ValuePin(table: filter.table, column: column, values: values), collation)
        }
        return nil
    }

    /// Replaces the region of a registered observation.
    func updateRegion(_ region: DatabaseRegion, forObserver id: Int) {
        if registry.updateRegion(region, forObserver: id) { statements.forgetPreparedContext() }
    }

    /// Unregisters an observation (idempotent).
    func unregister(_ id: Int) {
        if let filter = registry.unregister(id) { filterEvaluator.forget(filter) }
        outcome.levels.remove(observer: id)
        statements.forgetPreparedContext()
    }

    func add(transactionObserver: some TransactionObserver, extent: TransactionObservationExtent) {
        installHooksIfNeeded()
        userObservers.add(transactionObserver, extent: extent)
    }

    func remove(transactionObserver: some TransactionObserver) {
        userObservers.remove(transactionObserver)
        // Nothing more reaches it: neither the events buffered in levels,
        // nor those of the running statements.
        outcome.levels.remove(userObserver: transactionObserver)
        for (interest, observers) in statements.current.userObservers {
            statements.current.userObservers[interest] = observers.filter { $0 !== transactionObserver }
        }
    }

    /// The connection closes: every observer is released, so that nothing
    /// they capture (their queue, the `Database` itself) stays alive
    /// through them. An observation cancelled later finds nothing to leave.
    func connectionWillClose() {
        registry.removeAll()
        filterEvaluator.reset()
        userObservers.removeAll()
        outcome.levels.reset()
        statements.reset()
    }

    private func installHooksIfNeeded() {
        guard !hooksInstalled else { return }
        hooksInstalled = true
        database.installedObservationBroker = self
        ChangeHooks.install(on: database.connection, broker: self, preUpdate: usesPreUpdateHook)
        // Savepoints are followed even before anything observes (see
        // `statementWillStart(_:)`); outside of a transaction none is open.
        if sqlite3_get_autocommit(database.connection) != 0, outcome.levels.runningStatementCount == 0 {
            outcome.levels.reset()
        }
    }

    // MARK: - Hooks

    /// > The commit hook [...] If the callback returns non-zero, then the
    /// > COMMIT is converted into a ROLLBACK. [It] must not do anything that
    /// > will modify the database connection. https://www.sqlite.org/c3ref/commit_hook.html
    func commitHook() -> Int32 {
        // The hooks stay installed when every observer is gone: statements
        // then report nothing, and a commit must leave no pending state
        // behind for the next observer to misread.
        guard isObserving else { return 0 }
        // Events buffered in savepoints still open are committed now: user
        // observers get them before they are asked whether to commit.
        deliver(outcome.levels.takeUserEvents())
        guard userObservers.allowCommit() else { return 1 }
        // Confirmed, or not, when the statement ends (see `statementDidEnd`).
        outcome.commitIsPending = true
        return 0
    }

    func rollbackHook() {
        outcome.commitIsPending = false
        outcome.levels.reset()
        outcome.rollbackIsPending = isObserving
    }

    /// Forgets the rollback of a transaction that the library ran for
    /// itself, outside any transaction of the user's, and that changed
    /// nothing observable (see `Database.yieldingToWriters(_:)`): no
    /// observer hears of it.
    func forgetInternalRollback() {
        outcome.rollbackIsPending = false
    }

    /// A row event, from either hook: marks the observations it concerns
    /// (or those `markedEvent` concerns, when given), and hands the event to
    /// the user observers that asked for it.
    ///
    /// - Parameter row: The row of a pre-update hook's event, which the
    ///   observations' row filters are evaluated on.
    @inline(__always)
    func dispatch(
        _ event: DatabaseEvent, _ operation: Int32, markedAs markedEvent: DatabaseEvent? = nil, row: HookRow? = nil
    ) {
        if let row {
            mark(impactedBy: markedEvent ?? event, filteringOn: row)
        } else {
            mark(impactedBy: markedEvent ?? event)
        }
        guard !statements.current.userObservers.isEmpty,
            let observers = statements.current.userObservers[
                StatementContext.UserObserverInterest(table: event.kind.tableName.lowercasedIdentifier, operation: operation)]
        else { return }
        // Buffered in the statement's level: delivered when nothing can undo it.
        for observer in observers { outcome.levels.buffer(event, for: observer) }
    }

    /// Marks the observations an event concerns, at the innermost level.
    @inline(__always)
    func mark(impactedBy event: DatabaseEvent) {
        registry.forEachObserver(impactedBy: event) { id, rowIDTable in
            mark(id, rowIDTable: rowIDTable, event: event)
        }
    }

    @inline(__always)
    private func mark(_ id: Int, rowIDTable: String?, event: DatabaseEvent) {
        outcome.levels.mark(id)
        guard let rowIDTable else { return }
        outcome.levels.recordRowID(event.rowID, ofTable: event.kind.tableName, forObserver: id, table: rowIDTable)
    }

    /// The row of a pre-update hook's event: its sides that the event
    /// changes (the old row of a deletion, the new one of an insertion,
    /// both for an update), read with `sqlite3_preupdate_old` and `_new`.
    struct HookRow {
        enum Sides {
            case old, new, both

            var list: [RowFilterEvaluator.Side] {
                switch self {
                case .old: [.old]
                case .new: [.new]
                case .both: [.old, .new]
                }
            }
        }

        var connection: OpaquePointer
        var info: TableHookInfo
        var sides: Sides
        var key: Int64
    }

    /// Marks the observations an event concerns, at the innermost level,
    /// except those whose row filter matches none of the row's sides: the
    /// change cannot alter what their request selects.
    ///
    /// - Complexity: O(1 + k) as `mark(impactedBy:)`, plus, for the f
    ///   concerned observations with a filter of the table (those already
    ///   marked and wanting no rowids aside), one copy of each side of the
    ///   row and one run of each filter in the private database.
    private func mark(impactedBy event: DatabaseEvent, filteringOn row: HookRow) {
        var filtered: [(id: Int, rowIDTable: String?, filter: RowFilter, boundary: [DatabaseValue]?)] = []
        let table = event.kind.tableName.lowercasedIdentifier
        registry.forEachObserver(impactedBy: event, lowercasedTable: table, pinnedValues: { column, collation in
            Self.values(ofColumn: column, in: row, collation: collation)
        }) { id, rowIDTable in
            guard let filter = registry.filter(of: id, lowercasedTable: table) else {
                mark(id, rowIDTable: rowIDTable, event: event)
                return
            }
            // Marked already, and wanting no rowids: nothing more to learn.
            if rowIDTable == nil, outcome.levels.isMarked(id) { return }
            // The boundary of a window describes the state before the
            // transaction: once the transaction concerns the observation,
            // the window may have moved.
            let boundary = registry.window(of: id).flatMap { window in
                outcome.levels.isMarkedAtSomeLevel(id) ? nil : window.currentValues
            }
            filtered.append((id, rowIDTable, filter, boundary))
        }
        guard !filtered.isEmpty else { return }
        var concerned = [Bool](repeating: false, count: filtered.count)
        let likeIsUnknown = database.configuration.connectionSettings.caseSensitiveLikeMayBeSet.load(ordering: .acquiring)
        for side in row.sides.list {
            let pending = filtered.indices.filter { !concerned[$0] }
            guard !pending.isEmpty else { break }
            let answers = filterEvaluator.matches(
                pending.map { filtered[$0].filter }, boundaries: pending.map { filtered[$0].boundary }, side: side,
                key: row.key, info: row.info, hookConnection: row.connection, likeIsUnknown: likeIsUnknown)
            // An answer it cannot give (nil) concerns the observation.
            for (index, answer) in zip(pending, answers) where answer != false { concerned[index] = true }
        }
        for (index, entry) in filtered.enumerated() where concerned[index] {
            mark(entry.id, rowIDTable: entry.rowIDTable, event: event)
        }
    }

    /// The values of a stored column on the sides of the hook's row that
    /// the event changes, as a pinned column compares them; nil when one
    /// is unknown.
    private static func values(ofColumn column: String, in row: HookRow, collation: PinnedColumn.Collation) -> [IndexedValue]? {
        // Names compare as bytes (two spellings of "é" are two columns).
        guard let stored = row.info.storedColumns.first(where: { $0.name.utf8.elementsEqual(column.utf8) }) else {
            return nil
        }
        var values: [IndexedValue] = []
        for side in row.sides.list {
            guard let value = side.value(
                in: row.connection, old: stored.old, new: stored.new,
                hasDefault: row.info.columnsWithDefault?.contains(column) ?? true),
                let key = PinnedColumn.indexedValue(value, collation: collation)
            else { return nil }
            values.append(key)
        }
        return values
    }

    /// The name of the table a hook reports, its index in the running
    /// statement's written tables, and its metadata, found without
    /// allocating; nil when its events concern nobody.
    ///
    /// A table the statement does not announce is the shadow table of a
    /// virtual table (FTS, R*Tree: the authorizer reports the virtual table,
    /// the hooks its shadow tables): the virtual table's observations are
    /// marked at its first change in the execution. Other unannounced
    /// tables are observed at table level.
    @inline(__always)
    func hookedTable(
        _ table: UnsafePointer<CChar>, schema: UnsafePointer<CChar>
    ) -> (name: String, info: TableHookInfo?, index: Int?)? {
        if let index = statements.current.writeIndex(ofTable: table) {
            // No observation watches the table, and no user observer wants
            // the statement's events.
            if index < statements.current.tableWatched.count, !statements.current.tableWatched[index],
                statements.current.userObservers.isEmpty
            {
                return nil
            }
            var info = statements.current.tableInfos[index]
            // A table of the same name in another schema (`main.t` beside
            // `temp.t`): its columns are unknown, and its events concern
            // every observer of the name, as those of an unknown table.
            if let known = info, !known.describes(rowsOf: schema) { info = nil }
            return (statements.current.effects.writes[index].name, info, index)
        }
        if let index = statements.current.virtualTableIndex(owningShadowTable: table) {
            markVirtualTable(at: index)
        }
        let name = String(cString: table)
        if name.hasPrefix("sqlite_") { return nil }
        return (name, nil, nil)
    }

    /// Marks every observation of the written virtual table at `index`, once
    /// per execution of the statement.
    private func markVirtualTable(at index: Int) {
        guard index < statements.current.pendingVirtualTables.count, statements.current.pendingVirtualTables[index]
        else { return }
        statements.current.pendingVirtualTables[index] = false
        mark(impactedBy: DatabaseEvent(kind: .insert(tableName: statements.current.effects.writes[index].name), rowID: nil))
    }

    /// Update-hook path: marks every observation of a table once per
    /// execution, for a statement that may delete its rows unseen.
    func markHiddenDeletions(ofTableAt index: Int?, named tableName: String) {
        guard let index, index < statements.current.pendingHiddenDeletions.count,
            statements.current.pendingHiddenDeletions[index]
        else {
            return
        }
        statements.current.pendingHiddenDeletions[index] = false
        mark(impactedBy: DatabaseEvent(kind: .delete(tableName: tableName), rowID: nil))
    }

    /// The columns the running statement may update in a table (update-hook path).
    func updatedColumns(ofTableAt index: Int?) -> Set<String> {
        guard let index else { return [] }
        return statements.current.effects.writes[index].updatedColumns
    }

    // MARK: - Statements

    /// Called before a statement's first step, outside of any hook.
    ///
    /// While observing: prepares the statement's context (the metadata of
    /// the tables it writes, the user observers that want its events), and
    /// gives it a level of its own. Otherwise, only a savepoint statement
    /// reports here, so that the savepoints begun before an observer
    /// arrives are known when they are rolled back.
    ///
    /// A quiet statement (one that writes no table an observation watches,
    /// when no user observer listens, and changes no savepoint nor schema)
    /// runs with no context, no level and no row hook: SQLite prepares no
    /// row event for it, and a 10 000-row transaction of a table nobody
    /// watches costs what it costs with no observation. Its end is
    /// `quietStatementDidEnd(_:)`. It was found quiet by a first run
    /// through the general path, in the current generation of contexts
    /// (`StatementContexts.generation`), which a new region or schema ends.
    ///
    /// - Returns: Whether the statement runs quiet.
    @inline(__always)
    func statementWillStart(_ statement: Statement) -> Bool {
        // Not inside a statement that the broker follows (whose hooks must
        // see the rows of the statements it runs), nothing stale to forget
        // (see `followStatement(_:)`), and effects that are those of the
        // program that runs: never recompiled (see `quietStatementDidEnd(_:)`).
        guard statement.quietGeneration == statements.generation, outcome.levels.runningStatementCount == 0,
            userObservers.isEmpty, userObservers.willCommitError == nil, !outcome.commitIsPending,
            !outcome.rollbackIsPending, !statements.hasSuspended, outcome.levels.isPristine || isInsideTransaction,
            statement.recompilationsSoFar == 0
        else {
            return followStatement(statement)
        }
        #if REACTIVESQLITE_INTERNAL_CHECKS
        if !statement.effects.writes.isEmpty { quietRunCount += 1 }
        #endif
        if rowHookIsInstalled {
            ChangeHooks.removeRowHook(from: database.connection, preUpdate: usesPreUpdateHook)
            rowHookIsInstalled = false
        }
        return true
    }

    /// Whether the connection is inside a transaction.
    private var isInsideTransaction: Bool { sqlite3_get_autocommit(database.connection) == 0 }

    /// The start of a statement that the broker follows (see
    /// `statementWillStart(_:)`).
    private func followStatement(_ statement: Statement) -> Bool {
        userObservers.forgetWillCommitError()
        if outcome.levels.runningStatementCount == 0 {
            // What a statement that did not report its end left is stale:
            // a transaction that ended while nothing observed, a statement
            // reset without the broker hearing of it.
            outcome.forgetPending()
            statements.forgetSuspended()
            if !outcome.levels.isPristine, !isInsideTransaction { outcome.levels.reset() }
        }
        reinstallRowHookIfNeeded()
        if outcome.levels.runningStatementCount > 0 { statements.suspendCurrent() }
        // Only a statement that may write has row events to keep or drop:
        // the others (BEGIN, COMMIT, SAVEPOINT, reads) need no level.
        if !statement.effects.writes.isEmpty { outcome.levels.pushStatement(ObjectIdentifier(statement)) }
        // Not observing, or a statement that writes nothing (BEGIN, COMMIT,
        // SELECT...): no table metadata to prepare.
        guard isObserving, !statement.effects.writes.isEmpty || statement.effects.renumbersRowIDs else {
            statements.current = StatementContext(statement: ObjectIdentifier(statement), effects: statement.effects)
            if isObserving, statement.effects.mayRunQuiet { statement.quietGeneration = statements.generation }
            return false
        }
        // The same statement again, and nothing changed since: the context
        // is ready (user observers are asked again each time).
        if userObservers.isEmpty, let prepared = statements.preparedContext(for: statement) {
            statements.current = prepared
            return false
        }
        statements.current = statements.makeContext(
            for: statement, database: database, registry: registry, userObservers: userObservers,
            usesPreUpdateHook: usesPreUpdateHook)
        statements.keepPreparedContext(statements.current, for: statement)
        if Self.isQuiet(statements.current), statement.recompilationsSoFar == 0 {
            statement.quietGeneration = statements.generation
        }
        return false
    }

    /// Whether a statement with this context may run quiet: no table it
    /// writes is watched, none is a view or a virtual table (whose writes
    /// reach tables the statement does not name), no user observer wants
    /// its events, and its effects allow it (`StatementEffects.mayRunQuiet`).
    private static func isQuiet(_ context: StatementContext) -> Bool {
        context.effects.mayRunQuiet && context.userObservers.isEmpty && context.renumberedTables.isEmpty
            && !context.tableWatched.contains(true)
            && context.tableInfos.allSatisfy { info in info.map { !$0.isVirtual } ?? false }
    }

    /// Whether the row hook (pre-update or update) is installed: a quiet
    /// statement removes it for its run.
    @exclusivity(unchecked) private var rowHookIsInstalled = true

    /// Installs the row hook again after quiet runs, before a statement
    /// that the broker follows.
    private func reinstallRowHookIfNeeded() {
        guard !rowHookIsInstalled else { return }
        ChangeHooks.installRowHook(on: database.connection, broker: self, preUpdate: usesPreUpdateHook)
        rowHookIsInstalled = true
    }

    /// Called when a quiet statement ends (see `statementWillStart(_:)`),
    /// as `statementDidEnd(_:resultCode:)` for the others: tells observers
    /// of a commit or a rollback. The row hook stays off for the next quiet
    /// statements: the next statement that the broker follows installs it
    /// again before its first step. Every write of the connection is a
    /// `Statement` (its handle is never public), so no row event can come
    /// meanwhile from elsewhere.
    ///
    /// A statement that writes and that SQLite recompiled during its run
    /// (another connection changed the schema since it was compiled, or
    /// a pragma of this one expired it) may now write
    /// other tables, through a trigger added meanwhile, with no hook to
    /// report them: every observation counts it as a change of its region
    /// and of the schema, as after an external change. Its effects, read
    /// when it was first compiled, no longer describe it: it never runs
    /// quiet again.
    ///
    /// - Returns: The error of a user observer that vetoed the commit.
    func quietStatementDidEnd(_ statement: Statement) -> (any Error)? {
        // A statement that writes nothing (BEGIN, COMMIT, a read) writes
        // nothing after a recompilation either: the schema changes of this
        // connection expire them all.
        if !statement.effects.writes.isEmpty, statement.recompilationsSoFar != 0 {
            for id in registry.sortedIDs {
                outcome.levels.mark(id)
                outcome.levels.recordUnknownRows(forObserver: id)
            }
            outcome.levels.markSchemaChange()
            database.clearSchemaCache()
        }
        if outcome.takeCommit(connection: database.connection) { didCommit() }
        if outcome.takeRollback() { didRollback() }
        return userObservers.takeWillCommitError()
    }

    /// Forgets table metadata after a schema change.
    func schemaDidChange() {
        statements.schemaDidChange()
        registry.forgetWatchedTables()
        registry.removePins()
        filterEvaluator.reset()
    }

    /// Called when a statement that reported its start ends: at the step
    /// that returns `SQLITE_DONE` or an error, or inside `sqlite3_reset`
    /// for a statement stopped before its end (a commit may happen there).
    ///
    /// Closes the statement's level (kept, or dropped when SQLite undid the
    /// statement), applies its savepoint action, then tells observers of a
    /// commit or a rollback.
    ///
    /// - Returns: The error of a user observer that vetoed the commit, which
    ///   the statement throws instead of `SQLITE_CONSTRAINT_COMMITHOOK`.
    func statementDidEnd(_ statement: Statement, resultCode: Int32) -> (any Error)? {
        let succeeded = resultCode == SQLITE_DONE || resultCode == SQLITE_OK || resultCode == SQLITE_ROW
        let ended = statements.endCurrent()
        let keepsChanges = succeeded || outcome.commitIsPending || keepsChangesOfFailedStatement(statement, ended)
        if keepsChanges, isObserving {
            markWhatNoHookReports(ended, succeeded: succeeded)
        }
        deliver(outcome.levels.popStatement(ObjectIdentifier(statement), keepsChanges: keepsChanges))
        if succeeded, let savepoint = ended.effects.savepoint {
            switch savepoint {
            case .begin(let name): outcome.levels.beginSavepoint(name)
            case .release(let name): deliver(outcome.levels.releaseSavepoint(name))
            case .rollback(let name): outcome.levels.rollbackToSavepoint(name)
            }
        }
        // VACUUM commits with no hook at all.
        if succeeded, ended.effects.renumbersRowIDs, isObserving { outcome.commitIsPending = true }
        // The commit is told first; a rollback reported meanwhile, after.
        if outcome.takeCommit(connection: database.connection) { didCommit() }
        if outcome.takeRollback() { didRollback() }
        return userObservers.takeWillCommitError()
    }

    /// Whether a failed statement, not rolled back with its transaction,
    /// kept the changes it made before it failed.
    ///
    /// A failure with ABORT (the default conflict resolution, and
    /// `RAISE(ABORT)`) undoes the statement, and leaves `sqlite3_changes()`
    /// at 0. A failure with FAIL (`OR FAIL`, `ON CONFLICT FAIL`,
    /// `RAISE(FAIL)`) keeps the rows changed before it, which
    /// `sqlite3_changes()` counts, except those changed by triggers and
    /// those a REPLACE deleted: when no row of the statement itself was
    /// kept, such changes may remain if something could fail with FAIL,
    /// and are kept, conservatively.
    private func keepsChangesOfFailedStatement(_ statement: Statement, _ context: StatementContext) -> Bool {
        guard let connection = database.connection else { return false }
        if sqlite3_changes(connection) > 0 { return true }
        return context.tableInfos.contains { $0?.mayFailKeepingChanges ?? true }
            || SQLLexer.containsKeyword("FAIL", in: statement.sql)
    }

    /// Marks the changes of a statement that kept its changes, which no
    /// row event reports: a schema change (dropped, altered or created
    /// tables, dropped or created views), a written virtual table whose
    /// shadow tables showed no change during the statement (a module
    /// without shadow tables, or one that writes them at the commit: FTS5
    /// with `columnsize=0`), a WITHOUT ROWID table on the update-hook path,
    /// the rowids a VACUUM renumbers.
    private func markWhatNoHookReports(_ context: StatementContext, succeeded: Bool) {
        if succeeded {
            for table in context.effects.restructuredTables {
                registry.forEachObserver(impactedBy: DatabaseEvent(kind: .delete(tableName: table), rowID: nil)) {
                    id, rowIDTable in
                    outcome.levels.mark(id)
                    if rowIDTable != nil { outcome.levels.recordUnknownRows(forObserver: id) }
                }
            }
            if context.effects.changesSchema { outcome.levels.markSchemaChange() }
        }
        for (index, info) in context.tableInfos.enumerated() {
            // The statement's own rows count in `sqlite3_changes`; its
            // triggers' (an `INSTEAD OF` trigger of a view) do not. Read
            // only for such a table: most statements write none.
            guard let info, info.isVirtual || (info.withoutRowID && !usesPreUpdateHook),
                index < context.pendingVirtualTables.count, context.pendingVirtualTables[index],
                context.effects.writesThroughTriggers || sqlite3_changes(database.connection) > 0
            else { continue }
            mark(impactedBy: DatabaseEvent(kind: .insert(tableName: context.effects.writes[index].name), rowID: nil))
        }
        // Update-hook path: a REPLACE deleted a row unseen, and the statement
        // failed (FAIL kept the deletion) before any row event could mark it.
        for (index, pending) in context.pendingHiddenDeletions.enumerated() where pending && !succeeded {
            mark(impactedBy: DatabaseEvent(kind: .delete(tableName: context.effects.writes[index].name), rowID: nil))
        }
        for table in context.renumberedTables where succeeded {
            // The rowids change, not the columns: observations of some
            // columns of every row are not concerned.
            mark(impactedBy: DatabaseEvent(kind: .update(tableName: table, columnNames: ["rowid"]), rowID: nil))
        }
    }

    private func deliver(_ events: [ChangeLevelStack.UserEvent]) {
        for (observer, event) in events { observer.databaseDidChange(with: event) }
    }

    // MARK: - Commits

    private func didCommit() {
        let number = outcome.countCommit()
        let committed = outcome.levels.takeCommitted()
        // Registration order, for a deterministic order of notifications.
        for id in committed.changed.sorted() {
            guard let observer = registry.observer(id) else { continue }
            let commit = DatabaseCommit(
                number: number, changedRowIDs: committed.rowIDs[id] ?? .unknown,
                changesSchema: committed.changesSchema)
            observer.databaseDidCommit(database, commit)
        }
        userObservers.transactionDidCommit(database)
    }

    private func didRollback() {
        outcome.levels.reset()
        userObservers.transactionDidRollback(database)
    }

    /// The database file was deleted or replaced under the connections
    /// (see `ExternalChangeDetector`): every observation that has an error
    /// channel ends with `error`. Runs in an access of the writer.
    func databaseFileDidMove(_ error: DatabaseError) {
        // An observation may unregister another one: look each one up.
        for id in registry.sortedIDs {
            registry.observer(id)?.databaseFileDidMove(database, error)
        }
    }

    /// Another connection or process committed (see `ExternalChangeDetector`).
    /// What it changed is unknown: every observation counts it as one
    /// commit that modified its region, which may have changed the schema.
    /// Runs in an access of the writer.
    ///
    /// - Complexity: O(n log n), where n is the number of observations.
    func databaseDidChangeExternally() {
        let commit = DatabaseCommit(number: outcome.countCommit(), changedRowIDs: .unknown, changesSchema: true)
        // Registration order, as after a local commit. An observation may
        // unregister another one from its callback: look each one up.
        for id in registry.sortedIDs {
            registry.observer(id)?.databaseDidCommit(database, commit)
        }
    }
}
