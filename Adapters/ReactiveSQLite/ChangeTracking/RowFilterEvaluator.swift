import DatabaseRegions
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// Evaluates `RowFilter`s on the rows that the pre-update hook shows, with
/// SQLite's own semantics: a private in-memory database holds a copy of
/// each filtered table (its `CREATE TABLE`), the row is copied into it, and
/// each filter's `SELECT 1 FROM table WHERE ...` runs there.
///
/// Hooks must not run SQL on the connection that calls them; this one is
/// another connection, used only inside the writer's hooks, on the
/// writer's queue. An answer it cannot give (a function or collation the
/// copy lacks, a definition it cannot create, an error) is nil: the
/// caller notifies, as without a filter.
final class RowFilterEvaluator {
    private var connection: OpaquePointer?
    /// Whether the connection could not be opened: nothing is evaluated.
    private var isBroken = false

    /// A copy of a table: the definition it was made from, and the
    /// statements that empty it and insert a row into it.
    private struct Copy {
        var definition: String
        var clear: OpaquePointer
        var insert: OpaquePointer?
        /// The stored columns the insertion binds, with the indices the
        /// pre-update hook gives them, and whether the rowid comes first.
        var insertedColumns: [(old: Int32, new: Int32, hasDefault: Bool)]
        var bindsRowID: Bool
    }

    /// The copies, by table (names compare as bytes, as SQLite's do).
    private var copies: [CaseInsensitiveName: Copy] = [:]
    /// The text encoding of the observed database (`PRAGMA encoding`), which
    /// the private database takes before its first table: BINARY compares
    /// texts as bytes in the database's encoding.
    var encoding: String?
    /// The number of filters run, for tests of the values index.
    private(set) var evaluationCount = 0
    /// The prepared statement of each filter, nil when it does not compile.
    private var statements: [RowFilter: OpaquePointer?] = [:]
    /// The prepared statement of each filter with a window: its clause,
    /// and the row not after the window's boundary (`RowWindow`).
    private var windowStatements: [RowFilter: OpaquePointer?] = [:]

    /// The row a filter is asked about.
    enum Side {
        /// The row before the change (`sqlite3_preupdate_old`).
        case old
        /// The row after the change (`sqlite3_preupdate_new`).
        case new

        /// The value of a stored column on this side of the row that the
        /// pre-update hook of `connection` shows (`old` and `new`: its
        /// indices there); nil when it cannot be read, or when it is the old
        /// NULL of a column with a default, which may be a column that the
        /// row's record lacks (see `TableHookInfo.columnsWithDefault`).
        func value(in connection: OpaquePointer, old: Int32, new: Int32, hasDefault: Bool) -> OpaquePointer? {
            var value: OpaquePointer?
            let code = self == .old
                ? sqlite3_preupdate_old(connection, old, &value)
                : sqlite3_preupdate_new(connection, new, &value)
            guard code == SQLITE_OK, let value else { return nil }
            if self == .old, hasDefault, sqlite3_value_type(value) == SQLITE_NULL { return nil }
            return value
        }
    }

    deinit {
        close()
    }

    /// Forgets every copy (the schema changed): the next evaluation makes
    /// them again from the new definitions.
    func reset() {
        close()
        isBroken = false
    }

