/// A request defined by raw SQL and its arguments.
///
/// ```swift
/// let names = try SQLRequest<String>(sql: "SELECT name FROM player ORDER BY name").fetchAll(db)
/// let row = try SQLRequest<Row>(sql: "SELECT * FROM player WHERE id = ?", arguments: [1]).fetchOne(db)
/// let count = try SQLRequest<Row>(sql: "SELECT * FROM player WHERE score > ?", arguments: [100]).fetchCount(db)
/// ```
///
/// The statement is compiled through the connection's statement cache.
public struct SQLRequest<Element>: FetchRequest {
    /// The SQL of the request: exactly one statement.
    public var sql: String
    /// The arguments of the SQL.
    public var arguments: StatementArguments

    /// Creates a request from SQL and arguments.
    public init(sql: String, arguments: StatementArguments = StatementArguments()) {
        self.sql = sql
        self.arguments = arguments
    }

    /// The SQL and arguments, as given.
    public func makeSQL(_ db: Database) throws -> (sql: String, arguments: StatementArguments) {
        (sql, arguments)
    }
}
