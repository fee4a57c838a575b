extension ValueObservation where Value == RowsWithDifference {
    /// Observes the rows of a query and their differences: after each commit
    /// that could change them, the whole result and what was inserted,
    /// updated (with the changed columns) and deleted since the previous
    /// value, and, when `isOrdered`, what moved.
    ///
    /// ```swift
    /// let observation = ValueObservation.trackingRowDifferences(
    ///     sql: "SELECT * FROM player ORDER BY score DESC LIMIT 10", isOrdered: true)
    /// let cancellable = observation.start(in: dbQueue) { error in
    ///     print("observation failed: \(error)")
    /// } onChange: { value in
    ///     if let difference = value.difference {
    ///         print(RowJSON.difference(difference, columnNames: value.columnNames, isOrdered: true), terminator: "")
    ///     } else {
    ///         print(RowJSON.rows(value.rows, columnNames: value.columnNames), terminator: "")
    ///     }
    /// }
    /// ```
    ///
    /// This is the observation of any SQL query, with or without a primary
    /// key, for code that handles rows rather than records (a live-query
    /// server, `sqlite-watch`). Records identified by their primary key are
    /// better observed with `trackingSetDifferences(_:updateRecord:)`.
    ///
    /// The first value is ``RowsWithDifference/Change/initial`` (or, with
    /// `initialRows`, the difference from them). A value is delivered only
    /// when the rows changed: the same rows with the same stored values (and
    /// the same order when `isOrdered`) deliver nothing. When the query's
    /// result columns change, the value is
    /// ``RowsWithDifference/Change/columnsChanged`` and the identity is
    /// inferred again. The rows are compared by a `RowDiffer` (or as bytes,
    /// see below); results
    /// fetched while a difference is computed replace each other, so that
    /// the next difference goes to the newest one.
    /// Scheduling, cancellation, errors and `values(in:)` are those of every
    /// `ValueObservation`.
    ///
    /// The observation fails (`onError`, or the error of `values(in:)`) with
    /// the `DatabaseError` of SQL that does not compile or whose fetch
    /// fails, and with a `DatabaseError` `SQLITE_MISUSE` when the statement
    /// is not a read that returns rows (it is never run).
    ///
    /// An unordered observation whose rows one column identifies by unique
    /// integers keeps them as compact bytes (see ``ResultRows``), compares
    /// them as bytes, and makes only the changed rows into `Row` values.
    /// When, moreover, that column is the `INTEGER PRIMARY KEY` of the
    /// query's only table, and SQLite runs the query restricted to a list of
    /// keys as lookups of that table's rows (no join, subquery, `LIMIT`,
    /// aggregate, window, `DISTINCT` or compound query), a commit that the
    /// hooks, or the written pages of another process's commit in WAL mode
    /// with `Configuration.observesExternalChanges`, tell changed k rows
    /// makes the observation read those k rows again rather than the whole
    /// result (up to a quarter of the rows).
    ///
    /// - Parameters:
    ///   - sql: One read-only statement.
    ///   - arguments: The statement's arguments.
    ///   - identity: How rows are recognized from one result to the next;
    ///     nil infers it from the query (`RowIdentity.inferred(fromSQL:in:)`:
    ///     the primary key of its only table, or all values).
    ///   - isOrdered: Whether differences carry positions and moves.
    ///   - initialRows: The rows the first difference starts from (the
    ///     `rows` of an earlier value, to go on after a failure: compared as
    ///     bytes when both are kept as bytes); nil for a first value that
    ///     starts anew.
    /// - Complexity: Per commit, the query's fetch, then O(n log n) to sort
    ///   the rows by key (unless ordered) and O(n + m) to compare them, where
    ///   n and m are the sizes of the results (O(n + m + k log k) ordered,
    ///   where k is the number of rows in both). Rows identified by unique
    ///   integers in key order need no sort; when only the k changed rows
    ///   are read again: O(k (log c + b)) for the lookups and comparison,
    ///   in chunks c of b ≤ 128 rows.
    public static func trackingRowDifferences(
        sql: String,
        arguments: StatementArguments = StatementArguments(),
        identifiedBy identity: RowIdentity? = nil,
        isOrdered: Bool = false,
        initialRows: ResultRows? = nil
    ) -> Self {
        trackingRowDifferences(
            sql: sql, arguments: arguments, identifiedBy: identity, isOrdered: isOrdered, initialRows: initialRows,
            maxRows: nil)
    }

    /// `trackingRowDifferences(sql:arguments:identifiedBy:isOrdered:initialRows:)`
    /// that takes at most `maxRows` rows: a fetch that reads one more stops
    /// there, and the observation fails with `RowLimitExceeded` (the
    /// live-query server's `maxRows`: a query that selects millions of rows
    /// costs no more than the limit).
    ///
    /// - Parameter maxRows: The most rows of a result; nil for no limit.
    package static func trackingRowDifferences(
        sql: String,
        arguments: StatementArguments = StatementArguments(),
        identifiedBy identity: RowIdentity? = nil,
        isOrdered: Bool = false,
        initialRows: ResultRows? = nil,
        maxRows: Int?
    ) -> Self {
        let fetch = RowDifferencesFetch(
            sql: sql, arguments: arguments, identity: identity, isOrdered: isOrdered, maxRows: maxRows)
        return ValueObservation(
            tracking: .regions([SQLRequest<Row>(sql: sql, arguments: arguments)]),
            fetch: { db in try fetch.fetch(db) },
            incrementalFetch: fetch.incrementalFetch(),
            // A difference of rows runs no code of the user's.
            reducesFirstValueOnWriter: true,
            makeReducer: {
                var reducer = RowDifferencesReducer(isOrdered: isOrdered, initialRows: initialRows)
                return { fetched in
                    // The fetch returns `FetchedResult`: an internal invariant.
                    guard let fetched = fetched as? FetchedResult else { return nil }
                    return reducer.reduce(fetched)
                }
            }
        ).coalescingWhileReducing().fetchingTrackedRequest()
    }
}

