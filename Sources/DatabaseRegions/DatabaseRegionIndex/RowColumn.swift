/// A (rowid, column number) pair: the key of the buckets of the
/// column-restricted registrations of one row that cover one column.
struct RowColumn: Hashable, Sendable {
    var rowID: Int64
    var column: Int32
}

extension RowColumn: FlatHashKey {
    /// The rowid plus the column number times an odd constant.
    @inline(__always)
    var flatHashDigest: UInt64 {
        UInt64(bitPattern: rowID) &+ UInt64(truncatingIfNeeded: column) &* 0x9E37_79B9_7F4A_7C15
    }
}
