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
/// - `ChangeLevelStack` keeps the marks of the transaction, its savepoints
///   and its running statements, so that whatever SQLite undoes leaves no
///   trace;
/// - this type registers observers in a `DatabaseRegionIndex`, dispatches
///   each event to the observers it concerns, follows each statement from
///   its first step to its end (`statementWillStart(_:)`,
///   `statementDidEnd(_:resultCode:)`), and tells observers of each commit,
///   with its payload (`DatabaseCommit`).
///
/// Commit or rollback is decided from what SQLite says: the commit hook ran
/// and the connection is back in autocommit mode (a failed commit leaves
/// the transaction open, or runs the rollback hook); a statement that
/// failed kept its changes only when SQLite says so (see
/// `keepsChangesOfFailedStatement`).
///
/// Everything here runs on the writer's queue, inside accesses.
///
/// The properties that each row event reads are `@exclusivity(unchecked)`:
/// the run-time exclusivity check of a class property costs as much as the
/// rest of the work of an event that concerns nobody. No access to one of
/// them overlaps another access to it (the debug builds of the tests check
/// with enforcement on), and all of them are used on the writer's queue only.
final class TransactionObserverBroker {
    unowned let database: Database
    let usesPreUpdateHook: Bool
    @exclusivity(unchecked) private(set) var hooksInstalled = false

    // MARK: Registered observers

    @exclusivity(unchecked) private var regionIndex = DatabaseRegionIndex<Int>()
    @exclusivity(unchecked) private var commitObservers: [Int: any DatabaseCommitObserver] = [:]
    private var nextObserverID = 0
    /// The observations that want the rowids their commits changed, with
    /// the table whose rowids they want. Empty on the update-hook path,
    /// whose events miss rows.
    @exclusivity(unchecked) private var rowIDTables: [Int: String] = [:]

    private struct UserObserver {
        weak var weakObserver: (any TransactionObserver)?
        var strongObserver: (any TransactionObserver)?
        var extent: TransactionObservationExtent
        var observer: (any TransactionObserver)? { strongObserver ?? weakObserver }
    }
    @exclusivity(unchecked) private var userObservers: [UserObserver] = []

    // MARK: Transaction state

    @exclusivity(unchecked) private var levels = ChangeLevelStack()
    /// The statement running now (the innermost one).
    @exclusivity(unchecked) private var current = StatementContext()
    /// The contexts of the statements that a nested statement interrupted.
    private var suspendedContexts: [StatementContext] = []
    /// Table metadata, by name (as SQLite compares identifiers).
    private var tableInfos: [CaseInsensitiveName: TableHookInfo] = [:]
    /// Whether an observation watches a table, by name as the statements
    /// spell it; emptied whenever a region or the schema changes.
    private var watchedTables: [CaseInsensitiveName: Bool] = [:]
    /// The context last prepared by `statementWillStart(_:)`, until a region
    /// or the schema changes: run again (a cached statement in a loop), its
    /// statement needs no new preparation.
    private var preparedContext: StatementContext?
    private weak var preparedStatement: Statement?

    /// The commit hook allowed a commit that the statement's end confirms.
    private var commitIsPending = false
    /// The rollback hook ran; observers hear of it at the statement's end.
    private var rollbackIsPending = false
    /// The error thrown by a user observer's `databaseWillCommit()`.
    private var willCommitError: (any Error)?

    /// The number of commits seen since the broker exists, external
    /// commits detected by an `ExternalChangeWatcher` included.
    private(set) var commitCount = 0

    init(database: Database) {
        self.database = database
        let preUpdateAvailable = sqlite3_compileoption_used("ENABLE_PREUPDATE_HOOK") != 0
        usesPreUpdateHook = preUpdateAvailable && database.configuration.changeTracking == .automatic
    }

    /// Whether statements must report to the broker.
    var isObserving: Bool { hooksInstalled && (!commitObservers.isEmpty || !userObservers.isEmpty) }

    // MARK: - Registration

