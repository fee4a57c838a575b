/// What a record learns when it is inserted: its rowid, and the values that
/// were written. `MutablePersistableRecord.didInsert(_:)` receives it.
///
/// ```swift
/// struct Player: Encodable, MutablePersistableRecord {
///     var id: Int64?            // INTEGER PRIMARY KEY: nil is auto-incremented
///     var name: String
///
///     mutating func didInsert(_ inserted: InsertionSuccess) {
///         id = inserted.rowID
///     }
/// }
/// ```
public struct InsertionSuccess: Sendable {
    /// The rowid of the inserted row: the value of its `INTEGER PRIMARY KEY`
    /// column when the table has one. 0 for a `WITHOUT ROWID` table, whose
    /// rows have no rowid.
    ///
    /// See <https://www.sqlite.org/lang_createtable.html#rowid>.
    public var rowID: Int64

    /// The name of the table's `INTEGER PRIMARY KEY` column (the rowid
    /// alias), as the schema spells it; nil when the table has none.
    public var rowIDColumn: String?

    /// The columns and values that were inserted. The column that holds the
    /// rowid, when the record encodes it (the rowid alias, or the rowid of a
    /// table without primary key), has the inserted rowid: not nil.
    public var persistenceContainer: PersistenceContainer

    /// Creates a value (records' own tests, wrappers of other records).
    public init(rowID: Int64, rowIDColumn: String?, persistenceContainer: PersistenceContainer) {
        self.rowID = rowID
        self.rowIDColumn = rowIDColumn
        self.persistenceContainer = persistenceContainer
    }
}
