/// The kind of a change to a database table: an insertion, a deletion, or an
/// update of some columns.
///
/// Kinds are plain values describing what a statement can do or did. They
/// compare exactly as written: `.insert(tableName: "player")` and
/// `.insert(tableName: "Player")` are different values, although both
/// modify the same regions (see `DatabaseRegion.isModified(byEventsOfKind:)`,
/// which compares names as SQLite does).
///
/// ```swift
/// let kind = DatabaseEventKind.update(tableName: "player", columnNames: ["score"])
/// DatabaseRegion(table: "player", columns: ["score"]).isModified(byEventsOfKind: kind) // true
/// DatabaseRegion(table: "player", columns: ["name"]).isModified(byEventsOfKind: kind)  // false
/// ```
public enum DatabaseEventKind: Hashable, Sendable {
    /// Rows are inserted into the table.
    case insert(tableName: String)

    /// Rows are deleted from the table.
    case delete(tableName: String)

    /// Rows of the table are updated.
    ///
    /// `columnNames` are the columns whose value changed when that is known,
    /// otherwise all the columns the statement updates.
    case update(tableName: String, columnNames: Set<String>)

    /// The name of the table the event changes, as it was given.
    ///
    /// - Complexity: O(1).
    public var tableName: String {
        switch self {
        case let .insert(tableName), let .delete(tableName), let .update(tableName, _):
            tableName
        }
    }
}
