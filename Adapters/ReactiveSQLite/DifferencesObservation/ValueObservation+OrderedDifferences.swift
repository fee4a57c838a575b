import Differences

extension ValueObservation {
    /// Turns an observation of an ordered collection of identifiable elements
    /// into an observation of the elements with the ordered difference from
    /// the previous ones (deletions, insertions, moves and updates), ready
    /// for the batch update of a list or table view.
    ///
    /// ```swift
    /// let leaderboard = ValueObservation
    ///     .trackingAll(Player.order(sql: "score DESC").limit(10))
    ///     .orderedDifferences()
    /// ```
    ///
    /// The first value's difference goes from no elements to the first
    /// elements (every element inserted); then each value's difference goes
    /// from the elements of the previous delivered value. Applying a
    /// value's difference to the previous value's elements gives its
    /// elements (see `OrderedDifference`). An element is updated when its id
    /// persists and it is not equal to its previous version. A value whose
    /// difference is empty is never delivered, not even the first one: with
    /// `.immediate`, nothing is delivered before `start` returns when there
    /// are no elements. Scheduling, cancellation, errors and `values(in:)`
    /// are those of this observation.
    ///
    /// The observation fails (`onError`, or the error of `values(in:)`)
    /// with a `DifferencesObservationError` (`.duplicateIdentifier`) when an id appears twice in one value (rows
    /// of a join, or ids that are not a unique column of the database).
    ///
    /// - Returns: An observation of `ElementsWithDifference` values.
    /// - Complexity: O(n + m + k log k) per value, where n and m are the
    ///   numbers of previous and new elements and k the number of common
    ///   elements (k log k only when some moved).
    public func orderedDifferences<Element>() -> ValueObservation<ElementsWithDifference<Element>>
    where Value: Collection, Value.Element == Element, Element: Identifiable & Equatable & Sendable {
        let makeReducer = self.makeReducer
        // Every option of the observation (throttle, events) is kept.
        return replacingReducer {
            let reduce = makeReducer()
            var previous: [Element] = []
            return { fetched in
                guard let value = try reduce(fetched) else { return nil }
                let elements = Array(value)
                let difference: OrderedDifference<Element>
                do throws(DuplicateIDError) {
                    difference = try OrderedDifference(checkingIDsFrom: previous, to: elements)
                } catch {
                    // Ids come from the database: they may repeat.
                    throw DifferencesObservationError(
                        kind: .duplicateIdentifier,
                        message: "orderedDifferences: two elements have the same id (\(error.id)): ordered "
                            + "differences need one element per id (a join, or an id that is not a unique column)")
                }
                if difference.isEmpty { return nil }
                previous = elements
                return ElementsWithDifference(elements: elements, difference: difference)
            }
        }
    }
}
