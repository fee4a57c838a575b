extension DatabaseRegion {
    /// Whether events of the given kind can modify the region.
    ///
    /// An insertion or a deletion modifies a region that contains the table
    /// (whatever its columns and rows). An update modifies it when the region
    /// contains all the columns of the table, or at least one of the updated
    /// columns. The full database is modified by every kind, the empty region
    /// by none. Names compare without regard to ASCII case.
    ///
    /// ```swift
    /// let region = DatabaseRegion(table: "player", columns: ["score"], rowIDs: [1])
    /// region.isModified(byEventsOfKind: .insert(tableName: "Player"))                           // true
    /// region.isModified(byEventsOfKind: .update(tableName: "player", columnNames: ["name"]))    // false
    /// region.isModified(byEventsOfKind: .update(tableName: "player", columnNames: ["SCORE"]))   // true
    /// ```
    ///
    /// - Parameter kind: A kind of event.
    /// - Returns: Whether some event of this kind can modify the region.
    /// - Complexity: O(1 + u), where u is the number of updated columns.
    public func isModified(byEventsOfKind kind: DatabaseEventKind) -> Bool {
        guard let tableRegions else { return true }
        guard let table = tableRegions[CaseInsensitiveName(kind.tableName)] else { return false }
        return table.isModified(byEventsOfKind: kind)
    }

    /// Whether the event modifies the region.
    ///
    /// The event must be of a kind that modifies the region (see
    /// `isModified(byEventsOfKind:)`), and when the region restricts the
    /// event's table to some rows, the event's rowid must be one of them. An
    /// event without a rowid (a `WITHOUT ROWID` table) matches at table level,
    /// whatever rows the region is restricted to.
    ///
    /// ```swift
    /// let region = DatabaseRegion(table: "player", rowIDs: [1])
    /// region.isModified(by: DatabaseEvent(kind: .delete(tableName: "player"), rowID: 1))   // true
    /// region.isModified(by: DatabaseEvent(kind: .delete(tableName: "player"), rowID: 2))   // false
    /// region.isModified(by: DatabaseEvent(kind: .delete(tableName: "player"), rowID: nil)) // true
    /// ```
    ///
    /// - Parameter event: An event.
    /// - Returns: Whether the event modifies the region.
    /// - Complexity: O(1 + u), where u is the number of updated columns.
    public func isModified(by event: DatabaseEvent) -> Bool {
        guard let tableRegions else { return true }
        guard let table = tableRegions[CaseInsensitiveName(event.kind.tableName)] else { return false }
        return table.matches(rowID: event.rowID) && table.isModified(byEventsOfKind: event.kind)
    }
}
