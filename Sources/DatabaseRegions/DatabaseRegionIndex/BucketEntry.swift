/// A registration's place in one bucket of a `TableBuckets`.
///
/// An entry carries what a query needs to decide without looking further in
/// the common cases: the slot to report, how many columns the registration
/// covers (0 for all columns, 1 needing no de-duplication), and which.
struct BucketEntry: Sendable {
    /// The slot of the key that registered the registration: what a query reports.
    var slot: Int32

    /// The registration, in its `TableBuckets`.
    var registration: Int32

    /// Which of the registration's memberships this entry is: the index, in the
    /// registration's `positions`, of this entry's position in its bucket.
    var membership: Int32

    /// The number of columns the registration covers, or 0 for all columns.
    var columnCount: Int32

    /// The first word of the registration's `ColumnMask` (columns 0 ..< 64): all
    /// of it when the table has no more than 64 covered columns, which spares
    /// queries a look at the registration.
    var firstColumnWord: UInt64

    /// Whether the registration covers all the columns of the table.
    var coversAllColumns: Bool { columnCount == 0 }
}

extension Array where Element == BucketEntry {
    /// Appends an entry and returns its position.
    ///
    /// - Complexity: Amortized O(1).
    mutating func appendEntry(_ entry: BucketEntry) -> Int32 {
        append(entry)
        return Int32(truncatingIfNeeded: count - 1)
    }

    /// Removes the entry at `position` by moving the last entry into its place.
    ///
    /// - Returns: The entry that moved to `position`, if any, so that the
    ///   caller updates the position its registration remembers.
    /// - Complexity: O(1).
    mutating func removeEntry(at position: Int32) -> BucketEntry? {
        let last = removeLast()
        let index = Int(position)
        guard index < count else { return nil }
        self[index] = last
        return last
    }
}
