/// What the package needs to know of a table or view: its columns and its
/// primary key. Read with `PRAGMA table_list`, `table_info` and `index_list`,
/// cached per connection, and forgotten when a statement of the connection
/// changes the schema.
struct TableSchema: Sendable {
    /// The primary key of a table.
    enum PrimaryKey: Sendable, Equatable {
        /// The rowid: an `INTEGER PRIMARY KEY` column that aliases it, or no
        /// declared primary key (nil column: the hidden `rowid`).
        case rowID(column: String?)
        /// Declared key columns that are not the rowid (a WITHOUT ROWID table,
        /// a compound key, a key of another type).
        case columns([String])

        /// The columns to select and order by: the alias, `rowid`, or the key columns.
        var columnNames: [String] {
            switch self {
            case .rowID(let column): [column ?? "rowid"]
            case .columns(let columns): columns
            }
        }
    }

    /// The name as the schema spells it.
    var name: String
    var isView: Bool
    /// The visible columns, in order (empty for a view).
    var columns: [String]
    var primaryKey: PrimaryKey
}

struct SchemaCache {
    /// Keyed by lowercased name; `.some(nil)` records a missing table.
    var tables: [String: TableSchema?] = [:]
}

extension Database {
    /// The schema of a table or view, or nil when there is none with this name.
    func tableSchema(named name: String) throws -> TableSchema? {
        let key = name.asciiLowercased
        if let cached = schemaCache.tables[key] { return cached }
        let schema = try readTableSchema(named: name)
        schemaCache.tables[key] = .some(schema)
        return schema
    }

    /// The schema of a table that must exist.
    ///
    /// - Throws: `DatabaseError` (`SQLITE_ERROR`, "no such table") when there is none.
    func existingTableSchema(named name: String) throws -> TableSchema {
        guard let schema = try tableSchema(named: name), !schema.isView else {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message: "no such table: \(name)", connectionLabel: label)
        }
        return schema
    }

    private func readTableSchema(named name: String) throws -> TableSchema? {
        let quoted = SQLScanner.quote(name)
        // Columns of PRAGMA table_list: schema, name, type, ncol, wr, strict.
        guard let list = try fetchRows(sql: "PRAGMA table_list(\(quoted))").first else { return nil }
        let schemaName: String = try list[0]
        let tableName: String = try list[1]
        let type: String = try list[2]
        if type == "view" {
            return TableSchema(name: tableName, isView: true, columns: [], primaryKey: .columns([]))
        }
        let withoutRowID: Bool = try list[4]
        let qualified = SQLScanner.quote(schemaName) + "."
        // Columns of PRAGMA table_info: cid, name, type, notnull, dflt_value, pk.
        var columns: [String] = []
        var keyColumns: [(position: Int, name: String, type: String)] = []
        for row in try fetchRows(sql: "PRAGMA \(qualified)table_info(\(quoted))") {
            let column: String = try row[1]
            columns.append(column)
            let position: Int = try row[5]
            if position > 0 { keyColumns.append((position, column, try row[2])) }
        }
        keyColumns.sort { $0.position < $1.position }
        let primaryKey: TableSchema.PrimaryKey
        if withoutRowID {
            primaryKey = .columns(keyColumns.map(\.name))
        } else if keyColumns.isEmpty {
            primaryKey = .rowID(column: nil)
        } else if keyColumns.count == 1, keyColumns[0].type.asciiLowercased == "integer",
            try !hasPrimaryKeyIndex(qualified: qualified, quotedTable: quoted)
        {
            // An INTEGER PRIMARY KEY aliases the rowid, except when declared
            // DESC, which SQLite implements with a separate index (origin "pk").
            primaryKey = .rowID(column: keyColumns[0].name)
        } else {
            primaryKey = .columns(keyColumns.map(\.name))
        }
        return TableSchema(name: tableName, isView: false, columns: columns, primaryKey: primaryKey)
    }

    private func hasPrimaryKeyIndex(qualified: String, quotedTable: String) throws -> Bool {
        // Columns of PRAGMA index_list: seq, name, unique, origin, partial.
        try fetchRows(sql: "PRAGMA \(qualified)index_list(\(quotedTable))").contains { row in
            (try row[3] as String) == "pk"
        }
    }
}
