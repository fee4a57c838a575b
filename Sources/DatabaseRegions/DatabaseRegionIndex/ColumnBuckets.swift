/// The watchers of one table that share a row restriction (all rows, or
/// some rowids), by column restriction.
///
/// Every watcher of the group has exactly one entry here, in `allColumns` or
/// in `someColumns`; a watcher of some columns also has one entry per column
/// it watches in that column's `TableColumn`.
struct ColumnBuckets: Sendable {
    /// Watchers of all the columns: every event kind on the table concerns them.
    var allColumns: [BucketEntry] = []

    /// Watchers of some columns, once each: insertions and deletions concern them.
    var someColumns: [BucketEntry] = []
}
