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
import Synchronization

/// The storage of a `Row` that reads the current row of a statement in
/// place, for the record that decodes from it; or that reads a row of the
/// values a `trackingSetDifferences` observation keeps (`RowValues`), in
/// place too.
///
/// A fetch of records hands each record a row backed by one of these, and
/// reuses it for the next row when the record did not keep it. A record
/// that kept it (the storage is not uniquely referenced after `init(row:)`,
/// whether it returned or threw) gets its values copied here before the
/// statement moves on, or before the decoding of rows of values ends
/// (`detach()`): from then on the row reads those values, on any thread,
/// and the fetch takes a new storage.
///
/// The standard types (`Int64`, `Int`, `Double`, `String`, `Bool`) read
/// their column with a typed call, without a `DatabaseValue`; the others
/// read the column's `DatabaseValue`. Either way, a read gives what the
/// same read of the row's values would give.
///
/// `@unchecked Sendable`: until `isDetached` is set, the storage is read
/// and moved from row to row only by the thread of the access (or of the
/// observation's reduction) that made it, `owner`: another thread reading a
/// row that is not detached yet (a row sent away by `init(row:)`) waits
/// until it is, however long `init(row:)` takes.
/// `values`, `rows`, `rowsBase` and `start` are written before `isDetached`
/// is set with release ordering, and read after it was seen set with
/// acquire ordering; they never change afterwards. The rows of values a
/// storage reads (`RowValuesStorage`) never change while it holds them.
@usableFromInline
final class StatementRow: @unchecked Sendable {
    /// The `sqlite3_stmt *` of the statement, read until detached; nil for
    /// a storage that reads rows of values.
    @usableFromInline let handle: OpaquePointer?
    /// The columns, the statement's when it was stepped.
    @usableFromInline let layout: RowLayout
    /// The number of columns.
    @usableFromInline let columnCount: Int
    /// The thread that made the storage, and moves it from row to row.
    @usableFromInline let owner: pthread_t
    /// Set once the values of the row are its own, in `values`, and final.
    private let isDetached: Atomic<Bool>
    /// The row's own values, once detached.
    /// No run-time exclusivity check: written only by the owner while no
    /// row reads them (`detach()`).
    @exclusivity(unchecked) private var values: [DatabaseValue] = []
    /// The rows of values the row reads until detached (shared with the
    /// rows they come from, which never change while shared), kept alive
    /// for `rowsBase`; nil for a statement's row, and once detached.
    @exclusivity(unchecked) private var rows: RowValuesStorage?
    /// The values of `rows`, read in place: no reference counting per read.
    @usableFromInline @exclusivity(unchecked) var rowsBase: UnsafePointer<DatabaseValue>?
    /// The number of values of `rows`, which never changes while the
    /// storage reads them; 0 for a statement's row, and once detached.
    @usableFromInline @exclusivity(unchecked) var rowsValueCount = 0
    /// The offset in `rows` of the row's first value.
    @usableFromInline @exclusivity(unchecked) var start = 0

    /// A storage for the current row of `statement`, which has just been
    /// stepped to a row, by the thread of its access.
    init(statement: Statement) {
        handle = statement.handle
        layout = statement.layout
        columnCount = statement.columnCount
        owner = pthread_self()
        isDetached = Atomic(false)
    }

    /// A storage for the row of the rows of values `rows` that starts at
    /// `start`, whose columns are those of `layout` (the rows may have more
    /// values after them).
    init(layout: RowLayout, rows: RowValuesStorage, start: Int) {
        precondition(start >= 0 && start + layout.columnNames.count <= rows.count, "StatementRow: a row out of its values")
        handle = nil
        self.layout = layout
        columnCount = layout.columnNames.count
        owner = pthread_self()
        self.rows = rows
        rowsBase = UnsafePointer(rows.base)
        rowsValueCount = rows.count
        self.start = start
        isDetached = Atomic(false)
    }

    /// Whether the storage reads rows of values and is not detached: then
    /// `move(to:)` may make it read another row, when no row holds it.
    var readsRowsOfValues: Bool {
        handle == nil && !isDetached.load(ordering: .relaxed)
    }

