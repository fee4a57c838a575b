/// A type whose values can be stored in a database column and read back.
///
/// ReactiveSQLite provides conformances for `Bool`, `Int`, `Int8` to `Int64`,
/// `UInt8` to `UInt32`, `Double`, `Float`, `String`, `Data`, `Date`, `UUID`,
/// `Decimal` (as text), `URL` (as text), `DatabaseValue`, and `Optional` of
/// any of them. Conform your own types by
/// converting to and from one of those.
///
/// Decoding never traps: `fromDatabaseValue(_:)` returns nil for a value it
/// cannot represent (a text for an integer, an integer that does not fit, a
/// NULL for a non-optional type), and the fetching code turns that nil into a
/// `RowDecodingError` naming the column and the SQL.
public protocol DatabaseValueConvertible {
    /// The database value that stores `self`.
    var databaseValue: DatabaseValue { get }

    /// Decodes a value, or returns nil when `databaseValue` cannot be
    /// represented by this type.
    static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Self?
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// NULL for `nil`, the wrapped value's database value otherwise.
    @inlinable
    public var databaseValue: DatabaseValue {
        switch self {
        case .none: .null
        case .some(let value): value.databaseValue
        }
    }

    /// `.some(nil)` for NULL; the wrapped type's decoding otherwise.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Wrapped?? {
        if case .null = databaseValue.storage { return .some(nil) }
        return Wrapped.fromDatabaseValue(databaseValue).map { .some($0) }
    }
}
