import ReactiveSQLite

extension RowIdentity {
    /// A sentence for the note printed when watching starts.
    var explanation: String {
        switch self {
        case .primaryKey(let table, let columns):
            "rows are identified by the primary key of \(table) (\(columns.joined(separator: ", ")))"
        case .columns(let columns):
            "rows are identified by --key \(columns.joined(separator: ", "))"
        case .allValues:
            "rows are identified by all their values: a changed row shows as deleted and inserted "
                + "(select the primary key of a single table, or give --key COLUMN)"
        }
    }
}

extension RowDifference {
    /// `1 inserted, 2 updated`: the non-empty counts.
    var summary: String {
        [("inserted", inserted.count), ("updated", updated.count), ("deleted", deleted.count), ("moved", moved.count)]
            .filter { $0.1 > 0 }
            .map { "\($0.1) \($0.0)" }
            .joined(separator: ", ")
    }
}
