import ReactiveSQLite

/// Writes the watched query's results and changes as text for standard
/// output: `TableRenderer` for people, `JSONRenderer` for programs.
public protocol ResultRenderer {
    /// The current rows, printed once when watching starts.
    func initialResult(columnNames: [String], rows: [Row]) -> String

    /// One change: the rows inserted, updated, deleted (and moved).
    ///
    /// - Parameter number: 1 for the first change, and so on.
    func changes(_ changes: RowChanges, number: Int, columnNames: [String]) -> String

    /// The whole new result, after the query's columns changed (a schema
    /// change under `SELECT *`), which makes rows incomparable.
    func columnsChanged(columnNames: [String], rows: [Row]) -> String
}
