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
public struct Row: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline let layout: RowLayout
    /// The values, one per column.
    public internal(set) var databaseValues: [DatabaseValue]

    init(layout: RowLayout, values: [DatabaseValue]) {
        self.layout = layout
        self.databaseValues = values
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

    /// The number of columns.
    public var count: Int { databaseValues.count }

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
    /// each column without a run-time lookup of generic metadata.
    @inlinable
    public subscript<Value: DatabaseValueConvertible>(index: Int) -> Value {
        get throws {
            guard index >= 0, index < databaseValues.count else { throw indexOutOfRange(index) }
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

    /// Decodes the value at a valid index.
    @inlinable @inline(__always)
    func decode<Value: DatabaseValueConvertible>(_ type: Value.Type, at index: Int) throws -> Value {
        let value = databaseValues[index]
        guard let decoded = Value.fromDatabaseValue(value) else { throw valueMismatch(Value.self, at: index) }
        return decoded
    }

    /// The error for a value at a valid index that does not decode as `type`.
    @usableFromInline
    func valueMismatch<Value>(_ type: Value.Type, at index: Int) -> RowDecodingError {
        RowDecodingError.valueMismatch(
            Value.self, value: databaseValues[index], column: layout.columnNames[index], sql: layout.sql)
    }

    /// Decodes the value at a valid index, nil for NULL.
    @inline(__always)
    func decodeIfPresent<Value: DatabaseValueConvertible>(_ type: Value.Type, at index: Int) throws -> Value? {
        let value = databaseValues[index]
        if case .null = value.storage { return nil }
        guard let decoded = Value.fromDatabaseValue(value) else {
            throw RowDecodingError.valueMismatch(
                Value.self, value: value, column: layout.columnNames[index], sql: layout.sql)
        }
        return decoded
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
