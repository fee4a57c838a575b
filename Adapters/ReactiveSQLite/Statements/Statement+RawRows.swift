#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// A value of the current row of a statement, read in place: texts and
/// blobs point into SQLite's own buffer.
///
/// The pointers are valid until the statement steps again or is reset:
/// use them inside the closure that received the row, never later.
package enum RawValue {
    case null
    case integer(Int64)
    case real(Double)
    /// The exact bytes of a text, valid UTF-8 or not (SQLite stores what it was given).
    case text(UnsafeRawBufferPointer)
    case blob(UnsafeRawBufferPointer)
}

/// The current row of a statement, whose columns are read in place, with
/// no `DatabaseValue`, `String` or `Data` made: for code that compares or
/// copies the bytes of many rows (`Database.forEachRawRow`).
package struct RawRow {
    fileprivate let handle: OpaquePointer

    /// The number of columns.
    package var count: Int { Int(sqlite3_data_count(handle)) }

    /// The value of column `index` (0-based, less than `count`).
    @inline(__always)
    package subscript(index: Int) -> RawValue {
        // One call that reaches the column, then calls that only read it
        // (see `Statement.readValue(_:)`).
        let column = sqlite3_column_value(handle, Int32(index))
        switch sqlite3_value_type(column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_value_int64(column))
        case SQLITE_FLOAT:
            return .real(sqlite3_value_double(column))
        case SQLITE_TEXT:
            // > call sqlite3_column_text() first to force the result into the
            // > desired format, then invoke sqlite3_column_bytes() to find the
            // > size of the result. (The same for sqlite3_value_text() and
            // > sqlite3_value_bytes().) https://www.sqlite.org/c3ref/column_blob.html
            let text = sqlite3_value_text(column)
            let count = Int(sqlite3_value_bytes(column))
            return .text(UnsafeRawBufferPointer(start: count > 0 ? text : nil, count: text == nil ? 0 : count))
        case SQLITE_BLOB:
            let bytes = sqlite3_value_blob(column)
            let count = Int(sqlite3_value_bytes(column))
            return .blob(UnsafeRawBufferPointer(start: count > 0 ? bytes : nil, count: bytes == nil ? 0 : count))
        default:
            return .null
        }
    }
}

extension Database {
    /// Runs `sql` with `arguments` (through the statement cache), and
    /// calls `body` with each row, whose values are read in place.
    ///
    /// The row and the values it gives are valid only during the call of
    /// `body` that receives them.
    ///
    /// - Throws: A `DatabaseError` when the SQL does not compile, when the
    ///   arguments do not fit, or when SQLite fails; the error of `body`,
    ///   which stops the statement.
    /// - Complexity: SQLite's work for the query, and O(1) per row beyond
    ///   the work of `body`.
    package func forEachRawRow(
        sql: String, arguments: StatementArguments = StatementArguments(), _ body: (RawRow) throws -> Void
    ) throws {
        checkAccess()
        let statement = try cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        try statement.fetching { statement in
            let row = RawRow(handle: statement.handle)
            while try statement.step() { try body(row) }
        }
    }
}
