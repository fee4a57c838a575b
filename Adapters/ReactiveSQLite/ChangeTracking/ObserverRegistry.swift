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
    /// (see `RowFilter`), and the number of filters of each table.
    @exclusivity(unchecked) private var filters: [Int: RowFilter] = [:]
    @exclusivity(unchecked) private var filteredTables: [CaseInsensitiveName: Int] = [:]
    /// The number of observations of each filter: the evaluator forgets a
    /// filter's statements when none is left.
    private var filterUses: [RowFilter: Int] = [:]
    /// The pins of the observations whose filter pins a column to constants.
    private var pins: [Int: ValuePin] = [:]
    /// The window boundaries of the observations whose filter has a window.
    @exclusivity(unchecked) private var windows: [Int: WindowBoundary] = [:]
    /// A pinned column: the collation its values compare under, and the
    /// number of pins on it. A column no pin is left on is removed, so
    /// that the row events of its table no longer read its values.
    struct PinnedColumnUse {
        var collation: PinnedColumn.Collation
        var pinCount: Int
    }
    /// The pinned columns, by table and column (lowercased), compared as
    /// bytes, as SQLite compares names: two spellings of "é" are two
    /// columns, which Swift's `String` keys would merge.
    @exclusivity(unchecked) private var pinnedColumns: [CaseInsensitiveName: [CaseInsensitiveName: PinnedColumnUse]] = [:]
    private var nextID = 0
    /// Whether an observation watches a table, by name as the statements
    /// spell it; emptied whenever a region or the schema changes.
    private var watchedTables: [CaseInsensitiveName: Bool] = [:]

    /// Whether no observation is registered.
    var isEmpty: Bool { observers.isEmpty }

    /// The pinned columns whose values the row events of `table`
    /// (lowercased) read, lowercased and sorted.
    func pinnedColumns(ofTable table: String) -> [String] {
        (pinnedColumns[CaseInsensitiveName(table)] ?? [:]).keys.map(\.rawValue).sorted()
    }

    /// The registered observations, in registration order: the order of
    /// their notifications.
    var sortedIDs: [Int] { observers.keys.sorted() }

    /// Registers an observation with its region; returns its identifier.
    ///
    /// - Parameter rowIDTable: A table whose changed rowids the observation
    ///   wants with each commit.
    ///
    /// - Parameter pin: The values of a column that the filter requires,
    ///   compared under `collation`: the index then finds the observation
    ///   from a changed row's values (see `ValuePin`).
    func register(
        _ observer: any DatabaseCommitObserver, region: DatabaseRegion, rowIDTable: String?, filter: RowFilter?,
        pin: (pin: ValuePin, collation: PinnedColumn.Collation)? = nil, window: WindowBoundary? = nil
    ) -> Int {
        let id = nextID
        nextID += 1
        observers[id] = observer
        if let rowIDTable { rowIDTables[id] = rowIDTable }
        if let filter {
            filters[id] = filter
            filterUses[filter, default: 0] += 1
            filteredTables[CaseInsensitiveName(filter.table), default: 0] += 1
        }
        if filter?.window != nil, let window { windows[id] = window }
        if let pin {
            pins[id] = pin.pin
            // One collation per column: the column's own.
            pinnedColumns[CaseInsensitiveName(pin.pin.table), default: [:]][
                CaseInsensitiveName(pin.pin.column), default: PinnedColumnUse(collation: pin.collation, pinCount: 0)
            ].pinCount += 1
        }
        regionIndex.insert(region, for: id, pinning: pin?.pin)
        watchedTables = [:]
        return id
    }

    /// Replaces the region of a registered observation; false when it is
    /// not registered.
    func updateRegion(_ region: DatabaseRegion, forObserver id: Int) -> Bool {
        guard observers[id] != nil else { return false }
        regionIndex.insert(region, for: id, pinning: pins[id])
        watchedTables = [:]
        return true
    }

    /// Unregisters an observation (idempotent); returns its filter when no
    /// other observation has the same one.
    @discardableResult
    func unregister(_ id: Int) -> RowFilter? {
        observers[id] = nil
        rowIDTables[id] = nil
        var unusedFilter: RowFilter?
        if let filter = filters.removeValue(forKey: id) {
            let table = CaseInsensitiveName(filter.table)
            filteredTables[table, default: 1] -= 1
            if filteredTables[table] == 0 { filteredTables[table] = nil }
            filterUses[filter, default: 1] -= 1
            if filterUses[filter] == 0 {
                filterUses[filter] = nil
                unusedFilter = filter
            }
        }
        if let pin = pins.removeValue(forKey: id) {
            let (table, column) = (CaseInsensitiveName(pin.table), CaseInsensitiveName(pin.column))
            pinnedColumns[table]?[column]?.pinCount -= 1
            if pinnedColumns[table]?[column]?.pinCount == 0 {
                pinnedColumns[table]?[column] = nil
                if pinnedColumns[table]?.isEmpty == true { pinnedColumns[table] = nil }
            }
        }
        windows[id] = nil
        _ = regionIndex.remove(id)
        watchedTables = [:]
        return unusedFilter
    }

    /// Unregisters every observation, releasing the observers.
    func removeAll() {
        observers = [:]
        rowIDTables = [:]
        filters = [:]
        filterUses = [:]
        filteredTables = [:]
        pins = [:]
        pinnedColumns = [:]
        windows = [:]
        regionIndex = DatabaseRegionIndex()
        watchedTables = [:]
    }

    /// The schema changed: whether a name is a watched table may too.
    func forgetWatchedTables() {
        watchedTables = [:]
    }

    /// Forgets every pin: the schema changed, and with it, maybe, the
    /// affinity or the collation that the pinned values were computed
    /// with. The observations stay, found by their regions, and their
    /// filters still decide.
    func removePins() {
        guard !pins.isEmpty else { return }
        for id in pins.keys {
            if let region = regionIndex.remove(id) { regionIndex.insert(region, for: id) }
        }
        pins = [:]
        pinnedColumns = [:]
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

    /// Visits the observations an event concerns, as `forEachObserver(impactedBy:_:)`,
    /// those whose filter pins a column of the event's table only when the
    /// row holds one of their values in it before or after the change.
    ///
    /// - Parameters:
    ///   - table: The event's table, lowercased.
    ///   - values: The values of the changed row in a pinned column
    ///     (lowercased), compared under its collation; nil when unknown.
    /// - Complexity: O(1 + k), where k is the number of observations the
    ///   event concerns, observations pinned to other values not included.
    @inline(__always)
    func forEachObserver(
        impactedBy event: DatabaseEvent, lowercasedTable table: String,
        pinnedValues values: (_ column: String, PinnedColumn.Collation) -> [IndexedValue]?,
        _ body: (_ id: Int, _ rowIDTable: String?) -> Void
    ) {
        let columns = pinnedColumns.isEmpty ? nil : pinnedColumns[CaseInsensitiveName(table)]
        guard let columns else {
            forEachObserver(impactedBy: event, body)
            return
        }
        Self.forEachKey(in: &regionIndex, impactedBy: event, pinnedValues: { column in
            columns[CaseInsensitiveName(column)].flatMap { values(column, $0.collation) }
        }) { id in
            body(id, rowIDTables.isEmpty ? nil : rowIDTables[id])
        }
    }

    private static func forEachKey(
        in index: inout DatabaseRegionIndex<Int>, impactedBy event: DatabaseEvent,
        pinnedValues: (String) -> [IndexedValue]?, _ body: (Int) -> Void
    ) {
        index.forEachKey(impactedBy: event, pinnedValues: pinnedValues, body)
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
        !filteredTables.isEmpty && filteredTables[CaseInsensitiveName(table)] != nil
    }

    /// The row filter of an observation, when it is about `table`
    /// (lowercased; names compare as bytes).
    func filter(of id: Int, lowercasedTable table: String) -> RowFilter? {
        guard let filter = filters[id], filter.table.utf8.elementsEqual(table.utf8) else { return nil }
        return filter
    }

    /// The boundary of an observation's window, if its filter has one.
    func window(of id: Int) -> WindowBoundary? {
        windows.isEmpty ? nil : windows[id]
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
