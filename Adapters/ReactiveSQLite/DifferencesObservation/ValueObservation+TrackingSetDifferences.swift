import Differences

extension ValueObservation {
    /// Observes the set differences of the records of a request: after each
    /// commit that could change them, which records were inserted, updated
    /// and deleted, identified by the primary key of their table.
    ///
    /// ```swift
    /// let observation = ValueObservation.trackingSetDifferences(Place.all())
    /// let cancellable = observation.start(in: dbQueue) { error in
    ///     print("observation failed: \(error)")
    /// } onChange: { difference in
    ///     map.addAnnotations(difference.inserted)
    ///     map.refreshAnnotations(difference.updated)
    ///     map.removeAnnotations(difference.deleted)
    /// }
    /// ```
    ///
    /// The first difference goes from no records to the current ones; then
    /// each difference goes from the records of the previous one to the
    /// current ones. An empty difference is never delivered, not even the
    /// first one. Scheduling, cancellation, errors and `values(in:)` are
    /// those of every `ValueObservation`.
    ///
    /// Records are identified by the primary key of the table (the rowid of
    /// a table without primary key: an `SQLRequest` must then select it),
    /// sorted in SQLite's `BINARY` order on raw values, and updated when
    /// their raw row changed: they need not be `Equatable`. Unchanged records
    /// keep their previous instance, and only inserted and updated rows are
    /// decoded. The observation may refetch only the rows that a commit
    /// changed rather than every row of the request, with the same
    /// differences. <doc:DifferencesObservations> details identity, order
    /// and updates, and when changed rows alone are refetched today.
    ///
    /// - Parameters:
    ///   - request: The request of the observed records.
    ///   - updateRecord: Given the kept record and the new row of an updated
    ///     record, returns the record to report in `updated` and keep for the
    ///     next difference. When nil, the record decoded from the new row. It
    ///     runs on the observation's serial queue, off the database.
    /// - Returns: An observation of `SetDifference`s whose arrays are in key order.
    ///
    /// The observation fails (`onError`, or the error of `values(in:)`) with
    /// a `DatabaseError` when the table does not exist or is a view; with a
    /// `DifferencesObservationError` when the rows lack a primary key column
    /// (`.missingPrimaryKeyColumn`) or two rows have the same key
    /// (`.duplicateIdentifier`: a join, or NULL keys); and with the error of
    /// a record's decoding.
    ///
    /// - Complexity: Per commit, O(n × c) to fetch and compare the rows in key
    ///   order, where n is the number of rows and c the number of columns
    ///   (O(n log n) more when the request does not order them by primary
    ///   key), plus the decoding of the inserted and updated rows. When only
    ///   the changed rows are refetched: O(k log n) lookups and O(k × b + n / b)
    ///   to build the rows instead of the fetch, where k is the number of
    ///   changed rows and b the number of rows of a chunk of the kept rows
    ///   (about 4 096 values), with no copy of the unchanged rows.
    @inlinable
    public static func trackingSetDifferences<Request: FetchRequest>(
        _ request: Request,
        updateRecord: (@Sendable (Request.Element, Row) -> Request.Element)? = nil
    ) -> Self where Request.Element: FetchableRecord & TableRecord & Sendable, Value == SetDifference<Request.Element> {
        // Inlinable, so that the decoding of every record of the first
        // difference is specialized for the record type in the caller's
        // module: no witness call and no generic metadata look-up per record.
        trackingSetDifferences(
            request, initialRecords: { [] }, updateRecord: updateRecord,
            decodeRecords: { rows in try rows.decodeRecords { try Request.Element(row: $0) } })
    }

