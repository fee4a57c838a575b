import DatabaseRegions
import ReactiveSQLite

/// What `sqlite-watch` learns from the query before watching it: that it is
/// a valid read, its result columns, and how its rows are identified.
struct QueryInspection: Sendable {
    var columnNames: [String]
    var identity: RowIdentity

    /// Compiles and checks the query.
    ///
    /// - Parameter keys: The `--key` columns.
    /// - Throws: `WatchError` with status 2 for invalid SQL, a statement that
    ///   is not a read, or a key that is not a result column; the
    ///   `DatabaseError` itself when the database is locked, so that the
    ///   caller can wait and retry.
    init(sql: String, keys: [String], in db: Database) throws {
        let statement: Statement
        do {
            statement = try db.makeStatement(sql: sql)
        } catch let error as DatabaseError where !error.isLockContention {
            throw WatchError.invalidSQL(sql, error)
        }
        guard statement.isReadOnly, statement.columnCount > 0 else { throw WatchError.notARead(sql) }
        let columnNames = statement.columnNames
        for key in keys where !columnNames.contains(where: { SQLiteIdentifier.areEqual($0, key) }) {
            throw WatchError.unknownKey(key, columns: columnNames)
        }
        self.columnNames = columnNames
        identity = keys.isEmpty ? try RowIdentity.inferred(fromSQL: sql, in: db) : .columns(keys)
    }
}
