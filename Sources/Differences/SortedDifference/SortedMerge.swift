/// How a sorted merge reads the ids of its left and right elements.
///
/// The merge is generic over this protocol so that each initializer of the
/// public types can pick an identification whose per-element path is a
/// static call the optimizer inlines: reading the element itself, or its
/// `Identifiable.id`. Only the general initializers call user closures.
@usableFromInline
internal protocol _SortedMergeIdentification {
    associatedtype Left
    associatedtype Right
    associatedtype ID: Comparable

    func leftID(_ element: Left) -> ID
    func rightID(_ element: Right) -> ID
}

/// The engine of every sorted difference in this module: merges two
/// iterators whose elements are sorted by strictly increasing id.
///
/// Guarantees:
/// - Each input is read once, in order, lazily; an iterator that returned
///   nil is never asked again.
/// - Each input element is yielded exactly once, sorted input or not, so
///   iteration always terminates.
/// - At most 2(n + m) id comparisons, counting the debug-build checks of
///   sortedness: a check is only made when the order of two consecutive ids
///   of one side does not already follow from the comparisons of the merge.
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

    /// What the next step reads.
    @usableFromInline
    enum Phase {
        /// Nothing read yet.
        case start
        /// The previous step was common: read both sides.
        case readBoth
        /// The previous step was left-only, with an id lower than the
        /// pending right element's: read the left side.
        case readLeft
        /// The previous step was right-only, with an id lower than the
        /// pending left element's: read the right side.
        case readRight
        /// The right side is exhausted: read the left side.
        case drainLeft
        /// The left side is exhausted: read the right side.
        case drainRight
        /// Both sides are exhausted.
        case finished
    }

    @usableFromInline var leftIterator: LeftIterator
    @usableFromInline var rightIterator: RightIterator
    @usableFromInline let identification: Identification
    @usableFromInline var phase = Phase.start
    /// The left element read but not consumed yet, in `readRight`.
    @usableFromInline var pendingLeft: (element: Left, id: ID)?
    /// The right element read but not consumed yet, in `readLeft`.
    @usableFromInline var pendingRight: (element: Right, id: ID)?
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
        switch phase {
        case .start, .readBoth:
            let checks = phase == .readBoth
            guard let left = leftIterator.next() else {
                phase = .drainRight
                return drainRight(checking: checks)
            }
            let leftID = identification.leftID(left)
            if checks { checkOrder(leftID, side: "left") }
            guard let right = rightIterator.next() else {
                phase = .drainLeft
                remember(leftID)
                return .left(left)
            }
            let rightID = identification.rightID(right)
            if checks { checkOrder(rightID, side: "right") }
            if leftID < rightID {
                pendingRight = (right, rightID)
                phase = .readLeft
                remember(leftID)
                return .left(left)
            }
            if rightID < leftID {
                pendingLeft = (left, leftID)
                phase = .readRight
                remember(rightID)
                return .right(right)
            }
            phase = .readBoth
            remember(leftID)
            return .common(left, right)

        case .readLeft:
            let right = pendingRight.unsafelyUnwrapped
            guard let left = leftIterator.next() else {
                pendingRight = nil
                phase = .drainRight
                remember(right.id)
                return .right(right.element)
            }
            let leftID = identification.leftID(left)
            if leftID < right.id {
                checkOrder(leftID, side: "left")
                remember(leftID)
                return .left(left)
            }
            // lastID < right.id <= leftID: the left side is in order.
            pendingRight = nil
            if right.id < leftID {
                pendingLeft = (left, leftID)
                phase = .readRight
                remember(right.id)
                return .right(right.element)
            }
            phase = .readBoth
            remember(leftID)
            return .common(left, right.element)

        case .readRight:
            let left = pendingLeft.unsafelyUnwrapped
            guard let right = rightIterator.next() else {
                pendingLeft = nil
                phase = .drainLeft
                remember(left.id)
                return .left(left.element)
            }
            let rightID = identification.rightID(right)
            if rightID < left.id {
                checkOrder(rightID, side: "right")
                remember(rightID)
                return .right(right)
            }
            // lastID < left.id <= rightID: the right side is in order.
            pendingLeft = nil
            if left.id < rightID {
                pendingRight = (right, rightID)
                phase = .readLeft
                remember(left.id)
                return .left(left.element)
            }
            phase = .readBoth
            remember(rightID)
            return .common(left.element, right)

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
            return drainRight(checking: true)

        case .finished:
            return nil
        }
    }

    @inlinable @inline(__always)
    mutating func drainRight(checking: Bool) -> Change? {
        guard let right = rightIterator.next() else {
            phase = .finished
            return nil
        }
        #if DEBUG
        let rightID = identification.rightID(right)
        if checking { checkOrder(rightID, side: "right") }
        remember(rightID)
        #endif
        return .right(right)
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
