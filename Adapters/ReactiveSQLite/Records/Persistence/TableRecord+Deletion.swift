extension TableRecord {
    /// The number of keys one statement of `deleteAll(_:keys:)` deletes at
    /// most: far below SQLite's limit on parameters, and one compiled
    /// statement for every full batch.
    static var deletionBatchSize: Int { 500 }

    /// Deletes every row of the table: `DELETE FROM "player"`.
    ///
    /// - Returns: The number of deleted rows.
    /// - Throws: A `DatabaseError` (no such table, a foreign key violation...).
    /// - Complexity: One statement.
    @discardableResult
    public static func deleteAll(_ db: Database) throws -> Int {
        try runDeletion(db, all())
    }

    /// Deletes the row whose primary key (or rowid, for a table without
    /// primary key) is `key`: `DELETE FROM "player" WHERE "id" = ?`.
    ///
    /// - Returns: Whether a row was deleted.
    /// - Throws: A `DatabaseError`, also (`SQLITE_MISUSE`) when the primary
    ///   key has several columns: use `deleteOne(_:key:)` with a dictionary.
    /// - Complexity: One statement.
    @discardableResult
    public static func deleteOne(_ db: Database, key: some DatabaseValueConvertible) throws -> Bool {
        try runDeletion(db, filter(key: key)) > 0
    }

    /// Deletes the row of a primary key given by column name (ASCII
    /// case-insensitive), such as a compound key:
    /// `Membership.deleteOne(db, key: ["teamId": 1, "playerId": 2])`.
    ///
    /// - Returns: Whether a row was deleted.
    /// - Throws: A `DatabaseError`, also (`SQLITE_MISUSE`) when the names are
    ///   not exactly the columns of the primary key.
    /// - Complexity: One statement.
    @discardableResult
    public static func deleteOne(_ db: Database, key: [String: (any DatabaseValueConvertible)?]) throws -> Bool {
        try runDeletion(db, filter(key: key)) > 0
    }

    /// Deletes the rows whose primary keys (or rowids) are among `keys`:
    /// `DELETE FROM "player" WHERE "id" IN (?, ?, ...)`, one statement per
    /// 500 keys.
    ///
    /// - Returns: The number of deleted rows (a key given twice counts once).
    /// - Throws: A `DatabaseError`, also (`SQLITE_MISUSE`) when the primary
    ///   key has several columns. The batches before a failing one are
    ///   deleted: run it in a transaction (`write`) to keep all or nothing.
    /// - Complexity: O(k) and ⌈k / 500⌉ statements, where k is the number
    ///   of keys.
    @discardableResult
    public static func deleteAll<Keys: Sequence>(_ db: Database, keys: Keys) throws -> Int
    where Keys.Element: DatabaseValueConvertible {
        let keys = Array(keys)
        guard !keys.isEmpty else { return 0 }
        var count = 0
        var start = 0
        while start < keys.count {
            let end = min(start + deletionBatchSize, keys.count)
            count += try runDeletion(db, filter(keys: keys[start..<end]))
            start = end
        }
        return count
    }

    /// Runs the deletion of the rows of `request`'s filters.
    private static func runDeletion(_ db: Database, _ request: QueryInterfaceRequest<Self>) throws -> Int {
        let (sql, arguments) = try request.makeDeleteSQL(db)
        try db.cachedStatement(sql: sql).execute(arguments: arguments)
        return db.changesCount
    }
}
