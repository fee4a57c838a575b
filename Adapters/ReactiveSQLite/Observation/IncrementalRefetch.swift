import DatabaseRegions

/// What a fetch after commits may start from: the previous value and the
/// rows changed since.
struct RefetchChanges: Sendable {
    var previous: (any Sendable)?
    var rowIDs: ChangedRowIDs
    /// The snapshot of the fetch's read transaction, when the table's
    /// pages are tracked and it is known.
    var snapshot: WALIndexHeader?
}

/// The incremental refetches of one run of a `ValueObservation` whose
/// value can be refetched from the previous one and the rows that changed
/// (see `IncrementalFetch`).
///
/// With each commit, the run gets the rowids it changed, and refetches from
/// its previous value and those rows when the hooks could tell them, and no
/// other connection or process committed meanwhile: the writer's `PRAGMA
/// data_version`, read once the state to fetch is fixed (in the writer's
/// read transaction, or after a reader has pinned it), changes only for the
/// commits of other connections. A change read there may have reached the
/// fetched state or only the next one: both fetch everything, unless the
/// observed table's pages tell which rows changed (`ObservedTablePages`, for
/// a database in WAL mode whose configuration observes external changes).
///
/// `@unchecked Sendable`: `isActive`, `table`, `unfetchedRowIDs`,
/// `writerDataVersion` and `nextFetchMissesExternalCommit` are only touched
/// on the writer's queue; `pages` is set once, on the writer's queue, before the run's
/// first fetch ends, and only read afterwards (by later fetches, which that
/// fetch schedules, on the writer or a reader).
final class IncrementalRefetch: @unchecked Sendable {
    let incrementalFetch: IncrementalFetch
    /// Whether the run refetches incrementally: the fetch applies
    /// (`IncrementalFetch.isApplicable`, asked when the run starts).
    private(set) var isActive = false
    /// The rows changed by the commits that the next fetch will see, and
    /// the previous one did not.
    private var unfetchedRowIDs = ChangedRowIDs.unknown
    /// The writer's `data_version` when the state of the last fetch was fixed.
    private var writerDataVersion: Int?
    /// Another connection committed before the last fetch's state was
    /// fixed, maybe after: the next fetch fetches everything too.
    private var nextFetchMissesExternalCommit = false
    /// The pages of the observed table, which tell the rows that other
    /// connections changed, when the run is active, observes external
    /// changes, and the database is in WAL mode.
    private(set) var pages: ObservedTablePages?
    /// The table whose changed rowids the run wants, once known (see
    /// `IncrementalFetch.table`).
    private var table: String?

    init(_ incrementalFetch: IncrementalFetch) {
        self.incrementalFetch = incrementalFetch
    }

    /// The table whose changed rowids the run wants with each commit: nil
    /// when it is not active.
    var rowIDTable: String? { isActive ? table : nil }

    // MARK: - Starting (writer)

    /// Learns the observed table, and returns its pages for a run that
    /// observes external changes, in WAL mode, outside a transaction (nil
    /// otherwise); kept by `start` if the run is active.
    func candidatePages(_ db: Database, observesExternalChanges: Bool) -> ObservedTablePages? {
        // Any error, such as SQL that does not compile, is the full fetch's to throw.
        table = (try? incrementalFetch.table(db)) ?? nil
        guard let table, observesExternalChanges, !db.isInsideTransaction else { return nil }
        return try? ObservedTablePages(table: table, in: db)
    }

    /// In the read transaction of the run's first fetch, before it: the run
    /// is active when the fetch applies.
    func start(_ db: Database, pages candidatePages: ObservedTablePages?) throws {
        guard let table, (try? incrementalFetch.isApplicable(db, table)) == true else { return }
        isActive = true
        writerDataVersion = try db.dataVersion()
        pages = candidatePages
    }

    /// The run registered: no row is unfetched yet.
    func didRegister() {
        if isActive, let table { unfetchedRowIDs = .none(table: table) }
    }

