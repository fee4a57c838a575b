/// The registrations of one rowid of a table, split by column restriction so that
/// an update of the row visits the registrations of all columns without the
/// others (it finds the column-restricted registrations it concerns through
/// `TableBuckets.rowColumns`, by updated column).
///
/// Every registration of the rowid has exactly one entry here, in `allColumns` or
/// in `someColumns`, as its `BucketEntry.coversAllColumns` says. Positions
/// are those of the entry in its `RowBucket`.
struct RowRegistrations: Sendable {
    /// Registrations of all the columns of the row: every event kind on the row
    /// concerns them.
    private(set) var allColumns: RowBucket?

    /// Registrations of some columns of the row, once each: insertions and
    /// deletions of the row concern them.
    private(set) var someColumns: RowBucket?

    /// A superset of the columns 0 ..< 64 that the registrations of `someColumns`
    /// cover, as the first word of a `ColumnMask`: an update of the row
    /// looks for registrations of updated columns 0 ..< 64 only where a bit is
    /// set. Removals leave bits set until `someColumns` empties; a stale bit
    /// only costs a lookup that finds nothing.
    private(set) var someColumnsFirstWord: UInt64 = 0

    /// Creates the registrations of a rowid with one entry.
    init(_ entry: BucketEntry) {
        if entry.coversAllColumns {
            allColumns = RowBucket(entry)
        } else {
            someColumns = RowBucket(entry)
            someColumnsFirstWord = entry.firstColumnWord
        }
    }

    /// Whether the rowid has no registration.
    var isEmpty: Bool { allColumns == nil && someColumns == nil }

    /// Whether some registration of the rowid covers some columns only.
    var hasColumnRestrictedRegistrations: Bool { someColumns != nil }

    /// Calls `body` with each entry, of all columns then of some columns.
    ///
    /// - Complexity: O(number of registrations of the rowid).
    @inline(__always)
    func forEach(_ body: (BucketEntry) -> Void) {
        allColumns?.forEach(body)
        someColumns?.forEach(body)
    }

    /// Appends an entry to the bucket its column restriction selects and
    /// returns its position there.
    ///
    /// - Complexity: Amortized O(1).
    mutating func appendEntry(_ entry: BucketEntry) -> Int32 {
        if entry.coversAllColumns {
            return allColumns.appendEntry(entry)
        } else {
            someColumnsFirstWord |= entry.firstColumnWord
            return someColumns.appendEntry(entry)
        }
    }

    /// Removes the entry at `position` of the bucket of registrations of all
    /// columns (`coversAllColumns`) or of some columns.
    ///
    /// - Returns: The entry that moved to `position`, if any.
    /// - Complexity: O(1).
    mutating func removeEntry(at position: Int32, coversAllColumns: Bool) -> BucketEntry? {
        if coversAllColumns {
            return allColumns.removeEntry(at: position)
        } else {
            defer { if someColumns == nil { someColumnsFirstWord = 0 } }
            return someColumns.removeEntry(at: position)
        }
    }
}

extension Optional where Wrapped == RowBucket {
    /// Appends an entry, creating the bucket if needed, and returns its position.
    ///
    /// - Complexity: Amortized O(1).
    mutating func appendEntry(_ entry: BucketEntry) -> Int32 {
        if self == nil {
            self = RowBucket(entry)
            return 0
        }
        return self!.appendEntry(entry)
    }

    /// Removes the entry at `position`, dropping the bucket if it empties.
    ///
    /// - Returns: The entry that moved to `position`, if any.
    /// - Complexity: O(1).
    mutating func removeEntry(at position: Int32) -> BucketEntry? {
        switch self!.removeEntry(at: position) {
        case .emptied:
            self = nil
            return nil
        case let .removed(moved):
            return moved
        }
    }
}
