import ReactiveSQLite

extension Row {
    /// The indexes of the columns whose stored values differ between `old`
    /// and this row (see `DatabaseValue.isStored(as:)`).
    public func changedColumns(from old: Row) -> [Int] {
        databaseValues.indices.filter { index in
            index >= old.databaseValues.count || !databaseValues[index].isStored(as: old.databaseValues[index])
        }
    }

    /// Whether every column holds the same stored value in both rows.
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
    /// Whether two values are stored identically: same storage class, same
    /// value, texts compared by their exact bytes (valid UTF-8 or not).
    ///
    /// Stricter than `==`, for which the integer 1 and the real 1.0 are
    /// equal: an UPDATE from one to the other is a change to report.
    public func isStored(as other: DatabaseValue) -> Bool {
        isStoredIdentically(to: other)
    }
}
