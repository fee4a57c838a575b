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
    /// integer value hashes as that integer, a text as its UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        switch storage {
        case .null:
            hasher.combine(0 as UInt8)
        case .integer(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .real(let value):
            hasher.combine(1 as UInt8)
            if let exact = Int64(exactly: value) {
                hasher.combine(exact)
            } else {
                hasher.combine(value)
            }
        case .text(let value):
            hasher.combine(2 as UInt8)
            var value = value
            value.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .blob(let value):
            hasher.combine(3 as UInt8)
            value.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// Three-way comparison in SQLite's `BINARY` order: negative, zero, positive.
    static func compare(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Int {
        switch (lhs.storage, rhs.storage) {
        case (.integer(let l), .integer(let r)):
            return l < r ? -1 : (l == r ? 0 : 1)
        case (.text(let l), .text(let r)):
            return compareUTF8(l, r)
        case (.real(let l), .real(let r)):
            return l < r ? -1 : (l == r ? 0 : 1)
        case (.integer(let l), .real(let r)):
            return -compare(r, l)
        case (.real(let l), .integer(let r)):
            return compare(l, r)
        case (.blob(let l), .blob(let r)):
            return compareBytes(l, r)
        default:
            let l = lhs.storageClassRank, r = rhs.storageClassRank
            return l < r ? -1 : (l == r ? 0 : 1)
        }
    }

    private var storageClassRank: Int {
        switch storage {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
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

    private static func compareBuffers(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        let common = min(lhs.count, rhs.count)
        if common > 0, let l = lhs.baseAddress, let r = rhs.baseAddress {
            let result = memcmp(l, r, common)
            if result != 0 { return result < 0 ? -1 : 1 }
        }
        return lhs.count < rhs.count ? -1 : (lhs.count == rhs.count ? 0 : 1)
    }
}
