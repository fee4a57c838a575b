/// A table or column name that compares the way SQLite compares identifiers:
/// ASCII letters without regard to case, every other byte exactly.
///
/// `"Player"`, `"player"` and `"PLAYER"` are one name; `"é"` and `"É"` are two,
/// as they are for SQLite. The original spelling is kept in `rawValue`;
/// `lowercased` gives the form `DatabaseRegion.description` shows.
///
/// Hashing and comparing read the UTF-8 bytes in place: wrapping a `String`
/// to look it up in a dictionary allocates nothing.
package struct CaseInsensitiveName: Sendable {
    /// The name as it was spelled when it was created.
    package let rawValue: String

    package init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The name with ASCII letters lowercased, other bytes unchanged.
    ///
    /// - Complexity: O(n), where n is the length of the name in UTF-8 bytes.
    var lowercased: String {
        String(decoding: rawValue.utf8.lazy.map(Self.foldCase), as: UTF8.self)
    }

    /// Lowercases one ASCII uppercase letter; returns any other byte unchanged.
    @inline(__always)
    static func foldCase(_ byte: UInt8) -> UInt8 {
        // Unsigned wrap-around: only 0x41 ("A") ... 0x5A ("Z") give 0 ... 25.
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Lowercases the ASCII uppercase letters among the eight bytes of a
    /// word, all at once; other bytes are unchanged.
    @inline(__always)
    static func foldCase(word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits = ones &* 0x80
        // Adding to the low seven bits of each byte sets its high bit when
        // the byte reaches the bound, and never carries into the next byte.
        let lowBits = word & ~highBits
        let atLeastA = lowBits &+ ones &* (0x80 - 0x41)
        let aboveZ = lowBits &+ ones &* (0x80 - 0x5B)
        // High bit of each byte in "A" ... "Z" (bytes >= 0x80 are not ASCII).
        let uppercase = atLeastA & ~aboveZ & ~word & highBits
        return word | uppercase &>> 2
    }

    /// The eight bytes at `offset`, as a little-endian word.
    @inline(__always)
    static func loadWord(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
        assert(offset >= 0 && offset + 8 <= bytes.count, "Out of bounds")
        return UInt64(littleEndian: UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt64.self))
    }

    /// A word that packs up to eight bytes so that, for a given number of
    /// bytes, different bytes give different words: the first eight bytes
    /// when there are eight or more, else overlapping loads (the bytes in
    /// between are covered twice) that read no byte out of bounds.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    static func packedWord(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = bytes.count
        if count >= 8 { return loadWord(bytes, at: 0) }
        if count >= 4 {
            let base = UnsafeRawPointer(bytes.baseAddress!)
            let low = UInt32(littleEndian: base.loadUnaligned(as: UInt32.self))
            let high = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            return UInt64(low) | UInt64(high) &<< 32
        }
        if count > 0 {
            return UInt64(bytes[0]) | UInt64(bytes[count >> 1]) &<< 8 | UInt64(bytes[count - 1]) &<< 16
        }
        return 0
    }
}

extension CaseInsensitiveName {
    /// Calls `body` with the UTF-8 bytes of `string`, without copying them
    /// when the string is stored contiguously (always, for native strings).
    @inline(__always)
    static func withUTF8Bytes<Result>(
        of string: String,
        _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) {
            return result
        }
        var copy = string
        return copy.withUTF8(body)
    }
}

extension CaseInsensitiveName: Hashable {
    /// - Complexity: O(n), where n is the length of the shorter name in UTF-8 bytes.
    package static func == (lhs: Self, rhs: Self) -> Bool {
        let count = lhs.rawValue.utf8.count
        guard count == rhs.rawValue.utf8.count else { return false }
        return withUTF8Bytes(of: lhs.rawValue) { lhsBytes in
            withUTF8Bytes(of: rhs.rawValue) { rhsBytes in
                for offset in 0..<count {
                    let lhsByte = lhsBytes[offset]
                    let rhsByte = rhsBytes[offset]
                    if lhsByte != rhsByte, foldCase(lhsByte) != foldCase(rhsByte) {
                        return false
                    }
                }
                return true
            }
        }
    }

    /// Feeds the case-folded bytes to the hasher, eight at a time.
    ///
    /// - Complexity: O(n), where n is the length of the name in UTF-8 bytes.
    package func hash(into hasher: inout Hasher) {
        Self.withUTF8Bytes(of: rawValue) { bytes in
            var word: UInt64 = 0
            var shift: UInt64 = 0
            for byte in bytes {
                word |= UInt64(Self.foldCase(byte)) &<< shift
                shift &+= 8
                if shift == 64 {
                    hasher.combine(word)
                    word = 0
                    shift = 0
                }
            }
            // The count tells "a" from "a\0", which pad to the same word.
            hasher.combine(word)
            hasher.combine(bytes.count)
        }
    }
}

extension CaseInsensitiveName: Comparable {
    /// Orders names by their case-folded UTF-8 bytes, the order in which
    /// their `lowercased` forms sort.
    ///
    /// - Complexity: O(n), where n is the length of the shorter name in UTF-8 bytes.
    package static func < (lhs: Self, rhs: Self) -> Bool {
        for (lhsByte, rhsByte) in zip(lhs.rawValue.utf8, rhs.rawValue.utf8) {
            let lhsFolded = foldCase(lhsByte)
            let rhsFolded = foldCase(rhsByte)
            if lhsFolded != rhsFolded { return lhsFolded < rhsFolded }
        }
        return lhs.rawValue.utf8.count < rhs.rawValue.utf8.count
    }
}
