/// The watchers of one table, bucketed so that an event finds the watchers it
/// concerns without looking at the others.
///
/// A watcher is what one key registered for this table (a `TableRegion`). It
/// is listed in buckets chosen by its restrictions:
///
/// | watcher   | all columns                           | some columns                                                        |
/// |-----------|---------------------------------------|---------------------------------------------------------------------|
/// | all rows  | `allRows.allColumns`                  | `allRows.someColumns`; `columns[c].allRows` per column c             |
/// | some rows | `someRows.allColumns`; `rows[r].allColumns` per rowid r | `someRows.someColumns`; `columns[c].someRows` per column c; `rows[r].someColumns` per rowid r; `rowColumns[(r, c)]` per rowid r and column c |
///
/// Events with a rowid look at the buckets of all rows and at `rows[rowID]`;
/// events without one (and event kinds) at the buckets of all rows and of
/// some rows. An update visits the buckets of the updated columns only: with
/// a rowid, `rows[rowID].allColumns` and `rowColumns[(rowID, c)]` for each
/// updated column c, never the watchers of the row that watch other columns
/// only.
/// Columns are given small numbers, in the order they are first watched, so
/// that a watcher's columns and an update's columns are bit sets
/// (`ColumnMask`).
///
/// Each entry knows its watcher and which of the watcher's memberships it is,
/// and each watcher knows the position of each of its entries: removing a
/// watcher moves the last entry of each of its buckets into the hole, in O(1)
/// per entry.
///
/// A class, so that a query reaches the buckets of a table through one
/// reference instead of copying a dozen of them. Copies of a
/// `DatabaseRegionIndex` share instances, and `DatabaseRegionIndexStorage`
/// copies an instance before mutating it unless it holds the only reference
/// (copy on write).
// @unchecked Sendable: an instance is mutated only while uniquely referenced
// (see `DatabaseRegionIndexStorage.uniqueTable(named:)`), so instances shared
// between copies of an index, possibly across threads, are only read.
final class TableBuckets: @unchecked Sendable {
    // Queries read the first properties; keep them together.
    //
    // `@exclusivity(unchecked)`: the dynamic exclusivity checks of class
    // properties cost a tenth of a query. They are not needed: an instance is
    // mutated only through `DatabaseRegionIndexStorage`'s mutating methods,
    // while uniquely referenced, and never from inside a query.

    /// Watchers of all rows.
    @exclusivity(unchecked) private(set) var allRows = ColumnBuckets()

    /// Watchers restricted to rowids, for events without a rowid.
    @exclusivity(unchecked) private(set) var someRows = ColumnBuckets()

    /// The watched columns, by column number, with their watchers.
    @exclusivity(unchecked) private(set) var columns: [TableColumn] = []

    /// Watchers restricted to rowids, for events with a rowid: each watcher
    /// is listed under each of its rowids, once.
    @exclusivity(unchecked) private(set) var rows: [Int64: RowWatchers] = [:]

    /// Watchers restricted to rowids and to some columns, for updates with a
    /// rowid: each watcher is listed under each (rowid, column) pair it watches.
    @exclusivity(unchecked) private(set) var rowColumns: [RowColumn: RowBucket] = [:]

    /// The number of watchers that watch some columns only.
    @exclusivity(unchecked) private(set) var columnRestrictedWatcherCount = 0

    /// The number of each column name; queries search `columns` instead
    /// while there are no more than `linearSearchLimit` columns.
    @exclusivity(unchecked) private var columnNumbers: [CaseInsensitiveName: Int32] = [:]

    /// The watchers, by watcher number; vacant numbers hold `TableWatcher.vacant`.
    @exclusivity(unchecked) private(set) var watchers: [TableWatcher] = []

    /// Watcher numbers free for reuse.
    @exclusivity(unchecked) private var vacantWatchers: [Int32] = []

    /// Up to this number of columns, finding a column by comparing names (or
    /// rather their signatures) is faster than hashing the name.
    static let linearSearchLimit = 16

    /// Whether the table has no watcher.
    var isEmpty: Bool { watchers.count == vacantWatchers.count }

    /// Creates the buckets of a table that has no watcher.
    init() {}

    /// Returns an independent copy, for copy on write.
    ///
    /// - Complexity: O(n), where n is the size of the buckets.
    func copy() -> TableBuckets {
        let copy = TableBuckets()
        copy.allRows = allRows
        copy.someRows = someRows
        copy.columns = columns
        copy.rows = rows
        copy.rowColumns = rowColumns
        copy.columnRestrictedWatcherCount = columnRestrictedWatcherCount
        copy.columnNumbers = columnNumbers
        copy.watchers = watchers
        copy.vacantWatchers = vacantWatchers
        return copy
    }

    /// The number of a watched column.
    ///
    /// - Complexity: O(1) (at most `linearSearchLimit` comparisons, or one hash lookup).
    func columnNumber(of name: String) -> Int? {
        let name = CaseInsensitiveName(name)
        if columns.count <= Self.linearSearchLimit {
            let signature = name.signature
            for number in columns.indices where columns[number].hasName(name, signature: signature) {
                return number
            }
            return nil
        }
        return columnNumbers[name].map(Int.init)
    }