    /// Observes the set differences of the records of a request, the first
    /// difference going from `initialRecords` to the current records.
    ///
    /// The same as ``trackingSetDifferences(_:updateRecord:)``, except for
    /// the first difference: it reports the current records whose key is
    /// not among the initial records' as inserted, the initial records whose
    /// key is gone as deleted, and the others as updated when their row
    /// changed. It is delivered only when it is not empty.
    ///
    /// The key and the raw row of an initial record are its encoded columns
    /// (with the conversions of `Decodable` records: `DatabaseValueConvertible`
    /// values give their database value, nil gives NULL, other structured
    /// values give their JSON text). Column names compare ASCII
    /// case-insensitively. An initial record that does not encode every
    /// column of the request's rows is reported updated when its key
    /// persists; for a table without primary key, it must encode the rowid
    /// (a `rowid` property).
    ///
    /// ```swift
    /// let observation = ValueObservation.trackingSetDifferences(
    ///     Place.orderByPrimaryKey(), initialRecords: cachedPlaces)
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request of the observed records.
    ///   - initialRecords: The base of the first difference, in any order,
    ///     with unique keys.
    ///   - updateRecord: See ``trackingSetDifferences(_:updateRecord:)``.
    ///
    /// The observation also fails, with a `DifferencesObservationError`, when an initial
    /// record does not encode a key column or two have the same key, and
    /// with the `EncodingError` of an initial record that does not encode
    /// into columns.
    public static func trackingSetDifferences<Request: FetchRequest>(
        _ request: Request,
        initialRecords: [Request.Element],
        updateRecord: (@Sendable (Request.Element, Row) -> Request.Element)? = nil
    ) -> Self
    where Request.Element: FetchableRecord & TableRecord & Encodable & Sendable, Value == SetDifference<Request.Element> {
        trackingSetDifferences(
            request,
            initialRecords: { try initialRecords.map { ($0, try DatabaseColumnEncoder.columns(of: $0)) } },
            updateRecord: updateRecord)
    }

    /// The one implementation of the two factories.
    ///
    /// - Parameter decodeRecords: Decodes the records of every row, in
    ///   order (see `KeyedRows.decodeRecords(_:)`), for a difference that
    ///   inserts every row; nil for the generic loop.
    @usableFromInline
    static func trackingSetDifferences<Request: FetchRequest>(
        _ request: Request,
        initialRecords: @escaping @Sendable () throws -> [(record: Request.Element, columns: [(name: String, value: DatabaseValue)])],
        updateRecord: (@Sendable (Request.Element, Row) -> Request.Element)?,
        decodeRecords: (@Sendable (KeyedRows) throws -> [Request.Element])? = nil
    ) -> Self where Request.Element: FetchableRecord & TableRecord & Sendable, Value == SetDifference<Request.Element> {
        typealias Record = Request.Element
        let hint = KeyedRowsHint()
        let queryInterfaceRequest = request as? QueryInterfaceRequest<Record>
        let tableName = queryInterfaceRequest?.tableName ?? Record.databaseTableName
        return ValueObservation(
            tracking: .regions([request]),
            fetch: { db in
                let schema = try db.existingTableSchema(named: tableName)
                let statement: Statement
                let addedRowID: Bool
                if case .rowID(column: nil) = schema.primaryKey, let queryInterfaceRequest {
                    // The rowid, last, where records do not look for columns.
                    let selection = "*, " + SQLLexer.quote(schema.name) + "." + schema.rowIDName
                    let (sql, arguments) = try queryInterfaceRequest.makeSQL(db, selection: selection)
                    statement = try db.cachedStatement(sql: sql)
                    try statement.setArguments(arguments)
                    addedRowID = true
                } else {
                    statement = try request.prepareStatement(db)
                    addedRowID = false
                }
                let rows = try statement.fetchKeyedRows(
                    keyColumns: schema.primaryKeyColumnNames, addedRowID: addedRowID, tableName: schema.name,
                    hint: hint.rows)
                hint.rows = rows
                return rows
            },
            incrementalFetch: queryInterfaceRequest.flatMap { incrementalFetch(of: $0, hint: hint) },
            // Decoding the first records where the rows were just read.
            reducesFirstValueOnWriter: true,
            makeReducer: {
                var scanner: RecordSetDifferenceScanner<Record>?
                return { fetched in
                    // The fetch returns `KeyedRows`: an internal invariant.
                    guard let rows = fetched as? KeyedRows else { return nil }
                    if scanner == nil {
                        scanner = RecordSetDifferenceScanner(
                            initialRecords: try initialRecords(), updateRecord: updateRecord.map { update in { update($0, $1) } },
                            decodeRecords: decodeRecords)
                    }
                    let difference = try scanner!.diff(to: rows)
                    return difference.isEmpty ? nil : difference
                }
            }
        ).fetchingTrackedRequest()
    }

