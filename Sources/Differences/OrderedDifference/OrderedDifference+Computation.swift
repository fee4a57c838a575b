extension OrderedDifference {
    /// Computes the difference: ids matched by hashing (`_matchIDs`), then a
    /// longest increasing subsequence of the common elements' old offsets,
    /// taken in new order, to find the fewest moves.
    ///
    /// - Throws: `DuplicateIDError` when an id appears twice in one collection.
    @inlinable
    init<Old: Collection, New: Collection, Identification: _ElementIdentification>(
        _from old: Old,
        to new: New,
        identification: Identification
    ) throws(DuplicateIDError) where Old.Element == Element, New.Element == Element,
        Identification.Element == Element, Identification.ID: Hashable {
        let oldElements = Array(old)
        let newElements = Array(new)

        // Match new elements with old ones by id.
        let newToOld = try _matchIDs(
            old: oldElements.map { identification.id(of: $0) }, new: newElements.map { identification.id(of: $0) })
        var newOffsetOfOld = [Int](repeating: -1, count: oldElements.count)
        var commonOldOffsets: [Int] = []
        var commonNewOffsets: [Int] = []
        commonOldOffsets.reserveCapacity(min(oldElements.count, newElements.count))
        commonNewOffsets.reserveCapacity(min(oldElements.count, newElements.count))
        var insertions: [Int] = []
        for (newOffset, oldOffset) in newToOld.enumerated() {
            if oldOffset >= 0 {
                newOffsetOfOld[oldOffset] = newOffset
                commonOldOffsets.append(oldOffset)
                commonNewOffsets.append(newOffset)
            } else {
                insertions.append(newOffset)
            }
        }

        // Common elements that keep their relative order stay; others move.
        let stays = _longestIncreasingSubsequenceMembership(commonOldOffsets)
        var moves: [Move] = []
        var updates: [Int] = []
        // Old offsets of moved or updated elements, by old offset: their
        // removal is associated with an insertion.
        var isMovedOrUpdated = [Bool](repeating: false, count: oldElements.count)
        for index in commonOldOffsets.indices {
            let oldOffset = commonOldOffsets[index]
            let newOffset = commonNewOffsets[index]
            let moved = !stays[index]
            let updated = identification.isUpdated(oldElements[oldOffset], newElements[newOffset])
            if moved { moves.append(Move(from: oldOffset, to: newOffset)) }
            if updated { updates.append(newOffset) }
            if moved || updated { isMovedOrUpdated[oldOffset] = true }
        }

        var deletions: [Int] = []
        var removals: [CollectionDifference<Element>.Change] = []
        for oldOffset in oldElements.indices {
            let newOffset = newOffsetOfOld[oldOffset]
            if newOffset < 0 {
                deletions.append(oldOffset)
                removals.append(.remove(offset: oldOffset, element: oldElements[oldOffset], associatedWith: nil))
            } else if isMovedOrUpdated[oldOffset] {
                removals.append(.remove(offset: oldOffset, element: oldElements[oldOffset], associatedWith: newOffset))
            }
        }

        // Additions in ascending new offset: merge insertions with the
        // destinations of moved or updated elements.
        var additions: [CollectionDifference<Element>.Change] = []
        additions.reserveCapacity(removals.count + insertions.count)
        var insertionIndex = 0
        for index in commonOldOffsets.indices where isMovedOrUpdated[commonOldOffsets[index]] {
            let newOffset = commonNewOffsets[index]
            while insertionIndex < insertions.count, insertions[insertionIndex] < newOffset {
                let offset = insertions[insertionIndex]
                additions.append(.insert(offset: offset, element: newElements[offset], associatedWith: nil))
                insertionIndex += 1
            }
            additions.append(
                .insert(offset: newOffset, element: newElements[newOffset], associatedWith: commonOldOffsets[index]))
        }
        for offset in insertions[insertionIndex...] {
            additions.append(.insert(offset: offset, element: newElements[offset], associatedWith: nil))
        }

        self.deletions = deletions
        self.insertions = insertions
        self.moves = moves
        self.updates = updates
        self.removals = removals
        self.additions = additions
    }
}

/// Returns, for each position of `values` (distinct integers), whether it
/// belongs to one longest strictly increasing subsequence.
///
/// - Complexity: O(k log k), where k is the number of values; O(k) when the
///   values are already increasing.
@inlinable
internal func _longestIncreasingSubsequenceMembership(_ values: [Int]) -> [Bool] {
    // tails[l]: the index of the smallest value ending an increasing
    // subsequence of length l + 1.
    var tails: [Int] = []
    var predecessors = [Int](repeating: -1, count: values.count)
    for index in values.indices {
        let value = values[index]
        if let last = tails.last, values[last] >= value {
            // Binary search of the first tail whose value is >= value.
            var low = 0
            var high = tails.count - 1
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            predecessors[index] = low > 0 ? tails[low - 1] : -1
            tails[low] = index
        } else {
            predecessors[index] = tails.last ?? -1
            tails.append(index)
        }
    }
    var membership = [Bool](repeating: false, count: values.count)
    var index = tails.last ?? -1
    while index >= 0 {
        membership[index] = true
        index = predecessors[index]
    }
    return membership
}
