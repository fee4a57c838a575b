/// An error thrown when a row cannot be decoded as requested: a missing
/// column, a NULL for a non-optional type, a value of the wrong type, an
/// integer that does not fit, or a record's own decoding failure.
///
/// It names the column and, when the row comes from a statement, its SQL.
public struct RowDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of decoding failures.
    public enum Kind: Sendable, Hashable {
        /// The row has no such column (by name or index).
        case columnNotFound
        /// The column's value cannot be decoded as the requested type.
        case valueMismatch
        /// A record's decoding failed for another reason (nested JSON, a
        /// `Decodable` type's own checks).
        case dataCorrupted
    }

    /// What went wrong.
    public let kind: Kind
    /// The column name, or `#index` for a column designated by its index.
    public let column: String
    /// The SQL that produced the row, if any.
    public let sql: String?
    /// A sentence describing the failure.
    public let message: String

    /// Creates a decoding error.
    public init(kind: Kind, column: String, sql: String?, message: String) {
        self.kind = kind
        self.column = column
        self.sql = sql
        self.message = message
    }

    @usableFromInline
    static func valueMismatch<T>(_ type: T.Type, value: DatabaseValue, column: String, sql: String?) -> Self {
        let message =
            value.isNull
            ? "could not decode \(T.self) from NULL in column \(column)"
            : "could not decode \(T.self) from \(value) in column \(column)"
        return RowDecodingError(kind: .valueMismatch, column: column, sql: sql, message: message)
    }

    /// `could not decode Int from 'abc' in column score - while reading `SELECT ...``.
    public var description: String {
        if let sql { return "\(message) - while reading `\(sql)`" }
        return message
    }
}
