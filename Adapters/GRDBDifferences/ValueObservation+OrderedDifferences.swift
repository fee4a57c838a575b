#if GRDB
// Built with the package trait GRDB only.
import Differences
import GRDB

extension ValueObservation
where Reducer.Value: Collection, Reducer.Value.Element: Identifiable & Equatable & Sendable {
    /// An observation of the ordered differences between consecutive values
    /// of this observation: each value carries the new elements and the
    /// `OrderedDifference` from the previous ones (deletions, insertions,
    /// moves, updates).
    ///
    /// ```swift
    /// let observation = ValueObservation
    ///     .tracking { db in try Player.order(Column("score").desc).limit(10).fetchAll(db) }
    ///     .orderedDifferences()
    /// ```
    ///
    /// The first value's difference goes from no element; applying a
    /// value's difference to the elements of the previous value gives its
    /// elements. A value whose elements equal the previous ones is not
    /// delivered, except the first one of a run, which GRDB always
    /// delivers. Scheduling, cancellation and publishers are GRDB's (see
    /// ``GRDBDifferences``).
    ///
    /// The observation fails with a `DifferencesObservationError` of kind
    /// `duplicateIdentifier` when two elements of one value have the same id.
    ///
    /// - Returns: GRDB's `ValueObservation` of `ElementsWithDifference` values.
    /// - Complexity: O(n + m + k log k) per value, where n and m are the
    ///   counts of the previous and new elements and k the number of common
    ///   elements (k log k only when some moved).
    public func orderedDifferences()
        -> ValueObservation<DifferencesReducer<Reducer, ElementsWithDifference<Reducer.Value.Element>>>
    {
        typealias Element = Reducer.Value.Element
        return differences {
            var previousElements: [Element] = []
            return { elements in
                let elements = Array(elements)
                let difference: OrderedDifference<Element>
                do throws(DuplicateIDError) {
                    difference = try OrderedDifference(checkingIDsFrom: previousElements, to: elements)
                } catch {
                    throw DifferencesObservationError(
                        kind: .duplicateIdentifier,
                        message: "orderedDifferences: two elements have the id \(error.id); "
                            + "the ids of one value must be unique.")
                }
                previousElements = elements
                return (ElementsWithDifference(elements: elements, difference: difference), difference.isEmpty)
            }
        }
    }
}

#endif