    /// Makes a storage that reads rows of values read the row that starts
    /// at `start`. The caller checked that no row holds the storage
    /// (`isKnownUniquelyReferenced`), and that it reads the same rows.
    @usableFromInline
    func move(to start: Int) {
        precondition(readsRowsOfValues && start >= 0 && start + columnCount <= rows!.count, "StatementRow: moved out of its rows")
        self.start = start
    }

    /// Makes a storage that reads rows of values read the next row of its
    /// chunk, `stride` values further, and returns true; returns false, and
    /// stays, when the chunk ends before. The caller checked that no row
    /// holds the storage (`isKnownUniquelyReferenced`).
    ///
    /// Inlined in the caller's module (see `KeyedRows.decodeRecords(_:)`):
    /// it reads only what the owner alone writes.
    @inlinable @inline(__always)
    func moveToNextRow(stride: Int) -> Bool {
        precondition(handle == nil && rowsBase != nil, "StatementRow: moved out of its rows")
        let next = start + stride
        guard next + columnCount <= rowsValueCount else { return false }
        start = next
        return true
    }

    /// Makes a storage that reads rows of values read the row that starts
    /// at `start` of `rows` (another chunk of the same rows). The caller
    /// checked that no row holds the storage (`isKnownUniquelyReferenced`).
    func move(to start: Int, in rows: RowValuesStorage) {
        precondition(readsRowsOfValues && start >= 0 && start + columnCount <= rows.count, "StatementRow: moved out of its rows")
        if rows !== self.rows {
            self.rows = rows
            rowsBase = UnsafePointer(rows.base)
            rowsValueCount = rows.count
        }
        self.start = start
    }

    /// Copies the values of the current row, so that the row no longer
    /// reads the statement or the rows of values, whatever they do next.
    /// Called by the owner thread, before the statement steps again or
    /// resets, or before the rows of values are released.
    @usableFromInline
    func detach() {
        guard !isDetached.load(ordering: .relaxed) else { return }
        if handle != nil {
            values = (0..<columnCount).map { readColumnValue(at: Int32($0)) }
        } else {
            values = Array(UnsafeBufferPointer(start: rowsBase.unsafelyUnwrapped + start, count: columnCount))
            rowsBase = nil
            rowsValueCount = 0
            rows = nil
        }
        start = 0
        isDetached.store(true, ordering: .releasing)
    }

    /// Whether reads go to the statement; otherwise they go to `values`
    /// from `start`. Another thread waits until the row is detached (see
    /// `waitUntilDetached()`).
    @inline(__always)
    private var readsStatement: Bool {
        if isDetached.load(ordering: .acquiring) { return false }
        // `pthread_t` is an integer (glibc) or a pointer (Darwin), which
        // `pthread_equal` compares: compared here without a call.
        if owner != pthread_self() {
            waitUntilDetached()
            return false
        }
        return handle != nil
    }

    /// Waits, on a thread other than the owner, until the row is detached:
    /// a row that `init(row:)` kept and handed to another thread (which
    /// may read it at once) is detached as soon as `init(row:)` returns,
    /// however long it takes (a slow `init(row:)` is a correct one).
    ///
    /// An `init(row:)` that waits for that read never returns: the two
    /// threads wait for each other, as any two threads that wait for each
    /// other's locks do (`Row`'s documentation says so). Nothing tells it
    /// apart from a slow `init(row:)`, so nothing traps.
    ///
    /// Yields the processor for the first thousand tries (an `init(row:)`
    /// usually returns within microseconds), then sleeps 100 µs at a time.
    @inline(never)
    private func waitUntilDetached() {
        var tries = 0
        while !isDetached.load(ordering: .acquiring) {
            if tries < 1000 {
                tries += 1
                sched_yield()
            } else {
                usleep(100)
            }
        }
    }

    // MARK: - Reads of rows of values, inlined

    /// The values of the row, read in place, when the storage reads rows
    /// of values for the current thread, which is its owner (the only
    /// thread that moves or detaches it: no other thread writes what this
    /// reads); nil otherwise (a statement's row, a detached row, or
    /// another thread), for the calls that handle every case.
    ///
    /// Inlined in the caller's module, with the reads below: decoding a
    /// record from the rows a `trackingSetDifferences` observation keeps
    /// costs no call per column.
    @inlinable @inline(__always)
    var ownedRowValues: UnsafePointer<DatabaseValue>? {
        // A statement's row goes on with one comparison.
        guard handle == nil, owner == pthread_self(), let rowsBase else { return nil }
        return rowsBase + start
    }

