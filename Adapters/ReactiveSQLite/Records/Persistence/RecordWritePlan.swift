
/// What the records of one type need to write their table, for one list of
/// encoded columns: the table's schema, where its primary key is among the
/// columns, and each statement, compiled the first time it is needed.
///
/// The statements bind the record's values in the order of its columns: the
/// value of column `i` is parameter `?(i + 1)`, wherever the statement uses
/// it (`UPDATE t SET b = ?2 WHERE id = ?1`). Binding needs no other array
/// than the container's values.
///
/// A connection keeps its plans in `Database.recordWritePlans` and forgets
/// them with its statement cache (a schema change, a statement recompiled by
/// SQLite, the connection closing).
final class RecordWritePlan {
    /// The table name, as the record type gives it.
    let tableName: String
    /// The encoded columns, without duplicates (ASCII case-insensitive).
    let columns: [String]
    /// The table's schema.
    let table: TableSchema
    /// The positions in `columns` of the primary key columns (the rowid of a
    /// table without primary key), in key order; nil when the record does not
    /// encode all of them.
    let keyPositions: [Int]?
    /// The position in `columns` of the column that holds the rowid: the
    /// `INTEGER PRIMARY KEY`, or the rowid of a table without primary key
    /// when the record encodes it.
    let rowIDPosition: Int?

    /// By conflict resolution: none, then rollback, abort, fail, ignore, replace.
    private var insertStatements: [Statement?] = Array(repeating: nil, count: 6)
    private var insertReturningRowStatement: Statement?
    private var upsertStatement: Statement?
    private var updateAllStatement: Statement?
    private var updateStatements: [UInt64: Statement] = [:]
    private var deleteStatement: Statement?
    private var existsStatement: Statement?

    init(tableName: String, columns: [String], table: TableSchema) {
        self.tableName = tableName
        self.columns = columns
        self.table = table
        func position(of column: String) -> Int? {
            columns.firstIndex { $0.isSameIdentifier(as: column) }
        }
        var keyPositions: [Int] = []
        for column in table.primaryKeyColumnNames {
            guard let position = position(of: column) else { break }
            keyPositions.append(position)
        }
        self.keyPositions = keyPositions.count == table.primaryKeyColumnNames.count ? keyPositions : nil
        if case .rowID(let column) = table.primaryKey {
            rowIDPosition = position(of: column ?? table.rowIDName)
        } else {
            rowIDPosition = nil
        }
    }

    /// The name of the `INTEGER PRIMARY KEY` column, if any.
    var rowIDColumn: String? {
        if case .rowID(let column) = table.primaryKey { return column }
        return nil
    }

    /// Whether the rows of the table have a rowid.
    var hasRowID: Bool { !table.isWithoutRowID }

    // MARK: - Statements

    /// The statement of `kind`, compiled through the connection's statement
    /// cache the first time, then kept here. A statement that a cursor is
    /// iterating (the user ran the same SQL) is not reused: the cache
    /// compiles another one.
    ///
    /// - Complexity: O(1) when compiled, but for a `.positions` update.
    func statement(_ kind: RecordStatementKind, in db: Database) throws -> Statement {
        switch kind {
        case .insert(let conflict):
            let slot: Int
            switch conflict {
            case nil: slot = 0
            case .rollback: slot = 1
            case .abort: slot = 2
            case .fail: slot = 3
            case .ignore: slot = 4
            case .replace: slot = 5
            }
            if let statement = insertStatements[slot], !statement.isBusy { return statement }
            let statement = try db.cachedStatement(sql: sql(kind))
            insertStatements[slot] = statement
            return statement
        case .insertReturningRow:
            return try cached(&insertReturningRowStatement, kind, db)
        case .upsert:
            return try cached(&upsertStatement, kind, db)
        case .update(.all):
            return try cached(&updateAllStatement, kind, db)
        case .update(.mask(let mask)):
            if let statement = updateStatements[mask], !statement.isBusy { return statement }
            let statement = try db.cachedStatement(sql: sql(kind))
            updateStatements[mask] = statement
            return statement
        case .update(.positions):
            return try db.cachedStatement(sql: sql(kind))
        case .delete:
            return try cached(&deleteStatement, kind, db)
        case .exists:
            return try cached(&existsStatement, kind, db)
        }
    }

