import DatabaseRegions

/// The statements a writer connection runs, as its `ObservationBroker`
/// follows them: the running statement's context (`current`), those of the
/// statements it interrupted (a statement run by a user observer or a
/// trigger's function), the table metadata contexts are made of, and the
/// context kept for the next run of the same statement.
///
/// Writer's queue only. `current` is read at each row event, `generation`
/// and `suspended` at each statement: `@exclusivity(unchecked)`, as the
/// broker's properties (see `ObservationBroker`).
final class StatementContexts {
    /// The statement running now (the innermost one).
    @exclusivity(unchecked) var current = StatementContext()
    /// The contexts of the statements that a nested statement interrupted.
    @exclusivity(unchecked) private var suspended: [StatementContext] = []
    /// Table metadata, by name (as SQLite compares identifiers).
    private var tableInfos: [CaseInsensitiveName: TableHookInfo] = [:]
    /// The context last made by `makeContext`, unless it names user
    /// observers, until a region or the schema changes, or the connection
    /// closes: run again (a cached statement in a loop), its statement
    /// needs no new context.
    private var preparedContext: StatementContext?
    private weak var preparedStatement: Statement?
    /// Counts the changes that may make a statement's writes concern an
    /// observation (a region, the schema, the connection closing): a
    /// statement found quiet in generation g (`Statement.quietGeneration`)
    /// is quiet until the generation changes.
    @exclusivity(unchecked) private(set) var generation = 0

    /// A statement starts inside the running one: the running one's
    /// context waits for it to end.
    func suspendCurrent() {
        suspended.append(current)
    }

    /// The running statement ended: its context, moved out (a copy would
    /// retain every collection of the context, at every statement), and
    /// the one it interrupted, if any, runs again.
    func endCurrent() -> StatementContext {
        var ended = suspended.popLast() ?? StatementContext()
        swap(&ended, &current)
        return ended
    }

    /// Whether a statement waits for a nested one to end.
    var hasSuspended: Bool { !suspended.isEmpty }

    /// Forgets the statements that never reported their end.
    func forgetSuspended() {
        if !suspended.isEmpty { suspended.removeAll() }
    }

    /// Nothing runs, nothing is kept (the connection closes).
    func reset() {
        current = StatementContext()
        suspended = []
        forgetPreparedContext()
    }

    /// The context kept for `statement`, if it is the statement last
    /// prepared and nothing changed since.
    func preparedContext(for statement: Statement) -> StatementContext? {
        guard let preparedContext, let preparedStatement, preparedStatement === statement else { return nil }
        return preparedContext
    }

    /// Keeps `context` for the next run of `statement`, unless it names
    /// user observers (the database holds some of them weakly).
    func keepPreparedContext(_ context: StatementContext, for statement: Statement) {
        if context.userObservers.isEmpty {
            preparedContext = context
            preparedStatement = statement
        } else {
            forgetPreparedContext()
        }
    }

    /// A region changed (or the schema, or the connection closes): the
    /// context kept may watch the wrong tables.
    func forgetPreparedContext() {
        preparedContext = nil
        preparedStatement = nil
        generation &+= 1
    }

    /// The schema changed: table metadata and the context kept are stale.
    func schemaDidChange() {
        tableInfos = [:]
        forgetPreparedContext()
    }

    /// The context of a statement about to run. Reading table metadata may
    /// run statements of its own (schema queries), which report to the
    /// broker too: it is all read before the context is installed.
    func makeContext(
        for statement: Statement,
        database: Database,
        registry: ObserverRegistry,
        userObservers: UserTransactionObservers,
        usesPreUpdateHook: Bool
    ) -> StatementContext {
        let effects = statement.effects
        var context = StatementContext(statement: ObjectIdentifier(statement), effects: effects)
        context.tableInfos = effects.writes.map {
            hookInfo(forTable: $0.name, database: database, usesPreUpdateHook: usesPreUpdateHook)
        }
        context.tableWatched = effects.writes.map { registry.isWatched(table: $0.name) }
        context.pendingHiddenDeletions =
            usesPreUpdateHook ? [] : UpdateHookChangeTracking.mayHideDeletions(statement, tableInfos: context.tableInfos)
        // Update-hook path: WITHOUT ROWID tables have no row events either,
        // and are marked the same way as virtual tables without shadow tables.
        context.pendingVirtualTables = zip(context.tableInfos, context.tableWatched).map { info, watched in
            watched && (info?.isVirtual == true || (!usesPreUpdateHook && info?.withoutRowID == true))
        }
        if effects.renumbersRowIDs {
            context.renumberedTables = Self.tablesRenumberedByVacuum(database: database, registry: registry)
        }
        context.userObservers = userObservers.interests(in: effects, usesPreUpdateHook: usesPreUpdateHook)
        return context
    }

    /// What the hooks need to know of a table, read once and cached until
    /// the schema changes; nil for a view or a table that does not exist.
    func hookInfo(forTable name: String, database: Database, usesPreUpdateHook: Bool) -> TableHookInfo? {
        // Bytes, as SQLite compares names: never `String.==`.
        let key = CaseInsensitiveName(name)
        if let info = tableInfos[key] { return info }
        guard let schema = try? database.tableSchema(named: name), !schema.isView else { return nil }
        let info = TableHookInfo(schema: schema, database: database, readsReplaceResolution: !usesPreUpdateHook)
        tableInfos[key] = info
        return info
    }

    /// The tables whose rowids a VACUUM may renumber: the rowid tables
    /// without an `INTEGER PRIMARY KEY` that observations watch.
    private static func tablesRenumberedByVacuum(database: Database, registry: ObserverRegistry) -> [String] {
        let names = (try? database.fetchRows(sql: "SELECT name FROM sqlite_master WHERE type = 'table'")) ?? []
        return names.compactMap { row -> String? in
            guard let name: String = try? row[0], registry.isWatched(table: name),
                let schema = try? database.tableSchema(named: name),
                !schema.isView, !schema.isVirtual, !schema.isWithoutRowID,
                case .rowID(column: nil) = schema.primaryKey
            else { return nil }
            return schema.name
        }
    }
}
