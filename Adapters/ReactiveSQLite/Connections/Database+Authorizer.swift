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
import DatabaseRegions

// SQLite's authorizer is called while a statement is compiled, once for each
// table and column the statement reads, and for each other action it may
// perform. We use it to record regions: https://www.sqlite.org/c3ref/set_authorizer.html
// > The authorizer callback is invoked as SQL statements are being compiled
// > by sqlite3_prepare() or its variants [...] The 3rd through 6th parameters
// > to the callback are either NULL pointers or zero-terminated strings that
// > contain additional details about the action to be authorized.

extension Database {
    /// Installs the connection's authorizer. The callback captures nothing:
    /// it finds the `Database` through the unretained context pointer, which
    /// stays valid because the connection is closed before the `Database` is
    /// deallocated.
    func installAuthorizer() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_set_authorizer(
            connection,
            { context, action, argument1, argument2, argument3, argument4 in
                guard let context else { return SQLITE_OK }
                let database = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                database.regionRecorder?.record(action: action, argument1, argument2, argument3, argument4)
                database.effectsRecorder?.record(action: action, argument1, argument2, argument4)
                return database.authorizerAnswer(action: action, argument1, argument2, argument3)
            },
            context)
    }

    /// The authorizer's answer: `SQLITE_IGNORE` for deletions from user
    /// tables, `SQLITE_OK` for everything else.
    ///
    /// > If the action code is SQLITE_DELETE and the callback returns
    /// > SQLITE_IGNORE then the DELETE operation proceeds but the truncate
    /// > optimization is disabled and all rows are deleted individually.
    /// https://www.sqlite.org/c3ref/c_deny.html
    ///
    /// Without it, `DELETE FROM t` would reach no change hook. Two deletions
    /// get `SQLITE_OK`: those from schema tables, and the one SQLite asks for
    /// on the table or view a DROP removes, right after SQLITE_DROP_TABLE or
    /// SQLITE_DROP_VIEW (any other answer silently skips the drop, checked on
    /// 3.40.1). The answer does not depend on a recorder being installed,
    /// because SQLite also asks when it recompiles a statement by itself
    /// after a schema change.
    ///
    /// It also notes a `PRAGMA synchronous` that sets the level of the main
    /// database (`compiledSynchronousPragma`), and a `PRAGMA
    /// case_sensitive_like` that sets how `LIKE` compares
    /// (`ConnectionSettings.caseSensitiveLikeMayBeSet`).
    @inline(__always)
    fileprivate func authorizerAnswer(
        action: Int32, _ argument1: UnsafePointer<CChar>?, _ argument2: UnsafePointer<CChar>?,
        _ argument3: UnsafePointer<CChar>?
    ) -> Int32 {
        switch action {
        case SQLITE_PRAGMA:
            // argument1: the pragma; argument2: its value, nil when it is
            // read; argument3: the schema it is qualified with, nil when it
            // is not (the main database).
            if argument2 != nil, let argument1, strcasecmp(argument1, "synchronous") == 0,
                argument3.map({ strcasecmp($0, "main") == 0 }) ?? true
            {
                compiledSynchronousPragma = true
            }
            if argument2 != nil, let argument1, strcasecmp(argument1, "case_sensitive_like") == 0 {
                configuration.connectionSettings.caseSensitiveLikeMayBeSet.store(true, ordering: .releasing)
            }
            return SQLITE_OK
        case SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_TABLE, SQLITE_DROP_VIEW, SQLITE_DROP_TEMP_VIEW, SQLITE_DROP_VTABLE:
            droppedTableName = argument1.map { String(cString: $0) }
            return SQLITE_OK
        case SQLITE_DELETE:
            guard let argument1 else { return SQLITE_OK }
            if let dropped = droppedTableName {
                droppedTableName = nil
                if String(cString: argument1) == dropped { return SQLITE_OK }
            }
            if strncasecmp(argument1, "sqlite_", 7) == 0 { return SQLITE_OK }
            return SQLITE_IGNORE
        default:
            return SQLITE_OK
        }
    }
}

/// What one statement reads, as reported by the authorizer while it compiles.
///
/// On SQLite 3.40.1 (checked by `RegionRecordingTests`):
/// - `SQLITE_READ` (table, column, database, view or trigger): the statement
///   reads that column. An empty column name means the whole table: SQLite
///   reports it for `COUNT(*)`, and for a table none of whose declared
///   columns is used (`SELECT 1 FROM t`, `EXISTS (SELECT 1 FROM t)`,
///   `SELECT rowid FROM t`, a self-join side that only uses the rowid).
/// - `rowid` is reported as the `INTEGER PRIMARY KEY` column that aliases
///   it (`WHERE rowid = 1` reads `id`), or else as a column named `ROWID`,
///   which is not a column: the recorder takes the whole table.
/// - A view is reported twice: as reads of its base tables' columns (the
///   view's name in the fourth argument), and as reads of its own columns.
///   The base tables are kept, the names of views are dropped. Common table
///   expressions are never reported, only the tables they read.
/// - SQLite reads `sqlite_master` (`sqlite_schema`) and `sqlite_temp_master`
///   to check the schema: those reads are dropped, like a user's reads of
///   them, since no observable change happens there.
final class RegionRecorder {
    private struct TableReads {
        var name: String
        /// nil: every column.
        var columns: Set<String>?
    }

    /// Reads, keyed by lowercased table name.
    private var reads: [String: TableReads] = [:]

    /// Whether running the statement changes the schema: it creates, drops
    /// or alters a schema object.
    private(set) var changesSchema = false

