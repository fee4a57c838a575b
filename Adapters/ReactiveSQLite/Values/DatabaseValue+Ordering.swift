import DatabaseRegions
import Foundation

// SQLite's BINARY order on raw values: https://www.sqlite.org/datatype3.html#sort_order
// > A value with storage class NULL is considered less than any other value.
// > INTEGER or REAL values are less than TEXT or BLOB values. When an INTEGER or
// > REAL is compared to another INTEGER or REAL, a numerical comparison is
// > performed. A TEXT value is less than a BLOB value. [...] When two BLOB
// > values are compared, the result is determined using memcmp().

extension DatabaseValue: Comparable, Hashable {
    /// Whether two values are equal in SQLite's `BINARY` collation: same
    /// storage class family and same raw value (numbers compare exactly,
    /// texts by UTF-8 bytes, blobs by bytes).
    ///
    /// - Complexity: O(n) for texts and blobs, where n is their byte count.
    public static func == (lhs: DatabaseValue, rhs: DatabaseValue) -> Bool {
        compare(lhs, rhs) == 0
    }

    /// Whether `lhs` sorts before `rhs` in SQLite's `BINARY` order: NULL, then
    /// numbers, then texts by UTF-8 bytes, then blobs by bytes.
    ///
    /// - Complexity: O(n) for texts and blobs, where n is their byte count.
    public static func < (lhs: DatabaseValue, rhs: DatabaseValue) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Hashes the raw value, consistently with `==`: a real with an exact
    /// integer value hashes as that integer, a text as its bytes.
    public func hash(into hasher: inout Hasher) {
        SQLiteBinaryOrder.hash(
            rawValue, into: &hasher,
            text: { text, hasher in text.withBytes { hasher.combine(bytes: $0) } },
            blob: { blob, hasher in blob.withUnsafeBytes { hasher.combine(bytes: $0) } })
    }

    /// Three-way comparison in SQLite's `BINARY` order: negative, zero, positive.
    static func compare(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Int {
        SQLiteBinaryOrder.compare(
            lhs.rawValue, rhs.rawValue,
            texts: { l, r in l.withBytes { l in r.withBytes { r in SQLiteBinaryOrder.compare(l, r) } } },
            blobs: { l, r in l.withUnsafeBytes { l in r.withUnsafeBytes { r in SQLiteBinaryOrder.compare(l, r) } } })
    }

    /// The bytes of a text: a string's UTF-8, or the exact bytes of a text
    /// that is not valid UTF-8. Texts compare and hash by these bytes,
    /// never by a lossy conversion.
    private enum TextBytes {
        case string(String)
        case invalidUTF8(Data)

        func withBytes<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
            switch self {
            case .string(var string): string.withUTF8 { body(UnsafeRawBufferPointer($0)) }
            case .invalidUTF8(let bytes): bytes.withUnsafeBytes(body)
            }
        }
    }

    /// The value, as the package's SQLite rules see it.
    @inline(__always)
    private var rawValue: SQLiteRawValue<TextBytes, Data> {
        switch representation {
        case .storage(.null): .null
        case .storage(.integer(let integer)): .integer(integer)
        case .storage(.real(let real)): .real(real)
        case .storage(.text(let text)): .text(.string(text))
        case .storage(.blob(let blob)): .blob(blob)
        case .invalidUTF8Text(let bytes): .text(.invalidUTF8(bytes))
        }
    }
}
