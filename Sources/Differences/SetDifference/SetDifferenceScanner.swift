/// Turns successive snapshots of a set of identifiable elements into
/// ``SetDifference`` values.
///
/// A scanner holds the last snapshot, sorted by id. Each call to
/// ``diff(to:)`` compares it with a new snapshot, also sorted by id, returns
/// what was inserted, updated and deleted, and keeps a new snapshot for the
/// next call:
///
/// ```swift
/// var scanner = SetDifferenceScanner<Player, Int>(initialElements: [alice, bob])
/// let difference = scanner.diff(to: [bob2, carol])   // sorted by id
/// // difference.inserted == [carol]
/// // difference.updated == [bob2]     (bob != bob2)
/// // difference.deleted == [alice]
/// ```
///
/// "Updated" means: same id, and the scanner's "is updated" test says the
/// values differ (`!=` for `Equatable` elements). An optional `updateElement`
/// closure decides what an update reports *and* what the scanner keeps for
/// the next diff, for example the old instance updated in place. Elements
/// that did not change are not reported, and the scanner keeps their old
/// instance. A deletion reports the element as the scanner kept it.
///
/// - Precondition: Every snapshot, including `initialElements`, is sorted by
///   strictly increasing id. Debug builds check it and stop on an assertion
///   naming the side (left is the kept snapshot, right the new one) and the
///   offending ids. In release builds an unsorted snapshot gives an
///   unspecified difference, but never traps.
public struct SetDifferenceScanner<Element, ID: Comparable> {
    @usableFromInline var snapshot: [Element]
    @usableFromInline let identification: _SetDifferenceIdentification<Element, ID>
    @usableFromInline let updateElement: ((Element, Element) -> Element)?

    /// Creates a scanner of elements identified and compared by closures.
    ///
    /// Use it for elements that are not `Identifiable` or not `Equatable`.
    ///
    /// ```swift
    /// var scanner = SetDifferenceScanner<Row, Int64>(
    ///     id: { $0.rowID },
    ///     isUpdated: { old, new in old.values != new.values })
    /// ```
    ///
    /// - Parameters:
    ///   - initialElements: The base of the first diff, sorted by id.
    ///   - id: Returns the id of an element. Called once per element and diff.
    ///   - isUpdated: Returns whether an element, whose id persists, changed.
    ///   - updateElement: Given the kept and the new version of an updated
    ///     element, returns the element to report and keep. When nil, the new
    ///     element is reported and kept.
    @inlinable
    public init(
        initialElements: [Element] = [],
        id: @escaping (Element) -> ID,
        isUpdated: @escaping (_ old: Element, _ new: Element) -> Bool,
        updateElement: ((_ old: Element, _ new: Element) -> Element)? = nil
    ) {
        self.snapshot = initialElements
        self.identification = .closures(id: id, isUpdated: isUpdated)
        self.updateElement = updateElement
    }

    /// The snapshot the next diff starts from, sorted by id.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var elements: [Element] { snapshot }

    /// Returns the difference from the kept snapshot to `newElements`, and
    /// keeps `newElements` (with unchanged elements' old instances, and
    /// updated elements as `updateElement` returns them) for the next diff.
    ///
    /// - Parameter newElements: The new snapshot, sorted by strictly
    ///   increasing id.
    /// - Returns: The inserted, updated and deleted elements, each in id order.
    /// - Complexity: O(n + m), where n is the number of kept elements and m
    ///   the number of new elements: one sorted merge, at most 2(n + m) id
    ///   comparisons, one "is updated" test per common id.
    @inlinable
    public mutating func diff(to newElements: [Element]) -> SetDifference<Element> {
        var difference = SetDifference<Element>()
        var nextSnapshot: [Element] = []
        nextSnapshot.reserveCapacity(newElements.count)
        var merge = _SortedMerge(
            left: snapshot.makeIterator(),
            right: newElements.makeIterator(),
            identification: identification)
        while let change = merge.next() {
            switch change {
            case .left(let old):
                difference.deleted.append(old)
            case .right(let new):
                difference.inserted.append(new)
                nextSnapshot.append(new)
            case .common(let old, let new):
                if identification.isUpdated(old, new) {
                    let element = updateElement?(old, new) ?? new
                    difference.updated.append(element)
                    nextSnapshot.append(element)
                } else {
                    nextSnapshot.append(old)
                }
            }
        }
        snapshot = nextSnapshot
        return difference
    }
}

extension SetDifferenceScanner where Element: Identifiable & Equatable, Element.ID == ID {
    /// Creates a scanner of identifiable and equatable elements.
    ///
    /// An element is updated when its id persists and it is not equal to its
    /// previous version.
    ///
    /// - Parameters:
    ///   - initialElements: The base of the first diff, sorted by id.
    ///   - updateElement: Given the kept and the new version of an updated
    ///     element, returns the element to report and keep. When nil, the new
    ///     element is reported and kept.
    @inlinable
    public init(
        initialElements: [Element] = [],
        updateElement: ((_ old: Element, _ new: Element) -> Element)? = nil
    ) {
        self.snapshot = initialElements
        self.identification = .identifiableAndEquatable
        self.updateElement = updateElement
    }
}

/// The identification chosen by a `SetDifferenceScanner` initializer.
///
/// The `identifiableAndEquatable` case calls no closure: its casts are
/// between types that the initializer proved equal or conforming, and the
/// optimizer removes them once the code is specialized.
@usableFromInline
internal enum _SetDifferenceIdentification<Element, ID: Comparable>: _SortedMergeIdentification {
    /// `Element: Identifiable & Equatable`, `Element.ID == ID`.
    case identifiableAndEquatable
    case closures(id: (Element) -> ID, isUpdated: (Element, Element) -> Bool)

    @inlinable @inline(__always)
    func leftID(_ element: Element) -> ID { id(of: element) }

    @inlinable @inline(__always)
    func rightID(_ element: Element) -> ID { id(of: element) }

    @inlinable @inline(__always)
    func id(of element: Element) -> ID {
        switch self {
        case .identifiableAndEquatable: _identifiableID(element)
        case .closures(let id, _): id(element)
        }
    }

    @inlinable @inline(__always)
    func isUpdated(_ old: Element, _ new: Element) -> Bool {
        switch self {
        case .identifiableAndEquatable: !_equatableEqual(old, new)
        case .closures(_, let isUpdated): isUpdated(old, new)
        }
    }
}

/// Returns `lhs == rhs`; the caller guarantees that `T` is `Equatable`.
@inlinable @inline(__always)
internal func _equatableEqual<T>(_ lhs: T, _ rhs: T) -> Bool {
    let equatable = lhs as! any Equatable
    return _openedEqual(equatable, rhs)
}

@inlinable @inline(__always)
internal func _openedEqual<T: Equatable, U>(_ lhs: T, _ rhs: U) -> Bool {
    lhs == (rhs as! T)
}
