#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: - Integers

/// Decodes an integer type from an integer, or from a real with an exact value
/// in range (SQLite may store `1.0` in a REAL column for `1`).
@inlinable @inline(__always)
func decodeInteger<T: FixedWidthInteger>(_ databaseValue: DatabaseValue, as type: T.Type) -> T? {
    switch databaseValue.storage {
    case .integer(let value): T(exactly: value)
    case .real(let value): T(exactly: value)
    default: nil
    }
}

extension Int64: DatabaseValueConvertible {
    /// An integer database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .integer(self)) }
    /// Decodes an integer, or a real with an exact integer value in range.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Int64? {
        decodeInteger(databaseValue, as: Int64.self)
    }
}

extension Int: DatabaseValueConvertible {
    /// An integer database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .integer(Int64(self))) }
    /// Decodes an integer, or a real with an exact integer value in range.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Int? {
        decodeInteger(databaseValue, as: Int.self)
    }
}

extension Int32: DatabaseValueConvertible {
    /// An integer database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .integer(Int64(self))) }
    /// Decodes an integer in range, or a real with an exact integer value in range.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Int32? {
        decodeInteger(databaseValue, as: Int32.self)
    }
}

extension Int16: DatabaseValueConvertible {
    /// An integer database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .integer(Int64(self))) }
    /// Decodes an integer in range, or a real with an exact integer value in range.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Int16? {
        decodeInteger(databaseValue, as: Int16.self)
    }
}

extension Int8: DatabaseValueConvertible {
    /// An integer database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .integer(Int64(self))) }
    /// Decodes an integer in range, or a real with an exact integer value in range.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Int8? {
        decodeInteger(databaseValue, as: Int8.self)
    }
}

extension UInt32: DatabaseValueConvertible {
    /// An integer database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .integer(Int64(self))) }
    /// Decodes an integer in range, or a real with an exact integer value in range.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> UInt32? {
        decodeInteger(databaseValue, as: UInt32.self)
    }
}

extension UInt16: DatabaseValueConvertible {
    /// An integer database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .integer(Int64(self))) }
    /// Decodes an integer in range, or a real with an exact integer value in range.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> UInt16? {
        decodeInteger(databaseValue, as: UInt16.self)
    }
}

extension UInt8: DatabaseValueConvertible {
    /// An integer database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .integer(Int64(self))) }
    /// Decodes an integer in range, or a real with an exact integer value in range.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> UInt8? {
        decodeInteger(databaseValue, as: UInt8.self)
    }
}

extension Bool: DatabaseValueConvertible {
    /// 1 for true, 0 for false, as SQLite stores booleans.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .integer(self ? 1 : 0)) }
    /// Decodes a number: zero is false, any other number is true.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Bool? {
        switch databaseValue.storage {
        case .integer(let value): value != 0
        case .real(let value): value != 0
        default: nil
        }
    }
}

// MARK: - Reals

extension Double: DatabaseValueConvertible {
    /// A real database value; NaN gives NULL, as SQLite stores it.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .real(self)) }
    /// Decodes a real, or an integer (rounded to the nearest Double).
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Double? {
        switch databaseValue.storage {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }
}

extension Float: DatabaseValueConvertible {
    /// A real database value; NaN gives NULL, as SQLite stores it.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .real(Double(self))) }
    /// Decodes a real or an integer, rounded to the nearest Float.
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Float? {
        Double.fromDatabaseValue(databaseValue).map(Float.init)
    }
}

// MARK: - Text and bytes

extension String: DatabaseValueConvertible {
    /// A text database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .text(self)) }
    /// Decodes a text. Numbers and blobs are not texts: they fail to decode.
    /// A text that is not valid UTF-8 decodes with its invalid bytes
    /// replaced by U+FFFD (a `String` holds valid UTF-8 only; decode `Data`
    /// for the exact bytes).
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> String? {
        if case .text(let value) = databaseValue.storage { return value }
        return nil
    }
}

extension Data: DatabaseValueConvertible {
    /// A blob database value.
    @inlinable
    public var databaseValue: DatabaseValue { DatabaseValue(storage: .blob(self)) }
    /// Decodes a blob, or the exact bytes of a text (its UTF-8, or the
    /// bytes as stored for a text that is not valid UTF-8).
    @inlinable
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Data? {
        if case .invalidUTF8Text(let bytes) = databaseValue.representation { return bytes }
        switch databaseValue.storage {
        case .blob(let value): return value
        case .text(let value): return Data(value.utf8)
        default: return nil
        }
    }
}
