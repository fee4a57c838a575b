import Differences

/// Turns the successive results of a query into `RowDifference`s: a
/// `SetDifferenceScanner` over the rows sorted by key (one linear merge per
/// result), or, when order matters, an `OrderedDifference`, which also finds
/// the fewest moves.
///
/// ```swift
/// var differ = RowDiffer(identity: .columns(["id"]), isOrdered: false, columnNames: ["id", "name"], rows: old)
/// if case .changed(let difference) = differ.diff(to: new) {
///     print(difference.inserted.count, "inserted")
/// }
/// ```
///
/// Keys compare in SQLite's `BINARY` order on raw values. Rows with the
/// same key values in one result (a key that is not unique, NULL keys, two
/// equal rows under ``RowIdentity/allValues``) are told apart by their rank
/// among them, so that every key is unique, as the difference algorithms
/// require: a differ never fails on the data. A row is updated when its key
/// persists and a value's storage changed (`Row.isStored(as:)`).
public struct RowDiffer {
    /// The comparison of a new result with the previous one.
    public enum Outcome {
        /// Same rows, same values (and same order for an ordered differ).
        case unchanged
        /// What changed.
        case changed(RowDifference)
        /// The result has other columns than before (the schema changed
        /// under `SELECT *`): rows cannot be compared, and the new result is
        /// the new starting point.
        case columnsChanged
    }

    /// The identity of rows the differ was made with.
    public let identity: RowIdentity
    /// Whether differences carry positions and moves.
    public let isOrdered: Bool
    /// The columns of the last result.
    public private(set) var columnNames: [String]
    /// The indexes of the key columns in `columnNames`, or nil for all values.
    private var keyIndexes: [Int]?
    /// Unordered: the last result, sorted by key.
    private var scanner: SetDifferenceScanner<Keyed, Key>
    /// Ordered: the last result, in result order.
    private var orderedRows: [Keyed] = []

    /// Creates a differ whose first result is `rows`.
    ///
    /// - Parameters:
    ///   - identity: How rows are recognized from one result to the next.
    ///   - isOrdered: Whether differences carry positions and moves.
    ///   - columnNames: The query's columns, used while the result is empty
    ///     (an empty result has no row to read them from).
    ///   - rows: The first result.
    /// - Complexity: O(n log n) to sort an unordered result by key.
    public init(identity: RowIdentity, isOrdered: Bool, columnNames: [String], rows: some Collection<Row>) {
        self.identity = identity
        self.isOrdered = isOrdered
        self.columnNames = columnNames
        self.scanner = Self.makeScanner()
        restart(with: rows)
    }

    /// Whether rows are compared by all their values, because the identity
    /// is ``RowIdentity/allValues`` or a key column is no longer in the result.
    public var identifiesAllValues: Bool { keyIndexes == nil }

    /// Compares `rows` with the previous result, and keeps them for the next
    /// comparison.
    ///
    /// - Complexity: O(n log n) to sort the new result by key (unless
    ///   ordered), then O(n + m) for the set difference, where n and m are
    ///   the sizes of the results; O(n + m + k log k) for the ordered
    ///   difference, where k is the number of rows present in both.
    public mutating func diff(to rows: some Collection<Row>) -> Outcome {
        if let first = rows.first, first.columnNames != columnNames {
            restart(with: rows)
            return .columnsChanged
        }
        let difference = isOrdered
            ? orderedDifference(to: Keyed.keying(rows, by: keyIndexes))
            : setDifference(to: Keyed.sortedByKey(rows, by: keyIndexes))
        return difference.isEmpty ? .unchanged : .changed(difference)
    }

    private mutating func restart(with rows: some Collection<Row>) {
        if let first = rows.first { columnNames = first.columnNames }
        keyIndexes = identity.columnIndexes(in: columnNames)
        if isOrdered {
            orderedRows = Keyed.keying(rows, by: keyIndexes)
        } else {
            scanner = Self.makeScanner(initialElements: Keyed.sortedByKey(rows, by: keyIndexes))
        }
    }

    // MARK: - Keys

    /// The identity of a row in one result: its key values, compared in
    /// SQLite's `BINARY` order (as `DatabaseValue` compares), then its rank
    /// among the rows of the result with the same key values.
    struct Key: Hashable, Comparable {
        var values: [DatabaseValue]
        var occurrence: Int