    /// The value at a valid index, from `ownedRowValues`.
    @inlinable @inline(__always)
    func ownedValue(_ values: UnsafePointer<DatabaseValue>, at index: Int) -> DatabaseValue.Representation {
        precondition(index >= 0 && index < columnCount, "StatementRow: a value out of its row")
        return values[index].representation
    }

    /// Whether the value at a valid index is NULL.
    @inlinable @inline(__always)
    func isNull(at index: Int) -> Bool {
        guard let values = ownedRowValues else { return readIsNull(at: index) }
        if case .storage(.null) = ownedValue(values, at: index) { return true }
        return false
    }

    /// The value at a valid index as an `Int64`, as `Int64.fromDatabaseValue`
    /// decodes it.
    @inlinable @inline(__always)
    func int64(at index: Int) -> Int64? {
        guard let values = ownedRowValues else { return readInt64(at: index) }
        switch ownedValue(values, at: index) {
        case .storage(.integer(let integer)): return integer
        case .storage(.real(let real)): return Int64(exactly: real)
        default: return nil
        }
    }

    /// The value at a valid index as an `Int`, as `Int.fromDatabaseValue`
    /// decodes it.
    @inlinable @inline(__always)
    func int(at index: Int) -> Int? {
        guard let values = ownedRowValues else { return readInt(at: index) }
        switch ownedValue(values, at: index) {
        case .storage(.integer(let integer)): return Int(exactly: integer)
        case .storage(.real(let real)): return Int(exactly: real)
        default: return nil
        }
    }

    /// The value at a valid index as a `Double`, as `Double.fromDatabaseValue`
    /// decodes it.
    @inlinable @inline(__always)
    func double(at index: Int) -> Double? {
        guard let values = ownedRowValues else { return readDouble(at: index) }
        switch ownedValue(values, at: index) {
        case .storage(.integer(let integer)): return Double(integer)
        case .storage(.real(let real)): return real
        default: return nil
        }
    }

    /// The value at a valid index as a `Bool`, as `Bool.fromDatabaseValue`
    /// decodes it.
    @inlinable @inline(__always)
    func bool(at index: Int) -> Bool? {
        guard let values = ownedRowValues else { return readBool(at: index) }
        switch ownedValue(values, at: index) {
        case .storage(.integer(let integer)): return integer != 0
        case .storage(.real(let real)): return real != 0
        default: return nil
        }
    }

    /// The value at a valid index as a `String`, as `String.fromDatabaseValue`
    /// decodes it (invalid UTF-8 repaired with U+FFFD).
    @inlinable @inline(__always)
    func string(at index: Int) -> String? {
        guard let values = ownedRowValues else { return readString(at: index) }
        if case .storage(.text(let text)) = ownedValue(values, at: index) { return text }
        return readString(at: index)
    }

    // MARK: - Reads

    /// The value of the column at a valid index.
    @usableFromInline
    func value(at index: Int) -> DatabaseValue {
        readsStatement ? readColumnValue(at: Int32(index)) : withValue(at: index) { $0 }
    }

    /// The values of every column.
    func databaseValues() -> [DatabaseValue] {
        readsStatement
            ? (0..<columnCount).map { readColumnValue(at: Int32($0)) } : (0..<columnCount).map { withValue(at: $0) { $0 } }
    }

    /// Whether the value at a valid index is NULL.
    @usableFromInline
    func readIsNull(at index: Int) -> Bool {
        readsStatement ? sqlite3_column_type(handle.unsafelyUnwrapped, Int32(index)) == SQLITE_NULL : withValue(at: index) { $0.isNull }
    }

    /// The value at a valid index as an `Int64`, as `Int64.fromDatabaseValue`
    /// decodes it.
    @usableFromInline
    func readInt64(at index: Int) -> Int64? {
        guard readsStatement else {
            return withValue(at: index) { value in
                switch value.representation {
                case .storage(.integer(let integer)): return integer
                case .storage(.real(let real)): return Int64(exactly: real)
                default: return nil
                }
            }
        }
        let column = readColumn(at: index)
        switch sqlite3_value_type(column) {
        case SQLITE_INTEGER: return sqlite3_value_int64(column)
        case SQLITE_FLOAT: return Int64(exactly: sqlite3_value_double(column))
        default: return nil
        }
    }

