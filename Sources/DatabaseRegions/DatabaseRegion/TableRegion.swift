/// The part of one table that a region contains: columns x rows.
///
/// `nil` means "all" for both dimensions. Invariant: a set is never empty
/// (a table region with no column or no row is dropped from its region).
struct TableRegion: Hashable, Sendable {
    /// The columns, or `nil` for all columns.
    var columns: Set<CaseInsensitiveName>?

    /// The rowids, or `nil` for all rows.
    var rowIDs: Set<Int64>?

    init(columns: Set<CaseInsensitiveName>?, rowIDs: Set<Int64>?) {
        assert(columns?.isEmpty != true && rowIDs?.isEmpty != true, "TableRegion must not be empty")
        self.columns = columns
        self.rowIDs = rowIDs
    }

    /// Columns unite, rows unite; "all" absorbs any set.
    ///
    /// - Complexity: O(c + r), the sizes of the sets involved.
    func union(_ other: TableRegion) -> TableRegion {
        TableRegion(
            columns: Self.union(columns, other.columns),
            rowIDs: Self.union(rowIDs, other.rowIDs))
    }

    /// Columns intersect, rows intersect, "all" being the identity; `nil` when
    /// the result contains no column or no row.
    ///
    /// - Complexity: O(min(c1, c2) + min(r1, r2)), the sizes of the sets involved.
    func intersection(_ other: TableRegion) -> TableRegion? {
        let columns = Self.intersection(columns, other.columns)
        let rowIDs = Self.intersection(rowIDs, other.rowIDs)
        if columns?.isEmpty == true || rowIDs?.isEmpty == true { return nil }
        return TableRegion(columns: columns, rowIDs: rowIDs)
    }

    /// Whether events of this kind, on this table, can modify this table region.
    ///
    /// - Complexity: O(u), where u is the number of updated columns.
    func isModified(byEventsOfKind kind: DatabaseEventKind) -> Bool {
        switch kind {
        case .insert, .delete:
            return true
        case let .update(_, columnNames):
            guard let columns else { return true }
            return columnNames.contains { columns.contains(CaseInsensitiveName($0)) }
        }
    }

    /// Whether a change of the row `rowID` (nil: unknown row) can modify this table region.
    ///
    /// - Complexity: O(1).
    func matches(rowID: Int64?) -> Bool {
        guard let rowID, let rowIDs else { return true }
        return rowIDs.contains(rowID)
    }

    private static func union<Element>(_ lhs: Set<Element>?, _ rhs: Set<Element>?) -> Set<Element>? {
        guard let lhs, let rhs else { return nil }
        return lhs.union(rhs)
    }

    /// `nil` (all) is the identity.
    private static func intersection<Element>(_ lhs: Set<Element>?, _ rhs: Set<Element>?) -> Set<Element>? {
        guard let lhs else { return rhs }
        guard let rhs else { return lhs }
        return lhs.count <= rhs.count ? lhs.intersection(rhs) : rhs.intersection(lhs)
    }
}
