#if GRDB
// Built with the package trait GRDB only.
import Differences
import GRDB

extension ValueObservation
where
    Reducer.Value: Collection, Reducer.Value.Element: Identifiable & Equatable & Sendable,
    Reducer.Value.Element.ID: Comparable
{
    /// An observation of the set differences between consecutive values of
    /// this observation: which elements were inserted, updated and deleted.
    ///
    /// ```swift
    /// let observation = ValueObservation
    ///     .tracking { db in try Place.fetchAll(db) }
    ///     .setDifferences()
    /// ```
    ///
    /// The first difference of each run (each `start`, subscription or
    /// `values(in:)` iteration) goes from `initialElements`. An element is
    /// updated when its id persists and it is not equal to its previous
    /// version; unchanged elements are not reported, and keep their previous
    /// instance. The observed values need not be sorted by id. An empty
    /// difference is not delivered, except the first one of a run, which
    /// GRDB always delivers. Scheduling, cancellation and publishers are
    /// GRDB's. The module's overview, ``GRDBDifferences``, compares these
    /// semantics with ReactiveSQLite's `setDifferences`.
    ///
    /// The observation fails with a `DifferencesObservationError` of kind
    /// `duplicateIdentifier` when two elements of one value (or of
    /// `initialElements`) have the same id.
    ///
    /// - Parameters:
    ///   - initialElements: The elements the first difference starts from.
    ///   - updateElement: Given the kept and the new version of an updated
    ///     element, returns the element to report and keep. When nil, the
    ///     new element.
    /// - Returns: GRDB's `ValueObservation` of `SetDifference` values, whose
    ///   arrays are in id order.
    /// - Complexity: O(n + m) per value, where n and m are the counts of the
    ///   previous and new elements (O(m log m) when a value is not sorted
    ///   by id).
    public func setDifferences(
        initialElements: [Reducer.Value.Element] = [],
        updateElement: (@Sendable (Reducer.Value.Element, Reducer.Value.Element) -> Reducer.Value.Element)? = nil
    ) -> ValueObservation<DifferencesReducer<Reducer, SetDifference<Reducer.Value.Element>>> {
        typealias Element = Reducer.Value.Element
        return differences {
            var scanner: SetDifferenceScanner<Element, Element.ID>?
            return { elements in
                if scanner == nil {
                    let initialElements = try initialElements.sortedByStrictlyIncreasingID(\.id) { id in
                        "setDifferences: two initial elements have the id \(id); ids must be unique."
                    }
                    scanner = SetDifferenceScanner(initialElements: initialElements, updateElement: updateElement)
                }
                let sorted = try Array(elements).sortedByStrictlyIncreasingID(\.id) { id in
                    "setDifferences: two elements of one value have the id \(id); ids must be unique."
                }
                let difference = scanner!.diff(to: sorted)
                return (difference, difference.isEmpty)
            }
        }
    }
}

#endif