    /// The value at a valid index as an `Int`, as `Int.fromDatabaseValue`
    /// decodes it.
    @usableFromInline
    func readInt(at index: Int) -> Int? {
        guard readsStatement else {
            return withValue(at: index) { value in
                switch value.representation {
                case .storage(.integer(let integer)): return Int(exactly: integer)
                case .storage(.real(let real)): return Int(exactly: real)
                default: return nil
                }
            }
        }
        let column = readColumn(at: index)
        switch sqlite3_value_type(column) {
        case SQLITE_INTEGER: return Int(exactly: sqlite3_value_int64(column))
        case SQLITE_FLOAT: return Int(exactly: sqlite3_value_double(column))
        default: return nil
        }
    }

    /// The value at a valid index as a `Double`, as `Double.fromDatabaseValue`
    /// decodes it (a NaN, which `DatabaseValue` stores as NULL, is not a value).
    @usableFromInline
    func readDouble(at index: Int) -> Double? {
        guard readsStatement else {
            return withValue(at: index) { value in
                switch value.representation {
                case .storage(.integer(let integer)): return Double(integer)
                case .storage(.real(let real)): return real
                default: return nil
                }
            }
        }
        let column = readColumn(at: index)
        switch sqlite3_value_type(column) {
        case SQLITE_INTEGER: return Double(sqlite3_value_int64(column))
        case SQLITE_FLOAT:
            let real = sqlite3_value_double(column)
            return real.isNaN ? nil : real
        default: return nil
        }
    }

    /// The value at a valid index as a `Bool`, as `Bool.fromDatabaseValue`
    /// decodes it.
    @usableFromInline
    func readBool(at index: Int) -> Bool? {
        guard readsStatement else {
            return withValue(at: index) { value in
                switch value.representation {
                case .storage(.integer(let integer)): return integer != 0
                case .storage(.real(let real)): return real != 0
                default: return nil
                }
            }
        }
        let column = readColumn(at: index)
        switch sqlite3_value_type(column) {
        case SQLITE_INTEGER: return sqlite3_value_int64(column) != 0
        case SQLITE_FLOAT:
            let real = sqlite3_value_double(column)
            return real.isNaN ? nil : real != 0
        default: return nil
        }
    }

    /// The value at a valid index as a `String`, as `String.fromDatabaseValue`
    /// decodes it (invalid UTF-8 repaired with U+FFFD, as `columnValue(at:)` reads it).
    @usableFromInline
    func readString(at index: Int) -> String? {
        guard readsStatement else {
            let text = withValue(at: index) { value -> String? in
                if case .storage(.text(let text)) = value.representation { return text }
                return nil
            }
            return text ?? withValue(at: index) { $0.isInvalidUTF8Text ? $0.repairedText : nil }
        }
        let column = readColumn(at: index)
        guard sqlite3_value_type(column) == SQLITE_TEXT else { return nil }
        return Statement.readText(column)
    }

    /// Calls `body` with the value at a valid index of a row that does not
    /// read a statement (rows of values, or its own values once detached),
    /// in place: reading a payload copies no value and changes no
    /// reference count.
    @inline(__always)
    private func withValue<Result>(at index: Int, _ body: (DatabaseValue) -> Result) -> Result {
        precondition(index >= 0 && index < columnCount, "StatementRow: a value out of its row")
        if let rowsBase { return body(rowsBase[start + index]) }
        return values.withUnsafeBufferPointer { body($0[index]) }
    }

    /// The value of the column at `index` of the current row.
    private func readColumnValue(at index: Int32) -> DatabaseValue {
        Statement.readColumnValue(handle.unsafelyUnwrapped, index)
    }

    /// The column at a valid `index` of the current row, for
    /// `sqlite3_value_*` reads before the statement steps again (see
    /// `Statement.readValue(_:)`).
    @inline(__always)
    private func readColumn(at index: Int) -> OpaquePointer? {
        sqlite3_column_value(handle.unsafelyUnwrapped, Int32(index))
    }
}

