/// Turns successive snapshots of a set of identifiable elements into
/// ``SetDifference`` values.
///
/// A scanner holds the last snapshot, sorted by id. Each call to
/// `diff(to:)` compares it with a new snapshot, also sorted by id, returns
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
/// Memory: besides the last snapshot, a scanner keeps the emptied storage of
/// the one before, so that successive diffs reuse it instead of allocating.
///
/// - Precondition: Every snapshot, including `initialElements`, is sorted by
///   strictly increasing id. Debug builds check it and stop on an assertion
///   naming the side (left is the kept snapshot, right the new one) and the
///   offending ids. In release builds an unsorted snapshot gives an
///   unspecified difference, but never traps.
public struct SetDifferenceScanner<Element, ID: Comparable> {
    @usableFromInline var snapshot: [Element]
    /// The storage of the snapshot before last, emptied but with its
    /// capacity kept: the next diff writes its snapshot there instead of
    /// allocating (and page-faulting) a new buffer each time.
    @usableFromInline var spareStorage: [Element] = []
    @usableFromInline let id: (Element) -> ID
    @usableFromInline let isUpdated: (Element, Element) -> Bool
    @usableFromInline let updateElement: ((Element, Element) -> Element)?
    /// True when `id` and `isUpdated` are `Identifiable.id` and `!=`: the
    /// `Identifiable & Equatable` overload of `diff(to:)` then reads them
    /// statically, without calling the closures.
    @usableFromInline let isIdentifiableAndEquatable: Bool

    @inlinable
    init(
        initialElements: [Element],
        id: @escaping (Element) -> ID,
        isUpdated: @escaping (Element, Element) -> Bool,
        updateElement: ((Element, Element) -> Element)?,
        isIdentifiableAndEquatable: Bool
    ) {
        self.snapshot = initialElements
        self.id = id
        self.isUpdated = isUpdated
        self.updateElement = updateElement
        self.isIdentifiableAndEquatable = isIdentifiableAndEquatable
    }

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
        self.init(
            initialElements: initialElements, id: id, isUpdated: isUpdated,
            updateElement: updateElement, isIdentifiableAndEquatable: false)
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
        diff(to: newElements, identification: _ClosureIdentification(id: id, isUpdated: isUpdated))
    }

    /// The one implementation of `diff(to:)`, generic over how elements are
    /// identified and compared.
    @inlinable
    mutating func diff<Identification: _ElementIdentification & _SortedMergeIdentification>(
        to newElements: [Element],
        identification: Identification
    ) -> SetDifference<Element>
    where Identification.Element == Element, Identification.Left == Element, Identification.Right == Element,
        Identification.ID == ID {
        var difference = SetDifference<Element>()
        var nextSnapshot: [Element] = []
        swap(&nextSnapshot, &spareStorage)
        // Local copies, so that the closures below do not capture `self`.
        let oldElements = snapshot
        let updateElement = self.updateElement
        // The eager merge of two arrays (`_forEachSortedMergeChange`): its
        // loop keeps indices, rather than the pending element copies of the
        // lazy `_SortedMerge`. Each change gives at most one element of the
        // next snapshot, and each element of `newElements` gives one.
        // Not for an empty `newElements`: on an empty array, the standard
        // library's `append(addingCapacity: 0)` writes the count of the
        // shared empty-array storage, a data race with every thread reading
        // an empty array (ThreadSanitizer reports it).
        if #available(macOS 10.14.4, iOS 12.2, watchOS 5.2, tvOS 12.2, visionOS 1.0, *), !newElements.isEmpty {
            // Writes the next snapshot into the spare storage through a
            // pointer, counting in a local variable: `Array.append` would
            // load and store the array's count in memory at each element.
            nextSnapshot.append(addingCapacity: newElements.count) { span in
                span.withUnsafeMutableBufferPointer { buffer, initializedCount in
                    var count = 0
                    _forEachSortedMergeChange(left: oldElements, right: newElements, identification: identification) {
                        if let element = Self.record($0, identification, updateElement, in: &difference) {
                            // Holds by construction; checked because the
                            // write below is unchecked in release builds.
                            precondition(count < buffer.count, "SetDifferenceScanner: more elements kept than new ones.")
                            buffer.initializeElement(at: count, to: element)
                            count += 1
                        }
                    }
                    initializedCount = count
                }
            }
        } else {
            if !newElements.isEmpty { nextSnapshot.reserveCapacity(newElements.count) }
            _forEachSortedMergeChange(left: oldElements, right: newElements, identification: identification) {
                if let element = Self.record($0, identification, updateElement, in: &difference) {
                    nextSnapshot.append(element)
                }
            }
        }
        swap(&snapshot, &nextSnapshot)
        nextSnapshot.removeAll(keepingCapacity: true)
        spareStorage = nextSnapshot
        return difference
    }
}

extension SetDifferenceScanner {
    /// Records a change of the merge of the kept and new snapshots in
    /// `difference`, and returns the element that the next snapshot keeps
    /// for it, if any.
    @inlinable @inline(__always)
    static func record<Identification: _ElementIdentification>(
        _ change: SortedDifferenceChange<Element, Element>,
        _ identification: Identification,
        _ updateElement: ((Element, Element) -> Element)?,
        in difference: inout SetDifference<Element>
    ) -> Element? where Identification.Element == Element {
        switch change {
        case .left(let old):
            difference.deleted.append(old)
            return nil
        case .right(let new):
            difference.inserted.append(new)
            return new
        case .common(let old, let new):
            if identification.isUpdated(old, new) {
                return recordUpdate(of: old, to: new, updateElement: updateElement, in: &difference)
            }
            return old
        }
    }

    /// Records the update of an element whose id persists, and returns the
    /// element to keep: the rare path of a diff, out of line so that the
    /// merge loop keeps its values in registers.
    @inlinable @inline(never)
    static func recordUpdate(
        of old: Element,
        to new: Element,
        updateElement: ((Element, Element) -> Element)?,
        in difference: inout SetDifference<Element>
    ) -> Element {
        let element = updateElement?(old, new) ?? new
        difference.updated.append(element)
        return element
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
        self.init(
            initialElements: initialElements, id: { $0.id }, isUpdated: { $0 != $1 },
            updateElement: updateElement, isIdentifiableAndEquatable: true)
    }

    /// Returns the difference from the kept snapshot to `newElements`, and
    /// keeps `newElements` for the next diff.
    ///
    /// The same as the general `diff(to:)`; for a scanner made by the
    /// `Identifiable & Equatable` initializer, ids and values are read
    /// statically (no closure call per element).
    ///
    /// - Parameter newElements: The new snapshot, sorted by strictly
    ///   increasing id.
    /// - Returns: The inserted, updated and deleted elements, each in id order.
    /// - Complexity: O(n + m), where n is the number of kept elements and m
    ///   the number of new elements.
    @inlinable
    public mutating func diff(to newElements: [Element]) -> SetDifference<Element> {
        if isIdentifiableAndEquatable {
            return diff(to: newElements, identification: _IdentifiableEquatableIdentification())
        }
        return diff(to: newElements, identification: _ClosureIdentification(id: id, isUpdated: isUpdated))
    }
}
