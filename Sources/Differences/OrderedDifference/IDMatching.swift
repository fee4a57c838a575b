/// Matches the ids of two collections: for each id of `new`, the offset in
/// `old` of the same id, or -1 when `old` does not have it.
///
/// Small collections go through a `Dictionary`. Large ones are partitioned
/// first by the top bits of their ids' hash values, so that the matching of
/// each partition runs in a table that stays in the processor's cache,
/// instead of two cache misses per id in a `Dictionary` of every old id.
///
/// - Throws: `DuplicateIDError` for an id that appears twice in one
///   collection: in `old` first, else in `new`; among several duplicates,
///   the one whose second occurrence comes first, as a pass in order would
///   find it.
/// - Complexity: O(n + m) expected, where n and m are the counts of `old`
///   and `new`: one hash value per id.
@inlinable
internal func _matchIDs<ID: Hashable>(old: [ID], new: [ID]) throws(DuplicateIDError) -> [Int] {
    if old.count + new.count < _partitionedMatchingThreshold {
        return try _matchIDsWithDictionary(old: old, new: new)
    }
    return try _matchIDsByPartition(old: old, new: new)
}

/// Below this total count of ids, a `Dictionary` of old ids stays in the
/// cache and wins over partitioning (measured on this package's benchmark
/// machine: the two cross at about 250 000 ids per collection).
@usableFromInline
package let _partitionedMatchingThreshold = 1 << 19

/// `_matchIDs` with a `Dictionary` of old ids.
@inlinable
package func _matchIDsWithDictionary<ID: Hashable>(old: [ID], new: [ID]) throws(DuplicateIDError) -> [Int] {
    var oldOffsets = [ID: Int](minimumCapacity: old.count)
    for (offset, id) in old.enumerated() where oldOffsets.updateValue(offset, forKey: id) != nil {
        throw DuplicateIDError(collection: .old, id: "\(id)")
    }
    var newToOld = [Int](repeating: -1, count: new.count)
    var isMatched = [Bool](repeating: false, count: old.count)
    var insertedIDs = Set<ID>()
    for (newOffset, id) in new.enumerated() {
        if let oldOffset = oldOffsets[id] {
            if isMatched[oldOffset] { throw DuplicateIDError(collection: .new, id: "\(id)") }
            isMatched[oldOffset] = true
            newToOld[newOffset] = oldOffset
        } else if !insertedIDs.insert(id).inserted {
            throw DuplicateIDError(collection: .new, id: "\(id)")
        }
    }
    return newToOld
}

/// The ids of one collection, their hash values and offsets, reordered by
/// partition (stable: ascending offsets within a partition).
@usableFromInline
internal struct _PartitionedIDs<ID: Hashable> {
    @usableFromInline var ids: [ID]
    @usableFromInline var hashes: [Int]
    @usableFromInline var offsets: [Int]
    /// Partition p holds positions `starts[p] ..< starts[p + 1]`.
    @usableFromInline var starts: [Int]

    @inlinable
    init(_ source: [ID], partitionShift: Int, partitionCount: Int) {
        let hashes = source.map(\.hashValue)
        var starts = [Int](repeating: 0, count: partitionCount + 1)
        for hash in hashes { starts[_partition(of: hash, shift: partitionShift) + 1] += 1 }
        for partition in 0..<partitionCount { starts[partition + 1] += starts[partition] }
        var cursors = starts
        var positions = [Int](repeating: 0, count: source.count)
        for (offset, hash) in hashes.enumerated() {
            let partition = _partition(of: hash, shift: partitionShift)
            positions[offset] = cursors[partition]
            cursors[partition] += 1
        }
        // Each array written once, in position order read from `positions`
        // in offset order: scattered writes to one stream per partition.
        var ids = source
        var partitionedHashes = hashes
        var offsets = [Int](repeating: 0, count: source.count)
        ids.withUnsafeMutableBufferPointer { ids in
            partitionedHashes.withUnsafeMutableBufferPointer { partitionedHashes in
                offsets.withUnsafeMutableBufferPointer { offsets in
                    for offset in source.indices {
                        let position = positions[offset]
                        ids[position] = source[offset]
                        partitionedHashes[position] = hashes[offset]
                        offsets[position] = offset
                    }
                }
            }
        }
        self.ids = ids
        self.hashes = partitionedHashes
        self.offsets = offsets
        self.starts = starts
    }
}