    // MARK: - Commits (writer)

    /// A commit changed the region: its rows are unfetched.
    func commitDidChange(_ rowIDs: ChangedRowIDs) {
        if isActive { unfetchedRowIDs.formUnion(rowIDs) }
    }

    /// A fetch starts: the rows it must refetch, and none are unfetched.
    func takeUnfetchedRowIDs() -> ChangedRowIDs {
        let rowIDs = unfetchedRowIDs
        if isActive, let table { unfetchedRowIDs = .none(table: table) }
        return rowIDs
    }

    /// Commits the hooks did not tell may have changed the rows: the next
    /// fetch fetches everything.
    func forgetUnfetchedRowIDs() {
        if isActive { unfetchedRowIDs = .unknown }
    }

    /// What the external-commit check knows, to run it again from the same
    /// point when a read is retried (see `Database.yieldingToWriters`).
    var externalCommitState: (Bool, Int?) {
        get { (nextFetchMissesExternalCommit, writerDataVersion) }
        set { (nextFetchMissesExternalCommit, writerDataVersion) = newValue }
    }

    /// `changes`, or unknown changes when another connection may have
    /// committed since the previous fetch. Called on the writer once the
    /// state to fetch is fixed.
    func checkingExternalCommits(_ db: Database, _ changes: RefetchChanges) -> RefetchChanges {
        guard isActive else { return changes }
        let dataVersion = try? db.dataVersion()
        let missesExternalCommit = nextFetchMissesExternalCommit
        nextFetchMissesExternalCommit = dataVersion == nil || dataVersion != writerDataVersion
        writerDataVersion = dataVersion
        guard !missesExternalCommit, !nextFetchMissesExternalCommit else {
            return RefetchChanges(previous: changes.previous, rowIDs: .unknown, snapshot: changes.snapshot)
        }
        return changes
    }

    // MARK: - Fetching (writer or reader)

    /// The value of the current state: from the previous value and the
    /// changed rows when the hooks and the pages tell them, else from the
    /// full fetch.
    ///
    /// With `pages`, the rows changed are those the written pages name
    /// (every commit's since the previous fetch, other connections'
    /// included), with those the hooks told.
    func fetchValue(
        _ db: Database, changes: RefetchChanges, fullFetch: (Database) throws -> any Sendable
    ) throws -> any Sendable {
        var rowIDs: Set<Int64>? = if case .rowIDs(_, let rowIDs) = changes.rowIDs { rowIDs } else { nil }
        if let pages, let previous = changes.previous,
            let pageRowIDs = try? pages.changedRowIDs(
                db, snapshot: changes.snapshot, rowIDsInRanges: { incrementalFetch.rowIDsInRanges(previous, $0) })
        {
            rowIDs = pageRowIDs.union(rowIDs ?? [])
        }
        let value = try fetchValue(db, previous: changes.previous, rowIDs: rowIDs, fullFetch: fullFetch)
        pages?.didFetch(db, snapshot: changes.snapshot)
        return value
    }

    /// The value of the current state: from the previous value and the
    /// rows changed since when they are known, else from the full fetch.
    private func fetchValue(
        _ db: Database, previous: (any Sendable)?, rowIDs: Set<Int64>?, fullFetch: (Database) throws -> any Sendable
    ) throws -> any Sendable {
        if let previous, let rowIDs {
            // Any error, such as a missing table, is the full fetch's to throw.
            if let value = try? incrementalFetch.fetch(db, previous, rowIDs) {
                #if REACTIVESQLITE_INTERNAL_CHECKS
                incrementalFetch.statistics.recordIncrementalFetch()
                #endif
                return value
            }
        }
        #if REACTIVESQLITE_INTERNAL_CHECKS
        if previous != nil {
            incrementalFetch.statistics.recordFullFetch(knowingChangedRows: rowIDs != nil)
        }
        #endif
        return try fullFetch(db)
    }
}