    @inline(__always)
    private func cached(_ slot: inout Statement?, _ kind: RecordStatementKind, _ db: Database) throws -> Statement {
        if let statement = slot, !statement.isBusy { return statement }
        let statement = try db.cachedStatement(sql: sql(kind))
        slot = statement
        return statement
    }

    // MARK: - SQL

    /// The SQL of a statement. Parameters are numbered after the columns.
    func sql(_ kind: RecordStatementKind) -> String {
        let table = SQLLexer.quote(tableName)
        switch kind {
        case .insert(let conflict):
            let verb = conflict.map { "INSERT OR \($0.rawValue) INTO " } ?? "INSERT INTO "
            return verb + table + insertedColumnsAndValues
        case .insertReturningRow:
            var sql = "INSERT INTO " + table + insertedColumnsAndValues + " RETURNING *"
            // The hidden rowid, which `*` leaves out, for a record that reads it.
            if case .rowID(column: nil) = self.table.primaryKey { sql += ", " + self.table.rowIDName }
            return sql
        case .upsert:
            let keyPositions = Set(self.keyPositions ?? [])
            var assignments = columns.indices.filter { !keyPositions.contains($0) }.map { position in
                let column = SQLLexer.quote(columns[position])
                return "\(column) = excluded.\(column)"
            }
            if assignments.isEmpty {
                // Only key columns: the conflicting row is kept as is, and
                // still returned, for `didInsert`.
                let column = SQLLexer.quote(self.table.primaryKeyColumnNames[0])
                assignments = ["\(column) = \(column)"]
            }
            var sql = "INSERT INTO " + table + insertedColumnsAndValues + " ON CONFLICT DO UPDATE SET "
                + assignments.joined(separator: ", ")
            if hasRowID { sql += " RETURNING " + self.table.rowIDName }
            return sql
        case .update(let updated):
            let keyPositions = self.keyPositions ?? []
            var positions: [Int]
            switch updated {
            case .all:
                positions = Array(columns.indices)
            case .mask(let mask):
                positions = columns.indices.filter { $0 < 64 && mask & (1 << UInt64($0)) != 0 }
            case .positions(let selected):
                positions = selected
            }
            positions.removeAll { keyPositions.contains($0) }
            // Nothing but the key: set the key to itself, so that a missing
            // row is still noticed (no change) and an existing one reported.
            if positions.isEmpty, let first = keyPositions.first { positions = [first] }
            let assignments = positions.map { "\(SQLLexer.quote(columns[$0])) = ?\($0 + 1)" }
            return "UPDATE " + table + " SET " + assignments.joined(separator: ", ") + " WHERE " + keyCondition
        case .delete:
            return "DELETE FROM " + table + " WHERE " + keyCondition
        case .exists:
            return "SELECT EXISTS (SELECT 1 FROM " + table + " WHERE " + keyCondition + ")"
        }
    }

    /// ` ("a", "b") VALUES (?1, ?2)`.
    private var insertedColumnsAndValues: String {
        " (" + columns.map { SQLLexer.quote($0) }.joined(separator: ", ") + ") VALUES ("
            + columns.indices.map { "?\($0 + 1)" }.joined(separator: ", ") + ")"
    }

    /// `"id" = ?1`, or `"a" = ?1 AND "b" = ?3`. Only built when
    /// `keyPositions` is not nil.
    private var keyCondition: String {
        let keyColumns = table.primaryKeyColumnNames
        return zip(keyColumns, keyPositions ?? []).map { column, position in
            "\(SQLLexer.quote(column)) = ?\(position + 1)"
        }.joined(separator: " AND ")
    }

    // MARK: - Keys

    /// The record's primary key values, or nil when it does not encode them all.
    func keyValues(in container: PersistenceContainer) -> [DatabaseValue]? {
        keyPositions.map { $0.map { container.values[$0] } }
    }

    /// Whether every key value of the record is NULL: no row has this key.
    func keyIsNull(in container: PersistenceContainer) -> Bool {
        guard let keyPositions else { return true }
        return keyPositions.allSatisfy { container.values[$0].isNull }
    }

    /// The key, by column, for `RecordError.recordNotFound`.
    func keyDescription(in container: PersistenceContainer) -> [String: DatabaseValue] {
        var key: [String: DatabaseValue] = [:]
        for (column, position) in zip(table.primaryKeyColumnNames, keyPositions ?? []) {
            key[column] = container.values[position]
        }
        return key
    }
}
