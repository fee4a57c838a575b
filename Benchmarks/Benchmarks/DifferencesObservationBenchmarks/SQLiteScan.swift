import GRDBSQLite

/// What SQLite alone takes to run a query once: prepares it on a
/// connection of its own, steps through every row and reads every column
/// (the type, then the integer, real, or the text or blob's bytes), with the
/// C API only. The baseline of the observations that fetch a whole result.
final class SQLiteScan: @unchecked Sendable {  // Used by one benchmark thread at a time.
    private var connection: OpaquePointer?

    init(path: String) {
        precondition(sqlite3_open_v2(path, &connection, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, "cannot open \(path)")
    }

    deinit {
        sqlite3_close(connection)
    }

    /// Runs `sql` once and returns the number of rows and a checksum of
    /// the bytes read, so that no read is optimized away.
    @inline(never)
    func run(_ sql: String) -> (rows: Int, checksum: Int) {
        var statement: OpaquePointer?
        precondition(sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, "cannot prepare \(sql)")
        defer { sqlite3_finalize(statement) }
        var rows = 0
        var checksum = 0
        let columnCount = sqlite3_column_count(statement)
        while sqlite3_step(statement) == SQLITE_ROW {
            rows += 1
            for column in 0..<columnCount {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: checksum &+= Int(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: checksum &+= Int(sqlite3_column_double(statement, column).bitPattern & 0xFF)
                case SQLITE_TEXT:
                    if let text = sqlite3_column_text(statement, column) {
                        checksum &+= Int(text[0]) &+ Int(sqlite3_column_bytes(statement, column))
                    }
                case SQLITE_BLOB: checksum &+= Int(sqlite3_column_bytes(statement, column))
                default: break
                }
            }
        }
        return (rows, checksum)
    }
}
