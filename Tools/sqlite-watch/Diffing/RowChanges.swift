import ReactiveSQLite

/// What changed in the result of the watched query between two fetches.
///
/// Positions are 1-based ranks in a result (position 1 is the first row),
/// and are only known with `--ordered`. Without it, each list is in key order.
struct RowChanges {
    /// A row that appeared, or disappeared.
    struct Entry {
        var row: Row
        /// The row's position in the new result (insertion) or in the old
        /// one (deletion); nil without `--ordered`.
        var position: Int?
    }

    /// A row whose identity persisted and whose values changed.
    struct Update {
        var row: Row
        var previous: Row
        /// The indexes of the columns whose values changed, ascending.
        var changedColumns: [Int]
        /// The position in the new result; nil without `--ordered`.
        var position: Int?
    }

    /// A row that changed position (`--ordered` only). It may also be updated.
    struct Move {
        var row: Row
        var from: Int
        var to: Int
    }

    var inserted: [Entry] = []
    var updated: [Update] = []
    var deleted: [Entry] = []
    var moved: [Move] = []

    var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && moved.isEmpty
    }

    /// `1 inserted, 2 updated`: the non-empty counts.
    var summary: String {
        [("inserted", inserted.count), ("updated", updated.count), ("deleted", deleted.count), ("moved", moved.count)]
            .filter { $0.1 > 0 }
            .map { "\($0.1) \($0.0)" }
            .joined(separator: ", ")
    }
}
