// The fetch calls of GRDB apps, as static methods of the types they return:
// `Player.fetchAll(db)`, `Player.find(db, key: 1)`, `Row.fetchAll(db, sql:)`,
// `Int.fetchOne(db, sql:)`. Each one builds a request (`all()`,
// `filter(key:)`, `SQLRequest`) and runs it: one execution path.

extension FetchableRecord where Self: TableRecord {
    /// Every record of the table, in the table's order (unspecified without
    /// an `ORDER BY`: use `order(sql:)` on `all()` for one).
    ///
    /// - Throws: A `DatabaseError` (no such table, ...), or the error of a
    ///   record's decoding.
    /// - Complexity: O(n × c), where n is the number of rows and c the number of columns.
    @inlinable
    public static func fetchAll(_ db: Database) throws -> [Self] {
        try all().fetchAll(db)
    }

    /// A record of the table (the first SQLite returns), or nil when the
    /// table is empty. Only one row is read (`LIMIT 1`).
    @inlinable
    public static func fetchOne(_ db: Database) throws -> Self? {
        try all().limit(1).fetchOne(db)
    }

    /// The number of rows of the table.
    public static func fetchCount(_ db: Database) throws -> Int {
        try all().fetchCount(db)
    }

    /// The record whose primary key is `key` (a single-column key, or the
    /// rowid when the table declares no primary key), or nil when there is
    /// none.
    ///
    /// - Throws: A `DatabaseError` when the table's primary key has several
    ///   columns (filter a dictionary with `filter(key:)` for those).
    /// - Complexity: One lookup by key: O(log n).
    @inlinable
    public static func fetchOne(_ db: Database, key: some DatabaseValueConvertible) throws -> Self? {
        try filter(key: key).fetchOne(db)
    }

    /// The records whose primary keys are among `keys`, in the table's
    /// order. An empty sequence fetches nothing; a key with no row is
    /// skipped.
    ///
    /// - Complexity: O(k log n) for k keys.
    @inlinable
    public static func fetchAll<Keys: Sequence>(_ db: Database, keys: Keys) throws -> [Self]
    where Keys.Element: DatabaseValueConvertible {
        try filter(keys: keys).fetchAll(db)
    }

    /// The record whose primary key is `key`.
    ///
    /// - Throws: `RecordError.recordNotFound` when there is no such row (its
    ///   `key` names the primary key column, or the rowid), a
    ///   `DatabaseError` as `fetchOne(_:key:)`.
    public static func find(_ db: Database, key: some DatabaseValueConvertible) throws -> Self {
        if let record = try fetchOne(db, key: key) { return record }
        let column = try db.primaryKeyColumns(ofTable: databaseTableName)?.first ?? "rowid"
        throw RecordError.recordNotFound(databaseTableName: databaseTableName, key: [column: key.databaseValue])
    }
}

extension FetchableRecord {
    /// The records of an SQL query.
    ///
    /// ```swift
    /// let players = try Player.fetchAll(db, sql: "SELECT * FROM player WHERE team = ?", arguments: ["red"])
    /// ```
    ///
    /// - Throws: A `DatabaseError` for bad SQL or arguments (its message
    ///   names the SQL), or the error of a record's decoding.
    @inlinable
    public static func fetchAll(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Self] {
        try SQLRequest<Self>(sql: sql, arguments: arguments).fetchAll(db)
    }

    /// The first record of an SQL query, or nil when it returns no row.
    @inlinable
    public static func fetchOne(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Self? {
        try SQLRequest<Self>(sql: sql, arguments: arguments).fetchOne(db)
    }

    /// A cursor over the records of an SQL query, decoded one at a time as
    /// it is iterated (see `DatabaseCursor` for its lifetime).
    public static func fetchCursor(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> DatabaseCursor<Self> {
        try SQLRequest<Self>(sql: sql, arguments: arguments).fetchCursor(db)
    }
}

extension Row {
    /// The rows of an SQL query.
    ///
    /// - Complexity: O(n × c), where n is the number of rows and c the number of columns.
    public static func fetchAll(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Row] {
        try SQLRequest<Row>(sql: sql, arguments: arguments).fetchAll(db)
    }

    /// The first row of an SQL query, or nil when it returns none.
    public static func fetchOne(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Row? {
        try SQLRequest<Row>(sql: sql, arguments: arguments).fetchOne(db)
    }

    /// A cursor over the rows of an SQL query, read one at a time as it is
    /// iterated.
    public static func fetchCursor(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> DatabaseCursor<Row> {
        try SQLRequest<Row>(sql: sql, arguments: arguments).fetchCursor(db)
    }
}

extension DatabaseValueConvertible {
    /// The first column of every row of an SQL query, decoded as `Self`.
    ///
    /// ```swift
    /// let names = try String.fetchAll(db, sql: "SELECT name FROM player ORDER BY name")
    /// ```
    ///
    /// - Throws: `RowDecodingError` when a value is NULL or of another
    ///   type, a `DatabaseError` for bad SQL or arguments.
    @inlinable
    public static func fetchAll(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Self] {
        try SQLRequest<Self>(sql: sql, arguments: arguments).fetchAll(db)
    }

    /// The first column of the first row of an SQL query, decoded as
    /// `Self`, or nil when it returns no row or its value is NULL, as in
    /// GRDB.
    ///
    /// ```swift
    /// let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player")  // Int?
    /// let best = try Int.fetchOne(db, sql: "SELECT MAX(score) FROM player")  // nil when empty
    /// ```
    ///
    /// - Throws: `RowDecodingError` when the value is of another type.
    @inlinable
    public static func fetchOne(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Self? {
        try SQLRequest<Self>(sql: sql, arguments: arguments).fetchOne(db)
    }

    /// A cursor over the first column of the rows of an SQL query.
    public static func fetchCursor(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> DatabaseCursor<Self> {
        try SQLRequest<Self>(sql: sql, arguments: arguments).fetchCursor(db)
    }
}
