import ReactiveSQLite

/// One JSON object per line, ready for `jq`: the format of `RowJSON`, which
/// the live-query server's events share.
struct JSONRenderer: ResultRenderer, Sendable {
    let isOrdered: Bool

    /// A renderer; with `isOrdered`, changes include moves (`--ordered`).
    init(isOrdered: Bool) {
        self.isOrdered = isOrdered
    }

    func initialResult(columnNames: [String], rows: [Row]) -> String {
        RowJSON.rows(rows, columnNames: columnNames)
    }

    func columnsChanged(columnNames: [String], rows: [Row]) -> String {
        initialResult(columnNames: columnNames, rows: rows)
    }

    /// Writes the `rows` object in parts of about a megabyte.
    func streamInitialResult(
        columnNames: [String], afterColumnsChange: Bool, batches: some Sequence<[Row]>, write: (String) -> Bool
    ) {
        RowJSON.streamRows(columnNames: columnNames, batches: batches, write: write)
    }

    func changes(_ changes: RowDifference, number: Int, columnNames: [String]) -> String {
        RowJSON.difference(changes, columnNames: columnNames, isOrdered: isOrdered)
    }
}