    private func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        for statement in windowStatements.values { sqlite3_finalize(statement) }
        windowStatements = [:]
        for copy in copies.values {
            sqlite3_finalize(copy.clear)
            sqlite3_finalize(copy.insert)
        }
        copies = [:]
        if let connection { sqlite3_close_v2(connection) }
        connection = nil
    }

    /// Whether each filter matches one side of the row that the pre-update
    /// hook of `hookConnection` shows, in the filters' table (`info`
    /// describes it); nil where it cannot tell.
    ///
    /// - Parameters:
    ///   - filters: Filters of the table the hook reports.
    ///   - boundaries: For each filter, the values of its window's
    ///     boundary (`RowWindow`), or nil: a row that sorts after the
    ///     boundary does not match.
    ///   - likeIsUnknown: Whether the queries' `LIKE` may not be the
    ///     private database's (`ConnectionSettings`): a filter that uses
    ///     it cannot tell.
    func matches(
        _ filters: [RowFilter], boundaries: [[DatabaseValue]?], side: Side, key: Int64, info: TableHookInfo,
        hookConnection: OpaquePointer, likeIsUnknown: Bool
    ) -> [Bool?] {
        guard let table = filters.first?.table,
            let connection = copyRow(of: table, side: side, key: key, info: info, hookConnection: hookConnection)
        else { return filters.map { _ in nil } }
        return zip(filters, boundaries).map { filter, boundary in
            if filter.usesLike && likeIsUnknown { return nil }
            let statement: OpaquePointer?
            if let boundary, let window = filter.window {
                statement = windowStatement(of: filter, in: connection)
                guard let statement, boundary.count == window.terms.count else { return nil }
                for (index, value) in boundary.enumerated() {
                    let parameter = sqlite3_bind_parameter_index(statement, ":" + RowWindow.parameterName(index))
                    guard parameter > 0, Statement.bind(value, to: statement, at: parameter) == SQLITE_OK else { return nil }
                }
            } else {
                statement = self.statement(of: filter, in: connection)
            }
            guard let statement else { return nil }
            defer { sqlite3_reset(statement) }
            evaluationCount += 1
            switch sqlite3_step(statement) {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            default: return nil
            }
        }
    }

    /// The prepared statement of a filter with its window, made once.
    private func windowStatement(of filter: RowFilter, in connection: OpaquePointer) -> OpaquePointer? {
        if let statement = windowStatements[filter] { return statement }
        let statement = filter.window.flatMap { window in
            prepare(
                filter,
                // A line break ends a comment that ends the clause.
                sql: "SELECT 1 FROM \(filter.fromText) WHERE (\(filter.whereText)\n) AND NOT (\(window.afterBoundarySQL))",
                in: connection)
        }
        windowStatements[filter] = statement
        return statement
    }

    /// Copies one side of the hook's row into the copy of its table, alone;
    /// returns the private connection, or nil when it cannot.
    private func copyRow(
        of table: String, side: Side, key: Int64, info: TableHookInfo, hookConnection: OpaquePointer
    ) -> OpaquePointer? {
        guard let definition = info.createTableSQL, let connection = open() else { return nil }
        let name = CaseInsensitiveName(table)
        if let copy = copies[name], !copy.definition.utf8.elementsEqual(definition.utf8) {
            // Another definition than the copy's: make every copy again.
            reset()
            return copyRow(of: table, side: side, key: key, info: info, hookConnection: hookConnection)
        }
        if copies[name] == nil {
            guard let copy = makeCopy(table, definition: definition, info: info, in: connection) else { return nil }
            copies[name] = copy
        }
        guard let copy = copies[name], let insert = copy.insert else { return nil }
        let cleared = sqlite3_step(copy.clear) == SQLITE_DONE
        sqlite3_reset(copy.clear)
        guard cleared else { return nil }
        var index: Int32 = 1
        if copy.bindsRowID {
            sqlite3_bind_int64(insert, index, key)
            index += 1
        }
        // The values of the hook are valid only during the hook: unbound
        // before returning.
        defer { sqlite3_clear_bindings(insert) }
        for column in copy.insertedColumns {
            guard let value = side.value(in: hookConnection, old: column.old, new: column.new, hasDefault: column.hasDefault),
                sqlite3_bind_value(insert, index, value) == SQLITE_OK
            else { return nil }
            index += 1
        }
        let inserted = sqlite3_step(insert) == SQLITE_DONE
        sqlite3_reset(insert)
        return inserted ? connection : nil
    }

    /// The values of a pinned column's constants as the column compares
    /// them: each converted with the column's affinity (stored in a
    /// temporary table's column of that affinity, as SQLite converts a
    /// constant compared with a column), under its collation; nil when one
    /// cannot be converted, or is NULL (which `=` never matches).
    ///
    /// - Parameter affinity: `INTEGER`, `REAL`, `NUMERIC`, `TEXT` or `BLOB`.
    func indexedValues(
        of constants: [PinnedColumn.Constant], affinity: String, collation: PinnedColumn.Collation
    ) -> Set<IndexedValue>? {
        guard ["INTEGER", "REAL", "NUMERIC", "TEXT", "BLOB"].contains(affinity), let connection = open() else { return nil }
        let table = "temp.\"reactivesqlite pin \(affinity)\""
        guard sqlite3_exec(connection, "CREATE TABLE IF NOT EXISTS \(table)(v \(affinity))", nil, nil, nil) == SQLITE_OK
        else { return nil }
        var values: Set<IndexedValue> = []
        for constant in constants {
            guard sqlite3_exec(connection, "DELETE FROM \(table)", nil, nil, nil) == SQLITE_OK else { return nil }
            var insert: OpaquePointer?
            let sql: String
            switch constant {
            case .literal(let literal): sql = "INSERT INTO \(table) VALUES (\(literal))"
            case .value: sql = "INSERT INTO \(table) VALUES (?)"
            }
            guard sqlite3_prepare_v2(connection, sql, -1, &insert, nil) == SQLITE_OK, let insert else {
                sqlite3_finalize(insert)
                return nil
            }
            defer { sqlite3_finalize(insert) }
            if case .value(let value) = constant, Statement.bind(value, to: insert, at: 1) != SQLITE_OK { return nil }
            guard sqlite3_step(insert) == SQLITE_DONE else { return nil }
            var select: OpaquePointer?
            guard sqlite3_prepare_v2(connection, "SELECT v FROM \(table)", -1, &select, nil) == SQLITE_OK, let select else {
                sqlite3_finalize(select)
                return nil
            }
            defer { sqlite3_finalize(select) }
            guard sqlite3_step(select) == SQLITE_ROW, let value = sqlite3_column_value(select, 0),
                sqlite3_value_type(value) != SQLITE_NULL, let key = PinnedColumn.indexedValue(value, collation: collation)
            else { return nil }
            values.insert(key)
        }
        return values
    }

    /// Forgets the statements of a filter that no observation has any longer.
    func forget(_ filter: RowFilter) {
        if let statement = statements.removeValue(forKey: filter) { sqlite3_finalize(statement) }
        if let statement = windowStatements.removeValue(forKey: filter) { sqlite3_finalize(statement) }
    }

    /// The prepared statement of a filter, made once.
    private func statement(of filter: RowFilter, in connection: OpaquePointer) -> OpaquePointer? {
        if let statement = statements[filter] { return statement }
        let statement = prepare(filter, sql: filter.sql, in: connection)
        statements[filter] = statement
        return statement
    }

    private func open() -> OpaquePointer? {
        if let connection { return connection }
        guard !isBroken else { return nil }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(":memory:", &handle, flags, nil) == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            isBroken = true
            return nil
        }
        // The copy holds rows that the table accepted: no CHECK to run again.
        sqlite3_exec(handle, "PRAGMA ignore_check_constraints = ON", nil, nil, nil)
        if let encoding, ["UTF-8", "UTF-16le", "UTF-16be"].contains(encoding) {
            sqlite3_exec(handle, "PRAGMA encoding = '\(encoding)'", nil, nil, nil)
        }
        connection = handle
        return handle
    }

    /// Creates the copy of a table in the private database.
    private func makeCopy(_ table: String, definition: String, info: TableHookInfo, in connection: OpaquePointer) -> Copy? {
        guard sqlite3_exec(connection, definition, nil, nil, nil) == SQLITE_OK else { return nil }
        var clear: OpaquePointer?
        guard sqlite3_prepare_v2(connection, "DELETE FROM \(SQLLexer.quote(table))", -1, &clear, nil) == SQLITE_OK,
            let clear
        else { return nil }
        // The stored columns that are not generated (generated ones are
        // computed again), and the rowid of a table with a hidden one, by
        // the first of its names that no column takes (`CREATE TABLE
        // t(rowid TEXT)` leaves it `_rowid_` and `oid`; none left, SQL
        // cannot read it, and it is not copied).
        let generated = Set(info.generatedColumns)
        let inserted = info.storedColumns.filter { !generated.contains($0.name) }
        let rowIDName = ["rowid", "_rowid_", "oid"].first { !info.columns.contains($0) }
        let bindsRowID = !info.withoutRowID && info.rowIDColumns.count == 1 && rowIDName != nil
        let names = (bindsRowID ? [rowIDName!] : []) + inserted.map { SQLLexer.quote($0.name) }
        let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
        var insert: OpaquePointer?
        let sql = "INSERT INTO \(SQLLexer.quote(table)) (\(names.joined(separator: ", "))) VALUES (\(placeholders))"
        if sqlite3_prepare_v2(connection, sql, -1, &insert, nil) != SQLITE_OK {
            sqlite3_finalize(insert)
            insert = nil
        }
        return Copy(
            definition: definition, clear: clear, insert: insert,
            insertedColumns: inserted.map { ($0.old, $0.new, info.columnsWithDefault?.contains($0.name) ?? true) },
            bindsRowID: bindsRowID)
    }

    /// The statement of a filter, its arguments bound; nil when it does
    /// not compile in the private database, or an argument is missing.
    private func prepare(_ filter: RowFilter, sql: String, in connection: OpaquePointer) -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            return nil
        }
        let count = sqlite3_bind_parameter_count(statement)
        var positional = 0
        for index in 1...max(count, 1) where count > 0 {
            let value: DatabaseValue?
            if let name = sqlite3_bind_parameter_name(statement, index) {
                let name = String(String(cString: name).dropFirst())
                // A window's boundary: bound at each evaluation.
                if name.hasPrefix("reactivesqlite_window_") { continue }
                value = filter.arguments.namedValues[name]
            } else {
                value = positional < filter.arguments.values.count ? filter.arguments.values[positional] : nil
                positional += 1
            }
            guard let value, Statement.bind(value, to: statement, at: index) == SQLITE_OK else {
                sqlite3_finalize(statement)
                return nil
            }
        }
        return statement
    }
}
