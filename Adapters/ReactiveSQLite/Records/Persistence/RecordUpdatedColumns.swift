/// The columns an UPDATE sets, as positions in the record's columns. Key
/// columns are never set: they identify the row.
enum RecordUpdatedColumns {
    /// Every column that is not a key column.
    case all
    /// The columns whose bits are set (positions below 64).
    case mask(UInt64)
    /// The columns at these positions, in increasing order (a record of
    /// more than 64 columns).
    case positions([Int])

    /// The columns at `positions` (in increasing order).
    init(positions: [Int]) {
        if let last = positions.last, last >= 64 {
            self = .positions(positions)
        } else {
            self = .mask(positions.reduce(0) { $0 | (1 << UInt64($1)) })
        }
    }
}
