import DatabaseRegions
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// What the change hooks need to know of a table the running statement
/// writes, read before the statement runs: hooks must not run SQL.
///
/// Cached by the broker per table, and forgotten when the schema changes.
struct TableHookInfo {
    /// The schema that holds the table (`main`, `temp`, an attached
    /// database's name), as a C string: the hooks also report the rows of
    /// tables of the same name in other schemas (a temporary table that
    /// hides a main one, or is hidden by it), whose columns this does not
    /// describe (see `describes(rowsOf:)`).
    var schemaName: [CChar]
    /// The columns, lowercased, in declaration order (generated ones included).
    var columns: [String]
    var withoutRowID: Bool
    /// The names an UPDATE reports when it changes the rowid: `rowid`
    /// (whatever name was used in SQL) and the column that aliases it.
    var rowIDColumns: Set<String>
    /// The stored columns, with the indices that `sqlite3_preupdate_old`
    /// and `sqlite3_preupdate_new` give them (see `PreUpdateColumnLayout`).
    var storedColumns: [(old: Int32, new: Int32, name: String)]
    /// VIRTUAL generated columns: no record holds them, so an update of
    /// a stored column they are computed from (`sources`, lowercased) is a
    /// potential change of them; of any stored column when the sources are
    /// unknown (nil: a definition that could not be read).
    var virtualColumns: [(name: String, sources: Set<String>?)]
    /// Every generated column, VIRTUAL or STORED: the authorizer never
    /// reports them among the columns an UPDATE sets.
    var generatedColumns: [String]
    /// For a virtual table, the prefix of its shadow tables' names
    /// (`document_`, lowercased), through whose writes its changes show.
    var shadowTablePrefix: [CChar]?
    /// For a virtual table, whether the database holds shadow tables of it.
    var hasShadowTables = false
    /// Update-hook path only: whether the table has a unique index besides
    /// its rowid, on whose conflicts a REPLACE deletes a row that the
    /// update hook does not report.
    var hasUniqueIndex = false
    /// Update-hook path only: whether a constraint of the table says
    /// `ON CONFLICT REPLACE`, so that any INSERT or UPDATE may replace.
    var replacesOnConflict = false
    /// Whether the definitions of the table or of its triggers mention
    /// `FAIL` (`ON CONFLICT FAIL`, `RAISE(FAIL, ...)`): a statement that
    /// fails on it may keep the changes it made before failing.
    var mayFailKeepingChanges = false
    /// The table's `CREATE TABLE` statement (the temporary table's when
    /// one hides a main one), for the copies of `RowFilterEvaluator`; nil
    /// for a virtual table, or when it cannot be read.
    var createTableSQL: String?
    /// The columns (lowercased) with a default value other than NULL. The
    /// record of a row written before `ALTER TABLE ADD COLUMN` lacks the
    /// added column, and `sqlite3_preupdate_old` then gives NULL rather
    /// than the default: an old NULL there is unknown. Every column when
    /// the defaults cannot be read.
    var columnsWithDefault: Set<String>?

    var isVirtual: Bool { shadowTablePrefix != nil }

    /// Whether this describes the table of the schema a hook names
    /// (`sqlite3_preupdate_hook`'s and `sqlite3_update_hook`'s database
    /// argument), compared as SQLite compares schema names.
    @inline(__always)
    func describes(rowsOf schema: UnsafePointer<CChar>) -> Bool {
        schemaName.withUnsafeBufferPointer { strcasecmp($0.baseAddress!, schema) == 0 }
    }

