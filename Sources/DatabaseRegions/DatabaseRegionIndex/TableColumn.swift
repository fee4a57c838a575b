/// A column that registrations of some columns of a table cover, and those registrations.
///
/// Columns are numbered in the order they are first covered; a table keeps
/// its columns in an array by number.
struct TableColumn: Sendable {
    /// The column name.
    let name: CaseInsensitiveName

    /// Registrations of all rows that cover this column, among others maybe.
    var allRows: [BucketEntry] = []

    /// Registrations of some rowids that cover this column, among others maybe:
    /// updates without a rowid concern them.
    var someRows: [BucketEntry] = []

    /// The bucket of registrations with the given row restriction.
    func bucket(_ restriction: RowRestriction) -> [BucketEntry] {
        switch restriction {
        case .allRows: allRows
        case .someRows: someRows
        }
    }

    /// Calls `body` with the bucket of registrations with the given row restriction, in place.
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
