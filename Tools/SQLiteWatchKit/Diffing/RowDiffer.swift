import Differences
import ReactiveSQLite

/// Turns the successive results of the watched query into `RowChanges`,
/// with the Differences core: a `SetDifferenceScanner` over rows sorted by
/// key (one linear merge per result), or, with `--ordered`, an
/// `OrderedDifference`, which also finds the fewest moves.
public struct RowDiffer {
    /// The comparison of a new result with the previous one.
    public enum Outcome {
        /// Same rows, same values (and same order with `--ordered`).
        case unchanged
        case changed(RowChanges)
        /// The result has other columns than before (the schema changed
        /// under `SELECT *`): rows cannot be compared, the new result is
        /// the new starting point.
        case columnsChanged
    }

    public let identity: RowIdentity
    public let isOrdered: Bool
    /// The columns of the last result.
    public private(set) var columnNames: [String]
    /// The indexes of the key columns in `columnNames`, or nil for the whole row.
    private(set) var keyIndexes: [Int]?
    /// Without `--ordered`: the last result, sorted by key.
    private var scanner: SetDifferenceScanner<KeyedRow, RowKey>
    /// With `--ordered`: the last result, in result order.
    private var orderedRows: [KeyedRow] = []

    /// Creates a differ whose first result is `rows`.
    ///
    /// - Parameter columnNames: The query's columns, used while the result
    ///   is empty (an empty result has no row to read them from).
    public init(identity: RowIdentity, isOrdered: Bool, columnNames: [String], rows: [Row]) {
        self.identity = identity
        self.isOrdered = isOrdered
        self.columnNames = columnNames
        self.scanner = Self.makeScanner()
        restart(with: rows)
    }

    /// Whether rows are compared by all their values, because there is no
    /// key or a key column is no longer in the result.
    public var identifiesWholeRows: Bool { keyIndexes == nil }

    /// Compares `rows` with the previous result, and keeps them for the next
    /// comparison.
    ///
    /// - Complexity: O(n log n) for the first sort of the new result, then
    ///   O(n + m) for the set difference, where n and m are the sizes of the
    ///   results; O(n + m + k log k) for the ordered difference, where k is
    ///   the number of rows present in both.
    public mutating func diff(to rows: [Row]) -> Outcome {
        if let first = rows.first, first.columnNames != columnNames {
            restart(with: rows)
            return .columnsChanged
        }
        let keyed = KeyedRow.keying(rows, by: keyIndexes)
        let changes = isOrdered ? orderedChanges(to: keyed) : setChanges(to: keyed)
        return changes.isEmpty ? .unchanged : .changed(changes)
    }

    private mutating func restart(with rows: [Row]) {
        if let first = rows.first { columnNames = first.columnNames }
        keyIndexes = identity.columnIndexes(in: columnNames)
        let keyed = KeyedRow.keying(rows, by: keyIndexes)
        if isOrdered {
            orderedRows = keyed
        } else {
            scanner = Self.makeScanner(initialElements: keyed.sorted { $0.key < $1.key })
        }
    }

    // MARK: - Set difference

    private static func makeScanner(initialElements: [KeyedRow] = []) -> SetDifferenceScanner<KeyedRow, RowKey> {
        SetDifferenceScanner(
            initialElements: initialElements,
            id: { $0.key },
            isUpdated: { old, new in !new.row.isStored(as: old.row) },
            updateElement: { old, new in
                var updated = new
                updated.previous = old.row
                return updated
            })
    }

    private mutating func setChanges(to rows: [KeyedRow]) -> RowChanges {
        let difference = scanner.diff(to: rows.sorted { $0.key < $1.key })
        var changes = RowChanges()
        changes.inserted = difference.inserted.map { RowChanges.Entry(row: $0.row, position: nil) }
        changes.deleted = difference.deleted.map { RowChanges.Entry(row: $0.row, position: nil) }
        changes.updated = difference.updated.compactMap { element in
            // The scanner's `updateElement` sets `previous` on every update.
            guard let previous = element.previous else { return nil }
            return RowChanges.Update(
                row: element.row, previous: previous, changedColumns: element.row.changedColumns(from: previous),
                position: nil)
        }
        return changes
    }

    // MARK: - Ordered difference

    private mutating func orderedChanges(to rows: [KeyedRow]) -> RowChanges {
        let old = orderedRows
        orderedRows = rows
        let difference = OrderedDifference(
            from: old, to: rows, identifiedBy: { $0.key }, isEqual: { $0.row.isStored(as: $1.row) })
        var changes = RowChanges()
        changes.inserted = difference.insertions.map { RowChanges.Entry(row: rows[$0].row, position: $0 + 1) }
        changes.deleted = difference.deletions.map { RowChanges.Entry(row: old[$0].row, position: $0 + 1) }
        changes.moved = difference.moves.map { RowChanges.Move(row: rows[$0.to].row, from: $0.from + 1, to: $0.to + 1) }
        if !difference.updates.isEmpty {
            var oldOffsets: [RowKey: Int] = [:]
            for (offset, element) in old.enumerated() { oldOffsets[element.key] = offset }
            changes.updated = difference.updates.compactMap { offset in
                // An update is a row present in both results.
                guard let oldOffset = oldOffsets[rows[offset].key] else { return nil }
                let row = rows[offset].row
                let previous = old[oldOffset].row
                return RowChanges.Update(
                    row: row, previous: previous, changedColumns: row.changedColumns(from: previous),
                    position: offset + 1)
            }
        }
        return changes
    }
}
