import DatabaseRegions

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
        switch representation {
        case .storage(.null):
            hasher.combine(0 as UInt8)
        case .storage(.integer(let integer)):
            hasher.combine(1 as UInt8)
            hasher.combine(integer)
        case .storage(.real(let real)):
            hasher.combine(1 as UInt8)
            if let exact = SQLiteBinaryOrder.exactInteger(real) { hasher.combine(exact) } else { hasher.combine(real) }
        case .storage(.text(var text)):
            hasher.combine(2 as UInt8)
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .invalidUTF8Text(let bytes):
            hasher.combine(2 as UInt8)
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        case .storage(.blob(let blob)):
            hasher.combine(3 as UInt8)
            blob.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// Three-way comparison in SQLite's `BINARY` order: negative, zero,
    /// positive. A switch of its own (a hot path of the diffs), on the
    /// package's one implementation of the rules' primitives
    /// (`SQLiteBinaryOrder`).
    static func compare(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Int {
        switch (lhs.representation, rhs.representation) {
        case (.storage(.integer(let l)), .storage(.integer(let r))):
            return l < r ? -1 : (l == r ? 0 : 1)
        case (.storage(.text(let l)), .storage(.text(let r))):
            return SQLiteBinaryOrder.compare(utf8: l, r)
        case (.storage(.real(let l)), .storage(.real(let r))):
            return l < r ? -1 : (l == r ? 0 : 1)
        case (.storage(.integer(let l)), .storage(.real(let r))):
            return -SQLiteBinaryOrder.compare(real: r, integer: l)
        case (.storage(.real(let l)), .storage(.integer(let r))):
            return SQLiteBinaryOrder.compare(real: l, integer: r)
        case (.storage(.blob(let l)), .storage(.blob(let r))):
            return l.withUnsafeBytes { l in r.withUnsafeBytes { r in SQLiteBinaryOrder.compare(l, r) } }
        case (.invalidUTF8Text(let l), .invalidUTF8Text(let r)):
            return l.withUnsafeBytes { l in r.withUnsafeBytes { r in SQLiteBinaryOrder.compare(l, r) } }
        case (.invalidUTF8Text(let l), .storage(.text(var r))):
            return l.withUnsafeBytes { l in r.withUTF8 { r in SQLiteBinaryOrder.compare(l, UnsafeRawBufferPointer(r)) } }
        case (.storage(.text(var l)), .invalidUTF8Text(let r)):
            return r.withUnsafeBytes { r in l.withUTF8 { l in SQLiteBinaryOrder.compare(UnsafeRawBufferPointer(l), r) } }
        default:
            let l = lhs.storageClassRank, r = rhs.storageClassRank
            return l < r ? -1 : (l == r ? 0 : 1)
        }
    }

    /// NULL 0, numbers 1, texts 2, blobs 3.
    private var storageClassRank: Int {
        switch representation {
        case .storage(.null): 0
        case .storage(.integer), .storage(.real): 1
        case .storage(.text), .invalidUTF8Text: 2
        case .storage(.blob): 3
        }
    }
}

extension DatabaseValue {
    /// Whether two values are stored identically: same storage class, same
    /// value, texts by their exact bytes (valid UTF-8 or not). Stricter than
    /// `==`, for which the integer 1 and the real 1.0 are equal.
    ///
    /// - Complexity: O(n) for texts and blobs, where n is their byte count,
    ///   without a copy.
    package func isStoredIdentically(to other: DatabaseValue) -> Bool {
        switch (representation, other.representation) {
        case (.storage(.null), .storage(.null)): true
        case (.storage(.integer(let l)), .storage(.integer(let r))): l == r
        case (.storage(.real(let l)), .storage(.real(let r))): l == r
        case (.storage(.text(let l)), .storage(.text(let r))): ExactText(l) == ExactText(r)
        case (.invalidUTF8Text(let l), .invalidUTF8Text(let r)): l == r
        case (.storage(.blob(let l)), .storage(.blob(let r))): l == r
        default: false
        }
    }
}
