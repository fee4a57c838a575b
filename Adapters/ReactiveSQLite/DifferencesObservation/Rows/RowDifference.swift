/// What changed in the rows of a query between two results: the rows
/// inserted, updated (with their previous values and the columns that
/// changed) and deleted, and for an ordered difference the rows that moved.
///
/// Positions are 1-based ranks in a result (position 1 is the first row),
/// and are only known in an ordered difference (see `RowDiffer`). Without
/// order, each list is in key order.
public struct RowDifference: Sendable, Hashable {
    /// A row that appeared, or disappeared.
    public struct Entry: Sendable, Hashable {
        /// The row.
        public var row: Row
        /// The row's position in the new result (insertion) or in the old
        /// one (deletion); nil in an unordered difference.
        public var position: Int?

        /// An entry.
        public init(row: Row, position: Int?) {
            self.row = row
            self.position = position
        }
    }

    /// A row whose identity persisted and whose values changed.
    public struct Update: Sendable, Hashable {
        /// The row in the new result.
        public var row: Row
        /// The row in the old result.
        public var previous: Row
        /// The indexes of the columns whose stored values changed, ascending.
        public var changedColumns: [Int]
        /// The position in the new result; nil in an unordered difference.
        public var position: Int?

        /// An update.
        public init(row: Row, previous: Row, changedColumns: [Int], position: Int?) {
            self.row = row
            self.previous = previous
            self.changedColumns = changedColumns
            self.position = position
        }

        /// An update of `previous` into `row`, with the columns whose
        /// stored values differ (see `Row.changedColumns(from:)`).
        public init(row: Row, previous: Row, position: Int? = nil) {
            self.init(row: row, previous: previous, changedColumns: row.changedColumns(from: previous), position: position)
        }
    }

    /// A row that changed position (ordered differences only). It may also
    /// be updated.
    public struct Move: Sendable, Hashable {
        /// The row in the new result.
        public var row: Row
        /// Its position in the old result.
        public var from: Int
        /// Its position in the new result.
        public var to: Int

        /// A move.
        public init(row: Row, from: Int, to: Int) {
            self.row = row
            self.from = from
            self.to = to
        }
    }

    /// The rows that appeared.
    public var inserted: [Entry]
    /// The rows whose values changed.
    public var updated: [Update]
    /// The rows that disappeared.
    public var deleted: [Entry]
    /// The rows that changed position (ordered differences only).
    public var moved: [Move]

    /// A difference.
    public init(inserted: [Entry] = [], updated: [Update] = [], deleted: [Entry] = [], moved: [Move] = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.moved = moved
    }

    /// Whether nothing changed.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && moved.isEmpty
    }
}

extension Row {
    /// The indexes of the columns whose stored values differ between `old`
    /// and this row (see `DatabaseValue.isStored(as:)`), ascending; a
    /// column `old` does not have counts as changed.
    ///
    /// - Complexity: O(c), where c is the number of columns.
    public func changedColumns(from old: Row) -> [Int] {
        let values = databaseValues
        let oldValues = old.databaseValues
        return values.indices.filter { index in
            index >= oldValues.count || !values[index].isStoredIdentically(to: oldValues[index])
        }
    }

    /// Whether both rows have as many columns, each holding the same stored
    /// value (see `DatabaseValue.isStored(as:)`). Column names are not
    /// compared.
    ///
    /// - Complexity: O(c), where c is the number of columns.
    public func isStored(as other: Row) -> Bool {
        let values = databaseValues
        let otherValues = other.databaseValues
        guard values.count == otherValues.count else { return false }
        for index in values.indices where !values[index].isStoredIdentically(to: otherValues[index]) {
            return false
        }
        return true
    }
}

extension DatabaseValue {
    /// Whether two values are stored identically: the same storage class
    /// and the same value, texts compared by their exact bytes (valid
    /// UTF-8 or not).
    ///
    /// Stricter than `==`, for which the integer 1 and the real 1.0 are
    /// equal: an UPDATE from one to the other is a change to report.
    public func isStored(as other: DatabaseValue) -> Bool {
        isStoredIdentically(to: other)
    }
}
