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
    /// inferred again. The rows are compared by a `RowDiffer`; results
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
    /// - Parameters:
    ///   - sql: One read-only statement.
    ///   - arguments: The statement's arguments.
    ///   - identity: How rows are recognized from one result to the next;
    ///     nil infers it from the query (`RowIdentity.inferred(fromSQL:in:)`:
    ///     the primary key of its only table, or all values).
    ///   - isOrdered: Whether differences carry positions and moves.
    ///   - initialRows: The rows the first difference starts from; nil for
    ///     a first value that starts anew.
    /// - Complexity: Per commit, the query's fetch, then O(n log n) to sort
    ///   the rows by key (unless ordered) and O(n + m) to compare them, where
    ///   n and m are the sizes of the results (O(n + m + k log k) ordered,
    ///   where k is the number of rows in both).
    public static func trackingRowDifferences(
        sql: String,
        arguments: StatementArguments = StatementArguments(),
        identifiedBy identity: RowIdentity? = nil,
        isOrdered: Bool = false,
        initialRows: [Row]? = nil
    ) -> Self {
        let request = SQLRequest<Row>(sql: sql, arguments: arguments)
        // The identity inferred for the columns of the last fetch.
        let inferred = LockedState<(columnNames: [String], identity: RowIdentity)?>(nil)
        return ValueObservation(
            tracking: .regions([request]),
            fetch: { db in
                let statement = try db.cachedStatement(sql: sql)
                // The fetch runs the statement after each commit: it must
                // change nothing.
                guard statement.isReadOnly, statement.columnCount > 0 else {
                    throw DatabaseError(
                        resultCode: .SQLITE_MISUSE,
                        message: "trackingRowDifferences observes a read-only statement that returns rows",
                        sql: sql)
                }
                let columnNames = statement.columnNames
                let rowIdentity: RowIdentity
                if let identity {
                    rowIdentity = identity
                } else if let known = inferred.withLock({ $0 }), known.columnNames == columnNames {
                    rowIdentity = known.identity
                } else {
                    rowIdentity = try RowIdentity.inferred(fromSQL: sql, in: db)
                    inferred.withLock { $0 = (columnNames, rowIdentity) }
                }
                return FetchedRows(rows: try request.fetchAll(db), columnNames: columnNames, identity: rowIdentity)
            },
            // A difference of rows runs no code of the user's.
            reducesFirstValueOnWriter: true,
            makeReducer: {
                var differ: RowDiffer?
                return { fetched in
                    // The fetch returns `FetchedRows`: an internal invariant.
                    guard let fetched = fetched as? FetchedRows else { return nil }
                    let value = { (change: RowsWithDifference.Change) in
                        RowsWithDifference(
                            rows: fetched.rows, columnNames: fetched.columnNames, identity: fetched.identity,
                            change: change)
                    }
                    guard var current = differ else {
                        differ = RowDiffer(
                            identity: fetched.identity, isOrdered: isOrdered, columnNames: fetched.columnNames,
                            rows: initialRows ?? fetched.rows)
                        guard initialRows != nil else { return value(.initial) }
                        return Self.reduce(fetched, with: &differ, value: value)
                    }
                    guard current.identity == fetched.identity, current.columnNames == fetched.columnNames else {
                        current = RowDiffer(
                            identity: fetched.identity, isOrdered: isOrdered, columnNames: fetched.columnNames,
                            rows: fetched.rows)
                        differ = current
                        return value(.columnsChanged)
                    }
                    return Self.reduce(fetched, with: &differ, value: value)
                }
            }
        ).coalescingWhileReducing()
    }

    private static func reduce(
        _ fetched: FetchedRows, with differ: inout RowDiffer?, value: (RowsWithDifference.Change) -> RowsWithDifference
    ) -> RowsWithDifference? {
        guard var current = differ else { return nil }
        // Releases the differ's storage while it diffs, so that it is not
        // copied on write.
        differ = nil
        defer { differ = current }
        switch current.diff(to: fetched.rows) {
        case .unchanged: return nil
        case .columnsChanged: return value(.columnsChanged)
        case .changed(let difference): return value(.difference(difference))
        }
    }
}

/// What a fetch of `trackingRowDifferences` hands its reducer.
private struct FetchedRows: Sendable {
    var rows: [Row]
    var columnNames: [String]
    var identity: RowIdentity
}
