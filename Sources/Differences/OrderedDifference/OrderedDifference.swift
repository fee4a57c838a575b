/// The changes that turn one ordered collection of identifiable elements into
/// another: deletions, insertions, moves and updates, in the shape that list
/// and table views animate.
///
/// ```swift
/// let old = [a, b, c, d]          // identified by id
/// let new = [d, a, c2, e]         // c2: same id as c, new value
/// let difference = OrderedDifference(from: old, to: new)
/// // difference.deletions  == [1]                 (b, old offset)
/// // difference.insertions == [3]                 (e, new offset)
/// // difference.moves      == [Move(from: 3, to: 0)]  (d)
/// // difference.updates    == [2]                 (c2, new offset)
/// ```
///
/// Applying a difference: remove the elements at `deletions` and at every
/// move's `from`, then insert the new elements at `insertions` and at every
/// move's `to`, in ascending order of new offset; the result is the new
/// collection, with the values at `updates` then replaced by their new
/// values. ``collectionDifference`` does all of this with the standard
/// library's `applying(_:)`.
///
/// Moves are minimal: the elements present in both collections that stay in
/// place are a longest subsequence whose relative order is unchanged, and
/// every other common element is one move.
public struct OrderedDifference<Element> {
    /// A common element that changed position.
    public struct Move: Hashable, Sendable, CustomStringConvertible {
        /// The element's offset in the old collection.
        public var from: Int
        /// The element's offset in the new collection.
        public var to: Int

        /// Creates a move.
        @inlinable
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }

        /// A textual form such as `3->0`.
        public var description: String { "\(from)->\(to)" }
    }

    /// The offsets, in the old collection, of the elements whose id is not in
    /// the new collection, ascending.
    public let deletions: [Int]

    /// The offsets, in the new collection, of the elements whose id is not in
    /// the old collection, ascending.
    public let insertions: [Int]

    /// The common elements that changed position, ascending by destination.
    public let moves: [Move]

    /// The offsets, in the new collection, of the common elements (moved or
    /// not) whose value changed, ascending.
    public let updates: [Int]

    /// Removals of the standard library difference: deletions, move sources
    /// and updates, with their old elements.
    @usableFromInline let removals: [CollectionDifference<Element>.Change]

    /// Insertions of the standard library difference: insertions, move
    /// destinations and updates, with their new elements.
    @usableFromInline let additions: [CollectionDifference<Element>.Change]

    /// True when the two collections have the same ids, in the same order,
    /// with the same values.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && moves.isEmpty && updates.isEmpty
    }

    /// The same changes as a standard library `CollectionDifference`, such
    /// that `old.applying(difference.collectionDifference) == new`.
    ///
    /// A move is a removal and an insertion associated with each other; so is
    /// an update, which replaces the old value with the new one.
    ///
    /// - Complexity: O(c), where c is the number of changes.
    public var collectionDifference: CollectionDifference<Element> {
        guard let difference = CollectionDifference(removals + additions) else {
            preconditionFailure("OrderedDifference produced an invalid CollectionDifference: this is a bug.")
        }
        return difference
    }
}

extension OrderedDifference where Element: Identifiable & Equatable {
    /// Creates the difference between two ordered collections of identifiable
    /// elements.
    ///
    /// An element present in both collections (same id) is updated when it
    /// is not equal to its old version.
    ///
    /// - Parameters:
    ///   - old: The old collection. Its ids are unique.
    ///   - new: The new collection. Its ids are unique.
    /// - Precondition: No id appears twice in one collection (the message
    ///   names the collection and the id).
    /// - Complexity: O(n + m + k log k) expected, where n and m are the
    ///   lengths of the collections and k the number of common elements (k
    ///   log k only when elements moved: k when none did).
    @inlinable
    public init<Old: Collection, New: Collection>(from old: Old, to new: New)
    where Old.Element == Element, New.Element == Element {
        do {
            try self.init(_from: old, to: new, identification: _IdentifiableEquatableIdentification())
        } catch {
            preconditionFailure(error.description)
        }
    }

    /// Creates the difference between two ordered collections, as
    /// `init(from:to:)` does, for ids that may not be unique (they come from
    /// a database, a file, a server): a duplicate id throws instead of
    /// stopping the program.
    ///
    /// - Throws: `DuplicateIDError`, naming the collection and the id.
    /// - Complexity: The same as `init(from:to:)`: the ids are checked while
    ///   the difference is computed.
    @inlinable
    public init<Old: Collection, New: Collection>(checkingIDsFrom old: Old, to new: New) throws(DuplicateIDError)
    where Old.Element == Element, New.Element == Element {
        try self.init(_from: old, to: new, identification: _IdentifiableEquatableIdentification())
    }
}

extension OrderedDifference {
    /// Creates the difference between two ordered collections whose elements
    /// are identified and compared by closures.
    ///
    /// - Parameters:
    ///   - old: The old collection. Its ids are unique.
    ///   - new: The new collection. Its ids are unique.
    ///   - id: Returns the id of an element.
    ///   - isEqual: Returns whether two elements with the same id have the
    ///     same value; when not, the element is reported in ``updates``.
    /// - Precondition: No id appears twice in one collection.
    /// - Complexity: O(n + m + k log k) expected, where k is the number of
    ///   common elements.
    @inlinable
    public init<Old: Collection, New: Collection, ID: Hashable>(
        from old: Old,
        to new: New,
        identifiedBy id: (Element) -> ID,
        isEqual: (Element, Element) -> Bool
    ) where Old.Element == Element, New.Element == Element {
        do {
            self = try withoutActuallyEscaping(id) { id throws(DuplicateIDError) in
                try withoutActuallyEscaping(isEqual) { isEqual throws(DuplicateIDError) in
                    try OrderedDifference(
                        _from: old, to: new, identification: _ClosureIdentification(id: id, isUpdated: { !isEqual($0, $1) }))
                }
            }
        } catch {
            preconditionFailure(error.description)
        }
    }
}

extension OrderedDifference: Equatable where Element: Equatable {
    /// Two differences are equal when they have the same offsets and carry
    /// the same elements.
    @inlinable
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.deletions == rhs.deletions && lhs.insertions == rhs.insertions
            && lhs.moves == rhs.moves && lhs.updates == rhs.updates
            && lhs.removals == rhs.removals && lhs.additions == rhs.additions
    }
}

extension OrderedDifference: Sendable where Element: Sendable {}

extension OrderedDifference: CustomStringConvertible {
    /// A textual form such as
    /// `OrderedDifference(deletions: [1], insertions: [3], moves: [3->0], updates: [2])`.
    public var description: String {
        "OrderedDifference(deletions: \(deletions), insertions: \(insertions), moves: \(moves), updates: \(updates))"
    }
}
