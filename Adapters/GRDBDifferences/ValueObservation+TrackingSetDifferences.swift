#if GRDB
// Built with the package trait GRDB only.
import Differences
import GRDB

/// The value of one fetch of a `trackingSetDifferences` observation: the
/// primary key columns of the table and the rows of the request. It appears
/// in the type of the observation and has no public API.
///
/// `@unchecked Sendable`: GRDB's `Row` is not `Sendable` because a row read
/// from a cursor is a view of a statement; the rows here are copies made by
/// `Row.fetchAll`, immutable and attached to no statement. They are handed
/// from the fetch to the reducer, and nobody mutates them.
public struct TrackedRows: @unchecked Sendable {
    /// The primary key columns of the table (`rowid` when it has none).
    let keyColumns: [String]
    /// The rows, in the order of the request.
    let rows: [Row]
}

/// A row of a tracked request, identified by its primary key.
private struct KeyedRow: Identifiable {
    let id: RowKey
    let row: Row
}

/// A row of a tracked request with the record the observation reports for it.
private struct KeyedRecord<Record>: Identifiable {
    let id: RowKey
    let row: Row
    let record: Record
}

extension ValueObservation {
    /// An observation of the set differences of the records of a request:
    /// which records were inserted, updated and deleted by each committed
    /// transaction, identified by the primary key of their table.
    ///
    /// ```swift
    /// let observation = ValueObservation.trackingSetDifferences(Player.all())
    /// let cancellable = observation.start(in: dbQueue) { error in
    ///     // handle error
    /// } onChange: { difference in
    ///     print("inserted \(difference.inserted), updated \(difference.updated), deleted \(difference.deleted)")
    /// }
    /// ```
    ///
    /// Records are identified by the primary key of the request's table (the
    /// rowid of a table without one), sorted by key in SQLite's `BINARY`
    /// order on raw values, and updated when their raw row changed: they need
    /// not be `Equatable`. Unchanged rows are not decoded again. The first
    /// difference of a run goes from no record. An empty difference is not
    /// delivered, except the first one of a run, which GRDB always delivers.
    /// The region is the request's; scheduling, cancellation and publishers
    /// are GRDB's. Changes to WITHOUT ROWID tables need
    /// `db.notifyChanges(in:)`. The module's overview, ``GRDBDifferences``,
    /// details these semantics.
    ///
    /// The observation fails with a `DifferencesObservationError` when the
    /// request's selection lacks a primary key column, or when two rows
    /// have the same key (NULL keys of a rowid table, or a join); with the
    /// decoding error of a record; and with the database's errors.
    ///
    /// - Parameters:
    ///   - request: A request of the table's records.
    ///   - updateRecord: Given the kept record and the new row of an updated
    ///     record, returns the record to report and keep. When nil, the
    ///     record decoded from the row.
    /// - Returns: GRDB's `ValueObservation` of `SetDifference` values, whose
    ///   arrays are in key order.
    /// - Complexity: O(n + m) per fetch, where n and m are the counts of the
    ///   previous and new rows (O(m log m) when the request does not order
    ///   rows by primary key), plus the decoding of inserted and updated rows.
    public static func trackingSetDifferences<Record: FetchableRecord & TableRecord & Sendable>(
        _ request: QueryInterfaceRequest<Record>,
        updateRecord: (@Sendable (Record, Row) -> Record)? = nil
    ) -> Self where Reducer == DifferencesReducer<ValueReducers.Fetch<TrackedRows>, SetDifference<Record>> {
        trackingSetDifferences(request, updateRecord: updateRecord) { _, _ in [] }
    }

