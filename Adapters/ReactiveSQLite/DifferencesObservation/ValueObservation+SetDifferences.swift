import Differences

extension ValueObservation {
    /// Turns an observation of identifiable elements, sorted by id, into an
    /// observation of their set differences: which elements were inserted,
    /// updated and deleted since the previous value.
    ///
    /// ```swift
    /// let observation = ValueObservation
    ///     .tracking { db in try Place.orderByPrimaryKey().fetchAll(db) }
    ///     .setDifferences()
    /// ```
    ///
    /// The first difference goes from `initialElements` to the first value;
    /// then each difference goes from the elements of the previous one to
    /// the new value. An element is updated when its id persists and it is
    /// not equal to its previous version. Elements that did not change are
    /// not reported, and keep their previous instance (the one a later
    /// deletion reports). A difference that is empty is never delivered,
    /// not even the first one: with `.immediate`, nothing is delivered
    /// before `start` returns when the first difference is empty.
    /// Scheduling, cancellation, errors and `values(in:)` are those of this
    /// observation.
    ///
    /// - Parameters:
    ///   - initialElements: The base of the first difference, sorted by
    ///     strictly increasing id.
    ///   - updateElement: Given the kept and the new version of an updated
    ///     element, returns the element to report in `updated` and keep for
    ///     the next difference. When nil, the new element. It runs on the
    ///     observation's serial queue, off the database.
    /// - Returns: An observation of `SetDifference`s whose arrays are in id order.
    /// - Precondition: Each value, and `initialElements`, is sorted by
    ///   strictly increasing id (checked in debug builds; in release builds
    ///   an unsorted value gives an unspecified difference, never a trap).
    ///   Ids compare with their own `<`: for text ids fetched with
    ///   `ORDER BY`, that is Swift's `String` order, not SQLite's, so prefer
    ///   ``trackingSetDifferences(_:updateRecord:)`` for database records.
    /// - Complexity: O(n + m) per value, where n and m are the numbers of
    ///   previous and new elements.
    public func setDifferences<Element>(
        initialElements: [Element] = [],
        updateElement: (@Sendable (Element, Element) -> Element)? = nil
    ) -> ValueObservation<SetDifference<Element>>
    where Value: Collection, Value.Element == Element, Element: Identifiable & Equatable & Sendable,
        Element.ID: Comparable {
        let makeReducer = self.makeReducer
        // Every option of the observation (throttle, events) is kept.
        return replacingReducer {
            let reduce = makeReducer()
            var scanner = SetDifferenceScanner<Element, Element.ID>(
                initialElements: initialElements, updateElement: updateElement.map { update in { update($0, $1) } })
            return { fetched in
                guard let value = try reduce(fetched) else { return nil }
                let difference = scanner.diff(to: Array(value))
                return difference.isEmpty ? nil : difference
            }
        }
    }
}
