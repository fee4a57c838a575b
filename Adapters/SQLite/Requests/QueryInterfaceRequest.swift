import DatabaseRegions

/// A condition of a `QueryInterfaceRequest`.
enum QueryFilter: Sendable {
    case sql(String, StatementArguments)
    /// Primary key values; each key is one value per primary key column.
    case keys([[DatabaseValue]])
}

/// An ordering term of a `QueryInterfaceRequest`.
enum QueryOrdering: Sendable {
    case sql(String)
    case primaryKey
}

/// A request on the table of a `TableRecord` type, built from
/// `Player.all()`, `Player.filter(key:)`, `Player.filter(keys:)`,
/// `Player.orderByPrimaryKey()` and refined with `filter(sql:arguments:)`,
/// `order(sql:)` and `limit(_:offset:)`.
///
/// ```swift
/// let best = try Player.all()
///     .filter(sql: "score > ?", arguments: [100])
///     .order(sql: "score DESC")
///     .limit(10)
///     .fetchAll(db)
/// ```
///
/// The request is a value: each method returns a new request. Its SQL is
/// built when it is fetched, from the table's schema (primary key columns).
public struct QueryInterfaceRequest<Element>: FetchRequest {
    /// The table the request reads.
    public let tableName: String
    var filters: [QueryFilter] = []
    var orderings: [QueryOrdering] = []
    var limit: (count: Int, offset: Int?)?

    init(tableName: String) {
        self.tableName = tableName
    }

    // MARK: - Refining

    /// The request with an additional SQL condition (`WHERE` clause), combined
    /// with the previous ones by `AND`.
    public func filter(sql: String, arguments: StatementArguments = StatementArguments()) -> Self {
        var request = self
        request.filters.append(.sql(sql, arguments))
        return request
    }

    /// The request restricted to the row whose primary key is `key` (a single
    /// column key, or the rowid when the table has no primary key).
    ///
    /// On a table whose primary key is the rowid, the request's region is
    /// row-precise: it is modified only by changes of that row.
    public func filter(key: some DatabaseValueConvertible) -> Self {
        var request = self
        request.filters.append(.keys([[key.databaseValue]]))
        return request
    }

    /// The request restricted to the rows whose primary keys are among `keys`
    /// (single column keys). An empty collection selects no row.
    public func filter<Keys: Sequence>(keys: Keys) -> Self where Keys.Element: DatabaseValueConvertible {
        var request = self
        request.filters.append(.keys(keys.map { [$0.databaseValue] }))
        return request
    }

    /// The request restricted to the row of a compound primary key, given
    /// as a dictionary from column name to value.
    public func filter(key: [String: (any DatabaseValueConvertible)?]) -> Self {
        var request = self
        let columns = key.keys.sorted()
        request.filters.append(.sql(
            columns.map { "\(SQLScanner.quote($0)) = ?" }.joined(separator: " AND "),
            StatementArguments(columns.map { key[$0]! })))
        return request
    }

    /// The request with an additional ordering (`ORDER BY` term), applied
    /// after the previous ones.
    public func order(sql: String) -> Self {
        var request = self
        request.orderings.append(.sql(sql))
        return request
    }

    /// The request ordered by every primary key column (the rowid when the
    /// table has none), in SQLite's `BINARY` collation even when a key column
    /// declares another one.
    public func orderByPrimaryKey() -> Self {
        var request = self
        request.orderings.append(.primaryKey)
        return request
    }

    /// The request limited to `count` rows, after skipping `offset` rows.
    public func limit(_ count: Int, offset: Int? = nil) -> Self {
        var request = self
        request.limit = (count, offset)
        return request
    }

    /// The same request, fetching another type of element.
    ///
    /// ```swift
    /// let rows = try Player.all().asRequest(of: Row.self).fetchAll(db)
    /// ```
    public func asRequest<T>(of type: T.Type) -> QueryInterfaceRequest<T> {
        var request = QueryInterfaceRequest<T>(tableName: tableName)
        request.filters = filters
        request.orderings = orderings
        request.limit = limit
        return request
    }

    // MARK: - SQL

