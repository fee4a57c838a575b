/// Whether a watcher watches all the rows of its table or some rowids: it
/// picks the buckets that list the watcher.
enum RowRestriction: Sendable {
    /// The watcher watches all rows.
    case allRows

    /// The watcher watches some rowids.
    case someRows
}
