/// A hash table of the index: entries (a key and its value, side by side)
/// kept densely, in insertion order, behind open-addressing buckets of one
/// byte that a lookup reads first.
///
/// The index looks up a table by name and a row by rowid for every event,
/// so lookups must be cheap, and a lookup that finds nothing (the common
/// case: most rows have no observer) should read as little memory as
/// possible: with ten thousand observed rows, the memory a lookup may read
/// decides whether it stays in the fastest cache. A `Dictionary` hashes
/// each key with SipHash and compares the key of every occupied bucket it
/// meets; here:
///
/// - a key's hash is one multiplication of its digest (see `FlatHashKey`)
///   by an odd multiplier, random per process, taken from the standard
///   library's seed: the high bits pick the first bucket (multiplicative
///   hashing), the low 7 bits make a tag;
/// - a bucket is one control byte, 0 when empty, else 0x80 and the tag, and
///   the position of its entry, kept apart. Linear probing, a load factor
///   of at most 1/2: a lookup reads the eight control bytes from the key's
///   first bucket as one word, finds in a few word operations, without
///   branching on each byte, the buckets whose tag matches before the first
///   empty one, and reads a position and an entry only for those (1 time in
///   128 for another key), finding the value next to the key. The lookup of
///   an absent key thus takes the same branches whatever the buckets hold,
///   which keeps the processor from mispredicting them;
/// - removals shift the following buckets of the cluster back (no
///   tombstones) and move the last entry into the hole.
///
/// Entries keep the order of insertions, except that a removal moves the
/// last entry into the removed one's position: the order depends only on
/// the sequence of insertions and removals, not on hashing.
///
/// Lookups, insertions and removals take expected O(1) time (amortized for
/// insertions and removals, which grow or shrink the buckets), for keys that
/// the multiplier does not make collide: the multiplier is random, so no
/// fixed set of keys is slow in every process.
struct FlatHashTable<Key: FlatHashKey, Value> {
    /// A key and its value.
    struct Entry {
        let key: Key
        var value: Value
    }

    /// The entries, by position.
    private(set) var entries: [Entry] = []

    /// The control byte of each bucket: 0 when empty, else `0x80 | tag`,
    /// followed by a copy of the first `groupSize` control bytes, so that
    /// the `groupSize` control bytes from any bucket can be read as one word
    /// (the buckets wrap around). The number of buckets is 0 or a power of
    /// two, at least 16 and at least twice the number of entries.
    private var controls: [UInt8] = []

    /// The position of the entry of each occupied bucket.
    private var positions: [UInt32] = []

    /// 64 minus the base-2 logarithm of the number of buckets: a hash
    /// shifted right by this amount is a bucket number.
    private var shift: UInt64 = 64

    /// The odd multiplier of hashes (see `FlatHashSeed`).
    private let multiplier: UInt64

    /// The smallest number of buckets of a table that has entries.
    private static var minimumBucketCount: Int { 16 }

    /// The number of control bytes a lookup reads at once.
    private static var groupSize: Int { 8 }

    /// The number of buckets.
    private var bucketCount: Int { controls.isEmpty ? 0 : controls.count - Self.groupSize }

    /// Creates an empty table.
    ///
    /// - Complexity: O(1).
    init() {
        multiplier = FlatHashSeed.multiplier
    }

    /// The number of entries.
    var count: Int { entries.count }

    /// Whether the table has no entry.
    var isEmpty: Bool { entries.isEmpty }

    /// The hash of a key: its digest, folded and multiplied.
    @inline(__always)
    private func hash(_ key: Key) -> UInt64 {
        let digest = key.flatHashDigest
        return (digest ^ digest &>> 32) &* multiplier
    }

    /// The control byte of a key with this hash.
    @inline(__always)
    private static func control(_ hash: UInt64) -> UInt8 {
        UInt8(truncatingIfNeeded: hash) | 0x80
    }

