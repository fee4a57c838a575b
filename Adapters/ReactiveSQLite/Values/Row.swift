/// A database row: ordered columns, each with a name and a value.
///
/// Read values with a subscript, by index or by column name (ASCII
/// case-insensitive, as SQLite compares names; the leftmost column wins when
/// several have the same name). Subscripts throw a `RowDecodingError`, never
/// trap, when a column is missing or a value does not fit the requested type:
///
/// ```swift
/// let row = try SQLRequest<Row>(sql: "SELECT id, name FROM player").fetchOne(db)!
/// let id: Int64 = try row["id"]
/// let name: String? = try row[1]
/// ```
///
/// Two rows are equal when they have the same column names in the same order
/// and equal raw values (see `DatabaseValue` for the comparison of values).
///
/// A record's `init(row:)` may keep its row, or hand it to another thread:
/// the row keeps its values whatever the fetch does next. Read on another
/// thread before `init(row:)` returns, it waits until `init(row:)` returns,
/// however long that takes; so `init(row:)` must not wait for such a read
/// (the two threads would wait for each other, as with two locks).
public struct Row: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline var storage: Storage
    /// The address of the `StatementRow` of `storage`, or 0: reads go
    /// through it without changing its reference count (it is alive as
    /// long as `storage` holds it). An integer, which is `Sendable` (the
    /// object it designates is).
    @usableFromInline var statementRowAddress: UInt

    /// Where the values of a row are.
    @usableFromInline
    enum Storage: Sendable {
        /// The columns, and one value per column.
        case values(RowLayout, [DatabaseValue])
        /// The current row of a statement, read in place: the row a record
        /// decodes from during a fetch (see `StatementRow`). One reference,
        /// so that handing the row to `init(row:)` costs one retain.
        case statement(StatementRow)
    }

    init(layout: RowLayout, values: [DatabaseValue]) {
        self.storage = .values(layout, values)
        self.statementRowAddress = 0
    }

    /// A row that reads the current row of a statement in place.
    @inlinable
    init(_ statementRow: StatementRow) {
        self.storage = .statement(statementRow)
        self.statementRowAddress = UInt(bitPattern: Unmanaged.passUnretained(statementRow).toOpaque())
    }

    /// Calls `body` with the `StatementRow` the row reads, if any, without
    /// changing its reference count.
    @inlinable @inline(__always)
    func withStatementRow<Result>(_ body: (StatementRow) -> Result) -> Result? {
        guard let address = UnsafeRawPointer(bitPattern: statementRowAddress) else { return nil }
        return Unmanaged<StatementRow>.fromOpaque(address)._withUnsafeGuaranteedRef(body)
    }

    /// Creates a row from column names and values, in order.
    ///
    /// ```swift
    /// let row = Row(["id": 1, "name": "Arthur", "score": nil])
    /// ```
    public init(_ columns: KeyValuePairs<String, (any DatabaseValueConvertible)?>) {
        self.init(layout: RowLayout(columnNames: columns.map(\.key), sql: nil),
                  values: columns.map { $0.value?.databaseValue ?? .null })
    }

    /// The columns of the row.
    @usableFromInline
    var layout: RowLayout {
        switch storage {
        case .values(let layout, _): layout
        case .statement(let statementRow): statementRow.layout
        }
    }

    /// The values, one per column.
    public internal(set) var databaseValues: [DatabaseValue] {
        get {
            switch storage {
            case .values(_, let values): values
            case .statement(let statementRow): statementRow.databaseValues()
            }
        }
        _modify {
            let layout = self.layout
            var values = databaseValues
            // Not shared with `storage`: written in place.
            storage = .values(layout, [])
            statementRowAddress = 0
            defer { storage = .values(layout, values) }
            yield &values
        }
    }

    /// The number of columns.
    @inlinable
    public var count: Int {
        if let count = withStatementRow({ $0.columnCount }) { return count }
        return valueCount
    }

    /// The number of values of a row of values.
    @usableFromInline
    var valueCount: Int {
        switch storage {
        case .values(_, let values): values.count
        case .statement(let statementRow): statementRow.columnCount
        }
    }

    /// The column names, in order.
    public var columnNames: [String] { layout.columnNames }

    /// Whether the row has a column with this name (ASCII case-insensitive).
    public func hasColumn(_ name: String) -> Bool { layout.index(ofColumn: name) != nil }

    /// The index of the leftmost column with this name (ASCII case-insensitive).
    public func index(ofColumn name: String) -> Int? { layout.index(ofColumn: name) }

    /// The value of the column at `index`, decoded as `Value`.
    ///
    /// - Throws: `RowDecodingError` when the index is out of range or the value
    ///   cannot be decoded as `Value` (a NULL for a non-optional type, a text for
    ///   a number, an integer that does not fit).
    ///
    /// Inlinable, like the decoding of the standard value types: specialized
    /// for `Value` in the caller's module, a record's `init(row:)` decodes
    /// each column without a run-time lookup of generic metadata, and a
    /// standard type (`Int64`, `Int`, `Double`, `String`, `Bool` and their
    /// optionals) reads a row of a fetch straight from the statement.
    @inlinable
    public subscript<Value: DatabaseValueConvertible>(index: Int) -> Value {
        get throws {
            guard index >= 0, index < count else { throw indexOutOfRange(index) }
            return try decode(Value.self, at: index)
        }
    }

    /// The error for a column index the row does not have.
    @usableFromInline
    func indexOutOfRange(_ index: Int) -> RowDecodingError {
        RowDecodingError(
            kind: .columnNotFound, column: "#\(index)", sql: layout.sql,
            message: "no column at index \(index) in a row of \(count) column(s)")
    }

    /// The value of the leftmost column named `name` (ASCII case-insensitive),
    /// decoded as `Value`.
    ///
    /// - Throws: `RowDecodingError` when there is no such column or the value
    ///   cannot be decoded as `Value`.
    @inlinable
    public subscript<Value: DatabaseValueConvertible>(name: String) -> Value {
        get throws {
            guard let index = layout.index(ofColumn: name) else {
                throw columnNotFound(name)
            }
            return try decode(Value.self, at: index)
        }
    }

    /// The error for a column name the row does not have.
    @usableFromInline
    func columnNotFound(_ name: String) -> RowDecodingError {
        RowDecodingError(
            kind: .columnNotFound, column: name, sql: layout.sql,
            message: "no column named \(name) (columns: \(columnNames.joined(separator: ", ")))")
    }

    /// The value at a valid index.
    @usableFromInline
    func value(at index: Int) -> DatabaseValue {
        switch storage {
        case .values(_, let values): values[index]
        case .statement(let statementRow): statementRow.value(at: index)
        }
    }

    /// Whether the value at a valid index is NULL.
    @inline(__always)
    func isNull(at index: Int) -> Bool {
        switch storage {
        case .values(_, let values): values[index].isNull
        case .statement(let statementRow): statementRow.isNull(at: index)
        }
    }

    /// Decodes the value at a valid index.
    @inlinable @inline(__always)
    func decode<Value: DatabaseValueConvertible>(_ type: Value.Type, at index: Int) throws -> Value {
        let value: DatabaseValue
        if let read = withStatementRow({ $0.decode(Value.self, at: index) }) {
            if let decoded = read { return decoded }
            value = withStatementRow { $0.value(at: index) }!
        } else {
            value = self.value(at: index)
        }
        guard let decoded = Value.fromDatabaseValue(value) else { throw valueMismatch(Value.self, at: index) }
        return decoded
    }

    /// The error for a value at a valid index that does not decode as `type`.
    @usableFromInline
    func valueMismatch<Value>(_ type: Value.Type, at index: Int) -> RowDecodingError {
        RowDecodingError.valueMismatch(
            Value.self, value: value(at: index), column: layout.columnNames[index], sql: layout.sql)
    }

    /// Decodes the value at a valid index, nil for NULL.
    @inline(__always)
    func decodeIfPresent<Value: DatabaseValueConvertible>(_ type: Value.Type, at index: Int) throws -> Value? {
        if isNull(at: index) { return nil }
        return try decode(Value.self, at: index)
    }

    /// `[id:1 name:'Arthur']`.
    public var description: String {
        "[" + zip(columnNames, databaseValues).map { "\($0):\($1)" }.joined(separator: " ") + "]"
    }

    /// Equal column names in the same order, and equal raw values.
    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.databaseValues == rhs.databaseValues
            && (lhs.layout === rhs.layout || lhs.layout.columnNames == rhs.layout.columnNames)
    }

    /// Hashes the column names and the raw values.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(layout.columnNames)
        hasher.combine(databaseValues)
    }
}