    /// An observation of the set differences of the records of a request,
    /// whose first difference starts from `initialRecords`.
    ///
    /// The same as ``trackingSetDifferences(_:updateRecord:)``, except for
    /// the first difference, which is computed against `initialRecords`
    /// instead of no record. The encoding of each initial record (its
    /// `encode(to:)` columns) gives its key and its raw row: an initial
    /// record whose row has the same values as the fetched one is not
    /// reported; one whose values differ is updated; one that is not
    /// fetched is deleted. For a table without primary key, the encoding
    /// must include the `rowid` column.
    ///
    /// ```swift
    /// let observation = ValueObservation.trackingSetDifferences(
    ///     Player.all(), initialRecords: cachedPlayers)
    /// ```
    ///
    /// The observation fails with a `DifferencesObservationError` when an
    /// initial record's encoding lacks a primary key column or two initial
    /// records have the same key, and with a record's encoding error.
    ///
    /// - Parameters:
    ///   - request: A request of the table's records.
    ///   - initialRecords: The records the first difference starts from,
    ///     in any order (every `PersistableRecord` is an `EncodableRecord`).
    ///   - updateRecord: Given the kept record and the new row of an updated
    ///     record, returns the record to report and keep.
    public static func trackingSetDifferences<Record: FetchableRecord & TableRecord & EncodableRecord & Sendable>(
        _ request: QueryInterfaceRequest<Record>,
        initialRecords: [Record],
        updateRecord: (@Sendable (Record, Row) -> Record)? = nil
    ) -> Self where Reducer == DifferencesReducer<ValueReducers.Fetch<TrackedRows>, SetDifference<Record>> {
        trackingSetDifferences(request, updateRecord: updateRecord) { keyColumns, table in
            try initialRecords.map { record in
                let row = Row(try record.databaseDictionary.mapValues { $0 as (any DatabaseValueConvertible)? })
                let indices = try row.indices(
                    ofKeyColumns: keyColumns, table: table, source: "the encoding of an initial record")
                return KeyedRecord(id: RowKey(row: row, indices: indices), row: row, record: record)
            }
        }
    }

    /// The one implementation of both `trackingSetDifferences` methods.
    ///
    /// - Parameter initialRecords: Makes the keyed initial records, given the
    ///   primary key columns and the table name. Called once per run, on
    ///   the reducer queue.
    private static func trackingSetDifferences<Record: FetchableRecord & TableRecord & Sendable>(
        _ request: QueryInterfaceRequest<Record>,
        updateRecord: (@Sendable (Record, Row) -> Record)?,
        initialRecords: @escaping @Sendable (_ keyColumns: [String], _ table: String) throws -> [KeyedRecord<Record>]
    ) -> Self where Reducer == DifferencesReducer<ValueReducers.Fetch<TrackedRows>, SetDifference<Record>> {
        let table = request.databaseTableName
        let fetchRows = ValueObservation<ValueReducers.Fetch<TrackedRows>>.tracking(regions: [request]) { db in
            let primaryKey = try db.primaryKey(table)
            // A table without primary key: its rows are identified by their
            // rowid, which `SELECT *` does not select.
            let selectsRowID = primaryKey.isRowID && primaryKey.rowIDColumn == nil
            let rows = try Row.fetchAll(db, selectsRowID ? request.annotated(with: Column.rowID) : request)
            return TrackedRows(keyColumns: primaryKey.columns, rows: rows)
        }
        return fetchRows.differences {
            // The records of the last difference, sorted by key. Nil until
            // the first fetch gives the key columns.
            var snapshot: [KeyedRecord<Record>]?
            return { fetched in
                let keyColumns = fetched.keyColumns, rows = fetched.rows
                if snapshot == nil {
                    snapshot = try initialRecords(keyColumns, table).sortedByStrictlyIncreasingID(\.id) { key in
                        "trackingSetDifferences: two initial records of table \"\(table)\" have the primary key "
                            + "\(key); keys must be unique."
                    }
                }
                let newRows: [KeyedRow]
                if let firstRow = rows.first {
                    let indices = try firstRow.indices(
                        ofKeyColumns: keyColumns, table: table, source: "the selection of the request")
                    newRows = try rows.map { KeyedRow(id: RowKey(row: $0, indices: indices), row: $0) }
                        .sortedByStrictlyIncreasingID(\.id) { key in
                            "trackingSetDifferences: two rows of table \"\(table)\" have the primary key \(key) "
                                + "(NULL keys, or a join?); keys must be unique."
                        }
                } else {
                    newRows = []
                }
                var difference = SetDifference<Record>()
                var nextSnapshot: [KeyedRecord<Record>] = []
                nextSnapshot.reserveCapacity(newRows.count)
                for change in SortedDifference(left: snapshot!, right: newRows) {
                    switch change {
                    case .left(let old):
                        difference.deleted.append(old.record)
                    case .right(let new):
                        let record = try Record(row: new.row)
                        difference.inserted.append(record)
                        nextSnapshot.append(KeyedRecord(id: new.id, row: new.row, record: record))
                    case .common(let old, let new):
                        if old.row.hasSameRawValues(as: new.row) {
                            nextSnapshot.append(old)
                        } else {
                            let record = try updateRecord.map { $0(old.record, new.row) } ?? Record(row: new.row)
                            difference.updated.append(record)
                            nextSnapshot.append(KeyedRecord(id: new.id, row: new.row, record: record))
                        }
                    }
                }
                snapshot = nextSnapshot
                return (difference, difference.isEmpty)
            }
        }
    }
}

#endif
