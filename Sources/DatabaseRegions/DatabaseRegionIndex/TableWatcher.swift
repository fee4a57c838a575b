/// What one key registered for one table: its columns and rows, and where its
/// entries are in the table's buckets.
struct TableWatcher: Sendable {
    /// The slot of the key.
    var slot: Int32

    /// The watched column numbers, ascending; empty when the watcher watches all columns.
    var columnNumbers: [Int32]

    /// The watched columns as a bit set; empty when the watcher watches all columns.
    var columnMask: ColumnMask

    /// The watched rowids, or `nil` for all rows.
    var rowIDs: [Int64]?

    /// The position of each of the watcher's entries in its bucket, in this
    /// order: the entry in `allColumns` or `someColumns`, then one entry per
    /// column of `columnNumbers` (in that column's `TableColumn`), then, for
    /// each rowid of `rowIDs`, one entry in `rows` followed by one per column
    /// of `columnNumbers` in `rowColumns`. See `TableBuckets`.
    var positions: [Int32]

    /// A placeholder for a vacant watcher number, holding no memory.
    static let vacant = TableWatcher(
        slot: -1, columnNumbers: [], columnMask: ColumnMask(columnNumbers: []), rowIDs: nil, positions: [])

    /// The `columnCount` of the watcher's entries: 0 for all columns.
    var entryColumnCount: Int32 { Int32(truncatingIfNeeded: columnNumbers.count) }
}
