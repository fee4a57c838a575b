import DatabaseRegions

/// What the package needs to know of a table or view: its columns and its
/// primary key. Read with `PRAGMA table_list`, `table_xinfo` and `index_list`,
/// cached per connection, and forgotten when the schema changes (see
/// `SchemaCache`).
struct TableSchema: Sendable {
    /// The primary key of a table.
    enum PrimaryKey: Sendable, Equatable {
        /// The rowid: an `INTEGER PRIMARY KEY` column that aliases it, or no
        /// declared primary key (nil column: the hidden rowid, reached by
        /// `rowIDName`).
        case rowID(column: String?)
        /// Declared key columns that are not the rowid (a WITHOUT ROWID table,
        /// a compound key, a key of another type, an `INTEGER PRIMARY KEY
        /// DESC` column).
        case columns([String])
    }

    /// The name as the schema spells it.
    var name: String
    /// The schema that holds it (`main`, `temp`, an attached database's
    /// name): the one SQLite reads for the unqualified name.
    var schemaName = "main"
    var isView: Bool
    /// Whether the table is declared `WITHOUT ROWID`.
    var isWithoutRowID: Bool
    /// The columns `SELECT *` returns, in order, generated columns included
    /// (empty for a view).
    var columns: [String]
    /// The generated columns (by name, as SQLite compares identifiers), with whether each one is STORED
    /// (`true`) or VIRTUAL (`false`): `PRAGMA table_xinfo`'s `hidden` 3 or 2.
    var generatedColumns: [CaseInsensitiveName: Bool] = [:]
    /// Whether the table is a virtual table (FTS, R*Tree, any module).
    var isVirtual = false
    var primaryKey: PrimaryKey
    /// The name that reaches the rowid in SQL: `rowid`, or `_rowid_` or
    /// `oid` when a column shadows `rowid`.
    var rowIDName: String

    /// The columns that identify a row, to select, filter and order by:
    /// the rowid alias, the hidden rowid, or the key columns.
    var primaryKeyColumnNames: [String] {
        switch primaryKey {
        case .rowID(let column): [column ?? rowIDName]
        case .columns(let columns): columns
        }
    }
}