extension StatementRow {
    /// The value at a valid index decoded as `Value` with a typed read of
    /// the statement, for the standard types, or nil: then decode the
    /// column's `DatabaseValue` (the same result, when there is one).
    ///
    /// Specialized in the caller's module, where `Value` is known: the type
    /// tests fold away, and a standard type costs one call.
    @inlinable @inline(__always)
    func decode<Value: DatabaseValueConvertible>(_: Value.Type, at index: Int) -> Value? {
        if Value.self == Int64.self { return unsafeBitCast(int64(at: index), to: Value?.self) }
        if Value.self == Int.self { return unsafeBitCast(int(at: index), to: Value?.self) }
        if Value.self == String.self { return unsafeBitCast(string(at: index), to: Value?.self) }
        if Value.self == Double.self { return unsafeBitCast(double(at: index), to: Value?.self) }
        if Value.self == Bool.self { return unsafeBitCast(bool(at: index), to: Value?.self) }
        if Value.self == Int64?.self { return unsafeBitCast(optional(int64, at: index), to: Value?.self) }
        if Value.self == Int?.self { return unsafeBitCast(optional(int, at: index), to: Value?.self) }
        if Value.self == String?.self { return unsafeBitCast(optional(string, at: index), to: Value?.self) }
        if Value.self == Double?.self { return unsafeBitCast(optional(double, at: index), to: Value?.self) }
        if Value.self == Bool?.self { return unsafeBitCast(optional(bool, at: index), to: Value?.self) }
        return nil
    }

    /// `.some(nil)` for NULL, `.some(value)` for a value `read` decodes, nil otherwise.
    @inlinable @inline(__always)
    func optional<Wrapped>(_ read: (Int) -> Wrapped?, at index: Int) -> Wrapped?? {
        if isNull(at: index) { return .some(nil) }
        return read(index).map { .some($0) }
    }
}