    /// The fetch that refetches only the changed rows of a request whose
    /// rows each depend on their own values only, on a table keyed by an
    /// `INTEGER PRIMARY KEY` (whose rowids `VACUUM` keeps, unlike the
    /// rowids of a table without one, renumbered without any hook): a
    /// `QueryInterfaceRequest` without limit, whose SQL filters and
    /// orderings pass `SQLLexer.isRowLocalFragment` (no subquery, no `IN`
    /// a table, no clause smuggled in) and whose statement is row-local
    /// (`Statement.isRowLocal`: one SELECT, only built-in functions of their
    /// arguments). Reading other tables is fine: their events make the
    /// changed rows unknown (`ChangedRowIDs`). Nil for other requests.
    ///
    /// Each fetch runs the request restricted to the changed rowids, and
    /// patches the previous rows with what it finds: O(k log n) lookups and
    /// O(k × b + n / b) to build the rows (see `RowValues`: unchanged chunks
    /// are shared), where k is the number of changed rows, n the number of
    /// rows and b the rows of a chunk, instead of a scan of the table. It gives up (the observation then
    /// scans) for other tables and statements, and when more than 64 rows
    /// and more than a quarter of the rows changed. Nil too on an SQLite
    /// without `json_each` (`SQLiteFeatures.hasJSON`): the observation scans.
    private static func incrementalFetch<Record>(
        of request: QueryInterfaceRequest<Record>, hint: KeyedRowsHint
    ) -> IncrementalFetch? {
        guard request.limit == nil, SQLiteFeatures.hasJSON else { return nil }
        for filter in request.filters {
            if case .sql(let sql, _) = filter, !SQLLexer.isRowLocalFragment(sql) { return nil }
        }
        for ordering in request.orderings {
            if case .sql(let sql) = ordering, !SQLLexer.isRowLocalFragment(sql) { return nil }
        }
        // The table's schema when the table and the request qualify. Asked
        // when a run starts, and again at each fetch: the table may have
        // been dropped and created again since.
        let qualifyingSchema: @Sendable (Database) throws -> TableSchema? = { db in
            let schema = try db.existingTableSchema(named: request.tableName)
            guard case .rowID(column: _?) = schema.primaryKey else { return nil }
            // The full fetch's statement, compiled once and cached, tells
            // whether the request is row-local.
            guard try db.cachedStatement(sql: try request.makeSQL(db).sql).isRowLocal else { return nil }
            return schema
        }
        return IncrementalFetch(
            table: request.tableName, isApplicable: { try qualifyingSchema($0) != nil },
            rowIDsInRanges: { previous, ranges in (previous as? KeyedRows)?.rowIDs(in: ranges) }
        ) { db, previous, rowIDs in
            guard let base = previous as? KeyedRows, rowIDs.count <= max(64, base.rows.count / 4),
                let schema = try qualifyingSchema(db)
            else { return nil }
            let rowIDs = rowIDs.sorted()
            // One statement whatever the number of rows: the rowids are one
            // argument, a JSON array.
            let statement = try request.filter(
                sql: SQLLexer.quote(schema.name) + "." + schema.rowIDName + " IN (SELECT value FROM json_each(?))",
                arguments: ["[" + rowIDs.map(String.init).joined(separator: ",") + "]"]
            ).prepareStatement(db)
            let changed = try statement.fetchKeyedRows(
                keyColumns: schema.primaryKeyColumnNames, addedRowID: false, tableName: schema.name, hint: nil)
            guard let rows = KeyedRows(base: base, replacingRowIDs: rowIDs, with: changed) else { return nil }
            hint.rows = rows
            return rows
        }
    }
}