    /// Registers an observation with its region; returns its identifier.
    ///
    /// - Parameter rowIDTable: A table whose changed rowids the observation
    ///   wants with each commit (`DatabaseCommit.changedRowIDs`).
    func register(_ observer: any DatabaseCommitObserver, region: DatabaseRegion, rowIDTable: String? = nil) -> Int {
        installHooksIfNeeded()
        let id = nextObserverID
        nextObserverID += 1
        commitObservers[id] = observer
        // The update hook misses the rows that `INSERT OR REPLACE` deletes,
        // and the old rowid of an UPDATE that changes it: no rowids there.
        if let rowIDTable, usesPreUpdateHook { rowIDTables[id] = rowIDTable }
        regionIndex.insert(region, for: id)
        regionsDidChange()
        return id
    }

    /// Replaces the region of a registered observation.
    func updateRegion(_ region: DatabaseRegion, forObserver id: Int) {
        guard commitObservers[id] != nil else { return }
        regionIndex.insert(region, for: id)
        regionsDidChange()
    }

    /// Unregisters an observation (idempotent).
    func unregister(_ id: Int) {
        commitObservers[id] = nil
        rowIDTables[id] = nil
        _ = regionIndex.remove(id)
        levels.remove(observer: id)
        regionsDidChange()
    }

    /// Forgets what was derived from the regions.
    private func regionsDidChange() {
        watchedTables = [:]
        preparedStatement = nil
        preparedContext = nil
    }

    func add(transactionObserver: some TransactionObserver, extent: TransactionObservationExtent) {
        installHooksIfNeeded()
        switch extent {
        case .databaseLifetime, .nextTransaction:
            userObservers.append(UserObserver(strongObserver: transactionObserver, extent: extent))
        case .observerLifetime:
            userObservers.append(UserObserver(weakObserver: transactionObserver, extent: extent))
        }
    }

    func remove(transactionObserver: some TransactionObserver) {
        userObservers.removeAll { $0.observer == nil || $0.observer === transactionObserver }
        // Nothing more reaches it: neither the events buffered in levels,
        // nor those of the running statements.
        levels.remove(userObserver: transactionObserver)
        for (interest, observers) in current.userObservers {
            current.userObservers[interest] = observers.filter { $0 !== transactionObserver }
        }
    }

    /// The connection closes: every observer is released, so that nothing
    /// they capture (their queue, the `Database` itself) stays alive
    /// through them. An observation cancelled later finds nothing to leave.
    func connectionWillClose() {
        commitObservers = [:]
        rowIDTables = [:]
        regionIndex = DatabaseRegionIndex()
        userObservers = []
        levels.reset()
        current = StatementContext()
        suspendedContexts = []
        regionsDidChange()
    }

    private func installHooksIfNeeded() {
        guard !hooksInstalled else { return }
        hooksInstalled = true
        database._activeBroker = self
        ChangeHooks.install(on: database.connection, broker: self, preUpdate: usesPreUpdateHook)
        // Savepoints are followed even before anything observes (see
        // `statementWillStart(_:)`); outside of a transaction none is open.
        if sqlite3_get_autocommit(database.connection) != 0, levels.runningStatementCount == 0 { levels.reset() }
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
        deliver(levels.takeUserEvents())
        for entry in userObservers {
            guard let observer = entry.observer else { continue }
            do {
                try observer.databaseWillCommit()
            } catch {
                willCommitError = error
                return 1
            }
        }
        // Confirmed, or not, when the statement ends (see `statementDidEnd`).
        commitIsPending = true
        return 0
    }

    func rollbackHook() {
        commitIsPending = false
        levels.reset()
        rollbackIsPending = isObserving
    }

    /// Forgets the rollback of a transaction that the library ran for
    /// itself, outside any transaction of the user's, and that changed
    /// nothing observable (see `Database.yieldingToWriters(_:)`): no
    /// observer hears of it.
    func forgetInternalRollback() {
        rollbackIsPending = false
    }