    /// Reads the metadata of a table (not a view).
    ///
    /// When some of it cannot be read, assumes the worst: potential changes
    /// are notified, never missed.
    init(schema: TableSchema, database: Database, readsReplaceResolution: Bool) {
        schemaName = Array(schema.schemaName.utf8CString)
        let columns = schema.columns.map(\.lowercasedIdentifier)
        self.columns = columns
        withoutRowID = schema.isWithoutRowID
        var rowIDColumns: Set<String> = schema.isWithoutRowID ? [] : ["rowid"]
        if case .rowID(let column?) = schema.primaryKey { rowIDColumns.insert(column.lowercasedIdentifier) }
        self.rowIDColumns = rowIDColumns
        // Looked up by the schema's own spelling, byte for byte: two names
        // that differ only by Unicode normalization are two columns.
        let generated = schema.columns.map { schema.generatedColumns[CaseInsensitiveName($0)] }
        let generatedNames = columns.indices.filter { generated[$0] != nil }.map { columns[$0] }
        generatedColumns = generatedNames
        let virtualNames = columns.indices.filter { generated[$0] == false }.map { columns[$0] }
        let layout = schema.isWithoutRowID ? PreUpdateColumnLayout.withoutRowIDTables : .rowIDTables
        var storedColumns: [(old: Int32, new: Int32, name: String)] = []
        for (tableIndex, column) in columns.enumerated() where generated[tableIndex] != false {
            let storageIndex = Int32(storedColumns.count)
            storedColumns.append((
                old: layout.oldIsStorageIndexed ? storageIndex : Int32(tableIndex),
                new: layout.newIsStorageIndexed ? storageIndex : Int32(tableIndex),
                name: column))
        }
        self.storedColumns = storedColumns

        let quoted = SQLLexer.quote(schema.name)
        if schema.isVirtual {
            let prefix = schema.name.lowercasedIdentifier + "_"
            shadowTablePrefix = Array(prefix.utf8CString)
            // Columns of PRAGMA table_list: schema, name, type, ncol, wr, strict.
            hasShadowTables =
                (try? database.fetchRows(sql: "PRAGMA table_list").contains { row in
                    let type: String? = try? row[2]
                    let name: String? = try? row[1]
                    return type == "shadow" && name?.lowercasedIdentifier.hasPrefix(prefix) == true
                }) ?? false
        }
        // A temporary table hides a main one of the same name: look at both.
        let definitions = try? database.fetchRows(
            sql: """
                SELECT type, sql FROM sqlite_temp_master WHERE tbl_name = ?1 COLLATE NOCASE
                UNION ALL SELECT type, sql FROM sqlite_master WHERE tbl_name = ?1 COLLATE NOCASE
                """,
            arguments: [schema.name])
        // The table's own definition: the temporary one first, as it hides the main one.
        let createTable = definitions?.first { row in (try? row[0] as String) == "table" }
            .flatMap { row in (try? row[1] as String?) ?? nil }
        createTableSQL = schema.isVirtual ? nil : createTable
        // Columns of PRAGMA table_info: cid, name, type, notnull, dflt_value, pk.
        columnsWithDefault = (try? database.fetchRows(sql: "PRAGMA table_info(\(quoted))")).map { rows in
            Set(rows.compactMap { row -> String? in
                guard let name = try? row[1] as String, let value = try? row[4] as DatabaseValue, !value.isNull else { return nil }
                return name.lowercasedIdentifier
            })
        }
        if virtualNames.isEmpty {
            virtualColumns = []
        } else {
            let dependencies = createTable.flatMap {
                GeneratedColumnDependencies(
                    createTableSQL: $0, columns: columns, generatedColumns: generatedNames)
            }
            virtualColumns = virtualNames.map { name in (name, dependencies?.columns(of: name)) }
        }
        mayFailKeepingChanges =
            definitions?.contains { row in
                let definition: String? = (try? row[1] as String?) ?? nil
                return SQLLexer.containsKeyword("FAIL", in: definition ?? "")
            } ?? true
        if readsReplaceResolution {
            // Columns of PRAGMA index_list: seq, name, unique, origin, partial.
            hasUniqueIndex =
                (try? database.fetchRows(sql: "PRAGMA index_list(\(quoted))").contains { row in
                    (try? row[2] as Bool) ?? true
                }) ?? true
            replacesOnConflict =
                definitions?.contains { row in
                    let type: String? = try? row[0]
                    let definition: String? = (try? row[1] as String?) ?? nil
                    return type == "table" && SQLLexer.containsKeyword("REPLACE", in: definition ?? "")
                } ?? true
        }
    }

    /// Whether `table` (a name a hook reports) is a shadow table of this
    /// virtual table, compared without allocating.
    func ownsShadowTable(_ table: UnsafePointer<CChar>) -> Bool {
        guard let shadowTablePrefix else { return false }
        return shadowTablePrefix.withUnsafeBufferPointer { prefix in
            strncasecmp(prefix.baseAddress!, table, prefix.count - 1) == 0
        }
    }
}
