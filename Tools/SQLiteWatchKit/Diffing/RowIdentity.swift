import DatabaseRegions

/// How the rows of a query are recognized from one result to the next, so
/// that a row whose values changed is reported as updated rather than as a
/// deletion and an insertion.
public enum RowIdentity: Equatable, Sendable {
    /// The primary key of the only table the query reads, when all its
    /// columns are result columns.
    case primaryKey(table: String, columns: [String])
    /// The columns given with `--key`.
    case keyColumns([String])
    /// No key: a row is its values, so a changed row is a deletion and an
    /// insertion.
    case wholeRow

    /// The key columns, or nil for the whole row.
    public var columns: [String]? {
        switch self {
        case .primaryKey(_, let columns), .keyColumns(let columns): columns
        case .wholeRow: nil
        }
    }

    /// The indexes of the key columns among `columnNames` (ASCII
    /// case-insensitive, the leftmost column wins, as SQLite resolves names),
    /// or nil when the identity is the whole row or a key column is missing.
    public func columnIndexes(in columnNames: [String]) -> [Int]? {
        guard let columns else { return nil }
        var indexes: [Int] = []
        for column in columns {
            guard let index = columnNames.firstIndex(where: { $0.isSameColumnName(as: column) }) else { return nil }
            indexes.append(index)
        }
        return indexes
    }

    /// A sentence for the note printed when watching starts.
    public var explanation: String {
        switch self {
        case .primaryKey(let table, let columns):
            "rows are identified by the primary key of \(table) (\(columns.joined(separator: ", ")))"
        case .keyColumns(let columns):
            "rows are identified by --key \(columns.joined(separator: ", "))"
        case .wholeRow:
            "rows are identified by all their values: a changed row shows as deleted and inserted "
                + "(select the primary key of a single table, or give --key COLUMN)"
        }
    }
}

extension String {
    /// Whether two column names are the same for SQLite (see `SQLiteIdentifier`).
    func isSameColumnName(as other: String) -> Bool {
        SQLiteIdentifier.areEqual(self, other)
    }
}