    /// Registers the table region of the key at `slot`.
    ///
    /// - Returns: The watcher number, for `removeWatcher(_:)`.
    /// - Complexity: O(c log c + r × (1 + c)), where c is the number of
    ///   columns and r the number of rowids.
    func insertWatcher(slot: Int32, region: TableRegion) -> Int32 {
        var numbers: [Int32] = []
        if let columns = region.columns {
            numbers = registerColumns(columns)
        }
        let rowIDs = region.rowIDs.map(Array.init)
        let watcher = TableWatcher(
            slot: slot,
            columnNumbers: numbers,
            columnMask: ColumnMask(columnNumbers: numbers),
            rowIDs: rowIDs,
            positions: [])
        let watcherNumber: Int32
        if let vacant = vacantWatchers.popLast() {
            watcherNumber = vacant
            watchers[Int(vacant)] = watcher
        } else {
            precondition(watchers.count < Int32.max, "DatabaseRegionIndex: too many regions")
            watcherNumber = Int32(watchers.count)
            watchers.append(watcher)
        }
        if !numbers.isEmpty { columnRestrictedWatcherCount += 1 }

        var membership: Int32 = 0
        func nextEntry() -> BucketEntry {
            defer { membership += 1 }
            return BucketEntry(
                slot: slot,
                watcher: watcherNumber,
                membership: membership,
                columnCount: watcher.entryColumnCount,
                firstColumnWord: watcher.columnMask.words.first ?? 0)
        }
        let restriction: RowRestriction = rowIDs == nil ? .allRows : .someRows
        var positions: [Int32] = []
        positions.reserveCapacity(1 + numbers.count + (rowIDs?.count ?? 0) * (1 + numbers.count))
        if numbers.isEmpty {
            positions.append(withColumnBuckets(restriction) { $0.allColumns.appendEntry(nextEntry()) })
        } else {
            positions.append(withColumnBuckets(restriction) { $0.someColumns.appendEntry(nextEntry()) })
            for number in numbers {
                positions.append(columns[Int(number)].withBucket(restriction) { $0.appendEntry(nextEntry()) })
            }
        }
        for rowID in rowIDs ?? [] {
            if let index = rows.index(forKey: rowID) {
                positions.append(rows.values[index].appendEntry(nextEntry()))
            } else {
                rows[rowID] = RowWatchers(nextEntry())
                positions.append(0)
            }
            for number in numbers {
                positions.append(rowColumns[RowColumn(rowID: rowID, column: number)].appendEntry(nextEntry()))
            }
        }
        watchers[Int(watcherNumber)].positions = positions
        return watcherNumber
    }

    /// Unregisters a watcher.
    ///
    /// - Complexity: O(c + r × (1 + c)), where c is the number of columns and
    ///   r the number of rowids of the watcher.
    func removeWatcher(_ watcherNumber: Int32) {
        let watcher = watchers[Int(watcherNumber)]
        watchers[Int(watcherNumber)] = .vacant
        vacantWatchers.append(watcherNumber)
        if !watcher.columnNumbers.isEmpty { columnRestrictedWatcherCount -= 1 }

        let restriction: RowRestriction = watcher.rowIDs == nil ? .allRows : .someRows
        var positions = watcher.positions.makeIterator()
        if watcher.columnNumbers.isEmpty {
            let position = positions.next()!
            relocate(withColumnBuckets(restriction) { $0.allColumns.removeEntry(at: position) }, to: position)
        } else {
            let position = positions.next()!
            relocate(withColumnBuckets(restriction) { $0.someColumns.removeEntry(at: position) }, to: position)
            for number in watcher.columnNumbers {
                let position = positions.next()!
                relocate(columns[Int(number)].withBucket(restriction) { $0.removeEntry(at: position) }, to: position)
            }
        }
        let watchesAllColumns = watcher.columnNumbers.isEmpty
        for rowID in watcher.rowIDs ?? [] {
            let position = positions.next()!
            let index = rows.index(forKey: rowID)!
            relocate(rows.values[index].removeEntry(at: position, watchesAllColumns: watchesAllColumns), to: position)
            if rows.values[index].isEmpty {
                rows.remove(at: index)
            }
            for number in watcher.columnNumbers {
                let position = positions.next()!
                relocate(rowColumns[RowColumn(rowID: rowID, column: number)].removeEntry(at: position), to: position)
            }
        }
        assert(positions.next() == nil, "Every position must be used")
    }

    /// Gives numbers to the columns, new ones in sorted order so that numbers
    /// do not depend on hashing, and returns their numbers, ascending.
    private func registerColumns(_ names: Set<CaseInsensitiveName>) -> [Int32] {
        var numbers: [Int32] = []
        numbers.reserveCapacity(names.count)
        var newNames: [CaseInsensitiveName] = []
        for name in names {
            if let number = columnNumbers[name] {
                numbers.append(number)
            } else {
                newNames.append(name)
            }
        }
        for name in newNames.sorted() {
            precondition(columns.count < Int32.max, "DatabaseRegionIndex: too many columns")
            let number = Int32(columns.count)
            columnNumbers[name] = number
            columns.append(TableColumn(name: name))
            numbers.append(number)
        }
        numbers.sort()
        return numbers
    }

    /// Calls `body` with the buckets of watchers with the given row restriction, in place.
    private func withColumnBuckets<Result>(
        _ restriction: RowRestriction,
        _ body: (inout ColumnBuckets) -> Result
    ) -> Result {
        switch restriction {
        case .allRows: body(&allRows)
        case .someRows: body(&someRows)
        }
    }

    /// Tells the watcher of an entry that moved within its bucket its new position.
    private func relocate(_ moved: BucketEntry?, to position: Int32) {
        guard let moved else { return }
        watchers[Int(moved.watcher)].positions[Int(moved.membership)] = position
    }
}
