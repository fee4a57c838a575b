/// The rows of one table that a sequence of commits changed, as the change
/// hooks tell them: what an observation needs to refetch only those rows
/// (see `IncrementalFetch`).
///
/// A superset is always correct (refetching an unchanged row finds it
/// unchanged); `unknown` is always correct too, and makes the observation
/// fetch everything.
enum ChangedRowIDs: Sendable, Equatable {
    /// Only rows of `table` changed, among `rowIDs`.
    case rowIDs(table: String, Set<Int64>)
    /// Which rows changed is not known: a change without a rowid, a change
    /// of another table, a schema change, another process's commit, or more
    /// rows than `maximumCount`.
    case unknown

    /// Beyond this number of rows, a refetch of the rows one by one costs
    /// more than it saves, and the set more memory than it is worth.
    static let maximumCount = 4_096

    /// No row changed yet.
    static func none(table: String) -> Self { .rowIDs(table: table, []) }

    /// Adds the change of row `rowID` of `table` (nil: a change without a
    /// rowid).
    ///
    /// - Complexity: Expected O(1), plus the comparison of the table names.
    mutating func insert(_ rowID: Int64?, ofTable table: String) {
        guard case .rowIDs(let trackedTable, var rowIDs) = self, let rowID,
            table.isSameIdentifier(as: trackedTable), rowIDs.count < Self.maximumCount
        else {
            self = .unknown
            return
        }
        // Released first, so that the set is modified in place.
        self = .unknown
        rowIDs.insert(rowID)
        self = .rowIDs(table: trackedTable, rowIDs)
    }

    /// Adds the changes of `other`.
    ///
    /// - Complexity: O(m), where m is the number of rowids of `other`.
    mutating func formUnion(_ other: ChangedRowIDs) {
        guard case .rowIDs(let table, var rowIDs) = self, case .rowIDs(let otherTable, let otherRowIDs) = other,
            table.isSameIdentifier(as: otherTable), rowIDs.count + otherRowIDs.count <= Self.maximumCount
        else {
            self = .unknown
            return
        }
        self = .unknown
        rowIDs.formUnion(otherRowIDs)
        self = .rowIDs(table: table, rowIDs)
    }

    /// Unites the rows of each observation of `source` with its rows in
    /// `target`.
    ///
    /// - Complexity: O(total number of rowids of `source`).
    static func merge(_ source: [Int: ChangedRowIDs], into target: inout [Int: ChangedRowIDs]) {
        for (id, rowIDs) in source {
            if target[id] == nil {
                target[id] = rowIDs
            } else {
                target[id]!.formUnion(rowIDs)
            }
        }
    }
}
