import ReactiveSQLite

/// A row and its key. After an update reported by the set difference,
/// `previous` holds the row before the update.
public struct KeyedRow {
    public var key: RowKey
    public var row: Row
    public var previous: Row?

    /// Keys the rows of one result, in result order.
    ///
    /// - Parameter keyIndexes: The key columns, or nil for the whole row.
    /// - Complexity: O(n × k), where n is the number of rows and k the
    ///   number of key columns.
    public static func keying(_ rows: [Row], by keyIndexes: [Int]?) -> [KeyedRow] {
        var occurrences: [[DatabaseValue]: Int] = [:]
        return rows.map { row in
            let values = keyIndexes.map { $0.map { row.databaseValues[$0] } } ?? row.databaseValues
            let occurrence = occurrences[values, default: 0]
            occurrences[values] = occurrence + 1
            return KeyedRow(key: RowKey(values: values, occurrence: occurrence), row: row)
        }
    }
}