    /// The first bucket where a key with this hash may be.
    @inline(__always)
    private func homeBucket(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: hash &>> shift)
    }

    /// The position of the entry of `key`, if any.
    ///
    /// - Complexity: Expected O(1).
    @inline(__always)
    func position(forKey key: Key) -> Int? {
        position(forKey: key) { _ in true }
    }

    /// The position of the entry of `key` whose value satisfies `isMatch`,
    /// if any: for keys that do not tell everything about what they stand
    /// for (see `NameFingerprint`), `isMatch` compares the rest.
    ///
    /// - Complexity: Expected O(1) calls to `isMatch`.
    @inline(__always)
    func position(forKey key: Key, where isMatch: (Value) -> Bool) -> Int? {
        let hash = hash(key)
        // The control byte in each byte of a word.
        let pattern = UInt64(Self.control(hash)) &* 0x0101_0101_0101_0101
        return controls.withUnsafeBufferPointer { controls in
            guard !controls.isEmpty else { return nil }
            let mask = controls.count &- Self.groupSize &- 1
            var bucket = homeBucket(hash)
            while true {
                let group = UInt64(
                    littleEndian: UnsafeRawPointer(controls.baseAddress! + bucket).loadUnaligned(as: UInt64.self))
                // The high bit of each empty byte (occupied bytes have it set).
                let empties = ~group & 0x8080_8080_8080_8080
                // The high bit of each byte equal to the control byte: an
                // exact test, byte per byte, without carries between bytes.
                let difference = group ^ pattern
                var matches = ~(((difference & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x7F7F_7F7F_7F7F_7F7F)
                    | difference | 0x7F7F_7F7F_7F7F_7F7F)
                // Only the buckets before the first empty one may hold the key.
                matches &= (empties & (0 &- empties)) &- 1
                while matches != 0 {
                    let candidate = (bucket &+ matches.trailingZeroBitCount &>> 3) & mask
                    let position = Int(truncatingIfNeeded: positions[candidate])
                    if entries[position].key == key, isMatch(entries[position].value) { return position }
                    matches &= matches &- 1
                }
                if empties != 0 { return nil }
                bucket = (bucket &+ Self.groupSize) & mask
            }
        }
    }

    /// The value of `key`, if any.
    ///
    /// - Complexity: Expected O(1).
    subscript(key: Key) -> Value? {
        guard let position = position(forKey: key) else { return nil }
        return entries[position].value
    }

    /// Calls `body` with a pointer to the value at `position`, valid during
    /// the call, and returns its result: queries read values in place,
    /// without the reference counting of a copy.
    ///
    /// - Complexity: O(1) plus the cost of `body`.
    @inline(__always)
    func withUnsafeValue<Result>(at position: Int, _ body: (UnsafePointer<Value>) -> Result) -> Result {
        entries.withUnsafeBufferPointer { entries in
            precondition(entries.indices.contains(position), "Position out of bounds")
            let entry = UnsafeRawPointer(entries.baseAddress! + position)
            return body((entry + MemoryLayout<Entry>.offset(of: \Entry.value)!).assumingMemoryBound(to: Value.self))
        }
    }

    /// Calls `body` with the value at `position`, in place, and returns its result.
    ///
    /// - Complexity: O(1) plus the cost of `body`.
    mutating func updateValue<Result>(at position: Int, _ body: (inout Value) -> Result) -> Result {
        body(&entries[position].value)
    }

    /// Adds an entry and returns its position (the last one).
    ///
    /// The table does not check that no entry has the key (or, for keys
    /// that need `position(forKey:where:)`, the same key and a matching
    /// value): that is the caller's job.
    ///
    /// - Complexity: Expected amortized O(1).
    @discardableResult
    mutating func append(_ value: Value, forKey key: Key) -> Int {
        precondition(entries.count < UInt32.max, "FlatHashTable: too many entries")
        if (entries.count + 1) &* 2 > bucketCount {
            rehash(bucketCount: Swift.max(Self.minimumBucketCount, bucketCount &* 2))
        }
        let position = entries.count
        entries.append(Entry(key: key, value: value))
        occupyBucket(position: position, hash: hash(key))
        return position
    }

    /// Removes the entry at `position`, moving the last entry into its place.
    ///
    /// - Complexity: Expected amortized O(1).
    mutating func remove(at position: Int) {
        emptyBucket(bucket(ofPosition: position))
        let last = entries.count - 1
        if position != last {
            // The last entry moves to `position`: update its bucket.
            positions[bucket(ofPosition: last)] = UInt32(truncatingIfNeeded: position)
            entries.swapAt(position, last)
        }
        entries.removeLast()
        if entries.isEmpty {
            controls = []
            positions = []
            shift = 64
        } else if bucketCount > Self.minimumBucketCount, entries.count &* 8 < bucketCount {
            rehash(bucketCount: bucketCount / 2)
        }
    }

    /// Sets the control byte of a bucket, and its copy if it has one.
    @inline(__always)
    private mutating func setControl(_ control: UInt8, ofBucket bucket: Int) {
        controls[bucket] = control
        if bucket < Self.groupSize {
            controls[bucketCount + bucket] = control
        }
    }

    /// The bucket of the entry at `position`.
    private func bucket(ofPosition position: Int) -> Int {
        let mask = bucketCount &- 1
        var bucket = homeBucket(hash(entries[position].key))
        while controls[bucket] == 0 || positions[bucket] != position {
            assert(controls[bucket] != 0, "Every entry has a bucket")
            bucket = (bucket &+ 1) & mask
        }
        return bucket
    }

    /// Gives the entry at `position` the first empty bucket from its home bucket.
    private mutating func occupyBucket(position: Int, hash: UInt64) {
        let mask = bucketCount &- 1
        var bucket = homeBucket(hash)
        while controls[bucket] != 0 {
            bucket = (bucket &+ 1) & mask
        }
        setControl(Self.control(hash), ofBucket: bucket)
        positions[bucket] = UInt32(truncatingIfNeeded: position)
    }

    /// Empties a bucket and moves back the following buckets of its cluster
    /// that would no longer be found (backward-shift deletion).
    private mutating func emptyBucket(_ removed: Int) {
        let mask = bucketCount &- 1
        var hole = removed
        var bucket = removed
        while true {
            bucket = (bucket &+ 1) & mask
            if controls[bucket] == 0 { break }
            let home = homeBucket(hash(entries[Int(positions[bucket])].key))
            // The entry may fill the hole if its home bucket is not in the
            // cyclic range (hole, bucket].
            if (bucket &- home) & mask >= (bucket &- hole) & mask {
                setControl(controls[bucket], ofBucket: hole)
                positions[hole] = positions[bucket]
                hole = bucket
            }
        }
        setControl(0, ofBucket: hole)
    }

    /// Rebuilds the buckets with `bucketCount` buckets (a power of two).
    private mutating func rehash(bucketCount: Int) {
        assert(bucketCount >= Self.minimumBucketCount && bucketCount & (bucketCount - 1) == 0, "A power of two")
        assert(bucketCount >= entries.count * 2, "Load factor at most 1/2")
        controls = Array(repeating: 0, count: bucketCount + Self.groupSize)
        positions = Array(repeating: 0, count: bucketCount)
        shift = UInt64(64 - bucketCount.trailingZeroBitCount)
        for position in entries.indices {
            occupyBucket(position: position, hash: hash(entries[position].key))
        }
    }
}

extension FlatHashTable: Sendable where Key: Sendable, Value: Sendable {}
extension FlatHashTable.Entry: Sendable where Key: Sendable, Value: Sendable {}

#if DATABASE_REGIONS_INTERNAL_CHECKS
extension FlatHashTable {
    /// Checks the invariants: one bucket per entry, found from its key
    /// without crossing an empty bucket.
    func checkInvariants() {
        precondition(bucketCount == positions.count)
        precondition(controls.isEmpty ? entries.isEmpty : bucketCount >= entries.count * 2)
        precondition(controls.prefix(bucketCount).filter { $0 != 0 }.count == entries.count)
        if !controls.isEmpty {
            precondition(controls.suffix(Self.groupSize).elementsEqual(controls.prefix(Self.groupSize)))
        }
        for position in entries.indices {
            let bucket = bucket(ofPosition: position)
            precondition(controls[bucket] == Self.control(hash(entries[position].key)))
        }
    }
}
#endif
