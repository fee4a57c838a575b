#if GRDB
// Built with the package trait GRDB only.
import DatabaseRegions
import Foundation
import GRDB

// SQLite's BINARY order on raw values: https://www.sqlite.org/datatype3.html#sort_order
// > A value with storage class NULL is considered less than any other value.
// > INTEGER or REAL values are less than TEXT or BLOB values. When an INTEGER or
// > REAL is compared to another INTEGER or REAL, a numerical comparison is
// > performed. A TEXT value is less than a BLOB value. [...] When two BLOB
// > values are compared, the result is determined using memcmp().
//
// GRDB's `DatabaseValue` equality compares texts as Swift strings, which
// makes canonically equivalent texts equal; it has no order. This file
// maps GRDB's values to the package's one implementation of SQLite's
// BINARY collation (`SQLiteBinaryOrder`).

enum RawValueComparison {
    /// Three-way comparison in SQLite's `BINARY` order: negative, zero,
    /// positive (see `SQLiteBinaryOrder`). A real NaN compares as the NULL
    /// that SQLite stores for it.
    ///
    /// - Complexity: O(n) for texts and blobs, where n is their byte count.
    static func compare(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Int {
        SQLiteBinaryOrder.compare(
            rawValue(lhs), rawValue(rhs),
            texts: { SQLiteBinaryOrder.compare(utf8: $0, $1) },
            blobs: { l, r in l.withUnsafeBytes { l in r.withUnsafeBytes { r in SQLiteBinaryOrder.compare(l, r) } } })
    }

    /// Hashes a raw value consistently with `compare(_:_:) == 0`.
    static func hash(_ value: DatabaseValue, into hasher: inout Hasher) {
        SQLiteBinaryOrder.hash(
            rawValue(value), into: &hasher,
            text: { text, hasher in
                var text = text
                text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            },
            blob: { blob, hasher in blob.withUnsafeBytes { hasher.combine(bytes: $0) } })
    }

    /// The value as SQLite stores it: a real NaN is NULL.
    ///
    /// SQLite never returns a NaN, but GRDB keeps it in the values that a
    /// record encodes (an initial record of `trackingSetDifferences`), and
    /// comparing a NaN with an integer would trap on the conversion to
    /// `Int64`.
    private static func rawValue(_ value: DatabaseValue) -> SQLiteRawValue<String, Data> {
        switch value.storage {
        case .null: .null
        case .int64(let integer): .integer(integer)
        case .double(let real): real.isNaN ? .null : .real(real)
        case .string(let text): .text(text)
        case .blob(let blob): .blob(blob)
        }
    }
}

extension Row {
    /// Whether two raw rows hold the same values in the same columns: column
    /// names compare case-insensitively (as SQL does) and in any order,
    /// values as SQLite's `BINARY` collation does (numbers numerically,
    /// texts and blobs byte by byte).
    ///
    /// - Complexity: O(c) when both rows have their columns in the same
    ///   order (rows of one statement), O(c^2) otherwise (an initial
    ///   record's encoding), where c is the number of columns.
    func hasSameRawValues(as other: Row) -> Bool {
        guard count == other.count else { return false }
        var otherIndex = other.startIndex
        for (name, value) in self {
            let (otherName, otherValue) = other[otherIndex]
            guard Self.columnNamesAreEqual(name, otherName) else {
                return hasSameRawValuesInAnyColumnOrder(as: other)
            }
            if RawValueComparison.compare(value, otherValue) != 0 { return false }
            otherIndex = other.index(after: otherIndex)
        }
        return true
    }

    private func hasSameRawValuesInAnyColumnOrder(as other: Row) -> Bool {
        for (name, value) in self {
            guard let (_, otherValue) = other.first(where: { Self.columnNamesAreEqual($0.0, name) }),
                RawValueComparison.compare(value, otherValue) == 0
            else { return false }
        }
        return true
    }

    /// SQL column names compare as SQLite compares identifiers (see
    /// `SQLiteIdentifier`).
    static func columnNamesAreEqual(_ lhs: String, _ rhs: String) -> Bool {
        SQLiteIdentifier.areEqual(lhs, rhs)
    }
}

#endif
