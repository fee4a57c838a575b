#if Server
import ReactiveSQLite

/// One result of a shared live query, as its subscribers are sent it.
///
/// A revision knows its rows, and the difference from the revision before
/// it, rendered once for every subscriber that holds that previous one.
/// Its `rows` JSON is rendered on first demand, once.
final class LiveRevision: Sendable {
    /// The event id: the query's epoch (one per observation, so that ids of
    /// an observation that restarted never match) and the revision number.
    let id: String
    let number: Int
    let columnNames: [String]
    let rows: ResultRows
    /// The difference from revision `number - 1`, as a JSON line; nil when
    /// this revision starts anew (the first one, or new result columns).
    let diffFromPrevious: String?
    private let rowsJSON = LockedState<String?>(nil)

    init(epoch: String, number: Int, columnNames: [String], rows: ResultRows, diffFromPrevious: String?) {
        self.id = "\(epoch)-\(number)"
        self.number = number
        self.columnNames = columnNames
        self.rows = rows
        self.diffFromPrevious = diffFromPrevious
    }

    /// `{"rows":[...]}`, rendered once.
    func rowsEventData() -> String {
        if let text = rowsJSON.withLock({ $0 }) { return text }
        let text = JSONText.line(RowJSON.rows(rows, columnNames: columnNames))
        rowsJSON.withLock { $0 = text }
        return text
    }
}
#endif
