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
/// Rows, (row, column) pairs and column names are found in `FlatHashTable`s,
/// whose lookups hash with one multiplication and usually read one cache
/// line when they find nothing, as most lookups of a row do.
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
    @exclusivity(unchecked) private(set) var rows = FlatHashTable<Int64, RowWatchers>()

    /// Watchers restricted to rowids and to some columns, for updates with a
    /// rowid: each watcher is listed under each (rowid, column) pair it watches.
    @exclusivity(unchecked) private(set) var rowColumns = FlatHashTable<RowColumn, RowBucket>()

    /// The number of each watched column name.
    @exclusivity(unchecked) private var columnNumbers = FlatHashTable<NameFingerprint, Int32>()

    /// The watchers, by watcher number; vacant numbers hold `TableWatcher.vacant`.
    @exclusivity(unchecked) private(set) var watchers: [TableWatcher] = []

    /// Watcher numbers free for reuse.
    @exclusivity(unchecked) private var vacantWatchers: [Int32] = []

    /// Whether the table has no watcher.
    var isEmpty: Bool { watchers.count == vacantWatchers.count }

    /// The name of the table.
    let name: CaseInsensitiveName

    /// Creates the buckets of a table that has no watcher.
    init(name: CaseInsensitiveName) {
        self.name = name
    }

    /// Returns an independent copy, for copy on write.
    ///
    /// - Complexity: O(n), where n is the size of the buckets.
    func copy() -> TableBuckets {
        let copy = TableBuckets(name: name)
        copy.allRows = allRows
        copy.someRows = someRows
        copy.columns = columns
        copy.rows = rows
        copy.rowColumns = rowColumns
        copy.columnNumbers = columnNumbers
        copy.watchers = watchers
        copy.vacantWatchers = vacantWatchers
        return copy
    }

    /// The number of a watched column.
    ///
    /// - Complexity: Expected O(1): one lookup in a `FlatHashTable`.
    @inline(__always)
    func columnNumber(of name: String) -> Int? {
        let fingerprint = NameFingerprint(name)
        let position = columnNumbers.position(forKey: fingerprint) { number in
            fingerprint.isComplete || columns[Int(number)].name == CaseInsensitiveName(name)
        }
        return position.map { Int(columnNumbers.entries[$0].value) }
    }

    /// Registers the table region of the key at `slot`.
    ///
    /// - Returns: The watcher number, for `removeWatcher(_:)`.
    /// - Complexity: Expected amortized O(c log c + r × (1 + c)), where c is
    ///   the number of columns and r the number of rowids.
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
            if let rowPosition = rows.position(forKey: rowID) {
                positions.append(rows.updateValue(at: rowPosition) { $0.appendEntry(nextEntry()) })
            } else {
                rows.append(RowWatchers(nextEntry()), forKey: rowID)
                positions.append(0)
            }
            for number in numbers {
                let rowColumn = RowColumn(rowID: rowID, column: number)
                if let bucketPosition = rowColumns.position(forKey: rowColumn) {
                    positions.append(rowColumns.updateValue(at: bucketPosition) { $0.appendEntry(nextEntry()) })
                } else {
                    rowColumns.append(RowBucket(nextEntry()), forKey: rowColumn)
                    positions.append(0)
                }
            }
        }
        watchers[Int(watcherNumber)].positions = positions
        #if DATABASE_REGIONS_INTERNAL_CHECKS
        checkInvariants()
        #endif
        return watcherNumber
    }

    /// Unregisters a watcher.
    ///
    /// - Complexity: Expected amortized O(c + r × (1 + c)), where c is the
    ///   number of columns and r the number of rowids of the watcher.
    func removeWatcher(_ watcherNumber: Int32) {
        let watcher = watchers[Int(watcherNumber)]
        watchers[Int(watcherNumber)] = .vacant
        vacantWatchers.append(watcherNumber)

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
            let rowPosition = rows.position(forKey: rowID)!
            let (moved, emptied) = rows.updateValue(at: rowPosition) { rowWatchers in
                (rowWatchers.removeEntry(at: position, watchesAllColumns: watchesAllColumns), rowWatchers.isEmpty)
            }
            relocate(moved, to: position)
            if emptied {
                rows.remove(at: rowPosition)
            }
            for number in watcher.columnNumbers {
                let position = positions.next()!
                let bucketPosition = rowColumns.position(forKey: RowColumn(rowID: rowID, column: number))!
                switch rowColumns.updateValue(at: bucketPosition, { $0.removeEntry(at: position) }) {
                case .emptied:
                    rowColumns.remove(at: bucketPosition)
                case let .removed(moved):
                    relocate(moved, to: position)
                }
            }
        }
        assert(positions.next() == nil, "Every position must be used")
        #if DATABASE_REGIONS_INTERNAL_CHECKS
        checkInvariants()
        #endif
    }

    /// Gives numbers to the columns, new ones in sorted order so that numbers
    /// do not depend on hashing, and returns their numbers, ascending.
    private func registerColumns(_ names: Set<CaseInsensitiveName>) -> [Int32] {
        var numbers: [Int32] = []
        numbers.reserveCapacity(names.count)
        var newNames: [CaseInsensitiveName] = []
        for name in names {
            if let number = columnNumber(of: name.rawValue) {
                numbers.append(Int32(truncatingIfNeeded: number))
            } else {
                newNames.append(name)
            }
        }
        for name in newNames.sorted() {
            precondition(columns.count < Int32.max, "DatabaseRegionIndex: too many columns")
            let number = Int32(columns.count)
            columnNumbers.append(number, forKey: NameFingerprint(name))
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

#if DATABASE_REGIONS_INTERNAL_CHECKS
extension TableBuckets {
    /// Checks the hash tables and the columns (build with
    /// `-Xswiftc -DDATABASE_REGIONS_INTERNAL_CHECKS`).
    ///
    /// - Complexity: O(n), where n is the size of the buckets.
    func checkInvariants() {
        rows.checkInvariants()
        rowColumns.checkInvariants()
        columnNumbers.checkInvariants()
        precondition(columnNumbers.count == columns.count, "One number per column")
        for (number, column) in columns.enumerated() {
            precondition(columnNumber(of: column.name.rawValue) == number, "Columns are found by name")
        }
        for entry in rows.entries {
            precondition(!entry.value.isEmpty, "No empty row")
        }
    }
}
#endif
