import DatabaseRegions

/// A request that fetches values of type `Element`: rows, values, or records.
///
/// `SQLRequest` and the requests of `TableRecord` types (`Player.all()`) are
/// fetch requests. Every request has `fetchAll`, `fetchOne`, `fetchCount`,
/// `fetchCursor` and `databaseRegion(_:)`, whatever its element:
/// - `Row`;
/// - a `DatabaseValueConvertible` type, or an `Optional` of one (the first
///   column of each row);
/// - a `FetchableRecord` type.
public protocol FetchRequest<Element>: DatabaseRegionConvertible, Sendable {
    /// The type of the fetched values.
    associatedtype Element

    /// The SQL of the request and its arguments.
    ///
    /// - Throws: A `DatabaseError` when the request cannot be expressed
    ///   (a table that does not exist, a key that does not fit the primary key).
    func makeSQL(_ db: Database) throws -> (sql: String, arguments: StatementArguments)
}

extension FetchRequest {
    /// The region the request reads, recorded by SQLite while compiling its
    /// statement: the tables and columns it reads, joins and subqueries
    /// included, views replaced by their base tables.
    ///
    /// - Throws: A `DatabaseError` when the SQL does not compile.
    public func databaseRegion(_ db: Database) throws -> DatabaseRegion {
        let (sql, _) = try makeSQL(db)
        let statement = try db.cachedStatement(sql: sql)
        db.recordReadViews(of: statement)
        return statement.region
    }

    /// Compiles the request (through the statement cache) and binds its arguments.
    ///
    /// - Throws: A `DatabaseError` when the SQL does not compile, or when the
    ///   arguments do not fit its parameters (`SQLITE_RANGE`), before anything runs.
    @usableFromInline
    func prepareStatement(_ db: Database) throws -> Statement {
        let (sql, arguments) = try makeSQL(db)
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        return statement
    }

    /// The number of rows the request returns, counted by SQLite without
    /// fetching them: the request's statement runs as a subquery of
    /// `SELECT COUNT(*) FROM (...)`. A statement that cannot be a subquery
    /// (a `PRAGMA`, an `INSERT ... RETURNING`) runs, and its rows are
    /// counted as they come, without being decoded.
    ///
    /// ```swift
    /// let count = try SQLRequest<Row>(sql: "SELECT * FROM player WHERE score > ?", arguments: [100]).fetchCount(db)
    /// ```
    ///
    /// - Throws: A `DatabaseError` when the SQL does not compile, when the
    ///   arguments do not fit (before anything runs), or when SQLite fails.
    public func fetchCount(_ db: Database) throws -> Int {
        let (sql, arguments) = try makeSQL(db)
        // The request's own statement checks the SQL holds one statement and
        // its arguments fit, with errors that show the SQL as written, and
        // gives its SQL without the comments and blanks that follow it.
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        // Line breaks keep a trailing `--` comment away from the parenthesis.
        let countSQL = "SELECT COUNT(*) FROM (\n" + SQLLexer.trimmingTrailingSemicolons(statement.sql) + "\n)"
        let countStatement: Statement
        do {
            countStatement = try db.cachedStatement(sql: countSQL)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            // Not a SELECT: count the rows of the statement itself.
            return try statement.fetching { statement in
                var count = 0
                while try statement.step() { count += 1 }
                return count
            }
        }
        try countStatement.setArguments(arguments)
        return try countStatement.fetching { countStatement in
            guard try countStatement.step(), case .integer(let count) = countStatement.columnValue(at: 0).storage
            else { return 0 }
            return Int(count)
        }
    }
}