    /// Whether running the statement rolls back a transaction or a
    /// savepoint, which may undo a schema change.
    private(set) var rollsBack = false

    /// The number of SELECTs the statement compiles: one per subquery,
    /// common table expression and view, besides its own.
    private var selectCount = 0

    /// Whether the statement called a function outside `rowLocalFunctions`.
    private var callsOtherFunctions = false

    /// Built-in scalar functions whose result depends on their arguments
    /// alone: not the date and time functions (`'now'`), not `random()`,
    /// not `min` and `max` (aggregates with one argument), not the
    /// application's functions, not functions younger than SQLite 3.38
    /// (an older library lets an application define them). `like` and
    /// `glob` implement the operators; `->` and `->>` the JSON operators. An
    /// application that redefines one of these names is trusted to keep it
    /// a function of its arguments.
    private static let rowLocalFunctions: Set<String> = [
        "abs", "char", "coalesce", "glob", "hex", "ifnull", "iif", "instr", "length", "like", "likelihood",
        "likely", "lower", "ltrim", "nullif", "printf", "quote", "replace", "round", "rtrim", "substr",
        "substring", "trim", "typeof", "unicode", "unlikely", "upper", "json", "json_extract", "json_type",
        "json_valid", "json_array_length", "->", "->>",
    ]

    /// One SELECT, without subquery, calling only `rowLocalFunctions`
    /// (see `Statement.isRowLocal`).
    var isRowLocal: Bool { selectCount == 1 && !callsOtherFunctions }

    func record(
        action: Int32,
        _ argument1: UnsafePointer<CChar>?, _ argument2: UnsafePointer<CChar>?,
        _ argument3: UnsafePointer<CChar>?, _ argument4: UnsafePointer<CChar>?
    ) {
        switch action {
        case SQLITE_READ:
            // argument1: table, argument2: column, argument3: database,
            // argument4: the innermost trigger or view responsible, if any.
            guard let argument1 else { return }
            let key = String(cString: argument1).lowercasedIdentifier
            switch key {
            case "sqlite_master", "sqlite_temp_master", "sqlite_schema", "sqlite_temp_schema":
                return
            default:
                break
            }
            var entry = reads[key] ?? TableReads(name: String(cString: argument1), columns: [])
            if let argument2, argument2.pointee != 0 {
                entry.columns?.insert(String(cString: argument2).lowercasedIdentifier)
            } else {
                entry.columns = nil
            }
            reads[key] = entry
        case SQLITE_CREATE_INDEX, SQLITE_CREATE_TABLE, SQLITE_CREATE_TEMP_INDEX, SQLITE_CREATE_TEMP_TABLE,
            SQLITE_CREATE_TEMP_TRIGGER, SQLITE_CREATE_TEMP_VIEW, SQLITE_CREATE_TRIGGER, SQLITE_CREATE_VIEW,
            SQLITE_DROP_INDEX, SQLITE_DROP_TEMP_INDEX, SQLITE_DROP_TEMP_TRIGGER, SQLITE_DROP_TRIGGER,
            SQLITE_ALTER_TABLE, SQLITE_CREATE_VTABLE, SQLITE_ATTACH, SQLITE_DETACH:
            changesSchema = true
        case SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_TABLE, SQLITE_DROP_VIEW, SQLITE_DROP_TEMP_VIEW, SQLITE_DROP_VTABLE:
            changesSchema = true
        case SQLITE_SELECT:
            selectCount += 1
        case SQLITE_FUNCTION:
            // argument2: the function name.
            if let argument2, !Self.rowLocalFunctions.contains(String(cString: argument2).lowercasedIdentifier) {
                callsOtherFunctions = true
            }
        case SQLITE_TRANSACTION, SQLITE_SAVEPOINT:
            // argument1: "BEGIN", "COMMIT", "RELEASE" or "ROLLBACK".
            if let argument1, String(cString: argument1) == "ROLLBACK" {
                rollsBack = true
            }
        default:
            break
        }
    }

    /// The recorded region, and the views read: views and table-valued
    /// functions are not in the region (the base tables of views were
    /// recorded as well), and a table whose every
    /// column is read recorded as the whole table, so that `SELECT *` and
    /// `COUNT(*)` give `player(*)`.
    ///
    /// - Throws: A `DatabaseError` when the schema cannot be read.
    func region(in database: Database) throws -> (region: DatabaseRegion, views: [String]) {
        var region = DatabaseRegion()
        var views: [String] = []
        for entry in reads.values {
            var schema = try database.tableSchema(named: entry.name)
            if schema == nil {
                // Not in the cache: maybe created by another connection.
                try database.refreshSchemaCacheIfNeeded()
                schema = try database.tableSchema(named: entry.name)
            }
            // Table-valued functions (`json_each`, `pragma_table_info`) are
            // not in the schema, and no change happens there; views were
            // reported with their base tables.
            guard let schema else { continue }
            if schema.isView {
                views.append(schema.name)
                continue
            }
            var columns = entry.columns
            if let readColumns = columns {
                let tableColumns = Set(schema.columns.map(\.lowercasedIdentifier))
                // Every column read, or a name that is not a column (`rowid`
                // of a table without alias, a hidden column of a virtual
                // table): the whole table.
                if tableColumns.isSubset(of: readColumns) || !readColumns.isSubset(of: tableColumns) {
                    columns = nil
                }
            }
            region.formUnion(DatabaseRegion(table: schema.name, columns: columns))
        }
        return (region, views)
    }
}
