/// A key of a `FlatHashTable`: equatable, and reduced to a 64-bit digest
/// that the table mixes with its multiplier.
///
/// The digest need not be well distributed (the table mixes it), but equal
/// keys must have equal digests, and distinct keys should rarely share one.
protocol FlatHashKey: Equatable {
    /// A digest of the key; equal keys have equal digests.
    var flatHashDigest: UInt64 { get }
}

extension Int64: FlatHashKey {
    /// The rowid itself.
    @inline(__always)
    var flatHashDigest: UInt64 { UInt64(bitPattern: self) }
}

/// The multiplier of the hash tables of this process: odd, derived from the
/// standard library's per-process random seed (so that, like `Hasher`, it is
/// deterministic when the `SWIFT_DETERMINISTIC_HASHING` environment variable
/// is set).
enum FlatHashSeed {
    static let multiplier: UInt64 = {
        var hasher = Hasher()
        hasher.combine(0x5EED_F1A7_0000_0001 as UInt64)
        return UInt64(truncatingIfNeeded: hasher.finalize()) | 1
    }()
}
