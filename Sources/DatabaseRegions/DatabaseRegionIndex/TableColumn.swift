/// A column that watchers of some columns of a table watch, and those watchers.
///
/// Columns are numbered in the order they are first watched; a table keeps
/// its columns in an array by number.
struct TableColumn: Sendable {
    /// The column name.
    let name: CaseInsensitiveName

    /// Watchers of all rows that watch this column, among others maybe.
    var allRows: [BucketEntry] = []

    /// Watchers of some rowids that watch this column, among others maybe:
    /// updates without a rowid concern them.
    var someRows: [BucketEntry] = []

    /// The bucket of watchers with the given row restriction.
    func bucket(_ restriction: RowRestriction) -> [BucketEntry] {
        switch restriction {
        case .allRows: allRows
        case .someRows: someRows
        }
    }

    /// Calls `body` with the bucket of watchers with the given row restriction, in place.
    mutating func withBucket<Result>(
        _ restriction: RowRestriction,
        _ body: (inout [BucketEntry]) -> Result
    ) -> Result {
        switch restriction {
        case .allRows: body(&allRows)
        case .someRows: body(&someRows)
        }
    }
}
