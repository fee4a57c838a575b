/// The difference between two sequences sorted by id: the elements found
/// only in the left sequence, only in the right sequence, or in both.
///
/// A sorted difference is a lazy sequence of ``SortedDifferenceChange``
/// values in ascending id order. It suits the synchronization of two sorted
/// collections, such as a server payload and the rows of a database table
/// fetched in primary key order:
///
/// ```swift
/// let local = [Player(id: 1), Player(id: 2)]          // sorted by id
/// let remote = [RemotePlayer(id: 2), RemotePlayer(id: 3)]
/// for change in SortedDifference(
///     left: local, identifiedBy: \.id,
///     right: remote, identifiedBy: \.id)
/// {
///     switch change {
///     case .left(let player): delete(player)               // id 1
///     case .right(let remote): insert(remote)              // id 3
///     case .common(let player, let remote): update(player, from: remote)  // id 2
///     }
/// }
/// ```
///
/// - Precondition: In each sequence, ids are strictly increasing (the
///   sequence is sorted by id, and has no duplicate id). Debug builds check
///   it and stop on an assertion that names the side and the two offending
///   ids. Release builds do not check: the changes are then unspecified, but
///   iteration still terminates and yields every input element exactly once.
///
/// Guarantees: each input is read once, in order, and only as far as the
/// iteration requires; an input iterator that returned nil is never asked for
/// another element. The inputs may be single-pass sequences, and of
/// different types.
///
/// - Complexity: Iterating the whole difference is O(n + m) and makes at
///   most 2(n + m) id comparisons, where n and m are the lengths of the left
///   and right sequences. Each step is O(1) and allocates nothing. Each id is
///   read once.
///
/// <doc:ChoosingADiff> compares it with the other differences of this module.
public struct SortedDifference<LeftSequence: Sequence, RightSequence: Sequence, ID: Comparable> {
    @usableFromInline let left: LeftSequence
    @usableFromInline let right: RightSequence
    @usableFromInline let identification: _SortedDifferenceIdentification<
        LeftSequence.Element, RightSequence.Element, ID
    >

    @inlinable
    init(
        left: LeftSequence,
        right: RightSequence,
        identification: _SortedDifferenceIdentification<LeftSequence.Element, RightSequence.Element, ID>
    ) {
        self.left = left
        self.right = right
        self.identification = identification
    }

    /// Creates the difference between two sequences sorted by the ids that
    /// the given closures return.
    ///
    /// - Parameters:
    ///   - left: A sequence sorted by strictly increasing `leftID`.
    ///   - leftID: Returns the id of a left element. Called once per element.
    ///   - right: A sequence sorted by strictly increasing `rightID`.
    ///   - rightID: Returns the id of a right element. Called once per element.
    /// - Complexity: O(1). Iteration is O(n + m).
    @inlinable
    public init(
        left: LeftSequence,
        identifiedBy leftID: @escaping (LeftSequence.Element) -> ID,
        right: RightSequence,
        identifiedBy rightID: @escaping (RightSequence.Element) -> ID
    ) {
        self.init(left: left, right: right, identification: .closures(left: leftID, right: rightID))
    }
}

extension SortedDifference
where
    LeftSequence.Element: Identifiable, RightSequence.Element: Identifiable,
    LeftSequence.Element.ID == ID, RightSequence.Element.ID == ID
{
    /// Creates the difference between two sequences of identifiable elements,
    /// sorted by id.
    ///
    /// ```swift
    /// for change in SortedDifference(left: databasePlayers, right: serverPlayers) { ... }
    /// ```
    ///
    /// - Parameters:
    ///   - left: A sequence sorted by strictly increasing `id`.
    ///   - right: A sequence sorted by strictly increasing `id`.
    /// - Complexity: O(1). Iteration is O(n + m).
    @inlinable
    public init(left: LeftSequence, right: RightSequence) {
        self.init(left: left, right: right, identification: .identifiable)
    }
}

extension SortedDifference where LeftSequence.Element == ID, RightSequence.Element == ID {
    /// Creates the difference between two sorted sequences of comparable
    /// values, each value being its own id.
    ///
    /// ```swift
    /// Array(SortedDifference(left: [1, 2, 3], right: [2, 4]))
    /// // [.left(1), .common(2, 2), .left(3), .right(4)]
    /// ```
    ///
    /// - Parameters:
    ///   - left: A strictly increasing sequence.
    ///   - right: A strictly increasing sequence.
    /// - Complexity: O(1). Iteration is O(n + m).
    @inlinable
    public init(left: LeftSequence, right: RightSequence) {
        self.init(left: left, right: right, identification: .comparable)
    }
}

extension SortedDifference: Sequence {
    /// The changes, in ascending id order.
    public typealias Element = SortedDifferenceChange<LeftSequence.Element, RightSequence.Element>

    /// The iterator of a sorted difference. It reads its inputs lazily.
    ///
    /// Between two steps it keeps a copy of at most one element of each
    /// input: the last one it had to compare with an element of the other
    /// input.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var merge: _SortedMerge<
            LeftSequence.Iterator,
            RightSequence.Iterator,
            _SortedDifferenceIdentification<LeftSequence.Element, RightSequence.Element, ID>
        >

        @inlinable
        init(_ difference: SortedDifference) {
            merge = _SortedMerge(
                left: difference.left.makeIterator(),
                right: difference.right.makeIterator(),
                identification: difference.identification)
        }

        /// Returns the next change, or nil when both inputs are exhausted.
        ///
        /// - Complexity: O(1), at most two id comparisons per input element
        ///   consumed, amortized.
        @inlinable @inline(__always)
        public mutating func next() -> Element? {
            merge.next()
        }
    }

    /// Returns an iterator over the changes.
    @inlinable
    public func makeIterator() -> Iterator {
        Iterator(self)
    }
}
