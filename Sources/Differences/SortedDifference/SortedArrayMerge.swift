/// The eager driver of the sorted merge, for two arrays: calls `body` with
/// each change of the merge of `left` and `right`, in ascending id order.
///
/// It goes through the same phases as the lazy ``_SortedMerge``, makes the
/// same debug-build checks, and calls `body` with the same changes (the
/// tests compare the two through `SortedDifference` and
/// `SetDifferenceScanner`), for ids whose `==` agrees with `<` (every
/// `Comparable` type but floating-point NaN, which no sorted sequence
/// holds). One difference: when it reads both sides, it tests equal ids
/// first, the common case of a scanner, with one comparison where the lazy
/// merge makes two. The other difference is where the pending element
/// lives: here it stays in its array, and the loop only keeps the indices of
/// the next elements to read, and the pending element's id. That leaves the
/// registers free for the work `body` does per change, such as building the
/// next snapshot of a `SetDifferenceScanner`.
///
/// Guarantees: each element is passed to `body` exactly once, sorted input or
/// not; each id is read once; at most 2(n + m) id comparisons, counting the
/// debug-build checks of sortedness, where n and m are the counts of `left`
/// and `right`.
@inlinable @inline(__always)
internal func _forEachSortedMergeChange<Identification: _SortedMergeIdentification>(
    left: [Identification.Left],
    right: [Identification.Right],
    identification: Identification,
    _ body: (SortedDifferenceChange<Identification.Left, Identification.Right>) -> Void
) {
    typealias ID = Identification.ID
    let leftCount = left.count
    let rightCount = right.count
    // The next elements to read.
    var leftIndex = 0
    var rightIndex = 0
    var phase = _SortedMergePhase.readBoth
    // The id of the pending element, `right[rightIndex]` in `readLeft`,
    // `left[leftIndex]` in `readRight`.
    var pendingID: ID? = nil
    #if DEBUG
    // The id of the last consumed element, that the next element read must
    // follow.
    var lastID: ID? = nil
    #endif

    func remember(_ id: ID) {
        #if DEBUG
        lastID = id
        #endif
    }

    func checkOrder(_ id: ID, side: StaticString) {
        #if DEBUG
        if let lastID {
            _checkIncreasing(lastID, id, side: side)
        }
        #endif
    }

    while true {
        switch phase {
        case .readBoth:
            guard leftIndex < leftCount else {
                phase = .drainRight
                continue
            }
            let leftElement = left[leftIndex]
            let leftID = identification.leftID(leftElement)
            checkOrder(leftID, side: "left")
            guard rightIndex < rightCount else {
                remember(leftID)
                body(.left(leftElement))
                leftIndex += 1
                phase = .drainLeft
                continue
            }
            let rightElement = right[rightIndex]
            let rightID = identification.rightID(rightElement)
            checkOrder(rightID, side: "right")
            if leftID == rightID {
                // The common case first: one comparison.
                remember(leftID)
                body(.common(leftElement, rightElement))
                leftIndex += 1
                rightIndex += 1
            } else if leftID < rightID {
                remember(leftID)
                body(.left(leftElement))
                leftIndex += 1
                pendingID = rightID
                phase = .readLeft
            } else {
                remember(rightID)
                body(.right(rightElement))
                rightIndex += 1
                pendingID = leftID
                phase = .readRight
            }

        case .readLeft:
            let rightID = pendingID.unsafelyUnwrapped
            guard leftIndex < leftCount else {
                remember(rightID)
                body(.right(right[rightIndex]))
                rightIndex += 1
                phase = .drainRight
                continue
            }
            let leftElement = left[leftIndex]
            let leftID = identification.leftID(leftElement)
            if leftID < rightID {
                checkOrder(leftID, side: "left")
                remember(leftID)
                body(.left(leftElement))
                leftIndex += 1
            } else if rightID < leftID {
                // lastID < rightID < leftID: the left side is in order.
                remember(rightID)
                body(.right(right[rightIndex]))
                rightIndex += 1
                pendingID = leftID
                phase = .readRight
            } else {
                remember(leftID)
                body(.common(leftElement, right[rightIndex]))
                leftIndex += 1
                rightIndex += 1
                phase = .readBoth
            }

        case .readRight:
            let leftID = pendingID.unsafelyUnwrapped
            guard rightIndex < rightCount else {
                remember(leftID)
                body(.left(left[leftIndex]))
                leftIndex += 1
                phase = .drainLeft
                continue
            }
            let rightElement = right[rightIndex]
            let rightID = identification.rightID(rightElement)
            if rightID < leftID {
                checkOrder(rightID, side: "right")
                remember(rightID)
                body(.right(rightElement))
                rightIndex += 1
            } else if leftID < rightID {
                // lastID < leftID < rightID: the right side is in order.
                remember(leftID)
                body(.left(left[leftIndex]))
                leftIndex += 1
                pendingID = rightID
                phase = .readLeft
            } else {
                remember(rightID)
                body(.common(left[leftIndex], rightElement))
                leftIndex += 1
                rightIndex += 1
                phase = .readBoth
            }

        case .drainLeft:
            while leftIndex < leftCount {
                let leftElement = left[leftIndex]
                #if DEBUG
                let leftID = identification.leftID(leftElement)
                checkOrder(leftID, side: "left")
                remember(leftID)
                #endif
                body(.left(leftElement))
                leftIndex += 1
            }
            return

        case .drainRight:
            while rightIndex < rightCount {
                let rightElement = right[rightIndex]
                #if DEBUG
                let rightID = identification.rightID(rightElement)
                checkOrder(rightID, side: "right")
                remember(rightID)
                #endif
                body(.right(rightElement))
                rightIndex += 1
            }
            return

        case .finished:
            return
        }
    }
}
