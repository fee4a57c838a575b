import Foundation
internal import CSQLite
import DatabaseRegions

/// Something the broker notifies after a commit that modified its region:
/// value, region and record observations.
protocol DatabaseCommitObserver: AnyObject {
    /// Called on the writer, right after a commit that modified the
    /// observer's region, before any other statement runs.
    func databaseDidCommitChanges(_ db: Database)
}

/// The one place where a writer connection's change hooks live.
///
/// It installs SQLite's commit, rollback and pre-update (or update) hooks the
/// first time something observes the connection, with an unretained context
/// pointer to the `Database` and C callbacks that capture nothing. Observations
/// register a region in its `DatabaseRegionIndex`; each row event marks the
/// observations it concerns in the current savepoint level, so an event costs
/// time in proportion to the observations it concerns. After a commit, the
/// marked observations are told once each.
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
    @exclusivity(unchecked) private var hooksInstalled = false

    // MARK: Registered observers

    @exclusivity(unchecked) private var regionIndex = DatabaseRegionIndex<Int>()
    @exclusivity(unchecked) private var commitObservers: [Int: any DatabaseCommitObserver] = [:]
    private var nextObserverID = 0
    /// The observations that want the rowids their commits changed (see
    /// `committedRowIDs(forObserver:)`), with the table whose rowids they
    /// want. Empty on the update-hook path, whose events miss rows.
    @exclusivity(unchecked) private var rowIDTables: [Int: String] = [:]
    /// During the notifications of a commit, the rowids it changed for each
    /// observation of `rowIDTables` it concerns.
    private var committedRowIDs: [Int: ChangedRowIDs] = [:]

    private struct UserObserver {
        weak var weakObserver: (any TransactionObserver)?
        var strongObserver: (any TransactionObserver)?
        var extent: TransactionObservationExtent
        var observer: (any TransactionObserver)? { strongObserver ?? weakObserver }
    }
    @exclusivity(unchecked) private var userObservers: [UserObserver] = []

    /// Which user observers want the events of the running statement, by
    /// (index of the written table in the statement's effects, operation).
    @exclusivity(unchecked) private var statementUserObservers: [StatementInterest: [any TransactionObserver]] = [:]
    private struct StatementInterest: Hashable {
        var table: String
        var operation: Int32
    }

    // MARK: Transaction state

    /// The marks of one savepoint level: which observations changed, and the
    /// events buffered for user observers until the outermost release.
    private struct Level {
        var name: String?
        var changed: Set<Int> = []
        /// For the observations of `rowIDTables` among `changed`, the rows
        /// changed at this level.
        var rowIDs: [Int: ChangedRowIDs] = [:]
        var userEvents: [(observer: any TransactionObserver, event: DatabaseEvent)] = []
    }
    /// Level 0 is the transaction; each savepoint adds one.
    @exclusivity(unchecked) private var levels = [Level()]

    /// The statement running now: its effects name the tables the hooks see.
    @exclusivity(unchecked) private var currentEffects = StatementEffects()
    /// Table metadata read before the statement runs (hooks must not run SQL).
    private var tableInfos: [String: TableHookInfo] = [:]
    private struct TableHookInfo {
        var columns: [String]
        var withoutRowID: Bool
        /// The names an UPDATE reports when it changes the rowid: `rowid`
        /// (whatever name was used in SQL) and the column that aliases it.
        var rowIDColumns: Set<String>
        /// Update-hook path only: whether the table has a unique index
        /// besides its rowid, on whose conflicts a REPLACE deletes a row that
        /// the update hook does not report.
        var hasUniqueIndex = false
        /// Update-hook path only: whether a constraint of the table says
        /// `ON CONFLICT REPLACE`, so that any INSERT or UPDATE may replace.
        var replacesOnConflict = false
    }
    /// Per written table of the current statement, its metadata (same order
    /// as `currentEffects.writes`).
    @exclusivity(unchecked) private var currentTableInfos: [TableHookInfo?] = []
    /// Per written table of the current statement, whether an observation
    /// watches it (same order as `currentEffects.writes`): the row events of
    /// the other tables concern no observation, and cost one test.
    @exclusivity(unchecked) private var currentTableWatched: [Bool] = []
    /// Update-hook path only: per written table of the current statement
    /// (same order as `currentEffects.writes`), whether the statement may
    /// delete rows that no hook reports (see `mayHideDeletions`), as
    /// prepared for the statement.
    private var preparedHiddenDeletions: [Bool] = []
    /// `preparedHiddenDeletions` for the running execution of the
    /// statement, each cleared once its table is marked.
    @exclusivity(unchecked) private var pendingHiddenDeletions: [Bool] = []
    /// Whether an observation watches a table, by name as the statements
    /// spell it; emptied whenever a region or the schema changes.
    private var watchedTables: [String: Bool] = [:]
    /// The statement the current state was prepared for by
    /// `statementWillStart(_:)`, until a region or the schema changes: run
    /// again (a cached statement in a loop), it needs no new preparation.
    private weak var preparedStatement: Statement?

    private var commitIsPending = false
    private var rollbackIsPending = false
    /// The error thrown by a user observer's `databaseWillCommit()`.
    fileprivate(set) var willCommitError: (any Error)?

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
    ///   wants after each commit that concerns it: see
    ///   `committedRowIDs(forObserver:)`.
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
        for index in levels.indices {
            levels[index].changed.remove(id)
            levels[index].rowIDs[id] = nil
        }
        regionsDidChange()
    }

    /// Forgets what was derived from the regions.
    private func regionsDidChange() {
        watchedTables = [:]
        preparedStatement = nil
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
        // Nothing more reaches it: neither the events buffered in savepoints,
        // nor those of the running statement.
        for index in levels.indices {
            levels[index].userEvents.removeAll { $0.observer === transactionObserver }
        }
        for (interest, observers) in statementUserObservers {
            statementUserObservers[interest] = observers.filter { $0 !== transactionObserver }
        }
    }

    // MARK: - Hooks

    private func installHooksIfNeeded() {
        guard !hooksInstalled else { return }
        hooksInstalled = true
        database._activeBroker = self
        let connection = database.connection
        let context = Unmanaged.passUnretained(database).toOpaque()
        sqlite3_commit_hook(
            connection,
            { context in
                Unmanaged<Database>.fromOpaque(context!).takeUnretainedValue().observationBroker.commitHook()
            }, context)
        sqlite3_rollback_hook(
            connection,
            { context in
                Unmanaged<Database>.fromOpaque(context!).takeUnretainedValue().observationBroker.rollbackHook()
            }, context)
        if usesPreUpdateHook {
            sqlite3_preupdate_hook(
                connection,
                { context, connection, operation, _, table, oldKey, newKey in
                    guard let context, let connection, let table else { return }
                    Unmanaged<Database>.fromOpaque(context).takeUnretainedValue().observationBroker
                        .preUpdate(connection, operation, table, oldKey, newKey)
                }, context)
        } else {
            sqlite3_update_hook(
                connection,
                { context, operation, _, table, rowID in
                    guard let context, let table else { return }
                    Unmanaged<Database>.fromOpaque(context).takeUnretainedValue().observationBroker
                        .update(operation, table, rowID)
                }, context)
        }
    }

    /// > The commit hook [...] If the callback returns non-zero, then the
    /// > COMMIT is converted into a ROLLBACK. [It] must not do anything that
    /// > will modify the database connection. https://www.sqlite.org/c3ref/commit_hook.html
    private func commitHook() -> Int32 {
        // The hooks stay installed when every observer is gone: statements
        // then report nothing, and a commit must leave no pending state
        // behind for the next observer to misread.
        guard isObserving else { return 0 }
        // Events buffered in savepoints still open are committed now: user
        // observers get them before they are asked whether to commit.
        if levels.contains(where: { !$0.userEvents.isEmpty }) {
            let events = levels.flatMap(\.userEvents)
            for index in levels.indices { levels[index].userEvents = [] }
            for (observer, event) in events { observer.databaseDidChange(with: event) }
        }
        for entry in userObservers {
            guard let observer = entry.observer else { continue }
            do {
                try observer.databaseWillCommit()
            } catch {
                willCommitError = error
                return 1
            }
        }
        commitIsPending = true
        return 0
    }

    private func rollbackHook() {
        commitIsPending = false
        levels = [Level()]
        rollbackIsPending = isObserving
    }

    private func preUpdate(
        _ connection: OpaquePointer, _ operation: Int32, _ table: UnsafePointer<CChar>,
        _ oldKey: Int64, _ newKey: Int64
    ) {
        guard isObserving, let (tableName, index) = tableMetadata(table) else { return }
        // Read in place: a copy of the metadata would retain its collections.
        let withoutRowID = index.flatMap { currentTableInfos[$0]?.withoutRowID } ?? false
        switch operation {
        case SQLITE_INSERT:
            dispatch(DatabaseEvent(kind: .insert(tableName: tableName), rowID: withoutRowID ? nil : newKey), operation)
        case SQLITE_DELETE:
            dispatch(DatabaseEvent(kind: .delete(tableName: tableName), rowID: withoutRowID ? nil : oldKey), operation)
        case SQLITE_UPDATE:
            guard let index, let info = currentTableInfos[index] else {
                // Unknown columns: an insertion event concerns every observer
                // of the table, whatever its columns. Conservative, never missed.
                dispatch(DatabaseEvent(kind: .insert(tableName: tableName), rowID: nil), operation)
                return
            }
            if !withoutRowID && oldKey != newKey {
                // The row moved: observers of the old rowid and of the new one.
                dispatch(DatabaseEvent(kind: .delete(tableName: tableName), rowID: oldKey), SQLITE_DELETE)
                dispatch(DatabaseEvent(kind: .insert(tableName: tableName), rowID: newKey), SQLITE_INSERT)
                return
            }
            var changedColumns: Set<String> = []
            let count = Int(sqlite3_preupdate_count(connection))
            for index in 0..<min(count, info.columns.count) {
                var old: OpaquePointer?
                var new: OpaquePointer?
                guard sqlite3_preupdate_old(connection, Int32(index), &old) == SQLITE_OK,
                    sqlite3_preupdate_new(connection, Int32(index), &new) == SQLITE_OK
                else {
                    changedColumns.insert(info.columns[index])
                    continue
                }
                if !Self.sameRawValue(old, new) { changedColumns.insert(info.columns[index]) }
            }
            // Nothing changed: no event (`UPDATE player SET score = score`).
            guard !changedColumns.isEmpty else { return }
            dispatch(
                DatabaseEvent(kind: .update(tableName: tableName, columnNames: changedColumns),
                              rowID: withoutRowID ? nil : newKey), operation)
        default:
            break
        }
    }

    private func update(_ operation: Int32, _ table: UnsafePointer<CChar>, _ rowID: Int64) {
        guard isObserving, let (tableName, index) = tableMetadata(table) else { return }
        if operation != SQLITE_DELETE, let index, index < pendingHiddenDeletions.count, pendingHiddenDeletions[index] {
            // The statement may delete rows of this table that the hook will
            // not report: once per execution, a deletion at table level, a
            // potential change for every observation of the table.
            pendingHiddenDeletions[index] = false
            let deletion = DatabaseEvent(kind: .delete(tableName: tableName), rowID: nil)
            let top = levels.count - 1
            Self.forEachKey(in: &regionIndex, impactedBy: deletion) { id in mark(id, event: deletion, level: top) }
        }
        switch operation {
        case SQLITE_INSERT:
            dispatch(DatabaseEvent(kind: .insert(tableName: tableName), rowID: rowID), operation)
        case SQLITE_DELETE:
            dispatch(DatabaseEvent(kind: .delete(tableName: tableName), rowID: rowID), operation)
        case SQLITE_UPDATE:
            // No old values on this path: every column the statement may
            // update is a potential change.
            let columns = currentEffects.writes(onTable: table)?.updatedColumns ?? []
            let kind: DatabaseEventKind =
                columns.isEmpty ? .insert(tableName: tableName) : .update(tableName: tableName, columnNames: columns)
            let event = DatabaseEvent(kind: kind, rowID: rowID)
            // The hook reports the new rowid only. When the statement may
            // change rowids, the observers of the old rowid must hear of it
            // too: mark at table level.
            if let index, let info = currentTableInfos[index], !info.rowIDColumns.isDisjoint(with: columns) {
                dispatch(event, operation, markedAs: DatabaseEvent(kind: kind, rowID: nil))
            } else {
                dispatch(event, operation)
            }
        default:
            break
        }
    }

    /// The name of the table a hook reports and its index in the running
    /// statement's written tables (nil when the statement does not announce
    /// it), found without allocating; nil when its events concern nobody.
    private func tableMetadata(_ table: UnsafePointer<CChar>) -> (String, Int?)? {
        for (index, writes) in currentEffects.writes.enumerated() {
            let isSame = writes.cName.withUnsafeBufferPointer { strcasecmp($0.baseAddress!, table) == 0 }
            guard isSame else { continue }
            // No observation watches the table, and no user observer wants
            // the statement's events.
            if index < currentTableWatched.count, !currentTableWatched[index], statementUserObservers.isEmpty {
                return nil
            }
            return (writes.name, index)
        }
        // A table the authorizer did not report (should not happen): observe
        // it at table level.
        let name = String(cString: table)
        if name.hasPrefix("sqlite_") { return nil }
        return (name, nil)
    }

    /// Marks the observations an event concerns (or `markedEvent`
    /// concerns, when given), and hands the event to the user observers
    /// that asked for it.
    private func dispatch(_ event: DatabaseEvent, _ operation: Int32, markedAs markedEvent: DatabaseEvent? = nil) {
        let top = levels.count - 1
        if let markedEvent {
            Self.forEachKey(in: &regionIndex, impactedBy: markedEvent) { id in mark(id, event: markedEvent, level: top) }
        } else {
            Self.forEachKey(in: &regionIndex, impactedBy: event) { id in mark(id, event: event, level: top) }
        }
        guard !statementUserObservers.isEmpty,
            let observers = statementUserObservers[
                StatementInterest(table: event.kind.tableName.asciiLowercased, operation: operation)]
        else { return }
        if top == 0 {
            for observer in observers { observer.databaseDidChange(with: event) }
        } else {
            for observer in observers { levels[top].userEvents.append((observer, event)) }
        }
    }

    /// Marks observation `id` changed at savepoint level `level`, with the
    /// event's row for an observation that wants rowids.
    @inline(__always)
    private func mark(_ id: Int, event: DatabaseEvent, level: Int) {
        levels[level].changed.insert(id)
        if rowIDTables.isEmpty { return }
        recordRowID(of: event, forObserver: id, level: level)
    }

    /// Records the row of an event for an observation of `rowIDTables`.
    private func recordRowID(of event: DatabaseEvent, forObserver id: Int, level: Int) {
        guard let table = rowIDTables[id] else { return }
        levels[level].rowIDs[id, default: .none(table: table)].insert(event.rowID, ofTable: event.kind.tableName)
    }

    /// Visits the keys an event concerns, reading the index in place: called
    /// on the stored property directly, the index would be copied for the
    /// call (three retains and three releases for every row event).
    private static func forEachKey(
        in index: inout DatabaseRegionIndex<Int>, impactedBy event: DatabaseEvent, _ body: (Int) -> Void
    ) {
        index.forEachKey(impactedBy: event, body)
    }

    /// Whether two protected values hold the same raw value (same type and
    /// same bytes), as an index would compare them.
    private static func sameRawValue(_ old: OpaquePointer?, _ new: OpaquePointer?) -> Bool {
        let oldType = sqlite3_value_type(old)
        guard oldType == sqlite3_value_type(new) else { return false }
        switch oldType {
        case SQLITE_NULL:
            return true
        case SQLITE_INTEGER:
            return sqlite3_value_int64(old) == sqlite3_value_int64(new)
        case SQLITE_FLOAT:
            return sqlite3_value_double(old).bitPattern == sqlite3_value_double(new).bitPattern
        default:
            let oldBytes = sqlite3_value_blob(old)
            let oldCount = sqlite3_value_bytes(old)
            let newBytes = sqlite3_value_blob(new)
            let newCount = sqlite3_value_bytes(new)
            guard oldCount == newCount else { return false }
            guard oldCount > 0, let oldBytes, let newBytes else { return true }
            return memcmp(oldBytes, newBytes, Int(oldCount)) == 0
        }
    }

    // MARK: - Statements

    /// Called before a statement's first step, outside of any hook: reads the
    /// metadata of the tables it writes, and asks user observers which of its
    /// events they want.
    func statementWillStart(_ statement: Statement) {
        willCommitError = nil
        // The same statement again, and nothing changed since: the state is
        // ready (user observers are asked again each time).
        if userObservers.isEmpty, let preparedStatement, preparedStatement === statement {
            if !statementUserObservers.isEmpty { statementUserObservers = [:] }
            pendingHiddenDeletions = preparedHiddenDeletions
            return
        }
        // Reading table metadata may run statements of its own (schema
        // queries), which report here too: read it before setting up the
        // state of this statement, which they would overwrite.
        let tableInfos = statement.effects.writes.map { hookInfo(forTable: $0.name) }
        currentEffects = statement.effects
        currentTableInfos = tableInfos
        currentTableWatched = statement.effects.writes.map { isWatched(table: $0.name) }
        preparedHiddenDeletions = usesPreUpdateHook ? [] : mayHideDeletions(statement, tableInfos: tableInfos)
        pendingHiddenDeletions = preparedHiddenDeletions
        preparedStatement = statement
        statementUserObservers = [:]
        guard !statement.effects.writes.isEmpty, !userObservers.isEmpty else { return }
        userObservers.removeAll { $0.observer == nil }
        for writes in statement.effects.writes {
            let table = writes.name.asciiLowercased
            var kinds: [(Int32, DatabaseEventKind)] = []
            if writes.inserts { kinds.append((SQLITE_INSERT, .insert(tableName: writes.name))) }
            if writes.deletes { kinds.append((SQLITE_DELETE, .delete(tableName: writes.name))) }
            if !writes.updatedColumns.isEmpty {
                kinds.append((SQLITE_UPDATE, .update(tableName: writes.name, columnNames: writes.updatedColumns)))
            }
            for (operation, kind) in kinds {
                let observers = userObservers.compactMap { entry -> (any TransactionObserver)? in
                    guard let observer = entry.observer, observer.observes(eventsOfKind: kind) else { return nil }
                    return observer
                }
                if !observers.isEmpty {
                    statementUserObservers[StatementInterest(table: table, operation: operation)] = observers
                }
            }
            // With the pre-update hook, a changed rowid is reported as a
            // deletion and an insertion, and the rows that an `INSERT OR
            // REPLACE` (or `UPDATE OR REPLACE`) deletes, which the
            // authorizer does not announce, as deletions.
            if usesPreUpdateHook {
                var extraKinds: [(Int32, DatabaseEventKind)] = []
                if writes.inserts || !writes.updatedColumns.isEmpty {
                    extraKinds.append((SQLITE_DELETE, .delete(tableName: writes.name)))
                }
                if !writes.updatedColumns.isEmpty {
                    extraKinds.append((SQLITE_INSERT, .insert(tableName: writes.name)))
                }
                for (operation, kind) in extraKinds
                where statementUserObservers[StatementInterest(table: table, operation: operation)] == nil {
                    let observers = userObservers.compactMap { entry -> (any TransactionObserver)? in
                        guard let observer = entry.observer, observer.observes(eventsOfKind: kind) else { return nil }
                        return observer
                    }
                    if !observers.isEmpty {
                        statementUserObservers[StatementInterest(table: table, operation: operation)] = observers
                    }
                }
            }
        }
    }

    private func hookInfo(forTable name: String) -> TableHookInfo? {
        let key = name.asciiLowercased
        if let info = tableInfos[key] { return info }
        guard let schema = try? database.tableSchema(named: name), !schema.isView else { return nil }
        var rowIDColumns: Set<String> = schema.isWithoutRowID ? [] : ["rowid"]
        if case .rowID(let column?) = schema.primaryKey { rowIDColumns.insert(column.asciiLowercased) }
        var info = TableHookInfo(
            columns: schema.columns.map(\.asciiLowercased), withoutRowID: schema.isWithoutRowID,
            rowIDColumns: rowIDColumns)
        if !usesPreUpdateHook {
            // When the schema cannot be read, assume the worst: potential
            // changes are notified, never missed.
            let quoted = SQLScanner.quote(name)
            // Columns of PRAGMA index_list: seq, name, unique, origin, partial.
            info.hasUniqueIndex =
                (try? database.fetchRows(sql: "PRAGMA index_list(\(quoted))").contains { row in
                    (try? row[2] as Bool) ?? true
                }) ?? true
            // A temporary table hides a main one of the same name: look at both.
            let definitions = try? database.fetchRows(
                sql: """
                    SELECT sql FROM sqlite_temp_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE
                    UNION ALL SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE
                    """,
                arguments: [name])
            info.replacesOnConflict =
                definitions?.contains { row in
                    let definition: String? = (try? row[0] as String?) ?? nil
                    return SQLScanner.containsKeyword("REPLACE", in: definition ?? "")
                } ?? true
        }
        tableInfos[key] = info
        return info
    }

    /// Update-hook path: for each table the statement writes (same order as
    /// `statement.effects.writes`), whether it may delete rows that the
    /// update hook does not report. That is a REPLACE conflict resolution on
    /// a unique index other than the rowid: it deletes the conflicting row
    /// silently, unlike a conflict on the rowid, which the hook reports as
    /// the insertion or update of that rowid.
    ///
    /// REPLACE may come from the statement (`INSERT OR REPLACE`, `REPLACE
    /// INTO`, `UPDATE OR REPLACE`: a scan of its text, conservative), from a
    /// trigger's statement (any write by a trigger counts), or from an
    /// `ON CONFLICT REPLACE` constraint of the table.
    private func mayHideDeletions(_ statement: Statement, tableInfos: [TableHookInfo?]) -> [Bool] {
        var statementReplaces: Bool?
        return statement.effects.writes.enumerated().map { index, writes in
            guard writes.inserts || !writes.updatedColumns.isEmpty else { return false }
            // No metadata (a view, whose writes no hook reports): assume the worst.
            guard let info = tableInfos[index] else { return true }
            guard info.hasUniqueIndex else { return false }
            if writes.isWrittenByTrigger || info.replacesOnConflict { return true }
            if statementReplaces == nil { statementReplaces = SQLScanner.containsKeyword("REPLACE", in: statement.sql) }
            return statementReplaces!
        }
    }

    /// Whether an observation watches the table (some of its rows or columns).
    ///
    /// - Complexity: O(1) once known; the first time after a change of the
    ///   regions, O(k), where k is the number of observations of the table.
    private func isWatched(table name: String) -> Bool {
        if let watched = watchedTables[name] { return watched }
        // An insertion without rowid concerns every observation of the table.
        let watched = !regionIndex.keys(impactedByEventsOfKind: .insert(tableName: name)).isEmpty
        watchedTables[name] = watched
        return watched
    }

    /// Forgets table metadata after a schema change.
    func schemaDidChange() {
        tableInfos = [:]
        regionsDidChange()
    }

    /// Called after a statement has run to completion or failed: applies
    /// its savepoint action, then notifies a commit or a rollback.
    func statementDidFinish(_ statement: Statement, succeeded: Bool) {
        // Release the user observers of the statement: the database holds
        // them weakly.
        statementUserObservers = [:]
        if succeeded {
            if let savepoint = statement.effects.savepoint { apply(savepoint) }
            for table in statement.effects.restructuredTables { markRestructured(table) }
        }
        if commitIsPending {
            commitIsPending = false
            // A commit that failed after the commit hook (SQLITE_BUSY, an
            // I/O error) did not happen: the transaction is still open, or
            // the rollback hook has run.
            if succeeded { didCommit() }
        }
        if rollbackIsPending {
            rollbackIsPending = false
            didRollback()
        }
    }

    private func apply(_ action: StatementEffects.SavepointAction) {
        switch action {
        case .begin(let name):
            levels.append(Level(name: name))
        case .release(let name):
            // > The RELEASE command starts with the most recent addition to the
            // > transaction stack and releases savepoints backwards in time until
            // > it releases a savepoint with a matching savepoint-name.
            // https://www.sqlite.org/lang_savepoint.html
            guard let index = levelIndex(named: name) else { return }
            var merged = levels[index - 1]
            for level in levels[index...] {
                merged.changed.formUnion(level.changed)
                merged.userEvents.append(contentsOf: level.userEvents)
                ChangedRowIDs.merge(level.rowIDs, into: &merged.rowIDs)
            }
            levels.removeSubrange((index - 1)...)
            levels.append(merged)
            if levels.count == 1 { flushUserEvents() }
        case .rollback(let name):
            // > ROLLBACK TO [...] does not remove the savepoint: it cancels the
            // > changes made since the savepoint began.
            guard let index = levelIndex(named: name) else { return }
            levels.removeSubrange((index + 1)...)
            levels[index].changed = []
            levels[index].userEvents = []
            levels[index].rowIDs = [:]
        }
    }

    /// Marks the observations of a table that was dropped or altered: what
    /// they fetch changed (or fails now), although no row event said so.
    private func markRestructured(_ table: String) {
        let top = levels.count - 1
        regionIndex.forEachKey(impactedBy: DatabaseEvent(kind: .delete(tableName: table), rowID: nil)) { id in
            levels[top].changed.insert(id)
            if rowIDTables[id] != nil { levels[top].rowIDs[id] = .unknown }
        }
    }

    /// The most recent savepoint level with this name (case-insensitive).
    private func levelIndex(named name: String) -> Int? {
        guard levels.count > 1 else { return nil }
        return levels.indices.dropFirst().last { levels[$0].name?.asciiCaseInsensitiveEquals(name) == true }
    }

    private func flushUserEvents() {
        let events = levels[0].userEvents
        levels[0].userEvents = []
        for (observer, event) in events { observer.databaseDidChange(with: event) }
    }

    private func didCommit() {
        commitCount += 1
        // The commit hook delivered the events buffered in savepoints.
        var changed = Set<Int>()
        for level in levels {
            changed.formUnion(level.changed)
            ChangedRowIDs.merge(level.rowIDs, into: &committedRowIDs)
        }
        levels = [Level()]
        // Registration order, for a deterministic order of notifications.
        for id in changed.sorted() {
            commitObservers[id]?.databaseDidCommitChanges(database)
        }
        committedRowIDs = [:]
        for entry in userObservers {
            entry.observer?.databaseDidCommit(database)
        }
        userObservers.removeAll { $0.observer == nil || $0.extent == .nextTransaction }
    }

    /// Another connection or process committed (see `ExternalChangeWatcher`).
    /// What it changed is unknown: every observation counts it as one
    /// commit that modified its region. Runs in an access of the writer.
    ///
    /// - Complexity: O(n log n), where n is the number of observations.
    func databaseDidChangeExternally() {
        commitCount += 1
        // Registration order, as after a local commit. An observation may
        // unregister another one from its callback: look each one up.
        for id in commitObservers.keys.sorted() {
            commitObservers[id]?.databaseDidCommitChanges(database)
        }
    }

    /// The rows of its table that the commit being notified changed, for an
    /// observation registered with a `rowIDTable`, called from its
    /// `databaseDidCommitChanges(_:)`: `unknown` when the hooks cannot tell
    /// (see `ChangedRowIDs`), and outside the notifications of a local
    /// commit (an external commit, a fetch scheduled otherwise).
    ///
    /// - Complexity: O(1).
    func committedRowIDs(forObserver id: Int) -> ChangedRowIDs {
        committedRowIDs[id] ?? .unknown
    }

    private func didRollback() {
        levels = [Level()]
        for entry in userObservers {
            entry.observer?.databaseDidRollback(database)
        }
        userObservers.removeAll { $0.observer == nil || $0.extent == .nextTransaction }
    }
}

extension TransactionObserverBroker {
    /// The error a user observer threw from `databaseWillCommit()`, once.
    func takeWillCommitError() -> (any Error)? {
        defer { willCommitError = nil }
        return willCommitError
    }
}
