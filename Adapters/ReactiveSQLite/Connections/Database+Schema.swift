import DatabaseRegions

extension Database {
    /// The schema of a table or view, or nil when there is none with this name.
    ///
    /// - Complexity: O(1) when cached (a hash of the name).
    func tableSchema(named name: String) throws -> TableSchema? {
        let key = CaseInsensitiveName(name)
        if let cached = schemaCache.tables[key] { return cached }
        try refreshSchemaCacheIfNeeded()
        let schema = try readTableSchema(named: name)
        schemaCache.tables[key] = .some(schema)
        return schema
    }

    /// The declared primary key columns of a table, in key order: the
    /// `INTEGER PRIMARY KEY` column that aliases the rowid, or the columns of
    /// any other key (compound, text, WITHOUT ROWID). Empty when the table
    /// declares no primary key (its rows are identified by the rowid); nil
    /// when there is no table with this name (a view has no primary key).
    ///
    /// Names compare case-insensitively, as in SQL. The answer is read from
    /// the schema cache, refreshed when the schema changed.
    ///
    /// - Throws: A `DatabaseError` when the schema cannot be read.
    public func primaryKeyColumns(ofTable name: String) throws -> [String]? {
        checkAccess()
        guard let schema = try tableSchema(named: name), !schema.isView else { return nil }
        switch schema.primaryKey {
        case .rowID(let column): return column.map { [$0] } ?? []
        case .columns(let columns): return columns
        }
    }