        static func < (lhs: Key, rhs: Key) -> Bool {
            for (left, right) in zip(lhs.values, rhs.values) where left != right {
                return left < right
            }
            if lhs.values.count != rhs.values.count { return lhs.values.count < rhs.values.count }
            return lhs.occurrence < rhs.occurrence
        }
    }

    /// A row and its key. After an update reported by the set difference,
    /// `previous` holds the row before the update.
    struct Keyed {
        var key: Key
        var row: Row
        var previous: Row?

        /// Keys the rows of one result, in result order.
        ///
        /// - Parameter keyIndexes: The key columns, or nil for all values.
        /// - Complexity: O(n × k), where n is the number of rows and k the
        ///   number of key columns.
        static func keying(_ rows: some Collection<Row>, by keyIndexes: [Int]?) -> [Keyed] {
            var occurrences: [[DatabaseValue]: Int] = [:]
            return rows.map { row in
                let values = keyValues(of: row, keyIndexes)
                let occurrence = occurrences[values, default: 0]
                occurrences[values] = occurrence + 1
                return Keyed(key: Key(values: values, occurrence: occurrence), row: row)
            }
        }

        /// The rows of one result keyed as `keying(_:by:)` does, sorted by
        /// key: one sort by key values and result order, then a pass that
        /// numbers the rows with equal values, with no dictionary of keys.
        ///
        /// - Complexity: O(n log n × k).
        static func sortedByKey(_ rows: some Collection<Row>, by keyIndexes: [Int]?) -> [Keyed] {
            // The occurrence holds the result order while sorting.
            var keyed = rows.enumerated().map { offset, row in
                Keyed(key: Key(values: keyValues(of: row, keyIndexes), occurrence: offset), row: row)
            }
            keyed.sort { $0.key < $1.key }
            var rank = 0
            for index in keyed.indices {
                rank = index > 0 && keyed[index].key.values == keyed[index - 1].key.values ? rank + 1 : 0
                keyed[index].key.occurrence = rank
            }
            return keyed
        }

        private static func keyValues(of row: Row, _ keyIndexes: [Int]?) -> [DatabaseValue] {
            let values = row.databaseValues
            return keyIndexes.map { $0.map { values[$0] } } ?? values
        }
    }

    // MARK: - Set difference

    private static func makeScanner(initialElements: [Keyed] = []) -> SetDifferenceScanner<Keyed, Key> {
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

    /// - Parameter rows: Sorted by key.
    private mutating func setDifference(to rows: [Keyed]) -> RowDifference {
        let difference = scanner.diff(to: rows)
        return RowDifference(
            inserted: difference.inserted.map { RowDifference.Entry(row: $0.row, position: nil) },
            // The scanner's `updateElement` sets `previous` on every update.
            updated: difference.updated.compactMap { element in
                element.previous.map { RowDifference.Update(row: element.row, previous: $0) }
            },
            deleted: difference.deleted.map { RowDifference.Entry(row: $0.row, position: nil) })
    }

    // MARK: - Ordered difference

    private mutating func orderedDifference(to rows: [Keyed]) -> RowDifference {
        let old = orderedRows
        orderedRows = rows
        let difference = OrderedDifference(
            from: old, to: rows, identifiedBy: { $0.key }, isEqual: { $0.row.isStored(as: $1.row) })
        var result = RowDifference(
            inserted: difference.insertions.map { RowDifference.Entry(row: rows[$0].row, position: $0 + 1) },
            deleted: difference.deletions.map { RowDifference.Entry(row: old[$0].row, position: $0 + 1) },
            moved: difference.moves.map { RowDifference.Move(row: rows[$0.to].row, from: $0.from + 1, to: $0.to + 1) })
        if !difference.updates.isEmpty {
            var oldOffsets: [Key: Int] = [:]
            for (offset, element) in old.enumerated() { oldOffsets[element.key] = offset }
            result.updated = difference.updates.compactMap { offset in
                // An update is a row present in both results.
                guard let oldOffset = oldOffsets[rows[offset].key] else { return nil }
                return RowDifference.Update(row: rows[offset].row, previous: old[oldOffset].row, position: offset + 1)
            }
        }
        return result
    }
}
