import ReactiveSQLite

/// What `sqlite-watch` learns from the query before watching it: that it is
/// a valid read, its result columns, and how its rows are identified.
public struct QueryInspection: Sendable {
    public var columnNames: [String]
    public var identity: RowIdentity

    /// Compiles and checks the query.
    ///
    /// - Parameter keys: The `--key` columns.
    /// - Throws: `WatchError` with status 2 for invalid SQL, a statement that
    ///   is not a read, or a key that is not a result column; the
    ///   `DatabaseError` itself when the database is locked, so that the
    ///   caller can wait and retry.
    public init(sql: String, keys: [String], in db: Database) throws {
        let statement: Statement
        do {
            statement = try db.makeStatement(sql: sql)
        } catch let error as DatabaseError where !error.isLockContention {
            throw WatchError.invalidSQL(sql, error)
        }
        guard statement.isReadOnly, statement.columnCount > 0 else { throw WatchError.notARead(sql) }
        let columnNames = statement.columnNames
        for key in keys where !columnNames.contains(where: { $0.isSameColumnName(as: key) }) {
            throw WatchError.unknownKey(key, columns: columnNames)
        }
        self.columnNames = columnNames
        if keys.isEmpty {
            identity = try Self.primaryKeyIdentity(sql: sql, columnNames: columnNames, in: db) ?? .wholeRow
        } else {
            identity = .keyColumns(keys)
        }
    }

    /// The primary key of the only table the query reads, when all its
    /// columns are in the result; nil otherwise.
    ///
    /// The table is found from the region the statement reads (views
    /// replaced by their tables): it is the only table of the schema whose
    /// insertions modify that region. Key columns are matched to result
    /// columns by name, so `SELECT id AS playerID FROM player` is not seen
    /// as keyed by `id`.
    private static func primaryKeyIdentity(sql: String, columnNames: [String], in db: Database) throws -> RowIdentity? {
        let region = try SQLRequest<Row>(sql: sql).databaseRegion(db)
        guard !region.isFullDatabase, !region.isEmpty else { return nil }
        let tables = try SQLRequest<String>(sql: "SELECT name FROM sqlite_master WHERE type = 'table'").fetchAll(db)
            .filter { region.isModified(byEventsOfKind: .insert(tableName: $0)) }
        guard tables.count == 1, let table = tables.first else { return nil }
        guard var keyColumns = try db.primaryKeyColumns(ofTable: table) else { return nil }
        if keyColumns.isEmpty {
            // No declared primary key: the rowid, when the query selects it.
            let rowIDNames = ["rowid", "_rowid_", "oid"]
            guard let rowID = columnNames.first(where: { name in rowIDNames.contains { name.isSameColumnName(as: $0) } })
            else { return nil }
            keyColumns = [rowID]
        }
        guard keyColumns.allSatisfy({ key in columnNames.contains { $0.isSameColumnName(as: key) } }) else { return nil }
        return .primaryKey(table: table, columns: keyColumns)
    }
}
