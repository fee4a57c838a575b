import DatabaseRegions

/// The observations registered with a writer's `ObservationBroker`: their
/// regions, in a `DatabaseRegionIndex` that finds the observations a change
/// concerns; the observers to notify of commits; the table whose changed
/// rowids each one wants; and whether some observation watches a table.
///
/// Writer's queue only. The properties that each row event reads are
/// `@exclusivity(unchecked)`, as the broker's (see `ObservationBroker`).
final class ObserverRegistry {
    @exclusivity(unchecked) private var regionIndex = DatabaseRegionIndex<Int>()
    @exclusivity(unchecked) private var observers: [Int: any DatabaseCommitObserver] = [:]
    /// The observations that want the rowids their commits changed, with
    /// the table whose rowids they want. The broker registers none on the
    /// update-hook path, whose events miss rows.
    @exclusivity(unchecked) private var rowIDTables: [Int: String] = [:]
    /// The `WHERE` clause of the request of observations that have one
    /// (see `RowFilter`), and the tables some filter is about.
    @exclusivity(unchecked) private var filters: [Int: RowFilter] = [:]
    @exclusivity(unchecked) private var filteredTables: Set<CaseInsensitiveName> = []
    private var nextID = 0
    /// Whether an observation watches a table, by name as the statements
    /// spell it; emptied whenever a region or the schema changes.
    private var watchedTables: [CaseInsensitiveName: Bool] = [:]

    /// Whether no observation is registered.
    var isEmpty: Bool { observers.isEmpty }

    /// The registered observations, in registration order: the order of
    /// their notifications.
    var sortedIDs: [Int] { observers.keys.sorted() }

    /// Registers an observation with its region; returns its identifier.
    ///
    /// - Parameter rowIDTable: A table whose changed rowids the observation
    ///   wants with each commit.
    func register(
        _ observer: any DatabaseCommitObserver, region: DatabaseRegion, rowIDTable: String?, filter: RowFilter?
    ) -> Int {
        let id = nextID
        nextID += 1
        observers[id] = observer
        if let rowIDTable { rowIDTables[id] = rowIDTable }
        if let filter {
            filters[id] = filter
            filteredTables.insert(CaseInsensitiveName(filter.table))
        }
        regionIndex.insert(region, for: id)
        watchedTables = [:]
        return id
    }

    /// Replaces the region of a registered observation; false when it is
    /// not registered.
    func updateRegion(_ region: DatabaseRegion, forObserver id: Int) -> Bool {
        guard observers[id] != nil else { return false }
        regionIndex.insert(region, for: id)
        watchedTables = [:]
        return true
    }

    /// Unregisters an observation (idempotent).
    func unregister(_ id: Int) {
        observers[id] = nil
        rowIDTables[id] = nil
        if filters.removeValue(forKey: id) != nil {
            filteredTables = Set(filters.values.map { CaseInsensitiveName($0.table) })
        }
        _ = regionIndex.remove(id)
        watchedTables = [:]
    }

    /// Unregisters every observation, releasing the observers.
    func removeAll() {
        observers = [:]
        rowIDTables = [:]
        filters = [:]
        filteredTables = []
        regionIndex = DatabaseRegionIndex()
        watchedTables = [:]
    }

    /// The schema changed: whether a name is a watched table may too.
    func forgetWatchedTables() {
        watchedTables = [:]
    }

    func observer(_ id: Int) -> (any DatabaseCommitObserver)? {
        observers[id]
    }

    /// Visits the observations an event concerns, with the table whose
    /// rowids each one wants (nil for most).
    ///
    /// - Complexity: O(1 + k), where k is the number of observations the
    ///   event concerns (see `DatabaseRegionIndex`).
    @inline(__always)
    func forEachObserver(impactedBy event: DatabaseEvent, _ body: (_ id: Int, _ rowIDTable: String?) -> Void) {
        Self.forEachKey(in: &regionIndex, impactedBy: event) { id in
            body(id, rowIDTables.isEmpty ? nil : rowIDTables[id])
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

    /// Whether some observation has a row filter of `table`.
    @inline(__always)
    func hasFilters(ofTable table: String) -> Bool {
        !filteredTables.isEmpty && filteredTables.contains(CaseInsensitiveName(table))
    }

    /// The row filter of an observation, when it is about `table`
    /// (lowercased).
    func filter(of id: Int, lowercasedTable table: String) -> RowFilter? {
        guard let filter = filters[id], filter.table == table else { return nil }
        return filter
    }

    /// Whether an observation watches the table (some of its rows or columns).
    ///
    /// - Complexity: O(1) once known; the first time after a change of the
    ///   regions, O(k), where k is the number of observations of the table.
    func isWatched(table name: String) -> Bool {
        if let watched = watchedTables[CaseInsensitiveName(name)] { return watched }
        // An insertion without rowid concerns every observation of the table.
        let watched = !regionIndex.keys(impactedByEventsOfKind: .insert(tableName: name)).isEmpty
        watchedTables[CaseInsensitiveName(name)] = watched
        return watched
    }
}
