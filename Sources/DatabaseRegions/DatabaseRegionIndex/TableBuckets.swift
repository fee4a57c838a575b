/// The registrations of one table, bucketed so that an event finds the registrations it
/// concerns without looking at the others.
///
/// A registration is what one key registered for this table (a `TableRegion`). It
/// is listed in buckets chosen by its restrictions:
///
/// | registration | all columns                           | some columns                                                        |
/// |--------------|---------------------------------------|---------------------------------------------------------------------|
/// | all rows     | `allRows.allColumns`                  | `allRows.someColumns`; `columns[c].allRows` per column c             |
/// | some rows    | `someRows.allColumns`; `rows[r].allColumns` per rowid r | `someRows.someColumns`; `columns[c].someRows` per column c; `rows[r].someColumns` per rowid r; `rowColumns[(r, c)]` per rowid r and column c |
///
/// Events with a rowid look at the buckets of all rows and at `rows[rowID]`;
/// events without one (and event kinds) at the buckets of all rows and of
/// some rows. An update visits the buckets of the updated columns only: with
/// a rowid, `rows[rowID].allColumns` and `rowColumns[(rowID, c)]` for each
/// updated column c, never the registrations of the row that cover other columns
/// only.
/// Columns are given small numbers, in the order they are first covered, so
/// that a registration's columns and an update's columns are bit sets
/// (`ColumnMask`).
///
/// Rows, (row, column) pairs and column names are found in `FlatHashTable`s,
/// whose lookups hash with one multiplication and usually read one cache
/// line when they find nothing, as most lookups of a row do.
///
/// Each entry knows its registration and which of the registration's memberships it is,
/// and each registration knows the position of each of its entries: removing a
/// registration moves the last entry of each of its buckets into the hole, in O(1)
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

    /// Registrations of all rows.
    @exclusivity(unchecked) private(set) var allRows = ColumnBuckets()

    /// Registrations restricted to rowids, for events without a rowid.
    @exclusivity(unchecked) private(set) var someRows = ColumnBuckets()

    /// The covered columns, by column number, with their registrations.
    @exclusivity(unchecked) private(set) var columns: [TableColumn] = []

    /// Registrations restricted to rowids, for events with a rowid: each registration
    /// is listed under each of its rowids, once.
    @exclusivity(unchecked) private(set) var rows = FlatHashTable<Int64, RowRegistrations>()

    /// Registrations restricted to rowids and to some columns, for updates with a
    /// rowid: each registration is listed under each (rowid, column) pair it covers.
    @exclusivity(unchecked) private(set) var rowColumns = FlatHashTable<RowColumn, RowBucket>()

    /// The number of each covered column name.
    @exclusivity(unchecked) private var columnNumbers = FlatHashTable<NameFingerprint, Int32>()

    /// The registrations, by registration number; vacant numbers hold `TableRegistration.vacant`.
    @exclusivity(unchecked) private(set) var registrations: [TableRegistration] = []

    /// Registration numbers free for reuse.
    @exclusivity(unchecked) private var vacantRegistrations: [Int32] = []

    /// Whether the table has no registration.
    var isEmpty: Bool { registrations.count == vacantRegistrations.count }

    /// The name of the table.
    let name: CaseInsensitiveName

    /// Creates the buckets of a table that has no registration.
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
        copy.registrations = registrations
        copy.vacantRegistrations = vacantRegistrations
        return copy
    }

    /// The number of a covered column.
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
    /// - Returns: The registration number, for `removeRegistration(_:)`.
    /// - Complexity: Expected amortized O(c log c + r × (1 + c)), where c is
    ///   the number of columns and r the number of rowids.
    func insertRegistration(slot: Int32, region: TableRegion) -> Int32 {
        var numbers: [Int32] = []
        if let columns = region.columns {
            numbers = registerColumns(columns)
        }
        let rowIDs = region.rowIDs.map(Array.init)
        let registration = TableRegistration(
            slot: slot,
            columnNumbers: numbers,
            columnMask: ColumnMask(columnNumbers: numbers),
            rowIDs: rowIDs,
            positions: [])
        let registrationNumber: Int32
        if let vacant = vacantRegistrations.popLast() {
            registrationNumber = vacant
            registrations[Int(vacant)] = registration
        } else {
            precondition(registrations.count < Int32.max, "DatabaseRegionIndex: too many regions")
            registrationNumber = Int32(registrations.count)
            registrations.append(registration)
        }

        var membership: Int32 = 0
        func nextEntry() -> BucketEntry {
            defer { membership += 1 }
            return BucketEntry(
                slot: slot,
                registration: registrationNumber,
                membership: membership,
                columnCount: registration.entryColumnCount,
                firstColumnWord: registration.columnMask.words.first ?? 0)
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
                rows.append(RowRegistrations(nextEntry()), forKey: rowID)
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
        registrations[Int(registrationNumber)].positions = positions
        #if DATABASE_REGIONS_INTERNAL_CHECKS
        checkInvariants()
        #endif
        return registrationNumber
    }

    /// Unregisters a registration.
    ///
    /// - Complexity: Expected amortized O(c + r × (1 + c)), where c is the
    ///   number of columns and r the number of rowids of the registration.
    func removeRegistration(_ registrationNumber: Int32) {
        let registration = registrations[Int(registrationNumber)]
        registrations[Int(registrationNumber)] = .vacant
        vacantRegistrations.append(registrationNumber)

        let restriction: RowRestriction = registration.rowIDs == nil ? .allRows : .someRows
        var positions = registration.positions.makeIterator()
        if registration.columnNumbers.isEmpty {
            let position = positions.next()!
            relocate(withColumnBuckets(restriction) { $0.allColumns.removeEntry(at: position) }, to: position)
        } else {
            let position = positions.next()!
            relocate(withColumnBuckets(restriction) { $0.someColumns.removeEntry(at: position) }, to: position)
            for number in registration.columnNumbers {
                let position = positions.next()!
                relocate(columns[Int(number)].withBucket(restriction) { $0.removeEntry(at: position) }, to: position)
            }
        }
        let coversAllColumns = registration.columnNumbers.isEmpty
        for rowID in registration.rowIDs ?? [] {
            let position = positions.next()!
            let rowPosition = rows.position(forKey: rowID)!
            let (moved, emptied) = rows.updateValue(at: rowPosition) { rowRegistrations in
                let removed = rowRegistrations.removeEntry(at: position, coversAllColumns: coversAllColumns)
                return (removed, rowRegistrations.isEmpty)
            }
            relocate(moved, to: position)
            if emptied {
                rows.remove(at: rowPosition)
            }
            for number in registration.columnNumbers {
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

    /// Calls `body` with the buckets of registrations with the given row restriction, in place.
    private func withColumnBuckets<Result>(
        _ restriction: RowRestriction,
        _ body: (inout ColumnBuckets) -> Result
    ) -> Result {
        switch restriction {
        case .allRows: body(&allRows)
        case .someRows: body(&someRows)
        }
    }

    /// Tells the registration of an entry that moved within its bucket its new position.
    private func relocate(_ moved: BucketEntry?, to position: Int32) {
        guard let moved else { return }
        registrations[Int(moved.registration)].positions[Int(moved.membership)] = position
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