    /// The schema of a table that must exist.
    ///
    /// - Throws: `DatabaseError` (`SQLITE_ERROR`, "no such table") when there
    ///   is none, or when the name is a view's.
    func existingTableSchema(named name: String) throws -> TableSchema {
        if let schema = try tableSchema(named: name), !schema.isView { return schema }
        // The cache may predate a change of another connection: check before failing.
        try refreshSchemaCacheIfNeeded()
        let schema = try tableSchema(named: name)
        guard let schema else {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message: "no such table: \(name)", connectionLabel: label)
        }
        guard !schema.isView else {
            throw DatabaseError(
                resultCode: .SQLITE_ERROR,
                message: "\(schema.name) is a view, not a table: it has no primary key", connectionLabel: label)
        }
        return schema
    }

    /// The versions of the main and temporary schemas (`PRAGMA
    /// schema_version` of each): while both stay the same, an unqualified
    /// table name resolves to the same table, of the same shape. A temporary
    /// table may hide a main one of its name; the versions of attached
    /// databases are not read.
    ///
    /// - Complexity: Two pragmas, which read the databases' headers.
    func resolutionSchemaVersions() throws -> ResolutionSchemaVersions {
        ResolutionSchemaVersions(
            main: try SQLRequest<Int32>(sql: "PRAGMA main.schema_version").fetchOne(self) ?? 0,
            temp: try SQLRequest<Int32>(sql: "PRAGMA temp.schema_version").fetchOne(self) ?? 0)
    }

    /// Clears the schema cache, and the statement cache, when another
    /// connection changed the schema since they were filled; makes SQLite
    /// itself reload the schema then.
    ///
    /// SQLite compiles statements against the schema it loaded last, and only
    /// notices a newer one when a statement runs (it then recompiles it
    /// silently, with no region recorded): after a change, a statement that
    /// reads a table makes it reload the schema before anything else compiles.
    ///
    /// - Complexity: One `PRAGMA schema_version` (a read of the database
    ///   header), plus one read of `sqlite_master` when the version changed.
    func refreshSchemaCacheIfNeeded() throws {
        let version = try SQLRequest<Int32>(sql: "PRAGMA schema_version").fetchOne(self)
        guard let version, schemaCache.schemaVersion != version else { return }
        _ = try SQLRequest<Row>(sql: "SELECT 1 FROM sqlite_master LIMIT 1").fetchAll(self)
        clearSchemaCache()
        schemaCache.schemaVersion = version
    }

    private func readTableSchema(named name: String) throws -> TableSchema? {
        let quoted = SQLLexer.quote(name)
        guard let (schemaName, tableName, type, isWithoutRowID) = try readTableListEntry(named: name) else {
            return nil
        }
        if type == "view" {
            return TableSchema(
                name: tableName, isView: true, isWithoutRowID: false, columns: [], primaryKey: .columns([]),
                rowIDName: "rowid")
        }
        let qualified = SQLLexer.quote(schemaName) + "."
        // Columns of PRAGMA table_xinfo: cid, name, type, notnull, dflt_value,
        // pk, hidden (0 plain, 1 hidden column of a virtual table, 2 and 3
        // generated columns, which `SELECT *` returns).
        var columns: [String] = []
        var generatedColumns: [CaseInsensitiveName: Bool] = [:]
        var keyColumns: [(position: Int, name: String, type: String)] = []
        // An SQLite older than 3.26 has no table_xinfo, nor generated columns:
        // table_info gives the same first columns, and omits hidden ones.
        let columnPragma = SQLiteFeatures.hasTableXInfo ? "table_xinfo" : "table_info"
        for row in try fetchRows(sql: "PRAGMA \(qualified)\(columnPragma)(\(quoted))") {
            let hidden: Int = SQLiteFeatures.hasTableXInfo ? try row[6] : 0
            if hidden == 1 { continue }
            let column: String = try row[1]
            columns.append(column)
            if hidden == 2 || hidden == 3 { generatedColumns[CaseInsensitiveName(column)] = hidden == 3 }
            let position: Int = try row[5]
            if position > 0 { keyColumns.append((position, column, try row[2])) }
        }
        keyColumns.sort { $0.position < $1.position }
        let primaryKey: TableSchema.PrimaryKey
        if isWithoutRowID {
            primaryKey = .columns(keyColumns.map(\.name))
        } else if keyColumns.isEmpty {
            primaryKey = .rowID(column: nil)
        } else if keyColumns.count == 1, keyColumns[0].type.lowercasedIdentifier == "integer",
            try !hasPrimaryKeyIndex(qualified: qualified, quotedTable: quoted)
        {
            // > a PRIMARY KEY column only becomes an integer primary key if the
            // > declared type name is exactly "INTEGER" [...] "CREATE TABLE
            // > t(x INTEGER PRIMARY KEY DESC, y, z)" [...] does not cause "x" to
            // > become an alias for the rowid. https://www.sqlite.org/lang_createtable.html#rowid
            // SQLite implements that DESC key with an index of origin "pk".
            primaryKey = .rowID(column: keyColumns[0].name)
        } else {
            primaryKey = .columns(keyColumns.map(\.name))
        }
        // > If a table contains a user defined column named "rowid", "oid" or
        // > "_rowid_", then that name always refers the explicitly declared
        // > column and cannot be used to retrieve the integer rowid value.
        // https://www.sqlite.org/lang_createtable.html#rowid
        let rowIDName =
            ["rowid", "_rowid_", "oid"].first { candidate in
                !columns.contains { $0.isSameIdentifier(as: candidate) }
            } ?? "rowid"
        return TableSchema(
            name: tableName, schemaName: schemaName, isView: false, isWithoutRowID: isWithoutRowID, columns: columns,
            generatedColumns: generatedColumns, isVirtual: type == "virtual", primaryKey: primaryKey,
            rowIDName: rowIDName)
    }

    /// The schema, name, type (`table`, `view`, `virtual`, `shadow`) and
    /// WITHOUT ROWID flag of the table or view named `name`, or nil. A
    /// temporary table hides a main table of the same name, as in SQL.
    private func readTableListEntry(
        named name: String
    ) throws -> (schema: String, name: String, type: String, isWithoutRowID: Bool)? {
        if SQLiteFeatures.hasTableList {
            // Columns of PRAGMA table_list: schema, name, type, ncol, wr, strict.
            let list = try fetchRows(sql: "PRAGMA table_list(\(SQLLexer.quote(name)))")
            guard let entry = try list.first(where: { (try $0[0] as String) == "temp" }) ?? list.first else {
                return nil
            }
            return (try entry[0], try entry[1], try entry[2], try entry[4])
        }
        // An SQLite older than 3.37: the same from each schema's
        // sqlite_master, temp first. Such a library has no STRICT tables;
        // its WITHOUT ROWID tables say so at the end of their definition,
        // the only place where the keyword WITHOUT can be.
        // Columns of PRAGMA database_list: seq, name, file.
        var schemaNames = try fetchRows(sql: "PRAGMA database_list").map { row in try row[1] as String }
        if let temp = schemaNames.firstIndex(of: "temp") { schemaNames.insert(schemaNames.remove(at: temp), at: 0) }
        for schemaName in schemaNames {
            let master = schemaName == "temp" ? "sqlite_temp_master" : SQLLexer.quote(schemaName) + ".sqlite_master"
            let rows = try fetchRows(
                sql: "SELECT name, type, sql FROM \(master) WHERE name = ? COLLATE NOCASE AND type IN ('table', 'view')",
                arguments: [name])
            guard let row = rows.first else { continue }
            let type: String = try row[1]
            let definition: String = (try row[2] as String?) ?? ""
            let isVirtual = type == "table" && SQLLexer.leadingWords(of: definition, count: 2) == ["CREATE", "VIRTUAL"]
            let isWithoutRowID = type == "table" && !isVirtual && SQLLexer.containsKeyword("WITHOUT", in: definition)
            return (schemaName, try row[0], isVirtual ? "virtual" : type, isWithoutRowID)
        }
        return nil
    }

    private func hasPrimaryKeyIndex(qualified: String, quotedTable: String) throws -> Bool {
        // Columns of PRAGMA index_list: seq, name, unique, origin, partial.
        try fetchRows(sql: "PRAGMA \(qualified)index_list(\(quotedTable))").contains { row in
            (try row[3] as String) == "pk"
        }
    }
}

/// The versions of the schemas in which an unqualified name is resolved
/// first (see `Database.resolutionSchemaVersions()`).
struct ResolutionSchemaVersions: Equatable, Sendable {
    var main: Int32
    var temp: Int32
}
