// The fetching methods of requests, one group per kind of element. They all
// run through `Statement.step()`: one execution path.

extension FetchRequest where Element == Row {
    /// Every row of the request.
    ///
    /// - Complexity: O(n × c), where n is the number of rows and c the number of columns.
    public func fetchAll(_ db: Database) throws -> [Row] {
        try prepareStatement(db).fetching { statement in
            var rows: [Row] = []
            while try statement.step() {
                rows.append(statement.currentRow())
            }
            return rows
        }
    }

    /// The first row of the request, or nil when there is none.
    ///
    /// A statement that writes (`INSERT ... RETURNING`) makes all its
    /// changes at its first step, and outside of a transaction commits
    /// when `fetchOne` resets it: a commit that fails there throws.
    public func fetchOne(_ db: Database) throws -> Row? {
        try prepareStatement(db).fetching { statement in
            try statement.step() ? statement.currentRow() : nil
        }
    }

    /// A cursor over the rows of the request, which reads them one at a time
    /// as it is iterated, without loading them all.
    public func fetchCursor(_ db: Database) throws -> DatabaseCursor<Row> {
        DatabaseCursor(statement: try prepareStatement(db)) { $0.currentRow() }
    }
}

extension FetchRequest where Element: DatabaseValueConvertible {
    /// The first column of every row, decoded as `Element`.
    ///
    /// - Throws: `RowDecodingError` when a value cannot be decoded (a NULL
    ///   for a non-optional type, a value of another type).
    @inlinable
    public func fetchAll(_ db: Database) throws -> [Element] {
        try prepareStatement(db).fetching { statement in
            try Self.checkHasColumn(statement)
            var values: [Element] = []
            while try statement.step() {
                values.append(try Self.decodeFirstColumn(statement))
            }
            return values
        }
    }

    /// The first column of the first row, decoded as `Element`, or nil when
    /// there is no row, or when its value is NULL and `Element` is not
    /// optional, as in GRDB (`SELECT MAX(score) FROM player` of an empty
    /// table gives nil).
    ///
    /// A statement that writes (`INSERT ... RETURNING id`) makes all its
    /// changes at its first step, and outside of a transaction commits
    /// when `fetchOne` resets it: a commit that fails there throws.
    ///
    /// - Throws: `RowDecodingError` when the value is of another type.
    @inlinable
    public func fetchOne(_ db: Database) throws -> Element? {
        try prepareStatement(db).fetching { statement in
            try Self.checkHasColumn(statement)
            guard try statement.step() else { return nil }
            let value = statement.columnValue(at: 0)
            if let decoded = Element.fromDatabaseValue(value) { return decoded }
            if value.isNull { return nil }
            throw RowDecodingError.valueMismatch(
                Element.self, value: value, column: statement.columnNames[0], sql: statement.sql)
        }
    }

    /// A cursor over the first column of the rows, decoded as `Element`.
    public func fetchCursor(_ db: Database) throws -> DatabaseCursor<Element> {
        let statement = try prepareStatement(db)
        try Self.checkHasColumn(statement)
        return DatabaseCursor(statement: statement) { try Self.decodeFirstColumn($0) }
    }

    @usableFromInline
    static func checkHasColumn(_ statement: Statement) throws {
        guard statement.columnCount > 0 else {
            statement.reset()
            throw RowDecodingError(
                kind: .columnNotFound, column: "#0", sql: statement.sql,
                message: "the statement returns no column")
        }
    }

    @inlinable @inline(__always)
    static func decodeFirstColumn(_ statement: Statement) throws -> Element {
        let value = statement.columnValue(at: 0)
        guard let decoded = Element.fromDatabaseValue(value) else {
            throw RowDecodingError.valueMismatch(
                Element.self, value: value, column: statement.columnNames[0], sql: statement.sql)
        }
        return decoded
    }
}

extension FetchRequest where Element: FetchableRecord {
    /// Every row of the request, decoded as a record.
    ///
    /// The row handed to `init(row:)` reads the statement in place, and
    /// serves the whole fetch unless the record keeps it (a kept row keeps
    /// its own copy of the values).
    ///
    /// - Throws: The first error thrown by `init(row:)`, or a `DatabaseError`.
    @inlinable
    public func fetchAll(_ db: Database) throws -> [Element] {
        try prepareStatement(db).fetching { statement in
            guard try statement.step() else { return [] }
            var statementRow = statement.makeStatementRow()
            var records: [Element] = []
            repeat {
                records.append(try statement.decodeRecord(Element.self, from: &statementRow))
            } while try statement.step()
            return records
        }
    }

    /// The first row of the request decoded as a record, or nil when there is none.
    ///
    /// A statement that writes (`INSERT ... RETURNING *`) makes all its
    /// changes at its first step, and outside of a transaction commits
    /// when `fetchOne` resets it: a commit that fails there throws.
    @inlinable
    public func fetchOne(_ db: Database) throws -> Element? {
        try prepareStatement(db).fetching { statement in
            guard try statement.step() else { return nil }
            var statementRow = statement.makeStatementRow()
            return try statement.decodeRecord(Element.self, from: &statementRow)
        }
    }

    /// A cursor over the records of the request, decoded one at a time as it
    /// is iterated.
    public func fetchCursor(_ db: Database) throws -> DatabaseCursor<Element> {
        var statementRow: StatementRow?
        return DatabaseCursor(statement: try prepareStatement(db)) { statement in
            if statementRow == nil { statementRow = statement.makeStatementRow() }
            return try statement.decodeRecord(Element.self, from: &statementRow!)
        }
    }
}
