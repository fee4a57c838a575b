import DatabaseRegions

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
/// built when it is fetched, from the table's schema (primary key columns):
/// `SELECT * FROM "player" WHERE ... ORDER BY ... LIMIT ...`. Conditions
/// combine with `AND`, in the order they were added.
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
    ///
    /// ```swift
    /// let request = Player.all().filter(sql: "score > ?", arguments: [100])
    /// ```
    ///
    /// The condition may end with a `--` comment. Fetching throws a
    /// `DatabaseError` (`SQLITE_MISUSE`) when two conditions give one named
    /// argument two different values: a statement binds one value per name.
    public func filter(sql: String, arguments: StatementArguments = StatementArguments()) -> Self {
        var request = self
        request.filters.append(.sql(sql, arguments))
        return request
    }

    /// The request restricted to the row whose primary key is `key`: a
    /// single column key, or the rowid when the table declares no primary key.
    ///
    /// On a table whose primary key is the rowid, the request's region is
    /// row-precise (`player(*)[1]`): only changes of that row modify it.
    /// Fetching throws a `DatabaseError` when the table's primary key has
    /// several columns (use `filter(key:)` with a dictionary).
    public func filter(key: some DatabaseValueConvertible) -> Self {
        var request = self
        request.filters.append(.keys([[key.databaseValue]]))
        return request
    }

    /// The request restricted to the rows whose primary keys are among `keys`
    /// (single column keys, or rowids). An empty collection selects no row,
    /// and the request's region is then empty.
    ///
    /// On a table whose primary key is the rowid, the request's region is
    /// row-precise (`player(*)[1,2]`).
    public func filter<Keys: Sequence>(keys: Keys) -> Self where Keys.Element: DatabaseValueConvertible {
        var request = self
        request.filters.append(.keys(keys.map { [$0.databaseValue] }))
        return request
    }

    /// The request restricted to the row of a primary key given as a
    /// dictionary from column name (ASCII case-insensitive) to value: the
    /// way to filter a compound primary key.
    ///
    /// ```swift
    /// let request = Membership.filter(key: ["teamId": 1, "playerId": 2])
    /// ```
    ///
    /// A nil value matches a NULL part of the key (`IS NULL`), as in GRDB:
    /// SQLite lets the primary key of a rowid table hold NULL, and does not
    /// keep such keys unique, so the request may then select several rows.
    ///
    /// Fetching throws a `DatabaseError` when the names are not exactly the
    /// columns of the table's primary key.
    public func filter(key: [String: (any DatabaseValueConvertible)?]) -> Self {
        var request = self
        request.filters.append(.namedKey(key.mapValues { $0?.databaseValue ?? .null }))
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
    /// table declares none), in SQLite's `BINARY` collation even when a key
    /// column declares another one: text keys sort by their UTF-8 bytes,
    /// the order of `DatabaseValue`'s `<`.
    public func orderByPrimaryKey() -> Self {
        var request = self
        request.orderings.append(.primaryKey)
        return request
    }

    /// The request limited to `count` rows, after skipping `offset` rows.
    /// A later call replaces the limit.
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
    /// - Throws: `DatabaseError` when the request needs the table's primary
    ///   key (key filters, `orderByPrimaryKey()`) and the table does not
    ///   exist, or a key does not have one value per primary key column.
    public func makeSQL(_ db: Database) throws -> (sql: String, arguments: StatementArguments) {
        try makeSQL(db, selection: "*")
    }

    /// The SQL of the request, selecting `selection` (SQL: `*` for
    /// `makeSQL(_:)`) instead of `*`, and its arguments.
    func makeSQL(_ db: Database, selection: String) throws -> (sql: String, arguments: StatementArguments) {
        var sql = "SELECT " + selection + " FROM " + SQLLexer.quote(tableName)
        var loadedSchema: TableSchema?
        func schema() throws -> TableSchema {
            if let loadedSchema { return loadedSchema }
            let schema = try db.existingTableSchema(named: tableName)
            loadedSchema = schema
            return schema
        }
        let (whereClause, arguments) = try makeWhereClause(schema: schema)
        sql += whereClause
        if !orderings.isEmpty {
            var terms: [String] = []
            for ordering in orderings {
                switch ordering {
                case .sql(let term):
                    terms.append(Self.endingLineComment(term))
                case .primaryKey:
                    terms += try schema().primaryKeyColumnNames.map { SQLLexer.quote($0) + " COLLATE BINARY" }
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

    /// `DELETE FROM "player" WHERE ...`, and its arguments: the rows of the
    /// request's filters (its ordering and limit do not apply).
    func makeDeleteSQL(_ db: Database) throws -> (sql: String, arguments: StatementArguments) {
        let (whereClause, arguments) = try makeWhereClause { try db.existingTableSchema(named: tableName) }
        return ("DELETE FROM " + SQLLexer.quote(tableName) + whereClause, arguments)
    }

    /// ` WHERE ...` (empty without filters), and its arguments.
    private func makeWhereClause(
        schema: () throws -> TableSchema
    ) throws -> (sql: String, arguments: StatementArguments) {
        guard !filters.isEmpty else { return ("", StatementArguments()) }
        var arguments = StatementArguments()
        var conditions: [String] = []
        for filter in filters {
            if case .sql(let condition, let conditionArguments) = filter {
                conditions.append("(" + Self.endingLineComment(condition) + ")")
                for (name, value) in conditionArguments.namedValues {
                    if let other = arguments.namedValues[name], other != value {
                        throw DatabaseError(
                            resultCode: .SQLITE_MISUSE,
                            message: "two filters give the named argument :\(name) two values (\(other) and "
                                + "\(value)): one statement has one value per name; rename one of them")
                    }
                }
                arguments.append(contentsOf: conditionArguments)
                continue
            }
            let schema = try schema()
            let keys = try Self.keys(of: filter, in: schema)
            conditions.append(Self.keyCondition(columns: schema.primaryKeyColumnNames, keys: keys))
            for key in keys {
                // The NULL parts of a key are `IS NULL` (see `keyCondition`), with no argument.
                arguments.append(contentsOf: StatementArguments(key.filter { !$0.isNull }))
            }
        }
        return (" WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    /// A fragment of SQL followed by a new line when it may end with a `--`
    /// comment, which would hide the rest of the statement.
    private static func endingLineComment(_ fragment: String) -> String {
        fragment.contains("--") ? fragment + "\n" : fragment
    }

    /// The keys of a key filter, each with one value per primary key column.
    ///
    /// - Throws: `DatabaseError` (`SQLITE_MISUSE`) when a key does not fit
    ///   the primary key.
    private static func keys(of filter: QueryFilter, in schema: TableSchema) throws -> [[DatabaseValue]] {
        let columns = schema.primaryKeyColumnNames
        switch filter {
        case .sql:
            return []
        case .keys(let keys):
            for key in keys where key.count != columns.count {
                throw DatabaseError(
                    resultCode: .SQLITE_MISUSE,
                    message: "the primary key of \(schema.name) has \(columns.count) column(s) "
                        + "(\(columns.joined(separator: ", "))): a key of \(key.count) value(s) does not fit; "
                        + "filter a compound key with a dictionary, as in filter(key: [\"a\": 1, \"b\": 2])")
            }
            return keys
        case .namedKey(let namedValues):
            var key: [DatabaseValue] = []
            key.reserveCapacity(columns.count)
            for column in columns {
                guard let value = namedValues.first(where: { $0.key.isSameIdentifier(as: column) })?.value else {
                    break
                }
                key.append(value)
            }
            guard key.count == columns.count, namedValues.count == columns.count else {
                throw DatabaseError(
                    resultCode: .SQLITE_MISUSE,
                    message: "the primary key of \(schema.name) is (\(columns.joined(separator: ", "))): "
                        + "a key on (\(namedValues.keys.sorted().joined(separator: ", "))) does not fit")
            }
            return [key]
        case .recordKey(let encoding):
            let container = try encoding.get()
            var key: [DatabaseValue] = []
            key.reserveCapacity(columns.count)
            for column in columns {
                guard let position = container.index(ofColumn: column) else {
                    throw DatabaseError(
                        resultCode: .SQLITE_MISUSE,
                        message: "the record does not encode the column \(column) of the primary key of "
                            + "\(schema.name) (\(columns.joined(separator: ", "))): it cannot identify its row")
                }
                key.append(container.values[position])
            }
            return [key]
        }
    }

    /// `0` for no key, `"id" = ?`, `"id" IN (?, ?)`, or `(("a" = ? AND "b" = ?) OR (...))`,
    /// with `"b" IS NULL` for a NULL part of a key (a rowid table's primary
    /// key may hold NULL, which `=` never matches; as in GRDB): its argument
    /// is left out.
    private static func keyCondition(columns: [String], keys: [[DatabaseValue]]) -> String {
        guard !keys.isEmpty else { return "0" }
        let quoted = columns.map { SQLLexer.quote($0) }
        func term(_ column: Int, _ value: DatabaseValue) -> String {
            value.isNull ? "\(quoted[column]) IS NULL" : "\(quoted[column]) = ?"
        }
        if columns.count == 1 {
            let nullCount = keys.count { $0[0].isNull }
            let valueCount = keys.count - nullCount
            var conditions: [String] = []
            if valueCount == 1 { conditions.append("\(quoted[0]) = ?") }
            if valueCount > 1 {
                conditions.append(
                    "\(quoted[0]) IN (" + Array(repeating: "?", count: valueCount).joined(separator: ", ") + ")")
            }
            if nullCount > 0 { conditions.append("\(quoted[0]) IS NULL") }
            return conditions.count == 1 ? conditions[0] : "(" + conditions.joined(separator: " OR ") + ")"
        }
        let conditions = keys.map { key in
            "(" + key.indices.map { term($0, key[$0]) }.joined(separator: " AND ") + ")"
        }
        if conditions.count == 1 { return conditions[0] }
        return "(" + conditions.joined(separator: " OR ") + ")"
    }

    // MARK: - Region

    /// The region the request reads, recorded by SQLite while compiling its
    /// statement (see `FetchRequest.databaseRegion(_:)`), then refined by
    /// its key filters:
    /// - a key filter with no key selects no row: the region is empty;
    /// - when the table's primary key is the rowid, and every filter is a
    ///   key filter and no ordering is SQL, the region is restricted to the
    ///   rows of the keys (`player(*)[1,2]`). An SQL condition or ordering
    ///   may read other rows of the table (a subquery), which the recorded
    ///   region cannot tell apart, so the region then stays table-precise.
    ///
    /// - Throws: A `DatabaseError` when the SQL cannot be built or compiled.
    public func databaseRegion(_ db: Database) throws -> DatabaseRegion {
        let (sql, _) = try makeSQL(db)
        let statement = try db.cachedStatement(sql: sql)
        db.recordReadViews(of: statement)
        let region = statement.region
        var hasKeyFilter = false
        var hasSQL = orderings.contains { if case .sql = $0 { true } else { false } }
        for filter in filters {
            switch filter {
            case .sql: hasSQL = true
            case .keys(let keys): if keys.isEmpty { return DatabaseRegion() } else { hasKeyFilter = true }
            case .namedKey, .recordKey: hasKeyFilter = true
            }
        }
        guard hasKeyFilter, !hasSQL else { return region }
        let schema = try db.existingTableSchema(named: tableName)
        guard case .rowID = schema.primaryKey,
            let rowIDs = try rowIDs(in: schema),
            region.intersection(DatabaseRegion(table: schema.name)) == region
        else { return region }
        return region.intersection(DatabaseRegion(table: schema.name, rowIDs: rowIDs))
    }

    /// The rowids the key filters of a rowid table can match, or nil when a
    /// key is a text or a blob, which SQLite may convert to an integer
    /// (`"id" = '1'` matches rowid 1): the region then stays table-precise.
    private func rowIDs(in schema: TableSchema) throws -> Set<Int64>? {
        var result: Set<Int64>?
        for filter in filters {
            if case .sql = filter { continue }
            var rowIDs = Set<Int64>()
            for key in try Self.keys(of: filter, in: schema) {
                switch key[0].storage {
                case .integer(let rowID):
                    rowIDs.insert(rowID)
                case .real(let real):
                    // 1.0 matches rowid 1; 1.5 and NULL match no rowid.
                    if let rowID = Int64(exactly: real) { rowIDs.insert(rowID) }
                case .null:
                    continue
                case .text, .blob:
                    return nil
                }
            }
            result = result.map { $0.intersection(rowIDs) } ?? rowIDs
        }
        return result
    }
}

extension TableRecord {
    /// A request for every row of the table: `SELECT * FROM "player"`.
    public static func all() -> QueryInterfaceRequest<Self> {
        QueryInterfaceRequest(tableName: databaseTableName)
    }

    /// A request for the row whose primary key (or rowid) is `key`.
    /// See `QueryInterfaceRequest.filter(key:)`.
    public static func filter(key: some DatabaseValueConvertible) -> QueryInterfaceRequest<Self> {
        all().filter(key: key)
    }

    /// A request for the rows whose primary keys (or rowids) are among `keys`.
    /// See `QueryInterfaceRequest.filter(keys:)`.
    public static func filter<Keys: Sequence>(keys: Keys) -> QueryInterfaceRequest<Self>
    where Keys.Element: DatabaseValueConvertible {
        all().filter(keys: keys)
    }

    /// A request for the row of a primary key given by column name, such as
    /// a compound key. See `QueryInterfaceRequest.filter(key:)`.
    public static func filter(key: [String: (any DatabaseValueConvertible)?]) -> QueryInterfaceRequest<Self> {
        all().filter(key: key)
    }

    /// A request for the rows matching an SQL condition.
    public static func filter(sql: String, arguments: StatementArguments = StatementArguments())
        -> QueryInterfaceRequest<Self>
    {
        all().filter(sql: sql, arguments: arguments)
    }

    /// A request for every row, ordered by primary key (or rowid) in the
    /// `BINARY` collation. See `QueryInterfaceRequest.orderByPrimaryKey()`.
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
