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
// compares raw values as SQLite's BINARY collation does.

enum RawValueComparison {
    /// Three-way comparison in SQLite's `BINARY` order: negative, zero,
    /// positive. Numbers compare exactly (an integer above 2^53 is never
    /// rounded to a Double), texts by UTF-8 bytes, blobs by bytes. A real
    /// NaN compares as the NULL that SQLite stores for it.
    ///
    /// - Complexity: O(n) for texts and blobs, where n is their byte count.
    static func compare(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Int {
        let lhs = storedStorage(lhs), rhs = storedStorage(rhs)
        switch (lhs, rhs) {
        case (.int64(let l), .int64(let r)):
            return l < r ? -1 : (l == r ? 0 : 1)
        case (.string(let l), .string(let r)):
            return compareUTF8(l, r)
        case (.double(let l), .double(let r)):
            return l < r ? -1 : (l == r ? 0 : 1)
        case (.int64(let l), .double(let r)):
            return -compare(r, l)
        case (.double(let l), .int64(let r)):
            return compare(l, r)
        case (.blob(let l), .blob(let r)):
            return compareBytes(l, r)
        default:
            let l = storageClassRank(lhs), r = storageClassRank(rhs)
            return l < r ? -1 : (l == r ? 0 : 1)
        }
    }

    /// Hashes a raw value consistently with `compare(_:_:) == 0`.
    static func hash(_ value: DatabaseValue, into hasher: inout Hasher) {
        switch storedStorage(value) {
        case .null:
            hasher.combine(0 as UInt8)
        case .int64(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .double(let value):
            hasher.combine(1 as UInt8)
            if let exact = Int64(exactly: value) {
                hasher.combine(exact)
            } else {
                hasher.combine(value)
            }
        case .string(var value):
            hasher.combine(2 as UInt8)
            value.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .blob(let value):
            hasher.combine(3 as UInt8)
            value.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// The storage of `value` as SQLite stores it: a real NaN is NULL.
    ///
    /// SQLite never returns a NaN, but GRDB keeps it in the values that a
    /// record encodes (an initial record of `trackingSetDifferences`), and
    /// comparing a NaN with an integer would trap on the conversion to
    /// `Int64`.
    private static func storedStorage(_ value: DatabaseValue) -> DatabaseValue.Storage {
        if case .double(let real) = value.storage, real.isNaN { return .null }
        return value.storage
    }

    private static func storageClassRank(_ storage: DatabaseValue.Storage) -> Int {
        switch storage {
        case .null: 0
        case .int64, .double: 1
        case .string: 2
        case .blob: 3
        }
    }

    /// Compares a real with an integer exactly (no rounding of the integer to
    /// a Double, which would make 2^53 + 1 equal to 2^53).
    private static func compare(_ real: Double, _ integer: Int64) -> Int {
        // Int64 bounds as Doubles: -2^63 is exact, 2^63 is one past Int64.max.
        if real < -9.223372036854775808e18 { return -1 }
        if real >= 9.223372036854775808e18 { return 1 }
        let truncated = real.rounded(.down)
        let whole = Int64(truncated)
        if whole != integer { return whole < integer ? -1 : 1 }
        return real > truncated ? 1 : 0
    }

    private static func compareUTF8(_ lhs: String, _ rhs: String) -> Int {
        var lhs = lhs, rhs = rhs
        return lhs.withUTF8 { l in
            rhs.withUTF8 { r in compareBuffers(UnsafeRawBufferPointer(l), UnsafeRawBufferPointer(r)) }
        }
    }

    private static func compareBytes(_ lhs: Data, _ rhs: Data) -> Int {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in compareBuffers(l, r) } }
    }

    /// memcmp order, then the shorter first.
    private static func compareBuffers(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        let common = min(lhs.count, rhs.count)
        if common > 0, let l = lhs.baseAddress, let r = rhs.baseAddress {
            let result = memcmp(l, r, common)
            if result != 0 { return result < 0 ? -1 : 1 }
        }
        return lhs.count < rhs.count ? -1 : (lhs.count == rhs.count ? 0 : 1)
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

    /// SQL column names compare case-insensitively, for ASCII letters only
    /// (as SQLite does).
    static func columnNamesAreEqual(_ lhs: String, _ rhs: String) -> Bool {
        if lhs == rhs { return true }
        return lhs.utf8.elementsEqual(rhs.utf8) { asciiLowercase($0) == asciiLowercase($1) }
    }

    private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
