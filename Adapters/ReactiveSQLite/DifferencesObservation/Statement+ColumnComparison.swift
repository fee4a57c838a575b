import DatabaseRegions
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

extension Statement {
    /// Compares the value of column `index` of the current row with `value`
    /// in SQLite's `BINARY` order on raw values, as `DatabaseValue.compare`
    /// would compare `columnValue(at: index)` with `value`, but without
    /// reading the column into a `DatabaseValue`: texts and blobs are
    /// compared in place, with no allocation.
    ///
    /// Texts compare by their exact bytes, valid UTF-8 or not, as
    /// `DatabaseValue` compares the values `columnValue(at:)` reads.
    ///
    /// - Returns: Negative, zero or positive.
    /// - Complexity: O(n) for texts and blobs, where n is their byte count.
    @inline(__always)
    func compareColumn(at index: Int32, with value: borrowing DatabaseValue) -> Int {
        // One call that reaches the column, then calls that only read it.
        // > The sqlite3_value objects returned by sqlite3_column_value() are
        // > unprotected. [...] If the sqlite3_value object returned by
        // > sqlite3_column_value() is used in any other way, including calls to
        // > routines like sqlite3_value_int(), sqlite3_value_text(), or
        // > sqlite3_value_bytes(), the behavior is not threadsafe.
        // > https://www.sqlite.org/c3ref/column_blob.html
        // Connections are opened with SQLITE_OPEN_NOMUTEX, and used by one
        // thread at a time: there is no other thread to be safe from. The
        // value is only used before the next step.
        let column = sqlite3_column_value(handle, index)
        switch sqlite3_value_type(column) {
        case SQLITE_INTEGER:
            let integer = sqlite3_value_int64(column)
            if let other = value.integerPayload {
                return integer < other ? -1 : (integer == other ? 0 : 1)
            }
            return DatabaseValue.compare(DatabaseValue(storage: .integer(integer)), value)
        case SQLITE_FLOAT:
            return DatabaseValue.compare(DatabaseValue(storage: .real(sqlite3_value_double(column))), value)
        case SQLITE_TEXT:
            if case .invalidUTF8Text(let other) = value.representation {
                let text = UnsafeRawPointer(sqlite3_value_text(column))
                let count = Int(sqlite3_value_bytes(column))
                return other.withUnsafeBytes { Self.compareBytes(text, count, $0) }
            }
            switch value.storage {
            case .text(let other):
                // > call sqlite3_column_text() first to force the result into the
                // > desired format, then invoke sqlite3_column_bytes() to find the
                // > size of the result. (The same for sqlite3_value_text() and
                // > sqlite3_value_bytes().) https://www.sqlite.org/c3ref/column_blob.html
                let text = UnsafeRawPointer(sqlite3_value_text(column))
                let count = Int(sqlite3_value_bytes(column))
                // Native strings are contiguous UTF-8: read in place.
                if let result = other.utf8.withContiguousStorageIfAvailable({
                    Self.compareBytes(text, count, UnsafeRawBufferPointer($0))
                }) {
                    return result
                }
                var contiguous = other
                return contiguous.withUTF8 { Self.compareBytes(text, count, UnsafeRawBufferPointer($0)) }
            case .blob:
                return -1
            case .null, .integer, .real:
                return 1
            }
        case SQLITE_BLOB:
            guard case .blob(let other) = value.storage else { return 1 }
            let bytes = sqlite3_value_blob(column)
            let count = Int(sqlite3_value_bytes(column))
            return other.withUnsafeBytes { Self.compareBytes(bytes, count, $0) }
        default:
            return value.isNull ? 0 : -1
        }
    }

    /// Whether every column of the current row, except the column at
    /// `skippedIndex` (known to be equal), is stored as the value at the
    /// same index of `values` is, which has one value per column: the same
    /// storage class and the same value (the integer 1 and the real 1.0
    /// differ, as in `DatabaseValue.isStoredIdentically`).
    @inline(__always)
    func currentRowEquals(_ values: UnsafeBufferPointer<DatabaseValue>, skipping skippedIndex: Int) -> Bool {
        for index in values.indices where index != skippedIndex {
            let column = Int32(index)
            if sqlite3_column_type(handle, column) != Self.storageClass(of: values[index])
                || compareColumn(at: column, with: values[index]) != 0
            {
                return false
            }
        }
        return true
    }

    /// The SQLite storage class of `value` (`SQLITE_INTEGER`...).
    @inline(__always)
    private static func storageClass(of value: borrowing DatabaseValue) -> Int32 {
        switch value.representation {
        case .storage(.null): SQLITE_NULL
        case .storage(.integer): SQLITE_INTEGER
        case .storage(.real): SQLITE_FLOAT
        case .storage(.text), .invalidUTF8Text: SQLITE_TEXT
        case .storage(.blob): SQLITE_BLOB
        }
    }

    /// SQLite's `BINARY` order of `count` bytes at `bytes` and `other`.
    @inline(__always)
    private static func compareBytes(_ bytes: UnsafeRawPointer?, _ count: Int, _ other: UnsafeRawBufferPointer) -> Int {
        SQLiteBinaryOrder.compare(UnsafeRawBufferPointer(start: count > 0 ? bytes : nil, count: bytes == nil ? 0 : count), other)
    }
}
