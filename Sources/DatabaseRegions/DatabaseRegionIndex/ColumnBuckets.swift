/// The registrations of one table that share a row restriction (all rows, or
/// some rowids), by column restriction.
///
/// Every registration of the group has exactly one entry here, in `allColumns` or
/// in `someColumns`; a registration of some columns also has one entry per column
/// it covers in that column's `TableColumn`.
struct ColumnBuckets: Sendable {
    /// Registrations of all the columns: every event kind on the table concerns them.
    var allColumns: [BucketEntry] = []

    /// Registrations of some columns, once each: insertions and deletions concern them.
    var someColumns: [BucketEntry] = []
}
