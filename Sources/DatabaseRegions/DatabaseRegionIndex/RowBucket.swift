/// The registrations of one rowid of a table: usually one, so the first entry is
/// stored inline, sparing a query an indirection and a registration an
/// allocation.
///
/// Positions run from 0 (`first`) to `count - 1`, as in an array; removing
/// an entry moves the last one into its place.
struct RowBucket: Sendable {
    /// The entry at position 0.
    private(set) var first: BucketEntry

    /// The entries at positions 1 ..< count.
    private(set) var others: [BucketEntry] = []

    /// Creates a bucket with one entry.
    init(_ first: BucketEntry) {
        self.first = first
    }

    /// The number of entries.
    var count: Int { 1 + others.count }

    /// Calls `body` with each entry.
    ///
    /// - Complexity: O(count).
    @inline(__always)
    func forEach(_ body: (BucketEntry) -> Void) {
        body(first)
        for entry in others { body(entry) }
    }

    /// Appends an entry and returns its position.
    ///
    /// - Complexity: Amortized O(1).
    mutating func appendEntry(_ entry: BucketEntry) -> Int32 {
        others.appendEntry(entry) + 1
    }

    /// What `removeEntry(at:)` did.
    enum Removal {
        /// The entry was the only one: drop the bucket.
        case emptied

        /// The entry is removed; `moved`, if any, moved to its position.
        case removed(moved: BucketEntry?)
    }

    /// Removes the entry at `position` by moving the last entry into its
    /// place, unless it is the only entry.
    ///
    /// - Complexity: O(1).
    mutating func removeEntry(at position: Int32) -> Removal {
        guard let last = others.popLast() else {
            assert(position == 0, "Position out of bounds")
            return .emptied
        }
        let index = Int(position)
        if index == count { return .removed(moved: nil) }
        if index == 0 {
            first = last
        } else {
            others[index - 1] = last
        }
        return .removed(moved: last)
    }
}
