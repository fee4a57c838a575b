import Foundation

/// A value stored in a SQLite database: NULL, an integer, a real, a text or a blob.
///
/// Equality, hashing and ordering follow SQLite's `BINARY` collation on raw
/// values, never Swift's `String` comparison: NULL first, then numbers (an
/// integer and a real compare by their exact numeric values, so `1` equals
/// `1.0`), then texts by their UTF-8 bytes, then blobs by their bytes. Two
/// texts that Swift considers equal because they are canonically equivalent
/// (`"e\u{301}"` and `"\u{e9}"`) are different database values, as they are
/// different keys in a SQLite index.
public struct DatabaseValue: Sendable, CustomStringConvertible {
    /// The five storage classes of SQLite.
    public enum Storage: Sendable {
        /// NULL.
        case null
        /// A 64-bit signed integer.
        case integer(Int64)
        /// A 64-bit floating point number.
        case real(Double)
        /// A text. Text that is not valid UTF-8 has its invalid bytes replaced
        /// by U+FFFD when it is read into a `String`.
        case text(String)
        /// A blob of bytes.
        case blob(Data)
    }

    /// The value's storage class and payload. Never a real NaN (see `init(storage:)`).
    public let storage: Storage

    /// Creates a value from its storage.
    ///
    /// A real NaN becomes NULL, as SQLite stores it: so a value always reads
    /// back as it was written, and equality and ordering stay total.
    @inline(__always)
    public init(storage: Storage) {
        if case .real(let value) = storage, value.isNaN {
            self.storage = .null
        } else {
            self.storage = storage
        }
    }

    /// The NULL value.
    public static let null = DatabaseValue(storage: .null)

    /// Whether the value is NULL.
    public var isNull: Bool {
        if case .null = storage { return true }
        return false
    }

    /// The value as SQL text would show it: `NULL`, `1`, `1.5`, `'text'`, `X'00FF'`.
    public var description: String {
        switch storage {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let value): "X'" + value.map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return byte < 16 ? "0" + hex : hex
            }.joined() + "'"
        }
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself.
    public var databaseValue: DatabaseValue { self }

    /// The value itself: decoding a `DatabaseValue` never fails.
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> DatabaseValue? { databaseValue }
}
