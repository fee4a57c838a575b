import ReactiveSQLite

/// What changed in the result of the watched query between two fetches.
///
/// Positions are 1-based ranks in a result (position 1 is the first row),
/// and are only known with `--ordered`. Without it, each list is in key order.
public struct RowChanges: Sendable {
    /// A row that appeared, or disappeared.
    public struct Entry: Sendable {
        public var row: Row
        /// The row's position in the new result (insertion) or in the old
        /// one (deletion); nil without `--ordered`.
        public var position: Int?
    }

    /// A row whose identity persisted and whose values changed.
    public struct Update: Sendable {
        public var row: Row
        public var previous: Row
        /// The indexes of the columns whose values changed, ascending.
        public var changedColumns: [Int]
        /// The position in the new result; nil without `--ordered`.
        public var position: Int?
    }

    /// A row that changed position (`--ordered` only). It may also be updated.
    public struct Move: Sendable {
        public var row: Row
        public var from: Int
        public var to: Int
    }

    public var inserted: [Entry] = []
    public var updated: [Update] = []
    public var deleted: [Entry] = []
    public var moved: [Move] = []

    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && moved.isEmpty
    }

    /// `1 inserted, 2 updated`: the non-empty counts.
    public var summary: String {
        [("inserted", inserted.count), ("updated", updated.count), ("deleted", deleted.count), ("moved", moved.count)]
            .filter { $0.1 > 0 }
            .map { "\($0.1) \($0.0)" }
            .joined(separator: ", ")
    }
}
