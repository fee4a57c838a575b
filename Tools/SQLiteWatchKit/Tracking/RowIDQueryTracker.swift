import Foundation
import ReactiveSQLite

/// Keeps the result of a query over one rowid table, keyed by the table's
/// `INTEGER PRIMARY KEY`, up to date after the commits of other processes
/// to a WAL database by reading again only the rows whose pages the
/// commits wrote (see `TablePageTracker`), and tells what changed.
///
/// It serves queries whose rows each depend on one row of the table: the
/// query restricted to a list of keys
/// (`SELECT * FROM (query) WHERE key IN (...)`) must run as lookups of
/// the table's rowids and nothing else, which SQLite's plan tells (no
/// subquery reading a table, no `LIMIT`, aggregate, window, `DISTINCT` or
/// compound query). Other queries, and databases not in WAL mode, get nil
/// from `init`: watch them by fetching again.
///
/// When the changes cannot be known from the pages (a schema change, the
/// log restarted more than once between two refreshes, an unreadable
/// log), a refresh fetches the whole result and compares it with the kept
/// one: the result is exact either way.
///
/// The rows are kept as `EncodedRows`, not as `Row` values.
///
/// `@unchecked Sendable`: it is only used in accesses of one database
/// connection, which its queue serializes (the watcher's `DatabaseQueue`).
package final class RowIDQueryTracker: @unchecked Sendable {
    /// The outcome of a refresh.
    package enum Refresh: Sendable {
        case unchanged
        case changed(RowChanges)
        /// The result has other columns (a schema change under
        /// `SELECT *`), or its key column no longer identifies its rows:
        /// the tracker stops there (its refreshes tell nothing more);
        /// inspect the query again, and watch it anew.
        case columnsChanged
    }

    /// How refreshes went so far, for tests and measurements.
    package struct Statistics: Sendable {
        /// Refreshes that read the rows of the written pages only.
        package var incremental = 0
        /// Refreshes that fetched the whole result.
        package var full = 0
        /// Rows read again by incremental refreshes.
        package var rowsRead = 0
    }

    package let columnNames: [String]
    package private(set) var statistics = Statistics()
    private let sql: String
    private let identity: RowIdentity
    private let restrictedSQL: String
    private let keyIndex: Int
    private var pages: TablePageTracker
    private var rows = EncodedRows()
    private let rowMaker: RowMaker
    private var isStarted = false
    /// Whether the pages that commits write tell the rows to read again:
    /// false once a schema change made the query stop qualifying (then
    /// every refresh fetches everything).
    private var isTrackingPages = true
    /// Whether the next refresh must fetch everything: the rows that the
    /// pages of the last commits named were not read (an error).
    private var needsFullRefresh = false

    /// A tracker of `sql`, whose rows `inspection` identifies by the
    /// primary key of one table; nil when the query or the database does
    /// not qualify (see the type's documentation).
    ///
    /// - Parameter db: A connection outside of any transaction.
    package init?(sql: String, inspection: QueryInspection, in db: Database) throws {
        guard case .primaryKey(let table, _) = inspection.identity,
            let (keyIndex, restrictedSQL) = try Self.restrictedQuery(sql: sql, inspection: inspection, in: db),
            let pages = try TablePageTracker(table: table, in: db)
        else { return nil }
        self.sql = sql
        self.identity = inspection.identity
        self.restrictedSQL = restrictedSQL
        self.keyIndex = keyIndex
        self.pages = pages
        self.columnNames = inspection.columnNames
        self.rowMaker = RowMaker(columnNames: inspection.columnNames)
    }

    /// The index of the key column, and the query restricted to a list of
    /// keys, when the query qualifies (see the type's documentation).
    private static func restrictedQuery(
        sql: String, inspection: QueryInspection, in db: Database
    ) throws -> (keyIndex: Int, sql: String)? {
        guard case .primaryKey(_, let keyColumns) = inspection.identity, keyColumns.count == 1,
            let keyIndex = inspection.identity.columnIndexes(in: inspection.columnNames)?.first
        else { return nil }
        let key = "\"" + inspection.columnNames[keyIndex].replacingOccurrences(of: "\"", with: "\"\"") + "\""
        // New lines: a query that ends with a `--` comment.
        let restrictedSQL = "SELECT * FROM (\n\(sql)\n) WHERE \(key) IN (SELECT value FROM json_each(?) AS \(Self.keyListName))"
        guard let statement = try? db.makeStatement(sql: restrictedSQL), statement.columnNames == inspection.columnNames,
            try looksUpRowIDsOnly(restrictedSQL, in: db)
        else { return nil }
        return (keyIndex, restrictedSQL)
    }

    /// The name of the list of keys in the restricted query, which tells
    /// its scan from a `json_each` of the user's query in the plan.
    private static let keyListName = "sqlite_watch_keys"

    /// Whether SQLite runs the restricted query as rowid lookups of one
    /// table, with no other table access: then each result row depends on
    /// its table row only.
    private static func looksUpRowIDsOnly(_ sql: String, in db: Database) throws -> Bool {
        let plan = try SQLRequest<Row>(sql: "EXPLAIN QUERY PLAN \(sql)", arguments: ["[]"]).fetchAll(db)
        var lookups = 0
        for step in plan {
            let detail: String = try step["detail"]
            if detail.hasPrefix("SEARCH "), detail.hasSuffix(" USING INTEGER PRIMARY KEY (rowid=?)") {
                lookups += 1
            } else if !(detail.hasPrefix("LIST SUBQUERY ") || detail.hasPrefix("SCAN \(keyListName) VIRTUAL TABLE")) {
                return false
            }
        }
        return lookups == 1
    }

    // MARK: - Reading

    /// Fetches the whole result, in a read transaction of its own, and
    /// keeps it.
    ///
    /// - Parameter db: A connection outside of any transaction.
    package func start(_ db: Database) throws {
        try inSnapshot(db) { snapshot in
            rows = try fetchAll(db)
            try pages.start(db, snapshot: snapshot)
        }
        isStarted = true
    }

    /// The rows kept, in key order: a copy that stays as it is while the
    /// tracker goes on (the storage is shared until the tracker changes).
    package var keptRows: KeptRows { KeptRows(rows: rows, rowMaker: rowMaker, keyIndex: keyIndex) }

    /// Rows kept by a tracker, made into `Row` values on demand.
    package struct KeptRows: Sendable {
        fileprivate let rows: EncodedRows
        fileprivate let rowMaker: RowMaker
        fileprivate let keyIndex: Int

        package var count: Int { rows.count }

        /// The rows, in key order, a batch at a time (each batch is made
        /// when it is read).
        package func batches() -> some Sequence<[Row]> {
            rows.chunkedRows.lazy.map { [rowMaker, keyIndex] chunk in
                chunk.map { rowMaker.row(EncodedRows.decode($0.encoded, key: $0.key, at: keyIndex)) }
            }
        }

        /// All the rows, in key order.
        package var all: [Row] { Array(batches().joined()) }
    }

    /// Brings the kept result to the database's current state, and tells
    /// what changed.
    ///
    /// - Parameter db: A connection outside of any transaction.
    package func refresh(_ db: Database) throws -> Refresh {
        guard isStarted else { return .unchanged }
        return try inSnapshot(db) { snapshot in
            if isTrackingPages, !needsFullRefresh, let changes = try pages.changes(db, snapshot: snapshot) {
                statistics.incremental += 1
                // The tracker moved past these commits: until their rows
                // are read, only a full fetch can catch up.
                needsFullRefresh = true
                do {
                    let refresh = try apply(changes, in: db)
                    needsFullRefresh = false
                    return refresh
                } catch is UnkeyedRows {
                    isStarted = false
                    return .columnsChanged
                }
            }
            statistics.full += 1
            // The key's place depends on the columns: check them first.
            // After a schema change, the query may also read another table,
            // or its key may no longer be the rowid.
            let inspection = try QueryInspection(sql: sql, keys: [], in: db)
            guard inspection.columnNames == columnNames else {
                isStarted = false
                return .columnsChanged
            }
            if isTrackingPages {
                let restricted = try Self.restrictedQuery(sql: sql, inspection: inspection, in: db)
                isTrackingPages = inspection.identity == identity && restricted?.sql == restrictedSQL
            }
            let fetched: EncodedRows
            do {
                fetched = try fetchAll(db)
            } catch is UnkeyedRows {
                isStarted = false
                return .columnsChanged
            }
            if isTrackingPages { try pages.start(db, snapshot: snapshot) }
            needsFullRefresh = false
            return replaceRows(with: fetched)
        }
    }

    private func inSnapshot<T>(_ db: Database, _ body: (WALIndexHeader?) throws -> T) throws -> T {
        let snapshot = try TablePageTracker.beginSnapshot(db)
        do {
            let result = try body(snapshot)
            try db.execute(sql: "COMMIT")
            return result
        } catch {
            try? db.execute(sql: "ROLLBACK")
            throw error
        }
    }

    private func fetchAll(_ db: Database) throws -> EncodedRows {
        var builder = EncodedRows.Builder()
        let keyIndex = self.keyIndex
        try SQLRequest<Row>(sql: sql).fetchCursor(db).forEach { row in
            let values = row.databaseValues
            builder.append(key: try Self.key(of: values, at: keyIndex)) { bytes in
                EncodedRows.encode(values, skipping: keyIndex, into: &bytes)
            }
        }
        guard let fetched = builder.finish() else { throw UnkeyedRows() }
        return fetched
    }

    /// A kept row, from its key and encoded values.
    private func row(key: Int64, encoded: ArraySlice<UInt8>) -> Row {
        rowMaker.row(EncodedRows.decode(encoded, key: key, at: keyIndex))
    }

    private static func key(of values: [DatabaseValue], at index: Int) throws -> Int64 {
        guard index < values.count, case .integer(let key) = values[index].storage else { throw UnkeyedRows() }
        return key
    }

    /// Rows that the key column no longer identifies (a row without an
    /// integer key, two rows with the same one), after a schema change.
    private struct UnkeyedRows: Error, CustomStringConvertible {
        var description: String { "the rows of the query are no longer identified by an integer key" }
    }

    // MARK: - Differences

    /// Reads again the rows `changes` names, and applies them.
    private func apply(_ changes: TablePageTracker.Changes, in db: Database) throws -> Refresh {
        var candidates = Set(changes.rowIDs)
        for range in changes.ranges { candidates.formUnion(rows.keys(in: range)) }
        guard !candidates.isEmpty else { return .unchanged }
        statistics.rowsRead += candidates.count
        let sorted = candidates.sorted()
        var fetched: [Int64: [DatabaseValue]] = [:]
        var start = 0
        while start < sorted.count {
            let batch = sorted[start..<min(start + 10_000, sorted.count)]
            let list = "[" + batch.map(String.init).joined(separator: ",") + "]"
            try SQLRequest<Row>(sql: restrictedSQL, arguments: [list]).fetchCursor(db).forEach { row in
                let values = row.databaseValues
                guard fetched.updateValue(values, forKey: try Self.key(of: values, at: keyIndex)) == nil else {
                    throw UnkeyedRows()
                }
            }
            start += batch.count
        }
        var result = RowChanges()
        var encoded: [UInt8] = []
        for key in sorted {
            switch (rows.encodedRow(forKey: key), fetched[key]) {
            case (nil, nil):
                continue
            case (let old?, nil):
                result.deleted.append(RowChanges.Entry(row: row(key: key, encoded: old), position: nil))
                rows.remove(key: key)
            case (nil, let values?):
                result.inserted.append(RowChanges.Entry(row: rowMaker.row(values), position: nil))
                encoded.removeAll(keepingCapacity: true)
                EncodedRows.encode(values, skipping: keyIndex, into: &encoded)
                rows.set(key: key, encoded: encoded)
            case (let old?, let values?):
                encoded.removeAll(keepingCapacity: true)
                EncodedRows.encode(values, skipping: keyIndex, into: &encoded)
                guard !old.elementsEqual(encoded) else { continue }
                let previous = row(key: key, encoded: old)
                let row = rowMaker.row(values)
                result.updated.append(RowChanges.Update(
                    row: row, previous: previous, changedColumns: row.changedColumns(from: previous), position: nil))
                rows.set(key: key, encoded: encoded)
            }
        }
        return result.isEmpty ? .unchanged : .changed(result)
    }

    /// Replaces the kept rows with a whole new result, and tells the difference.
    private func replaceRows(with fetched: EncodedRows) -> Refresh {
        let old = rows
        rows = fetched
        var result = RowChanges()
        var oldRows = old.chunkedRows.joined().makeIterator()
        var newRows = fetched.chunkedRows.joined().makeIterator()
        var oldRow = oldRows.next()
        var newRow = newRows.next()
        while oldRow != nil || newRow != nil {
            if let old = oldRow, newRow.map({ old.key < $0.key }) ?? true {
                result.deleted.append(RowChanges.Entry(row: row(key: old.key, encoded: old.encoded), position: nil))
                oldRow = oldRows.next()
            } else if let new = newRow, oldRow.map({ new.key < $0.key }) ?? true {
                result.inserted.append(RowChanges.Entry(row: row(key: new.key, encoded: new.encoded), position: nil))
                newRow = newRows.next()
            } else if let old = oldRow, let new = newRow {
                if !old.encoded.elementsEqual(new.encoded) {
                    let previous = row(key: old.key, encoded: old.encoded)
                    let row = row(key: new.key, encoded: new.encoded)
                    result.updated.append(RowChanges.Update(
                        row: row, previous: previous, changedColumns: row.changedColumns(from: previous), position: nil))
                }
                oldRow = oldRows.next()
                newRow = newRows.next()
            }
        }
        return result.isEmpty ? .unchanged : .changed(result)
    }
}
