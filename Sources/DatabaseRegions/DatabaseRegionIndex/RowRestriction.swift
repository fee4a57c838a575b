/// Whether a registration covers all the rows of its table or some rowids: it
/// picks the buckets that list the registration.
enum RowRestriction: Sendable {
    /// The registration covers all rows.
    case allRows

    /// The registration covers some rowids.
    case someRows
}
