import DatabaseRegions

/// How the rows of a query are recognized from one result to the next, so
/// that a row whose values changed is reported as updated rather than as a
/// deletion and an insertion.
///
/// ```swift
/// let identity = try dbQueue.read { db in
///     try RowIdentity.inferred(fromSQL: "SELECT * FROM player", in: db)
/// }
/// // .primaryKey(table: "player", columns: ["id"])
/// ```
///
/// Rows whose key values repeat in one result (a key that is not unique,
/// NULL keys, all the values of two equal rows) are told apart by their
/// rank among the rows with the same key: the first of them is matched to
/// the first of the previous result, and so on. A differ never fails on
/// them (see `RowDiffer`).
public enum RowIdentity: Hashable, Sendable {
    /// The primary key of the only table the query reads, when all its
    /// columns are result columns (see ``inferred(fromSQL:in:)``).
    case primaryKey(table: String, columns: [String])
    /// Result columns chosen by the caller (`sqlite-watch --key`).
    case columns([String])
    /// No key: a row is all its values, so a changed row is a deletion and
    /// an insertion.
    case allValues

    /// The key columns, or nil for all values.
    public var columns: [String]? {
        switch self {
        case .primaryKey(_, let columns), .columns(let columns): columns
        case .allValues: nil
        }
    }

    /// The indexes of the key columns among `columnNames` (ASCII
    /// case-insensitive, the leftmost column wins, as SQLite resolves
    /// names), or nil when the identity is all values or a key column is
    /// not in `columnNames`.
    ///
    /// - Complexity: O(k × c), where k is the number of key columns and c
    ///   the number of column names.
    public func columnIndexes(in columnNames: [String]) -> [Int]? {
        guard let columns else { return nil }
        var indexes: [Int] = []
        for column in columns {
            guard let index = columnNames.firstIndex(where: { SQLiteIdentifier.areEqual($0, column) }) else {
                return nil
            }
            indexes.append(index)
        }
        return indexes
    }

    /// The identity of the rows of a query: the primary key of the only
    /// table it reads when every primary key column is a result column
    /// (matched by name, so `SELECT id AS playerID FROM player` is not
    /// keyed by `id`; for a table without a declared primary key, the rowid
    /// when the query selects it as `rowid`, `_rowid_` or `oid`), and
    /// ``allValues`` otherwise.
    ///
    /// The table is found from the region the statement reads (views
    /// replaced by their tables): it is the only table of the schema whose
    /// insertions concern that region.
    ///
    /// - Throws: The `DatabaseError` of SQL that does not compile.
    /// - Complexity: One compilation of the query, and one schema query per
    ///   table of the schema.
    public static func inferred(fromSQL sql: String, in db: Database) throws -> RowIdentity {
        let statement = try db.makeStatement(sql: sql)
        let columnNames = statement.columnNames
        let region = try SQLRequest<Row>(sql: sql).databaseRegion(db)
        guard !region.isFullDatabase, !region.isEmpty else { return .allValues }
        let tables = try SQLRequest<String>(sql: "SELECT name FROM sqlite_master WHERE type = 'table'").fetchAll(db)
            .filter { region.isModified(byEventsOfKind: .insert(tableName: $0)) }
        guard tables.count == 1, let table = tables.first,
            var keyColumns = try db.primaryKeyColumns(ofTable: table)
        else { return .allValues }
        let isResultColumn = { (name: String) in columnNames.contains { SQLiteIdentifier.areEqual($0, name) } }
        if keyColumns.isEmpty {
            // No declared primary key: the rowid, when the query selects it.
            let rowIDNames = ["rowid", "_rowid_", "oid"]
            guard let rowID = columnNames.first(where: { name in
                rowIDNames.contains { SQLiteIdentifier.areEqual(name, $0) }
            }) else { return .allValues }
            keyColumns = [rowID]
        }
        guard keyColumns.allSatisfy(isResultColumn) else { return .allValues }
        return .primaryKey(table: table, columns: keyColumns)
    }
}
