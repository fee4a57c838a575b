/// What one key registered for one table: its columns and rows, and where its
/// entries are in the table's buckets.
struct TableRegistration: Sendable {
    /// The slot of the key.
    var slot: Int32

    /// The covered column numbers, ascending; empty when the registration covers all columns.
    var columnNumbers: [Int32]

    /// The covered columns as a bit set; empty when the registration covers all columns.
    var columnMask: ColumnMask

    /// The covered rowids, or `nil` for all rows.
    var rowIDs: [Int64]?

    /// The position of each of the registration's entries in its bucket, in this
    /// order: the entry in `allColumns` or `someColumns`, then one entry per
    /// column of `columnNumbers` (in that column's `TableColumn`), then, for
    /// each rowid of `rowIDs`, one entry in `rows` followed by one per column
    /// of `columnNumbers` in `rowColumns`. See `TableBuckets`.
    var positions: [Int32]

    /// A placeholder for a vacant registration number, holding no memory.
    static let vacant = TableRegistration(
        slot: -1, columnNumbers: [], columnMask: ColumnMask(columnNumbers: []), rowIDs: nil, positions: [])

    /// The `columnCount` of the registration's entries: 0 for all columns.
    var entryColumnCount: Int32 { Int32(truncatingIfNeeded: columnNumbers.count) }
}
