#if GRDB
// Built with the package trait GRDB only.
import Differences

extension Array {
    /// The elements sorted by strictly increasing id: the array itself when
    /// it is already sorted, else a sorted copy.
    ///
    /// - Parameters:
    ///   - id: The id of an element.
    ///   - duplicateMessage: The message of the error thrown for a duplicate id.
    /// - Throws: `DifferencesObservationError.Kind.duplicateIdentifier` when
    ///   two elements have the same id.
    /// - Complexity: O(n) when sorted, O(n log n) otherwise.
    func sortedByStrictlyIncreasingID<ID: Comparable>(
        _ id: (Element) -> ID, duplicateMessage: (ID) -> String
    ) throws -> [Element] {
        var isSorted = true
        for index in indices.dropFirst() {
            let previous = id(self[index - 1]), current = id(self[index])
            if current == previous { throw Self.duplicate(duplicateMessage(previous)) }
            if current < previous {
                isSorted = false
                break
            }
        }
        if isSorted { return self }
        let sorted = self.sorted { id($0) < id($1) }
        for index in sorted.indices.dropFirst() where id(sorted[index - 1]) == id(sorted[index]) {
            throw Self.duplicate(duplicateMessage(id(sorted[index])))
        }
        return sorted
    }

    private static func duplicate(_ message: String) -> DifferencesObservationError {
        DifferencesObservationError(kind: .duplicateIdentifier, message: message)
    }
}

#endif
