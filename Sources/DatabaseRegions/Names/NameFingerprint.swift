/// What the index hashes and compares to find a table or a column by name:
/// a few words computed from the case-folded UTF-8 bytes of the name.
///
/// Two names of no more than eight bytes are equal (as `CaseInsensitiveName`
/// compares them) exactly when their fingerprints are equal. Longer names
/// with equal fingerprints must still be compared (see `isComplete`).
///
/// A fingerprint holds no reference, so copying one costs no reference
/// counting: lookups pass it around freely.
struct NameFingerprint: Hashable, Sendable {
    /// The first eight case-folded bytes of the name when it has eight or
    /// more; otherwise all of them, packed so that different names of the
    /// same length give different words (see `CaseInsensitiveName.packedWord(_:)`).
    let prefix: UInt64

    /// The length of the name in UTF-8 bytes.
    let count: Int

    /// A digest of all the case-folded bytes, for `FlatHashTable`.
    let flatHashDigest: UInt64

    /// Computes the fingerprint of a name.
    ///
    /// - Complexity: O(n), where n is the length of the name in UTF-8 bytes,
    ///   with one step per eight bytes.
    init(_ name: String) {
        (prefix, count, flatHashDigest) = CaseInsensitiveName.withUTF8Bytes(of: name) { bytes in
            let count = bytes.count
            let prefix = CaseInsensitiveName.foldCase(word: CaseInsensitiveName.packedWord(bytes))
            var digest = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15 ^ prefix
            if count > 8 {
                // The following words, the last one overlapping its predecessor.
                var offset = 8
                while offset < count {
                    let word = CaseInsensitiveName.loadWord(bytes, at: Swift.min(offset, count - 8))
                    let folded = CaseInsensitiveName.foldCase(word: word)
                    digest = (digest &<< 26 | digest &>> 38) ^ folded
                    digest &*= 0xFF51_AFD7_ED55_8CCD
                    offset += 8
                }
            }
            return (prefix, count, digest)
        }
    }

    /// Computes the fingerprint of a name.
    init(_ name: CaseInsensitiveName) {
        self.init(name.rawValue)
    }

    /// Whether names with this fingerprint are all equal: true for names of
    /// no more than eight bytes.
    var isComplete: Bool { count <= 8 }
}

extension NameFingerprint: FlatHashKey {}
