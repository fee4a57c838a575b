/// How a sorted merge reads the ids of its left and right elements.
///
/// The merges are generic over this protocol so that each initializer of the
/// public types can pick an identification whose per-element path is a
/// static call the optimizer inlines once specialized: reading the element
/// itself, or its `Identifiable.id`. Only the general initializers call user
/// closures.
@usableFromInline
internal protocol _SortedMergeIdentification {
    associatedtype Left
    associatedtype Right
    associatedtype ID: Comparable

    func leftID(_ element: Left) -> ID
    func rightID(_ element: Right) -> ID
}

/// What the next step of a sorted merge reads.
///
/// Both drivers of the merge, the lazy ``_SortedMerge`` and the eager
/// `_forEachSortedMergeChange(left:right:identification:_:)`, go through the
/// same phases and make the same comparisons.
@usableFromInline
internal enum _SortedMergePhase: UInt8 {
    /// Nothing is pending (nothing read yet, or the previous step was
    /// common): read both sides.
    case readBoth
    /// The previous step was left-only, with an id lower than the pending
    /// right element's: read the left side.
    case readLeft
    /// The previous step was right-only, with an id lower than the pending
    /// left element's: read the right side.
    case readRight
    /// The right side is exhausted: read the left side.
    case drainLeft
    /// The left side is exhausted: read the right side.
    case drainRight
    /// Both sides are exhausted.
    case finished
}

/// The lazy engine of the sorted differences: merges two iterators whose
/// elements are sorted by strictly increasing id, one change per call to
/// `next()`.
///
/// Guarantees:
/// - Each input is read once, in order, lazily; an iterator that returned
///   nil is never asked again.
/// - Each input element is yielded exactly once, sorted input or not, so
///   iteration always terminates.
/// - At most 2(n + m) id comparisons, counting the debug-build checks of
///   sortedness: a check is only made when the order of two consecutive ids
///   of one side does not already follow from the comparisons of the merge.
///
/// Performance: once specialized and inlined in the loop that iterates it,
/// the merge lives in registers. The phase is a byte, tested first for the
/// common `readBoth` case. At most one element is pending at a time; it is
/// stored in `pendingLeft` or `pendingRight`, and its id in `pendingID`.
/// These are read only in the phase that set them, without checking their
/// optional tag, and are not reset afterwards: resetting would make the
/// optimizer carry more values from one step to the next. The price is that
/// the merge keeps a copy of the last pending element of each side until it
/// stores another one or is destroyed.
@usableFromInline
internal struct _SortedMerge<
    LeftIterator: IteratorProtocol,
    RightIterator: IteratorProtocol,
    Identification: _SortedMergeIdentification
