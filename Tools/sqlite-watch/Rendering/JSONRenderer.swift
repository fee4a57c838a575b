import ReactiveSQLite

/// One JSON object per line, ready for `jq`: the format of `RowJSON`, which
/// the live-query server's events share.
public struct JSONRenderer: ResultRenderer, Sendable {
    public let isOrdered: Bool

    /// A renderer; with `isOrdered`, changes include moves (`--ordered`).
    public init(isOrdered: Bool) {
        self.isOrdered = isOrdered
    }

    public func initialResult(columnNames: [String], rows: [Row]) -> String {
        RowJSON.rows(rows, columnNames: columnNames)
    }

    public func columnsChanged(columnNames: [String], rows: [Row]) -> String {
        initialResult(columnNames: columnNames, rows: rows)
    }

    /// Writes the `rows` object in parts of about a megabyte.
    public func streamInitialResult(
        columnNames: [String], afterColumnsChange: Bool, batches: some Sequence<[Row]>, write: (String) -> Bool
    ) {
        RowJSON.streamRows(columnNames: columnNames, batches: batches, write: write)
    }

    public func changes(_ changes: RowDifference, number: Int, columnNames: [String]) -> String {
        RowJSON.difference(changes, columnNames: columnNames, isOrdered: isOrdered)
    }
}
