/// The elements of an ordered collection, and the difference from the
/// elements before them.
///
/// This is the value of the `orderedDifferences()` observations of
/// ReactiveSQLite and of GRDBDifferences. The difference is ready for the
/// batch update of a list or table view that shows the previous elements:
///
/// ```swift
/// for try await value in observation.orderedDifferences().values(in: dbQueue) {
///     tableView.performBatchUpdates {
///         players = value.elements
///         tableView.deleteRows(at: value.difference.deletions.map { IndexPath(row: $0, section: 0) }, with: .fade)
///         tableView.insertRows(at: value.difference.insertions.map { IndexPath(row: $0, section: 0) }, with: .fade)
///         for move in value.difference.moves {
///             tableView.moveRow(at: IndexPath(row: move.from, section: 0), to: IndexPath(row: move.to, section: 0))
///         }
///     }
///     tableView.reloadRows(at: value.difference.updates.map { IndexPath(row: $0, section: 0) }, with: .none)
/// }
/// ```
public struct ElementsWithDifference<Element> {
    /// The new elements, in order.
    public var elements: [Element]

    /// The changes that turn the previous elements into ``elements``:
    /// deletions and move sources are offsets in the previous elements;
    /// insertions, move destinations and updates are offsets in
    /// ``elements``. Applying it to the previous elements gives ``elements``.
    public var difference: OrderedDifference<Element>

    /// Creates a value from elements and the difference that led to them.
    public init(elements: [Element], difference: OrderedDifference<Element>) {
        self.elements = elements
        self.difference = difference
    }
}

extension ElementsWithDifference: Sendable where Element: Sendable {}

extension ElementsWithDifference: Equatable where Element: Equatable {}