/// Compares each fetched result of `trackingRowDifferences` with the
/// previous one: as bytes when both are keyed results (see `KeyedResult`),
/// otherwise with a `RowDiffer`.
private struct RowDifferencesReducer {
    private enum Kept {
        case none
        case differ(RowDiffer)
        case keyed(KeyedResult, columnNames: [String], identity: RowIdentity)
    }

    private let isOrdered: Bool
    private var initialRows: ResultRows?
    private var kept = Kept.none

    init(isOrdered: Bool, initialRows: ResultRows?) {
        self.isOrdered = isOrdered
        self.initialRows = initialRows
    }

    mutating func reduce(_ fetched: FetchedResult) -> RowsWithDifference? {
        let value = { (change: RowsWithDifference.Change) in
            RowsWithDifference(
                rows: fetched.resultRows, columnNames: fetched.columnNames, identity: fetched.identity, change: change)
        }
        switch kept {
        case .none:
            guard let initialRows else {
                keep(fetched)
                return value(.initial)
            }
            self.initialRows = nil
            if let initial = initialRows.keyedResult, case .keyed(let result) = fetched.rows,
                initial.keyIndex == result.keyIndex, initial.columnNames == result.columnNames
            {
                kept = .keyed(result, columnNames: fetched.columnNames, identity: fetched.identity)
                return result.difference(from: initial).map { value(.difference($0)) }
            }
            var differ = RowDiffer(
                identity: fetched.identity, isOrdered: isOrdered, columnNames: fetched.columnNames, rows: initialRows)
            return outcome(of: &differ, diffingTo: fetched, value)
        case .keyed(let previous, let columnNames, let identity):
            guard identity == fetched.identity, columnNames == fetched.columnNames else {
                keep(fetched)
                return value(.columnsChanged)
            }
            if case .keyed(let result) = fetched.rows {
                kept = .keyed(result, columnNames: columnNames, identity: identity)
                return result.difference(from: previous).map { value(.difference($0)) }
            }
            // Rows the key no longer identifies: compare them as `Row` values.
            var differ = RowDiffer(
                identity: identity, isOrdered: isOrdered, columnNames: columnNames, rows: previous.allRows)
            return outcome(of: &differ, diffingTo: fetched, value)
        case .differ(var differ):
            guard differ.identity == fetched.identity, differ.columnNames == fetched.columnNames else {
                keep(fetched)
                return value(.columnsChanged)
            }
            // Releases the differ's storage while it diffs, so that it is not
            // copied on write.
            kept = .none
            return outcome(of: &differ, diffingTo: fetched, value)
        }
    }

    /// Keeps `fetched` for the next comparison.
    private mutating func keep(_ fetched: FetchedResult) {
        switch fetched.rows {
        case .keyed(let result):
            kept = .keyed(result, columnNames: fetched.columnNames, identity: fetched.identity)
        case .rows(let rows):
            kept = .differ(RowDiffer(
                identity: fetched.identity, isOrdered: isOrdered, columnNames: fetched.columnNames, rows: rows))
        }
    }

    /// Compares `fetched` with `differ`'s rows, and keeps `fetched` (as
    /// bytes when it is a keyed result, otherwise in `differ`).
    private mutating func outcome(
        of differ: inout RowDiffer, diffingTo fetched: FetchedResult,
        _ value: (RowsWithDifference.Change) -> RowsWithDifference
    ) -> RowsWithDifference? {
        let outcome = differ.diff(to: fetched.allRows)
        if case .keyed(let result) = fetched.rows {
            kept = .keyed(result, columnNames: fetched.columnNames, identity: fetched.identity)
        } else {
            kept = .differ(differ)
        }
        switch outcome {
        case .unchanged: return nil
        case .columnsChanged: return value(.columnsChanged)
        case .changed(let difference): return value(.difference(difference))
        }
    }
}