/// The partition of a hash value: its top bits.
@inlinable @inline(__always)
internal func _partition(of hash: Int, shift: Int) -> Int {
    shift >= Int.bitWidth ? 0 : Int(truncatingIfNeeded: UInt(bitPattern: hash) &>> UInt(shift))
}

/// `_matchIDs` by partition: both collections are reordered by the top bits
/// of their hash values, and each partition matched in a small open
/// addressing table (linear probing on the low bits), reused from one
/// partition to the next.
@inlinable
package func _matchIDsByPartition<ID: Hashable>(old: [ID], new: [ID]) throws(DuplicateIDError) -> [Int] {
    // About 256 ids of each collection per partition: a table of a few
    // kilobytes.
    var partitionBits = 0
    while (1 << partitionBits) * 256 < max(old.count, new.count), partitionBits < 24 { partitionBits += 1 }
    let partitionCount = 1 << partitionBits
    let shift = Int.bitWidth - partitionBits
    let olds = _PartitionedIDs(old, partitionShift: shift, partitionCount: partitionCount)
    let news = _PartitionedIDs(new, partitionShift: shift, partitionCount: partitionCount)

    var newToOld = [Int](repeating: -1, count: new.count)
    // The earliest second occurrence of a duplicate id, in each collection.
    var oldDuplicate: (offset: Int, id: ID)?
    var newDuplicate: (offset: Int, id: ID)?
    // Table entries: 0 for empty, k + 1 for the k-th old id of the
    // partition, oldCount + k + 1 for the k-th new id that no old id matched.
    var table: [Int] = []
    var isMatched: [Bool] = []
    for partition in 0..<partitionCount {
        let oldStart = olds.starts[partition]
        let oldCount = olds.starts[partition + 1] - oldStart
        let newStart = news.starts[partition]
        let newCount = news.starts[partition + 1] - newStart
        if oldCount == 0 && newCount == 0 { continue }
        var capacity = 8
        while capacity < 2 * (oldCount + newCount) { capacity <<= 1 }
        let mask = capacity - 1
        if table.count < capacity { table = [Int](repeating: 0, count: capacity) }
        if isMatched.count < oldCount { isMatched = [Bool](repeating: false, count: oldCount) }
        for index in 0..<capacity { table[index] = 0 }
        for index in 0..<oldCount { isMatched[index] = false }

        // The old ids.
        for k in 0..<oldCount {
            let hash = olds.hashes[oldStart + k]
            var slot = hash & mask
            while true {
                let entry = table[slot]
                if entry == 0 {
                    table[slot] = k + 1
                    break
                }
                let other = oldStart + entry - 1
                if olds.hashes[other] == hash, olds.ids[other] == olds.ids[oldStart + k] {
                    let offset = olds.offsets[oldStart + k]  // the later one: positions keep offset order
                    if oldDuplicate.map({ offset < $0.offset }) ?? true { oldDuplicate = (offset, olds.ids[oldStart + k]) }
                    break
                }
                slot = (slot + 1) & mask
            }
        }

        // The new ids, matched with old ones or entered as new-only.
        for k in 0..<newCount {
            let position = newStart + k
            let hash = news.hashes[position]
            var slot = hash & mask
            while true {
                let entry = table[slot]
                if entry == 0 {
                    table[slot] = oldCount + k + 1
                    break
                }
                if entry <= oldCount {
                    let other = oldStart + entry - 1
                    if olds.hashes[other] == hash, olds.ids[other] == news.ids[position] {
                        if isMatched[entry - 1] {
                            let offset = news.offsets[position]
                            if newDuplicate.map({ offset < $0.offset }) ?? true { newDuplicate = (offset, news.ids[position]) }
                        } else {
                            isMatched[entry - 1] = true
                            newToOld[news.offsets[position]] = olds.offsets[other]
                        }
                        break
                    }
                } else {
                    let other = newStart + entry - oldCount - 1
                    if news.hashes[other] == hash, news.ids[other] == news.ids[position] {
                        let offset = news.offsets[position]
                        if newDuplicate.map({ offset < $0.offset }) ?? true { newDuplicate = (offset, news.ids[position]) }
                        break
                    }
                }
                slot = (slot + 1) & mask
            }
        }
    }
    if let oldDuplicate { throw DuplicateIDError(collection: .old, id: "\(oldDuplicate.id)") }
    if let newDuplicate { throw DuplicateIDError(collection: .new, id: "\(newDuplicate.id)") }
    return newToOld
}
