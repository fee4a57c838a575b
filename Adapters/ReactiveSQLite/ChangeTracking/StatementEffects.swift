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

/// What a statement may change, as reported by SQLite's authorizer while it
/// is compiled: the tables it inserts into, deletes from, and the columns it
/// updates (through triggers and foreign key actions too), the tables and
/// views it drops or alters, and the savepoint it begins, releases or rolls
/// back to.
struct StatementEffects {
    struct TableWrites {
        /// The table name as SQLite reported it.
        var name: String
        /// The name as a NUL-terminated string, compared with the table names
        /// the hooks receive without allocating.
        var cName: ContiguousArray<CChar>
        var inserts = false
        var deletes = false
        /// Columns the statement updates (lowercased).
        var updatedColumns: Set<String> = []
        /// Whether a trigger inserts into or updates the table: its
        /// statements may resolve conflicts with REPLACE, which the
        /// authorizer does not tell.
        var isWrittenByTrigger = false
    }

    enum SavepointAction {
        case begin(String)
        case release(String)
        case rollback(String)
    }

    /// Written tables, at most a handful per statement.
    private(set) var writes: [TableWrites] = []
    private(set) var savepoint: SavepointAction?
    /// Tables the statement drops, alters or creates (a table or view
    /// created in `temp` hides the main table of its name from then on).
    /// No hook reports such a change, yet it may break or change what
    /// observers of these tables fetch: the broker tells them after the
    /// statement succeeds.
    private(set) var restructuredTables: [String] = []

    /// Whether the statement sets `PRAGMA query_only`, which a read access
    /// refuses: the access's rule would be lifted by its own statements.
    private(set) var setsQueryOnly = false
    /// Whether a trigger writes on behalf of the statement.
    private(set) var writesThroughTriggers = false
    /// Whether the statement changes the schema (set after compilation).
    var changesSchema = false
    /// Whether the statement is a `VACUUM` of the main database, which
    /// renumbers the rowids of tables without `INTEGER PRIMARY KEY`, with
    /// no hook (set after compilation, see `recordText(of:)`).
    private(set) var renumbersRowIDs = false
    /// Whether the broker may let the statement run without following its
    /// row events, when no observation watches the tables it writes (see
    /// `ObservationBroker.statementWillStart(_:)`): it changes no savepoint,
    /// no schema, and renumbers no rowids, which the broker follows at the
    /// statement's end whatever the tables.
    var mayRunQuiet: Bool {
        savepoint == nil && restructuredTables.isEmpty && !changesSchema && !renumbersRowIDs
    }

    /// Records what only the text of the compiled statement tells.
    ///
    /// - Complexity: O(1) for a statement that does not start with V or
    ///   a comment; O(n), where n is the length of the SQL, otherwise.
    mutating func recordText(of sql: String) {
        // Most statements start with another letter than V, or a comment.
        let first = sql.utf8.first { $0 != UInt8(ascii: " ") && ($0 < 9 || $0 > 13) }
        guard let first, first | 0x20 == UInt8(ascii: "v") || first == UInt8(ascii: "-") || first == UInt8(ascii: "/")
        else { return }
        if SQLLexer.leadingWords(of: sql, count: 1) == ["VACUUM"] {
            // `VACUUM INTO 'file'` writes another file; `VACUUM temp` the
            // temporary database, whose tables are rebuilt as well.
            renumbersRowIDs = !SQLLexer.containsKeyword("INTO", in: sql)
        }
    }

    /// Records one authorizer call. The answer to SQLite is decided by
    /// `Database.authorizerAnswer(action:_:)`.
    ///
    /// `argument4` is the innermost trigger or view responsible for the
    /// action, if any.
    mutating func record(
        action: Int32, _ argument1: UnsafePointer<CChar>?, _ argument2: UnsafePointer<CChar>?,
        _ argument4: UnsafePointer<CChar>?
    ) {
        switch action {
        case SQLITE_INSERT:
            guard let argument1 else { return }
            withWrites(argument1) { writes in
                writes.inserts = true
                if argument4 != nil { writes.isWrittenByTrigger = true }
            }
            if argument4 != nil { writesThroughTriggers = true }
        case SQLITE_DELETE:
            guard let argument1 else { return }
            // Schema tables are deleted from by DROP statements: let SQLite be.
            if strncasecmp(argument1, "sqlite_", 7) == 0 { return }
            withWrites(argument1) { $0.deletes = true }
            if argument4 != nil { writesThroughTriggers = true }
        case SQLITE_UPDATE:
            guard let argument1 else { return }
            let column = argument2.map { String(cString: $0).lowercasedIdentifier }
            withWrites(argument1) { writes in
                if let column { writes.updatedColumns.insert(column) }
                if argument4 != nil { writes.isWrittenByTrigger = true }
            }
            if argument4 != nil { writesThroughTriggers = true }
        case SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_TABLE, SQLITE_DROP_VIEW, SQLITE_DROP_TEMP_VIEW, SQLITE_DROP_VTABLE,
            SQLITE_CREATE_TABLE, SQLITE_CREATE_TEMP_TABLE, SQLITE_CREATE_VIEW, SQLITE_CREATE_TEMP_VIEW,
            SQLITE_CREATE_VTABLE:
            // argument1: the table or view. A dropped view changes what the
            // observations that read it read (they watch it by name); so
            // does a table or view created with the name of the one they
            // read, in a schema that SQLite searches first (`temp`).
            if let argument1, strncasecmp(argument1, "sqlite_", 7) != 0 {
                restructuredTables.append(String(cString: argument1))
            }
        case SQLITE_ALTER_TABLE:
            // argument1: the schema ("main"), argument2: the table.
            if let argument2 { restructuredTables.append(String(cString: argument2)) }
        case SQLITE_PRAGMA:
            // argument1: the pragma; argument2: its value, nil when it is read.
            if argument2 != nil, let argument1, strcasecmp(argument1, "query_only") == 0 { setsQueryOnly = true }
        case SQLITE_SAVEPOINT:
            guard let argument1, let argument2 else { return }
            let name = String(cString: argument2)
            switch String(cString: argument1) {
            case "BEGIN": savepoint = .begin(name)
            case "RELEASE": savepoint = .release(name)
            case "ROLLBACK": savepoint = .rollback(name)
            default: break
            }
        default:
            break
        }
    }

    private mutating func withWrites(_ table: UnsafePointer<CChar>, _ body: (inout TableWrites) -> Void) {
        if let index = writes.firstIndex(where: { strcasecmp($0.cName.withUnsafeBufferPointer { $0.baseAddress! }, table) == 0 }) {
            body(&writes[index])
        } else {
            let name = String(cString: table)
            var entry = TableWrites(name: name, cName: ContiguousArray(name.utf8CString))
            body(&entry)
            writes.append(entry)
        }
    }
}