> where Identification.Left == LeftIterator.Element, Identification.Right == RightIterator.Element {
    @usableFromInline typealias Left = LeftIterator.Element
    @usableFromInline typealias Right = RightIterator.Element
    @usableFromInline typealias ID = Identification.ID
    @usableFromInline typealias Change = SortedDifferenceChange<Left, Right>

    @usableFromInline var leftIterator: LeftIterator
    @usableFromInline var rightIterator: RightIterator
    @usableFromInline let identification: Identification
    @usableFromInline var phase = _SortedMergePhase.readBoth
    /// The left element read but not consumed yet, in `readRight`.
    @usableFromInline var pendingLeft: Left?
    /// The right element read but not consumed yet, in `readLeft`.
    @usableFromInline var pendingRight: Right?
    /// The id of the pending element, in `readLeft` and `readRight`.
    @usableFromInline var pendingID: ID?
    /// Debug builds only (`DEBUG` is defined): the id of the last consumed
    /// element, that the next element read must follow.
    @usableFromInline var lastID: ID?

    @inlinable
    init(left: LeftIterator, right: RightIterator, identification: Identification) {
        self.leftIterator = left
        self.rightIterator = right
        self.identification = identification
    }

    /// Returns the next change, or nil when both sides are exhausted.
    ///
    /// Each call reads at most one element of each side, and only the
    /// elements it needs. Ids are compared fresh element first: after a
    /// left-only step, `newLeft < pendingRight`; after a right-only step,
    /// `newRight < pendingLeft`. When that comparison fails, the order of the
    /// new element after the previous one on its side follows by
    /// transitivity, and debug builds skip its check: this keeps the total,
    /// checks included, under 2(n + m) comparisons.
    @inlinable @inline(__always)
    mutating func next() -> Change? {
        if _fastPath(phase == .readBoth) {
            return readBoth()
        }
        switch phase {
        case .readBoth:
            return readBoth()

        case .readLeft:
            let right = pendingRight.unsafelyUnwrapped
            let rightID = pendingID.unsafelyUnwrapped
            guard let left = leftIterator.next() else {
                phase = .drainRight
                remember(rightID)
                return .right(right)
            }
            let leftID = identification.leftID(left)
            if leftID < rightID {
                checkOrder(leftID, side: "left")
                remember(leftID)
                return .left(left)
            }
            // lastID < rightID <= leftID: the left side is in order.
            if rightID < leftID {
                keepPending(left: left, id: leftID)
                remember(rightID)
                return .right(right)
            }
            phase = .readBoth
            remember(leftID)
            return .common(left, right)

        case .readRight:
            let left = pendingLeft.unsafelyUnwrapped
            let leftID = pendingID.unsafelyUnwrapped
            guard let right = rightIterator.next() else {
                phase = .drainLeft
                remember(leftID)
                return .left(left)
            }
            let rightID = identification.rightID(right)
            if rightID < leftID {
                checkOrder(rightID, side: "right")
                remember(rightID)
                return .right(right)
            }
            // lastID < leftID <= rightID: the right side is in order.
            if leftID < rightID {
                keepPending(right: right, id: rightID)
                remember(leftID)
                return .left(left)
            }
            phase = .readBoth
            remember(rightID)
            return .common(left, right)

        case .drainLeft:
            guard let left = leftIterator.next() else {
                phase = .finished
                return nil
            }
            #if DEBUG
            let leftID = identification.leftID(left)
            checkOrder(leftID, side: "left")
            remember(leftID)
            #endif
            return .left(left)

        case .drainRight:
            return drainRight()

        case .finished:
            return nil
        }
    }

    /// The step of the `readBoth` phase.
    @inlinable @inline(__always)
    mutating func readBoth() -> Change? {
        guard let left = leftIterator.next() else {
            return drainRight()
        }
        let leftID = identification.leftID(left)
        checkOrder(leftID, side: "left")
        guard let right = rightIterator.next() else {
            phase = .drainLeft
            remember(leftID)
            return .left(left)
        }
        let rightID = identification.rightID(right)
        checkOrder(rightID, side: "right")
        if leftID < rightID {
            keepPending(right: right, id: rightID)
            remember(leftID)
            return .left(left)
        }
        if rightID < leftID {
            keepPending(left: left, id: leftID)
            remember(rightID)
            return .right(right)
        }
        remember(leftID)
        return .common(left, right)
    }

    /// The step of the `drainRight` phase, also the first one after the left
    /// side is found exhausted in `readBoth`.
    @inlinable @inline(__always)
    mutating func drainRight() -> Change? {
        guard let right = rightIterator.next() else {
            phase = .finished
            return nil
        }
        phase = .drainRight
        #if DEBUG
        let rightID = identification.rightID(right)
        checkOrder(rightID, side: "right")
        remember(rightID)
        #endif
        return .right(right)
    }

    /// Keeps a left element for the next step, which reads the right side.
    @inlinable @inline(__always)
    mutating func keepPending(left: Left, id: ID) {
        pendingLeft = left
        pendingID = id
        phase = .readRight
    }

    /// Keeps a right element for the next step, which reads the left side.
    @inlinable @inline(__always)
    mutating func keepPending(right: Right, id: ID) {
        pendingRight = right
        pendingID = id
        phase = .readLeft
    }

    /// Debug builds: remembers the id of the element just consumed.
    @inlinable @inline(__always)
    mutating func remember(_ id: ID) {
        #if DEBUG
        lastID = id
        #endif
    }

    /// Debug builds: checks that `id`, just read on `side`, follows the last
    /// consumed id.
    @inlinable @inline(__always)
    func checkOrder(_ id: ID, side: StaticString) {
        #if DEBUG
        if let lastID {
            _checkIncreasing(lastID, id, side: side)
        }
        #endif
    }
}

/// Checks, in debug builds only, that `next` follows `previous` in a sequence
/// sorted by strictly increasing id.
@inlinable @inline(__always)
internal func _checkIncreasing<ID: Comparable>(_ previous: ID, _ next: ID, side: StaticString) {
    assert(
        previous < next,
        """
        The \(side) sequence is not sorted by strictly increasing id: \
        id \(next) comes after id \(previous). Sort it by id and remove duplicate ids.
        """)
}
