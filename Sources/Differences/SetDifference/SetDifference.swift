/// The elements that were inserted, updated and deleted between two
/// snapshots of a set of identifiable elements.
///
/// Set differences ignore ordering: they suit, for example, keeping the
/// annotations of a map in sync with a database table. Produce them with a
/// ``SetDifferenceScanner``.
///
/// ```swift
/// var scanner = SetDifferenceScanner<Place, Place.ID>()
/// let difference = scanner.diff(to: places)   // sorted by id
/// map.addAnnotations(difference.inserted)
/// map.refreshAnnotations(difference.updated)
/// map.removeAnnotations(difference.deleted)
/// ```
public struct SetDifference<Element> {
    /// The elements whose id is only in the new snapshot, in id order.
    public var inserted: [Element]

    /// The elements whose id is in both snapshots and whose value changed,
    /// in id order: the value chosen by the scanner's `updateElement`
    /// closure, or the new element when there is none.
    public var updated: [Element]

    /// The elements whose id is only in the old snapshot, in id order, as the
    /// scanner stored them.
    public var deleted: [Element]

    /// Creates a set difference.
    @inlinable
    public init(inserted: [Element] = [], updated: [Element] = [], deleted: [Element] = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// True when nothing was inserted, updated or deleted.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty
    }
}

extension SetDifference: Equatable where Element: Equatable {}

extension SetDifference: Hashable where Element: Hashable {}

extension SetDifference: Sendable where Element: Sendable {}

extension SetDifference: CustomStringConvertible {
    /// A textual form such as `SetDifference(inserted: [1], updated: [], deleted: [2])`.
    public var description: String {
        "SetDifference(inserted: \(inserted), updated: \(updated), deleted: \(deleted))"
    }
}
