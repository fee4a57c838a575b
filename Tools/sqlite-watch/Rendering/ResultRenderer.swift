import ReactiveSQLite

/// Writes the watched query's results and changes as text for standard
/// output: `TableRenderer` for people, `JSONRenderer` for programs.
protocol ResultRenderer {
    /// The current rows, printed once when watching starts.
    func initialResult(columnNames: [String], rows: [Row]) -> String

    /// One change: the rows inserted, updated, deleted (and moved).
    ///
    /// - Parameter number: 1 for the first change, and so on.
    func changes(_ changes: RowDifference, number: Int, columnNames: [String]) -> String

    /// The whole new result, after the query's columns changed (a schema
    /// change under `SELECT *`), which makes rows incomparable.
    func columnsChanged(columnNames: [String], rows: [Row]) -> String

    /// The text of `initialResult`, or of `columnsChanged` with
    /// `afterColumnsChange`, written in consecutive parts, for results too
    /// large to hold as `Row` values at once.
    ///
    /// - Parameters:
    ///   - batches: The rows, in order, a batch at a time.
    ///   - write: Called with each part of the text, in order; returns false
    ///     to stop (the output failed).
    func streamInitialResult(
        columnNames: [String], afterColumnsChange: Bool, batches: some Sequence<[Row]>, write: (String) -> Bool)
}

extension ResultRenderer {
    /// Collects the rows, and writes the text at once.
    func streamInitialResult(
        columnNames: [String], afterColumnsChange: Bool, batches: some Sequence<[Row]>, write: (String) -> Bool
    ) {
        let rows = batches.flatMap { $0 }
        _ = write(afterColumnsChange
            ? columnsChanged(columnNames: columnNames, rows: rows) : initialResult(columnNames: columnNames, rows: rows))
    }
}
