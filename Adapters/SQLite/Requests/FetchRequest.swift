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
        return try db.cachedStatement(sql: sql).region
    }

    /// Compiles the request (through the statement cache) and binds its arguments.
    func prepareStatement(_ db: Database) throws -> Statement {
        let (sql, arguments) = try makeSQL(db)
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        return statement
    }

    /// The number of rows the request returns, counted by SQLite without
    /// fetching them (`SELECT COUNT(*) FROM (...)`).
    ///
    /// - Throws: A `DatabaseError` when the SQL does not compile or run.
    public func fetchCount(_ db: Database) throws -> Int {
        let (sql, arguments) = try makeSQL(db)
        let statement = try db.cachedStatement(sql: "SELECT COUNT(*) FROM (\(SQLScanner.trimmingTrailingSemicolons(sql)))")
        try statement.setArguments(arguments)
        defer { statement.reset() }
        guard try statement.step(), case .integer(let count) = statement.columnValue(at: 0).storage else {
            return 0
        }
        return Int(count)
    }
}
