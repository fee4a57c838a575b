/// A column that watchers of some columns of a table watch, and those watchers.
///
/// Columns are numbered in the order they are first watched; a table keeps
/// its columns in an array by number, so that the name and the buckets that
/// an update of the column must visit share a cache line.
struct TableColumn: Sendable {
    /// The column name.
    let name: CaseInsensitiveName

    /// The name's `signature`, so that finding a column rarely compares names.
    let signature: (prefix: UInt64, count: Int)

    /// Watchers of all rows that watch this column, among others maybe.
    var allRows: [BucketEntry] = []

    /// Watchers of some rowids that watch this column, among others maybe:
    /// updates without a rowid concern them.
    var someRows: [BucketEntry] = []

    init(name: CaseInsensitiveName) {
        self.name = name
        self.signature = name.signature
    }

    /// Whether the column has this name, given the name's signature.
    ///
    /// - Complexity: O(1) for names of no more than eight bytes, O(n) otherwise.
    @inline(__always)
    func hasName(_ name: CaseInsensitiveName, signature: (prefix: UInt64, count: Int)) -> Bool {
        self.signature == signature && (signature.count <= 8 || self.name == name)
    }

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
