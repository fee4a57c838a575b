// SQLite's BINARY order on raw values: https://www.sqlite.org/datatype3.html#sort_order
// > A value with storage class NULL is considered less than any other value.
// > INTEGER or REAL values are less than TEXT or BLOB values. When an INTEGER or
// > REAL is compared to another INTEGER or REAL, a numerical comparison is
// > performed. A TEXT value is less than a BLOB value. [...] When two BLOB
// > values are compared, the result is determined using memcmp().

/// SQLite's `BINARY` collation on raw values, and the exact comparisons it
/// rests on: the one implementation of these rules in the package.
///
/// Numbers compare numerically and exactly (an integer above 2^53 is never
/// rounded to a Double); texts by their bytes (never through a lossy
/// conversion); blobs by their bytes; across storage classes, NULL before
/// numbers before texts before blobs.
package enum SQLiteBinaryOrder {
    /// Three-way comparison of two raw values: negative, zero, positive.
    ///
    /// - Parameters:
    ///   - compareTexts: The byte order of two texts (see `compare(_:_:)`
    ///     on buffers).
    ///   - compareBlobs: The byte order of two blobs.
    /// - Complexity: O(n) for texts and blobs, where n is their byte count.
    @inline(__always)
    package static func compare<Text, Blob>(
        _ lhs: SQLiteRawValue<Text, Blob>, _ rhs: SQLiteRawValue<Text, Blob>,
        texts compareTexts: (Text, Text) -> Int, blobs compareBlobs: (Blob, Blob) -> Int
    ) -> Int {
        switch (lhs, rhs) {
        case (.integer(let l), .integer(let r)): return compare(l, r)
        case (.text(let l), .text(let r)): return compareTexts(l, r)
        case (.real(let l), .real(let r)): return compare(l, r)
        case (.integer(let l), .real(let r)): return -compare(real: r, integer: l)
        case (.real(let l), .integer(let r)): return compare(real: l, integer: r)
        case (.blob(let l), .blob(let r)): return compareBlobs(l, r)
        default: return compare(rank(lhs), rank(rhs))
        }
    }

    /// Feeds a raw value to `hasher`, consistently with `compare == 0`: a
    /// real with an exact integer value hashes as that integer.
    @inline(__always)
    package static func hash<Text, Blob>(
        _ value: SQLiteRawValue<Text, Blob>, into hasher: inout Hasher,
        text hashText: (Text, inout Hasher) -> Void, blob hashBlob: (Blob, inout Hasher) -> Void
    ) {
        hasher.combine(UInt8(rank(value)))
        switch value {
        case .null: break
        case .integer(let integer): hasher.combine(integer)
        case .real(let real):
            if let exact = exactInteger(real) { hasher.combine(exact) } else { hasher.combine(real) }
        case .text(let text): hashText(text, &hasher)
        case .blob(let blob): hashBlob(blob, &hasher)
        }
    }

    /// NULL 0, numbers 1, texts 2, blobs 3.
    @inline(__always)
    package static func rank<Text, Blob>(_ value: SQLiteRawValue<Text, Blob>) -> Int {
        switch value {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        case .blob: 3
        }
    }

    /// Three-way comparison of two comparable values.
    @inline(__always)
    package static func compare<T: Comparable>(_ lhs: T, _ rhs: T) -> Int {
        lhs < rhs ? -1 : (lhs == rhs ? 0 : 1)
    }

    /// Compares a real with an integer exactly (no rounding of the integer
    /// to a Double, which would make 2^53 + 1 equal to 2^53).
    ///
    /// No libm function: the core modules link with the Swift standard
    /// library alone (`rounded()` and `Int64(exactly:)` call `floor`,
    /// `trunc`... on Linux).
    package static func compare(real: Double, integer: Int64) -> Int {
        // Int64 bounds as Doubles: -2^63 is exact, 2^63 is one past Int64.max.
        if real < -9.223372036854775808e18 { return -1 }
        if real >= 9.223372036854775808e18 { return 1 }
        // Toward zero. When the whole parts differ, they decide (the
        // fraction is smaller than 1 and has the sign of `real`).
        let whole = Int64(real)
        if whole != integer { return whole < integer ? -1 : 1 }
        // Above 2^53 every Double is an integer, so the difference is 0;
        // below, `Double(whole)` is exact, and so is the difference.
        let fraction = real - Double(whole)
        return fraction > 0 ? 1 : (fraction < 0 ? -1 : 0)
    }

    /// The integer equal to `real`, or nil when it has a fraction or is out
    /// of Int64's range (`Int64(exactly:)` without libm).
    package static func exactInteger(_ real: Double) -> Int64? {
        guard real >= -9.223372036854775808e18, real < 9.223372036854775808e18 else { return nil }
        let whole = Int64(real)
        return Double(whole) == real ? whole : nil
    }

    /// memcmp's order on bytes, then the shorter first: how SQLite's
    /// `BINARY` collation orders two texts or two blobs.
    ///
    /// - Complexity: O(n), where n is the length of the common prefix;
    ///   eight bytes at a time.
    package static func compare(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(lhs.count, rhs.count)
        var offset = 0
        if common > 0, let l = lhs.baseAddress, let r = rhs.baseAddress {
            while offset + 8 <= common {
                let lw = UInt64(bigEndian: l.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                let rw = UInt64(bigEndian: r.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                if lw != rw { return lw < rw ? -1 : 1 }
                offset += 8
            }
            while offset < common {
                let lb = l.load(fromByteOffset: offset, as: UInt8.self)
                let rb = r.load(fromByteOffset: offset, as: UInt8.self)
                if lb != rb { return lb < rb ? -1 : 1 }
                offset += 1
            }
        }
        return compare(lhs.count, rhs.count)
    }

    /// The byte order of two texts' UTF-8 bytes, read in place.
    package static func compare(utf8 lhs: String, _ rhs: String) -> Int {
        CaseInsensitiveName.withUTF8Bytes(of: lhs) { l in
            CaseInsensitiveName.withUTF8Bytes(of: rhs) { r in
                compare(UnsafeRawBufferPointer(l), UnsafeRawBufferPointer(r))
            }
        }
    }
}
