/// The columns of a record, and their values, in the order the record gives
/// them: what `EncodableRecord.encode(to:)` fills, and what the record's
/// writes (`insert`, `update`, `upsert`...) store.
///
/// ```swift
/// struct Player: EncodableRecord, PersistableRecord {
///     var id: Int64
///     var name: String
///     var score: Int?
///
///     func encode(to container: inout PersistenceContainer) throws {
///         container["id"] = id
///         container["name"] = name
///         container["score"] = score   // nil is NULL
///     }
/// }
/// ```
///
/// Column names compare ASCII case-insensitively, as in SQL: setting
/// `"ID"` after `"id"` replaces the value of the same column, at its first
/// place. Iterating the container gives its `(column, value)` pairs in order.
public struct PersistenceContainer: Sendable {
    /// The column names, in the order they were first set.
    private(set) var columns: [String]
    /// The values, in the order of `columns`.
    var values: [DatabaseValue]

    /// An empty container.
    public init() {
        columns = []
        values = []
    }

    /// The value of a column, or nil when the record does not encode it.
    ///
    /// Setting a value stores its `databaseValue`; setting nil stores NULL
    /// (the column is encoded, with NULL). The getter returns that
    /// `DatabaseValue`.
    ///
    /// - Complexity: O(n), where n is the number of columns.
    public subscript(_ column: String) -> (any DatabaseValueConvertible)? {
        get {
            index(ofColumn: column).map { values[$0] }
        }
        set {
            let value = newValue?.databaseValue ?? .null
            if let index = index(ofColumn: column) {
                values[index] = value
            } else {
                columns.append(column)
                values.append(value)
            }
        }
    }

    /// The index of a column (ASCII case-insensitive), or nil.
    ///
    /// - Complexity: O(n), where n is the number of columns.
    func index(ofColumn name: String) -> Int? {
        if let index = columns.firstIndex(of: name) { return index }
        return columns.firstIndex { $0.isSameIdentifier(as: name) }
    }

    /// Appends a column as the `Encodable` encoder produces it, without
    /// looking for a previous value of the same column: a record's coding
    /// keys are distinct. `deduplicatingColumns()` fixes the rare record
    /// that encodes one column twice (a superclass and its subclass).
    @inline(__always)
    mutating func append(_ value: DatabaseValue, forColumn name: String) {
        columns.append(name)
        values.append(value)
    }

    /// Whether two columns have the same name, ASCII case-insensitively.
    ///
    /// - Complexity: O(n²), where n is the number of columns (a record's
    ///   writes check it once per list of columns, not once per record).
    var hasDuplicateColumns: Bool {
        for index in columns.indices.dropFirst() {
            let column = columns[index]
            if columns[..<index].contains(where: { $0.isSameIdentifier(as: column) }) { return true }
        }
        return false
    }

    /// Merges the columns set twice: each column keeps its last value, at
    /// its first place.
    ///
    /// - Complexity: O(n²), where n is the number of columns.
    mutating func deduplicateColumns() {
        guard hasDuplicateColumns else { return }
        var merged = PersistenceContainer()
        for index in columns.indices {
            merged[columns[index]] = values[index]
        }
        self = merged
    }

    /// Removes every column, keeping the storage for the next record.
    mutating func removeAll() {
        columns.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }
}

extension PersistenceContainer: RandomAccessCollection {
    /// The position of the first column.
    public var startIndex: Int { 0 }

    /// The position after the last column.
    public var endIndex: Int { columns.count }

    /// The column and the value at `position`.
    public subscript(position: Int) -> (column: String, value: DatabaseValue) {
        (columns[position], values[position])
    }
}

extension PersistenceContainer: CustomStringConvertible {
    /// `[id: 1, name: 'Arthur', score: NULL]`.
    public var description: String {
        "[" + indices.map { "\(columns[$0]): \(values[$0])" }.joined(separator: ", ") + "]"
    }
}
