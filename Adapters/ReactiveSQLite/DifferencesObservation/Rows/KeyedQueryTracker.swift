/// Keeps the result of a query whose rows are identified by one integer
/// column up to date after the commits of other processes, and tells what
/// changed, without making the rows it compares into `Row` values.
///
/// Two ways, the cheapest that applies:
///
/// - **The pages that commits write** (a WAL database, and a query over one
///   rowid table keyed by its `INTEGER PRIMARY KEY`, each of whose rows
///   depends on one row of the table): a refresh reads again only the rows
///   whose pages the commits wrote (see `TablePageTracker`). The query
///   restricted to a list of keys (`SELECT * FROM (query) WHERE key IN
///   (...)`) must run as lookups of the table's rowids and nothing else,
///   which SQLite's plan tells (no subquery reading a table, no `LIMIT`,
///   aggregate, window, `DISTINCT` or compound query).
/// - **One run of the query** (otherwise: a database in rollback mode, an
///   encrypted one, another query; and when the pages cannot tell: a schema
///   change, the log restarted over unseen commits, an unreadable page):
///   the rows are compared with the kept ones as SQLite returns them, their
///   values read in place and compared as bytes, so that only the rows that
///   changed are made into values. Rows that come in ascending key order (a
///   query over a rowid table without `ORDER BY`) are merged with the kept
///   ones in one pass, with no copy of the result; rows in another order
///   are collected and sorted first.
///
/// The result is exact either way. A query whose key column holds a value
/// that is not an integer, or the same integer twice, cannot be tracked:
/// `start` throws `UnkeyedRows`, and a refresh that meets such rows tells
/// it (`Refresh.unkeyed`); watch such a query by fetching it again.
///
/// The rows are kept as `EncodedRows`, not as `Row` values.
///
/// `@unchecked Sendable`: it is only used in accesses of one database
/// connection, which its queue serializes (`sqlite-watch`'s `DatabaseQueue`).
package final class KeyedQueryTracker: @unchecked Sendable {
    /// The outcome of a refresh.
    package enum Refresh: Sendable {
        case unchanged
        case changed(RowDifference)
        /// The result has other columns (a schema change under
        /// `SELECT *`), or its key column is no longer in the result: the
        /// tracker stops there (its refreshes tell nothing more); inspect
        /// the query again, and watch it anew.
        case columnsChanged
        /// The key column now holds a value that is not an integer, or the
        /// same integer in two rows: the tracker stops there; `keptRows`
        /// are the rows before the refresh, from which another way of
        /// watching can go on.
        case unkeyed
    }

    /// How refreshes went so far, for tests and measurements.
    package struct Statistics: Sendable {
        /// Refreshes that read the rows of the written pages only.
        package var incremental = 0
        /// Refreshes that ran the whole query.
        package var full = 0
        /// Full refreshes whose rows came in another order than the keys'.
        package var unordered = 0
        /// Rows read again by incremental refreshes.
        package var rowsRead = 0
    }

    package let columnNames: [String]
    package private(set) var statistics = Statistics()
    private let sql: String
    private let identity: RowIdentity
    private let keyIndex: Int
    private let rowMaker: RowMaker
    private var rows = EncodedRows()
    private var isStarted = false
    /// Whether the rows of the last full fetch came in ascending key order:
    /// if not, the next one collects and sorts them at once (an index
    /// created or dropped may change the order: each collection tells it
    /// again).
    private var isKeyOrdered = true

    /// The way through written pages, when the query and the database
    /// qualify (see the type's documentation).
    private var pages: PageWay?

    private struct PageWay {
        var tracker: TablePageTracker
        /// The query restricted to a JSON list of keys.
        let restrictedSQL: String
        /// False once a schema change made the query stop qualifying (then
        /// every refresh runs the whole query).
        var isTracking = true
        /// Whether the next refresh must run the whole query: the rows that
        /// the pages of the last commits named were not read (an error).
        var needsFullRefresh = false
    }

    /// A tracker of `sql`, whose result columns are `columnNames` and whose
    /// rows `identity` identifies by one column; nil when they are
    /// identified otherwise (by several columns, or by all their values).
    ///
    /// - Parameter db: A connection outside of any transaction.
    package init?(sql: String, identity: RowIdentity, columnNames: [String], in db: Database) throws {
        guard let keyIndexes = identity.columnIndexes(in: columnNames), keyIndexes.count == 1 else { return nil }
        self.sql = sql
        self.identity = identity
        self.keyIndex = keyIndexes[0]
        self.columnNames = columnNames
        self.rowMaker = RowMaker(columnNames: columnNames)
        if case .primaryKey(let table, _) = identity,
            let restrictedSQL = try Self.restrictedQuery(sql: sql, identity: identity, columnNames: columnNames, in: db),
            let tracker = try TablePageTracker(table: table, in: db)
        {
            pages = PageWay(tracker: tracker, restrictedSQL: restrictedSQL)
        }
    }

    /// Whether refreshes may read the rows of the written pages only.
    package var tracksPages: Bool { pages?.isTracking ?? false }

    /// The query restricted to a list of keys, when the query qualifies
    /// for the way through pages (see the type's documentation).
    private static func restrictedQuery(
        sql: String, identity: RowIdentity, columnNames: [String], in db: Database
    ) throws -> String? {
        guard case .primaryKey(_, let keyColumns) = identity, keyColumns.count == 1,
            let keyIndex = identity.columnIndexes(in: columnNames)?.first
        else { return nil }
        let key = SQLLexer.quote(columnNames[keyIndex])
        // New lines: a query that ends with a `--` comment.
        let restrictedSQL = "SELECT * FROM (\n\(sql)\n) WHERE \(key) IN (SELECT value FROM json_each(?) AS \(Self.keyListName))"
        guard let statement = try? db.makeStatement(sql: restrictedSQL), statement.columnNames == columnNames,
            try looksUpRowIDsOnly(restrictedSQL, in: db)
        else { return nil }
        return restrictedSQL
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
    /// - Throws: `UnkeyedRows` when the key column does not identify the
    ///   rows by integers; the database's errors.
    package func start(_ db: Database) throws {
        try inSnapshot(db) { snapshot in
            (rows, startOrder) = try fetchAll(db)
            try pages?.tracker.start(db, snapshot: snapshot)
        }
        isStarted = true
    }

    /// The keys of the rows `start` fetched, in the order the query
    /// returned them, when it is not the keys' order; nil once taken, or
    /// after the first refresh.
    private var startOrder: [Int64]?

    /// The rows `start` fetched, in the order the query returned them (see
    /// `keptRows`), once: the tracker forgets that order (8 bytes per row).
    /// Called again, or after a refresh, it gives the rows in key order.
    package func takeStartRows() -> KeptRows {
        defer { startOrder = nil }
        return KeptRows(rows: rows, order: startOrder, rowMaker: rowMaker, keyIndex: keyIndex)
    }

    /// The rows kept, in key order: a copy that stays as it is while the
    /// tracker goes on (the storage is shared until the tracker changes).
    package var keptRows: KeptRows { KeptRows(rows: rows, order: nil, rowMaker: rowMaker, keyIndex: keyIndex) }

    /// Rows kept by a tracker, made into `Row` values on demand.
    package struct KeptRows: Sendable {
        fileprivate let rows: EncodedRows
        /// The keys in the order to give the rows in; nil: key order.
        fileprivate let order: [Int64]?
        fileprivate let rowMaker: RowMaker
        fileprivate let keyIndex: Int

        package var count: Int { rows.count }

        /// The rows, a batch at a time (each batch is made when it is read).
        ///
        /// - Complexity: O(n) in key order; O(n (log c + b)) in another
        ///   order, each row found by its key.
        package func batches() -> some Sequence<[Row]> {
            let rows = self.rows
            let inOrder: AnySequence<[EncodedRows.Element]> = if let order {
                AnySequence(stride(from: 0, to: order.count, by: 128).lazy.map { start in
                    order[start..<min(start + 128, order.count)].compactMap { key in
                        rows.encodedRow(forKey: key).map { (key, $0) }
                    }
                })
            } else {
                AnySequence(rows.chunkedRows)
            }
            return inOrder.lazy.map { [rowMaker, keyIndex] chunk in
                chunk.map { rowMaker.row(EncodedRows.decode($0.encoded, key: $0.key, at: keyIndex)) }
            }
        }

        /// All the rows.
        package var all: [Row] { Array(batches().joined()) }
    }

    /// Brings the kept result to the database's current state, and tells
    /// what changed.
    ///
    /// - Parameter db: A connection outside of any transaction.
    package func refresh(_ db: Database) throws -> Refresh {
        apply(try readChanges(db))
    }

    /// `refresh(_:)` in `Database.yieldingToWriters(_:)`: a read that a
    /// writer of another process meets is thrown away and made again,
    /// from the same kept rows, and only the read that holds is applied.
    ///
    /// - Parameter db: A connection outside of any transaction.
    package func refreshYieldingToWriters(_ db: Database) throws -> Refresh {
        apply(try db.yieldingToWriters { try readChanges(db) })
    }

    /// What a refresh read: the changes from the kept rows to the
    /// database's state, not applied yet (see `readChanges(_:)`).
    package struct PendingRefresh: Sendable {
        fileprivate enum Outcome: Sendable {
            case changes([RowChange])
            case columnsChanged
            case unkeyed
        }

        fileprivate var outcome: Outcome
        /// Whether the way through written pages is at the state read, and
        /// may serve the next refresh once the changes are applied.
        fileprivate var pagesCaughtUp = false
    }

    /// Reads what changed from the kept rows to the database's current
    /// state, and leaves the kept rows as they are: `apply(_:)` applies it.
    ///
    /// A read may be thrown away and made again (a read without a lock
    /// that met a writer, see `Database.yieldingToWriters(_:)`): each read
    /// starts from the same kept rows, and the way through pages reads
    /// everything again until a read is applied, since it may have moved
    /// past commits whose rows were never applied.
    ///
    /// - Parameter db: A connection outside of any transaction.
    package func readChanges(_ db: Database) throws -> PendingRefresh {
        guard isStarted else { return PendingRefresh(outcome: .changes([])) }
        startOrder = nil
        return try inSnapshot(db) { snapshot in
            do {
                if let changes = try pageChanges(db, snapshot: snapshot) {
                    statistics.incremental += 1
                    // The tracker moved past these commits: until their rows
                    // are applied, only a full refresh can catch up.
                    pages?.needsFullRefresh = true
                    return PendingRefresh(outcome: .changes(try read(changes, in: db)), pagesCaughtUp: true)
                }
                return try readAll(db, snapshot: snapshot)
            } catch is UnkeyedRows {
                return PendingRefresh(outcome: .unkeyed)
            }
        }
    }

    /// Applies what `readChanges(_:)` read to the kept rows, and tells
    /// what changed.
    package func apply(_ pending: PendingRefresh) -> Refresh {
        switch pending.outcome {
        case .columnsChanged:
            isStarted = false
            return .columnsChanged
        case .unkeyed:
            isStarted = false
            return .unkeyed
        case .changes(let changes):
            if pending.pagesCaughtUp { pages?.needsFullRefresh = false }
            return commit(changes)
        }
    }

    /// The changes the pages tell, when they do.
    private func pageChanges(_ db: Database, snapshot: WALIndexHeader?) throws -> TablePageTracker.Changes? {
        guard let pages, pages.isTracking, !pages.needsFullRefresh else { return nil }
        return try self.pages?.tracker.changes(db, snapshot: snapshot)
    }

    /// Runs the whole query, and compares its rows with the kept ones.
    private func readAll(_ db: Database, snapshot: WALIndexHeader?) throws -> PendingRefresh {
        statistics.full += 1
        // Until this read is applied, the next one reads everything too.
        pages?.needsFullRefresh = true
        // The key's place depends on the columns: check them first.
        // After a schema change, the query may also read another table,
        // or its key may no longer be the rowid.
        // (The rows stay identified by the key column's values: they are
        // checked as they are read.) A query that no longer compiles fails
        // with SQLite's error.
        guard try db.makeStatement(sql: sql).columnNames == columnNames else {
            return PendingRefresh(outcome: .columnsChanged)
        }
        if let pages, pages.isTracking {
            let inferred = try RowIdentity.inferred(fromSQL: sql, in: db)
            let restricted = try Self.restrictedQuery(sql: sql, identity: inferred, columnNames: columnNames, in: db)
            self.pages?.isTracking = inferred == identity && restricted == pages.restrictedSQL
        }
        let changes = try compareAllRows(db)
        if let pages, pages.isTracking { try self.pages?.tracker.start(db, snapshot: snapshot) }
        return PendingRefresh(outcome: .changes(changes), pagesCaughtUp: true)
    }

    private func inSnapshot<T>(_ db: Database, _ body: (WALIndexHeader?) throws -> T) throws -> T {
        let snapshot: WALIndexHeader?
        if pages != nil {
            snapshot = try TablePageTracker.beginSnapshot(db)
        } else {
            try db.execute(sql: "BEGIN DEFERRED")
            snapshot = nil
        }
        do {
            let result = try body(snapshot)
            try db.execute(sql: "COMMIT")
            return result
        } catch {
            try? db.execute(sql: "ROLLBACK")
            throw error
        }
    }

    /// The whole result, its values read in place, and the keys in the
    /// order of the query when it is not theirs; notes whether the rows
    /// came in key order.
    private func fetchAll(_ db: Database) throws -> (EncodedRows, order: [Int64]?) {
        var builder = EncodedRows.Builder()
        var order: [Int64] = []
        let keyIndex = self.keyIndex
        try db.forEachRawRow(sql: sql) { row in
            let key = try Self.key(of: row, at: keyIndex)
            order.append(key)
            builder.append(key: key) { bytes in EncodedRows.encode(row, skipping: keyIndex, into: &bytes) }
        }
        isKeyOrdered = builder.isInKeyOrder
        guard let fetched = builder.finish() else { throw UnkeyedRows() }
        return (fetched, isKeyOrdered ? nil : order)
    }

    private static func key(of row: RawRow, at index: Int) throws -> Int64 {
        guard index < row.count, case .integer(let key) = row[index] else { throw UnkeyedRows() }
        return key
    }

    /// Rows that the key column does not identify: a row whose key is not
    /// an integer, two rows with the same key.
    package struct UnkeyedRows: Error, CustomStringConvertible {
        package var description: String { "the rows of the query are not identified by an integer key" }
    }

    // MARK: - Differences

    /// A row that changed: its bytes before (nil: inserted) and after
    /// (nil: deleted).
    fileprivate typealias RowChange = (key: Int64, old: ArraySlice<UInt8>?, new: ArraySlice<UInt8>?)

    /// Compares rows that come in ascending key order with the kept ones,
    /// in one pass.
    private struct KeptRowsMerger {
        private var kept: EncodedRows.Iterator
        private var keptRow: EncodedRows.Element?
        private var lastKey: Int64?
        private(set) var changes: [RowChange] = []

        init(_ rows: EncodedRows) {
            kept = rows.makeIterator()
            keptRow = kept.next()
        }

        /// Compares the next row; throws `NotInKeyOrder` when its key is
        /// not greater than the previous one's (the same key twice included).
        mutating func receive(key: Int64, encoded: ArraySlice<UInt8>) throws(NotInKeyOrder) {
            guard lastKey.map({ $0 < key }) ?? true else { throw NotInKeyOrder() }
            lastKey = key
            while let old = keptRow, old.key < key {
                changes.append((old.key, old.encoded, nil))
                keptRow = kept.next()
            }
            if let old = keptRow, old.key == key {
                if !old.encoded.elementsEqual(encoded) { changes.append((key, old.encoded, encoded)) }
                keptRow = kept.next()
            } else {
                changes.append((key, nil, encoded))
            }
        }

        /// The changes, once every row was received: the kept rows not
        /// met are deleted.
        consuming func finish() -> [RowChange] {
            while let old = keptRow {
                changes.append((old.key, old.encoded, nil))
                keptRow = kept.next()
            }
            return changes
        }
    }

    private struct NotInKeyOrder: Error {}

    /// Runs the query and compares its rows with the kept ones, their
    /// values read in place: as they come when they come in ascending key
    /// order, and otherwise collected in one buffer and sorted first (when
    /// the last run said so, or when this one meets a row out of order:
    /// then it runs again).
    ///
    /// - Complexity: O(n + m) for n kept rows and m fetched ones, with no
    ///   copy of the rows that did not change; O(m log m) more when they
    ///   come out of order.
    private func compareAllRows(_ db: Database) throws -> [RowChange] {
        let keyIndex = self.keyIndex
        if isKeyOrdered {
            var merger = KeptRowsMerger(rows)
            var scratch: [UInt8] = []
            do {
                try db.forEachRawRow(sql: sql) { row in
                    let key = try Self.key(of: row, at: keyIndex)
                    scratch.removeAll(keepingCapacity: true)
                    EncodedRows.encode(row, skipping: keyIndex, into: &scratch)
                    try merger.receive(key: key, encoded: scratch[...])
                }
                return merger.finish()
            } catch is NotInKeyOrder {}
        }
        statistics.unordered += 1
        var fetched = EncodedRows.UnorderedRows()
        var isInKeyOrder = true
        var lastKey: Int64?
        try db.forEachRawRow(sql: sql) { row in
            let key = try Self.key(of: row, at: keyIndex)
            if let lastKey, lastKey >= key { isInKeyOrder = false }
            lastKey = key
            fetched.append(key: key) { EncodedRows.encode(row, skipping: keyIndex, into: &$0) }
        }
        isKeyOrdered = isInKeyOrder
        var merger = KeptRowsMerger(rows)
        do {
            for row in fetched.sorted() { try merger.receive(key: row.key, encoded: row.encoded) }
        } catch {
            // Sorted keys out of order: the same key twice.
            throw UnkeyedRows()
        }
        return merger.finish()
    }

    /// Reads again the rows `changes` names, and compares them with the
    /// kept ones.
    private func read(_ changes: TablePageTracker.Changes, in db: Database) throws -> [RowChange] {
        guard let restrictedSQL = pages?.restrictedSQL else { return [] }
        var candidates = Set(changes.rowIDs)
        for range in changes.ranges { candidates.formUnion(rows.keys(in: range)) }
        guard !candidates.isEmpty else { return [] }
        statistics.rowsRead += candidates.count
        let sorted = candidates.sorted()
        var fetched: [Int64: [UInt8]] = [:]
        var start = 0
        let keyIndex = self.keyIndex
        while start < sorted.count {
            let batch = sorted[start..<min(start + 10_000, sorted.count)]
            let list = "[" + batch.map(String.init).joined(separator: ",") + "]"
            try db.forEachRawRow(sql: restrictedSQL, arguments: [list]) { row in
                var encoded: [UInt8] = []
                EncodedRows.encode(row, skipping: keyIndex, into: &encoded)
                guard fetched.updateValue(encoded, forKey: try Self.key(of: row, at: keyIndex)) == nil else {
                    throw UnkeyedRows()
                }
            }
            start += batch.count
        }
        var rowChanges: [RowChange] = []
        for key in sorted {
            let old = rows.encodedRow(forKey: key)
            let new = fetched[key].map { $0[...] }
            guard old != nil || new != nil, !(old.map { new?.elementsEqual($0) ?? false } ?? false) else { continue }
            rowChanges.append((key, old, new))
        }
        return rowChanges
    }

    /// Applies `changes`, sorted by key, to the kept rows, and tells them
    /// as `RowDifference`.
    private func commit(_ changes: [RowChange]) -> Refresh {
        guard !changes.isEmpty else { return .unchanged }
        var result = RowDifference()
        for change in changes {
            switch (change.old, change.new) {
            case (let old?, let new?):
                let previous = row(key: change.key, encoded: old)
                let row = row(key: change.key, encoded: new)
                result.updated.append(RowDifference.Update(
                    row: row, previous: previous, changedColumns: row.changedColumns(from: previous), position: nil))
            case (let old?, nil):
                result.deleted.append(RowDifference.Entry(row: row(key: change.key, encoded: old), position: nil))
            case (nil, let new?):
                result.inserted.append(RowDifference.Entry(row: row(key: change.key, encoded: new), position: nil))
            case (nil, nil):
                continue
            }
        }
        rows.apply(changes.lazy.map { ($0.key, $0.new) })
        return .changed(result)
    }

    /// A kept row, from its key and encoded values.
    private func row(key: Int64, encoded: ArraySlice<UInt8>) -> Row {
        rowMaker.row(EncodedRows.decode(encoded, key: key, at: keyIndex))
    }
}