    /// `SELECT * FROM "player" WHERE ... ORDER BY ... LIMIT ...`, and its arguments.
    ///
    /// - Throws: `DatabaseError` when the table does not exist, or when a key
    ///   does not have one value per primary key column.
    public func makeSQL(_ db: Database) throws -> (sql: String, arguments: StatementArguments) {
        let table = SQLScanner.quote(tableName)
        var sql = "SELECT * FROM \(table)"
        var arguments = StatementArguments()
        var schema: TableSchema?
        func tableSchema() throws -> TableSchema {
            if let schema { return schema }
            let loaded = try db.existingTableSchema(named: tableName)
            schema = loaded
            return loaded
        }
        if !filters.isEmpty {
            var conditions: [String] = []
            for filter in filters {
                switch filter {
                case .sql(let condition, let conditionArguments):
                    conditions.append("(\(condition))")
                    arguments.append(contentsOf: conditionArguments)
                case .keys(let keys):
                    let columns = try tableSchema().primaryKey.columnNames
                    conditions.append(try Self.keyCondition(columns: columns, keys: keys, table: tableName))
                    for key in keys { arguments.append(contentsOf: StatementArguments(key)) }
                }
            }
            sql += " WHERE " + conditions.joined(separator: " AND ")
        }
        if !orderings.isEmpty {
            var terms: [String] = []
            for ordering in orderings {
                switch ordering {
                case .sql(let term):
                    terms.append(term)
                case .primaryKey:
                    terms += try tableSchema().primaryKey.columnNames.map { "\(SQLScanner.quote($0)) COLLATE BINARY" }
                }
            }
            sql += " ORDER BY " + terms.joined(separator: ", ")
        }
        if let limit {
            sql += " LIMIT \(limit.count)"
            if let offset = limit.offset { sql += " OFFSET \(offset)" }
        }
        return (sql, arguments)
    }

    private static func keyCondition(columns: [String], keys: [[DatabaseValue]], table: String) throws -> String {
        guard !keys.isEmpty else { return "0" }
        for key in keys where key.count != columns.count {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE,
                message: "the primary key of \(table) has \(columns.count) column(s) (\(columns.joined(separator: ", "))): "
                    + "a key with \(key.count) value(s) does not fit")
        }
        if columns.count == 1 {
            let column = SQLScanner.quote(columns[0])
            if keys.count == 1 { return "\(column) = ?" }
            return "\(column) IN (" + Array(repeating: "?", count: keys.count).joined(separator: ", ") + ")"
        }
        let one = "(" + columns.map { "\(SQLScanner.quote($0)) = ?" }.joined(separator: " AND ") + ")"
        return "(" + Array(repeating: one, count: keys.count).joined(separator: " OR ") + ")"
    }

    // MARK: - Region

    /// The region the request reads. When the request filters its table by
    /// integer keys of a rowid primary key, and reads no other table, the
    /// region is restricted to those rows (`player(*)[1,2]`).
    public func databaseRegion(_ db: Database) throws -> DatabaseRegion {
        let (sql, _) = try makeSQL(db)
        let region = try db.cachedStatement(sql: sql).region
        guard let rowIDs = try keyRowIDs(db), region.intersection(DatabaseRegion(table: tableName)) == region else {
            return region
        }
        return region.intersection(DatabaseRegion(table: tableName, rowIDs: rowIDs))
    }

    /// The rowids the request is restricted to, when it filters a rowid key
    /// by integer values; nil otherwise.
    private func keyRowIDs(_ db: Database) throws -> Set<Int64>? {
        var result: Set<Int64>?
        for filter in filters {
            guard case .keys(let keys) = filter else { continue }
            guard case .rowID = try db.existingTableSchema(named: tableName).primaryKey else { return nil }
            var rowIDs = Set<Int64>()
            for key in keys {
                switch key[0].storage {
                case .integer(let rowID): rowIDs.insert(rowID)
                case .null: continue  // matches no row
                default: return nil   // SQLite may convert it: stay table-precise
                }
            }
            result = result.map { $0.intersection(rowIDs) } ?? rowIDs
        }
        return result
    }
}

extension TableRecord {
    /// A request for every row of the table.
    public static func all() -> QueryInterfaceRequest<Self> {
        QueryInterfaceRequest(tableName: databaseTableName)
    }

    /// A request for the row whose primary key is `key`.
    public static func filter(key: some DatabaseValueConvertible) -> QueryInterfaceRequest<Self> {
        all().filter(key: key)
    }

    /// A request for the rows whose primary keys are among `keys`.
    public static func filter<Keys: Sequence>(keys: Keys) -> QueryInterfaceRequest<Self>
    where Keys.Element: DatabaseValueConvertible {
        all().filter(keys: keys)
    }

    /// A request for the row of a compound primary key.
    public static func filter(key: [String: (any DatabaseValueConvertible)?]) -> QueryInterfaceRequest<Self> {
        all().filter(key: key)
    }

    /// A request for the rows matching an SQL condition.
    public static func filter(sql: String, arguments: StatementArguments = StatementArguments())
        -> QueryInterfaceRequest<Self>
    {
        all().filter(sql: sql, arguments: arguments)
    }

    /// A request for every row, ordered by primary key.
    public static func orderByPrimaryKey() -> QueryInterfaceRequest<Self> {
        all().orderByPrimaryKey()
    }

    /// A request for every row, ordered by an SQL term.
    public static func order(sql: String) -> QueryInterfaceRequest<Self> {
        all().order(sql: sql)
    }

    /// A request for `count` rows after skipping `offset` rows.
    public static func limit(_ count: Int, offset: Int? = nil) -> QueryInterfaceRequest<Self> {
        all().limit(count, offset: offset)
    }
}
