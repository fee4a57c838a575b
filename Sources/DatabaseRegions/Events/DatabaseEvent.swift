/// One row changed by a statement: the kind of change and the row's rowid.
///
/// For an update, the kind's column names are those whose value changed when
/// that is known, otherwise all the columns the statement updates. The rowid
/// is `nil` for tables declared `WITHOUT ROWID`: such an event then matches
/// regions at table level, whatever rows they are restricted to.
///
/// ```swift
/// let event = DatabaseEvent(kind: .delete(tableName: "player"), rowID: 42)
/// DatabaseRegion(table: "player", rowIDs: [42]).isModified(by: event) // true
/// DatabaseRegion(table: "player", rowIDs: [7]).isModified(by: event)  // false
/// ```
///
/// Events compare exactly as written, like `DatabaseEventKind`.
public struct DatabaseEvent: Hashable, Sendable {
    /// What the event does to its table.
    public var kind: DatabaseEventKind

    /// The rowid of the changed row, or `nil` for a `WITHOUT ROWID` table.
    public var rowID: Int64?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - kind: What the event does to its table.
    ///   - rowID: The rowid of the changed row, or `nil` for a
    ///     `WITHOUT ROWID` table (the event then matches at table level).
    public init(kind: DatabaseEventKind, rowID: Int64?) {
        self.kind = kind
        self.rowID = rowID
    }
}
