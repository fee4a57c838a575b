import ReactiveSQLite

/// The identity of a row in one result: its key values, compared in
/// SQLite's `BINARY` order (as `DatabaseValue` compares), then the
/// occurrence number that tells apart rows with the same key values.
///
/// A query may return several rows with the same key (the whole row of
/// `SELECT name FROM player` when two players share a name, a `--key`
/// column that is not unique): the first such row of a result is occurrence
/// 0, the next one 1, and so on, so that every key of a result is unique, as
/// the difference algorithms require.
public struct RowKey: Hashable, Comparable {
    public var values: [DatabaseValue]
    public var occurrence: Int

    public static func < (lhs: RowKey, rhs: RowKey) -> Bool {
        for (left, right) in zip(lhs.values, rhs.values) where left != right {
            return left < right
        }
        if lhs.values.count != rhs.values.count { return lhs.values.count < rhs.values.count }
        return lhs.occurrence < rhs.occurrence
    }
}