    /// A row event, from either hook: marks the observations it concerns
    /// (or those `markedEvent` concerns, when given), and hands the event to
    /// the user observers that asked for it.
    @inline(__always)
    func dispatch(_ event: DatabaseEvent, _ operation: Int32, markedAs markedEvent: DatabaseEvent? = nil) {
        mark(impactedBy: markedEvent ?? event)
        guard !current.userObservers.isEmpty,
            let observers = current.userObservers[
                StatementContext.UserObserverInterest(table: event.kind.tableName.lowercasedIdentifier, operation: operation)]
        else { return }
        // Buffered in the statement's level: delivered when nothing can undo it.
        for observer in observers { levels.buffer(event, for: observer) }
    }

    /// Marks the observations an event concerns, at the innermost level.
    @inline(__always)
    func mark(impactedBy event: DatabaseEvent) {
        Self.forEachKey(in: &regionIndex, impactedBy: event) { id in
            levels.mark(id)
            if rowIDTables.isEmpty { return }
            guard let table = rowIDTables[id] else { return }
            levels.recordRowID(event.rowID, ofTable: event.kind.tableName, forObserver: id, table: table)
        }
    }

    /// Visits the keys an event concerns, reading the index in place: called
    /// on the stored property directly, the index would be copied for the
    /// call (three retains and three releases for every row event).
    private static func forEachKey(
        in index: inout DatabaseRegionIndex<Int>, impactedBy event: DatabaseEvent, _ body: (Int) -> Void
    ) {
        index.forEachKey(impactedBy: event, body)
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
    func hookedTable(_ table: UnsafePointer<CChar>) -> (name: String, info: TableHookInfo?, index: Int?)? {
        if let index = current.writeIndex(ofTable: table) {
            // No observation watches the table, and no user observer wants
            // the statement's events.
            if index < current.tableWatched.count, !current.tableWatched[index], current.userObservers.isEmpty {
                return nil
            }
            return (current.effects.writes[index].name, current.tableInfos[index], index)
        }
        if let index = current.virtualTableIndex(owningShadowTable: table) {
            markVirtualTable(at: index)
        }
        let name = String(cString: table)
        if name.hasPrefix("sqlite_") { return nil }
        return (name, nil, nil)
    }

    /// Marks every observation of the written virtual table at `index`, once
    /// per execution of the statement.
    private func markVirtualTable(at index: Int) {
        guard index < current.pendingVirtualTables.count, current.pendingVirtualTables[index] else { return }
        current.pendingVirtualTables[index] = false
        mark(impactedBy: DatabaseEvent(kind: .insert(tableName: current.effects.writes[index].name), rowID: nil))
    }

    /// Update-hook path: marks every observation of a table once per
    /// execution, for a statement that may delete its rows unseen.
    func markHiddenDeletions(ofTableAt index: Int?, named tableName: String) {
        guard let index, index < current.pendingHiddenDeletions.count, current.pendingHiddenDeletions[index] else {
            return
        }
        current.pendingHiddenDeletions[index] = false
        mark(impactedBy: DatabaseEvent(kind: .delete(tableName: tableName), rowID: nil))
    }

    /// The columns the running statement may update in a table (update-hook path).
    func updatedColumns(ofTableAt index: Int?) -> Set<String> {
        guard let index else { return [] }
        return current.effects.writes[index].updatedColumns
    }

    // MARK: - Statements

    /// Called before a statement's first step, outside of any hook.
    ///
    /// While observing: prepares the statement's context (the metadata of
    /// the tables it writes, the user observers that want its events), and
    /// gives it a level of its own. Otherwise, only a savepoint statement
    /// reports here, so that the savepoints begun before an observer
    /// arrives are known when they are rolled back.
    func statementWillStart(_ statement: Statement) {
        willCommitError = nil
        if levels.runningStatementCount == 0 {
            // What a statement that did not report its end left is stale:
            // a transaction that ended while nothing observed, a statement
            // reset without the broker hearing of it.
            commitIsPending = false
            rollbackIsPending = false
            suspendedContexts.removeAll()
            if !levels.isPristine, sqlite3_get_autocommit(database.connection) != 0 { levels.reset() }
        }
        if levels.runningStatementCount > 0 { suspendedContexts.append(current) }
        // Only a statement that may write has row events to keep or drop:
        // the others (BEGIN, COMMIT, SAVEPOINT, reads) need no level.
        if !statement.effects.writes.isEmpty { levels.pushStatement(ObjectIdentifier(statement)) }
        // Not observing, or a statement that writes nothing (BEGIN, COMMIT,
        // SELECT...): no table metadata to prepare.
        guard isObserving, !statement.effects.writes.isEmpty || statement.effects.renumbersRowIDs else {
            current = StatementContext(statement: ObjectIdentifier(statement), effects: statement.effects)
            return
        }
        // The same statement again, and nothing changed since: the context
        // is ready (user observers are asked again each time).
        if userObservers.isEmpty, let preparedContext, let preparedStatement, preparedStatement === statement {
            current = preparedContext
            return
        }
        current = makeContext(statement)
        // Kept for the next run of the same statement, without the user
        // observers it names: the database holds some of them weakly.
        if current.userObservers.isEmpty {
            preparedContext = current
            preparedStatement = statement
        } else {
            preparedContext = nil
            preparedStatement = nil
        }
    }

    /// The context of a statement about to run. Reading table metadata may
    /// run statements of its own (schema queries), which report here too:
    /// it is all read before the context is installed.
    private func makeContext(_ statement: Statement) -> StatementContext {
        let effects = statement.effects
        var context = StatementContext(statement: ObjectIdentifier(statement), effects: effects)
        context.tableInfos = effects.writes.map { hookInfo(forTable: $0.name) }
        context.tableWatched = effects.writes.map { isWatched(table: $0.name) }
        context.pendingHiddenDeletions =
            usesPreUpdateHook ? [] : UpdateHookChangeTracking.mayHideDeletions(statement, tableInfos: context.tableInfos)
        // Update-hook path: WITHOUT ROWID tables have no row events either,
        // and are marked the same way as virtual tables without shadow tables.
        context.pendingVirtualTables = zip(context.tableInfos, context.tableWatched).map { info, watched in
            watched && (info?.isVirtual == true || (!usesPreUpdateHook && info?.withoutRowID == true))
        }
        if effects.renumbersRowIDs { context.renumberedTables = tablesRenumberedByVacuum() }
        context.userObservers = userObserverInterests(effects)
        return context
    }

    /// Which user observers want which events of a statement.
    private func userObserverInterests(
        _ effects: StatementEffects
    ) -> [StatementContext.UserObserverInterest: [any TransactionObserver]] {
        guard !effects.writes.isEmpty, !userObservers.isEmpty else { return [:] }
        userObservers.removeAll { $0.observer == nil }
        var interests: [StatementContext.UserObserverInterest: [any TransactionObserver]] = [:]
        for writes in effects.writes {
            let table = writes.name.lowercasedIdentifier
            var kinds: [(Int32, DatabaseEventKind)] = []
            if writes.inserts { kinds.append((SQLITE_INSERT, .insert(tableName: writes.name))) }
            if writes.deletes { kinds.append((SQLITE_DELETE, .delete(tableName: writes.name))) }
            if !writes.updatedColumns.isEmpty {
                kinds.append((SQLITE_UPDATE, .update(tableName: writes.name, columnNames: writes.updatedColumns)))
            }
            // With the pre-update hook, a changed rowid is reported as a
            // deletion and an insertion, and the rows that an `INSERT OR
            // REPLACE` (or `UPDATE OR REPLACE`) deletes, which the
            // authorizer does not announce, as deletions.
            if usesPreUpdateHook {
                if writes.inserts || !writes.updatedColumns.isEmpty {
                    kinds.append((SQLITE_DELETE, .delete(tableName: writes.name)))
                }
                if !writes.updatedColumns.isEmpty { kinds.append((SQLITE_INSERT, .insert(tableName: writes.name))) }
            }
            for (operation, kind) in kinds {
                let interest = StatementContext.UserObserverInterest(table: table, operation: operation)
                guard interests[interest] == nil else { continue }
                let observers = userObservers.compactMap { entry -> (any TransactionObserver)? in
                    guard let observer = entry.observer, observer.observes(eventsOfKind: kind) else { return nil }
                    return observer
                }
                if !observers.isEmpty { interests[interest] = observers }
            }
        }
        return interests
    }

    private func hookInfo(forTable name: String) -> TableHookInfo? {
        // Bytes, as SQLite compares names: never `String.==`.
        let key = CaseInsensitiveName(name)
        if let info = tableInfos[key] { return info }
        guard let schema = try? database.tableSchema(named: name), !schema.isView else { return nil }
        let info = TableHookInfo(schema: schema, database: database, readsReplaceResolution: !usesPreUpdateHook)
        tableInfos[key] = info
        return info
    }

    /// Whether an observation watches the table (some of its rows or columns).
    ///
    /// - Complexity: O(1) once known; the first time after a change of the
    ///   regions, O(k), where k is the number of observations of the table.
    private func isWatched(table name: String) -> Bool {
        if let watched = watchedTables[CaseInsensitiveName(name)] { return watched }
        // An insertion without rowid concerns every observation of the table.
        let watched = !regionIndex.keys(impactedByEventsOfKind: .insert(tableName: name)).isEmpty
        watchedTables[CaseInsensitiveName(name)] = watched
        return watched
    }

    /// The tables whose rowids a VACUUM may renumber: the rowid tables
    /// without an `INTEGER PRIMARY KEY` that observations watch.
    private func tablesRenumberedByVacuum() -> [String] {
        let names = (try? database.fetchRows(sql: "SELECT name FROM sqlite_master WHERE type = 'table'")) ?? []
        return names.compactMap { row -> String? in
            guard let name: String = try? row[0], isWatched(table: name),
                let schema = try? database.tableSchema(named: name),
                !schema.isView, !schema.isVirtual, !schema.isWithoutRowID,
                case .rowID(column: nil) = schema.primaryKey
            else { return nil }
            return schema.name
        }
    }

    /// Forgets table metadata after a schema change.
    func schemaDidChange() {
        tableInfos = [:]
        regionsDidChange()
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
        // Moved out rather than copied: a copy retains every collection of
        // the context, at every statement.
        var ended = suspendedContexts.popLast() ?? StatementContext()
        swap(&ended, &current)
        let keepsChanges = succeeded || commitIsPending || keepsChangesOfFailedStatement(statement, ended)
        if keepsChanges, isObserving {
            markWhatNoHookReports(ended, succeeded: succeeded)
        }
        deliver(levels.popStatement(ObjectIdentifier(statement), keepsChanges: keepsChanges))
        if succeeded, let savepoint = ended.effects.savepoint {
            switch savepoint {
            case .begin(let name): levels.beginSavepoint(name)
            case .release(let name): deliver(levels.releaseSavepoint(name))
            case .rollback(let name): levels.rollbackToSavepoint(name)
            }
        }
        // VACUUM commits with no hook at all.
        if succeeded, ended.effects.renumbersRowIDs, isObserving { commitIsPending = true }
        if commitIsPending {
            commitIsPending = false
            // The commit happened if the connection is back in autocommit
            // mode. A commit that failed after the commit hook (SQLITE_BUSY)
            // left the transaction open; other failures ran the rollback hook.
            if sqlite3_get_autocommit(database.connection) != 0 { didCommit() }
        }
        if rollbackIsPending {
            rollbackIsPending = false
            didRollback()
        }
        defer { willCommitError = nil }
        return willCommitError
    }

    /// Whether a failed statement, not rolled back with its transaction,
    /// kept the changes it made before it failed.
    ///
    /// A failure with ABORT (the default conflict resolution, and
    /// `RAISE(ABORT)`) undoes the statement, and leaves `sqlite3_changes()`
    /// at 0. A failure with FAIL (`OR FAIL`, `ON CONFLICT FAIL`,
    /// `RAISE(FAIL)`) keeps the rows changed before it, which
    /// `sqlite3_changes()` counts, except those changed by triggers: when no
    /// row of the statement itself was kept, its triggers' changes may
    /// remain if something could fail with FAIL, and are kept, conservatively.
    private func keepsChangesOfFailedStatement(_ statement: Statement, _ context: StatementContext) -> Bool {
        guard let connection = database.connection else { return false }
        if sqlite3_changes(connection) > 0 { return true }
        guard context.effects.writesThroughTriggers else { return false }
        return context.tableInfos.contains { $0?.mayFailKeepingChanges ?? true }
            || SQLLexer.containsKeyword("FAIL", in: statement.sql)
    }

    /// Marks the changes of a statement that no row event reports: a
    /// schema change (dropped or altered tables, dropped views), a virtual
    /// table whose module keeps no shadow table, a WITHOUT ROWID table on the
    /// update-hook path, the rowids a VACUUM renumbers.
    private func markWhatNoHookReports(_ context: StatementContext, succeeded: Bool) {
        guard succeeded else { return }
        for table in context.effects.restructuredTables {
            Self.forEachKey(in: &regionIndex, impactedBy: DatabaseEvent(kind: .delete(tableName: table), rowID: nil)) {
                id in
                levels.mark(id)
                if rowIDTables[id] != nil { levels.recordUnknownRows(forObserver: id) }
            }
        }
        if context.effects.changesSchema { levels.markSchemaChange() }
        for (index, info) in context.tableInfos.enumerated() {
            guard let info, (info.isVirtual && !info.hasShadowTables) || (info.withoutRowID && !usesPreUpdateHook),
                index < context.pendingVirtualTables.count, context.pendingVirtualTables[index],
                sqlite3_changes(database.connection) > 0
            else { continue }
            mark(impactedBy: DatabaseEvent(kind: .insert(tableName: context.effects.writes[index].name), rowID: nil))
        }
        for table in context.renumberedTables {
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
        commitCount += 1
        let committed = levels.takeCommitted()
        // Registration order, for a deterministic order of notifications.
        for id in committed.changed.sorted() {
            guard let observer = commitObservers[id] else { continue }
            let commit = DatabaseCommit(
                number: commitCount, changedRowIDs: committed.rowIDs[id] ?? .unknown,
                changesSchema: committed.changesSchema)
            observer.databaseDidCommit(database, commit)
        }
        for entry in userObservers {
            entry.observer?.databaseDidCommit(database)
        }
        userObservers.removeAll { $0.observer == nil || $0.extent == .nextTransaction }
    }

    private func didRollback() {
        levels.reset()
        for entry in userObservers {
            entry.observer?.databaseDidRollback(database)
        }
        userObservers.removeAll { $0.observer == nil || $0.extent == .nextTransaction }
    }

    /// The database file was deleted or replaced under the connections
    /// (see `ExternalChangeWatcher`): every observation that has an error
    /// channel ends with `error`. Runs in an access of the writer.
    func databaseFileDidMove(_ error: DatabaseError) {
        // An observation may unregister another one: look each one up.
        for id in commitObservers.keys.sorted() {
            commitObservers[id]?.databaseFileDidMove(database, error)
        }
    }

    /// Another connection or process committed (see `ExternalChangeWatcher`).
    /// What it changed is unknown: every observation counts it as one
    /// commit that modified its region, which may have changed the schema.
    /// Runs in an access of the writer.
    ///
    /// - Complexity: O(n log n), where n is the number of observations.
    func databaseDidChangeExternally() {
        commitCount += 1
        let commit = DatabaseCommit(number: commitCount, changedRowIDs: .unknown, changesSchema: true)
        // Registration order, as after a local commit. An observation may
        // unregister another one from its callback: look each one up.
        for id in commitObservers.keys.sorted() {
            commitObservers[id]?.databaseDidCommit(database, commit)
        }
    }
}
