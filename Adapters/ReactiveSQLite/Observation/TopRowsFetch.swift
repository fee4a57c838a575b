/// The rows of an observed request with a limit (`ORDER BY score DESC
/// LIMIT 10`), and more after them: what each fetch of a `TopRowsFetch`
/// returns.
struct TopRows: Sendable {
    /// The first rows of the request, in order: its limit, then up to as
    /// many more (at least 64), which replace rows that leave the window
    /// without a new scan.
    let rows: [Row]
    /// The rowid of each row.
    let rowIDs: [Int64]
    /// Whether `rows` are every row of the request without its limit.
    let isComplete: Bool
    /// The number of rows the request delivers, its limit.
    let limit: Int

    /// The rows the observation delivers: the first `limit` rows.
    var limitedRows: [Row] { Array(rows.prefix(limit)) }
}

/// How an observation of a limited request (`trackingAll` of a
/// `QueryInterfaceRequest` with a limit and no offset) keeps its rows after
/// a commit without running the request again: it runs it on the rows it
/// holds and the rows the commit changed only, found by rowid.
///
/// The request qualifies when its table has an `INTEGER PRIMARY KEY` that it
/// selects, its filters and orderings are row-local (see
/// `SQLLexer.isRowLocalFragment` and `Statement.isRowLocal`), its limit is
/// at most 4 096 rows, and SQLite has `json_each`. The observation then
/// orders rows that tie by ascending rowid (`ORDER BY score DESC, id`): a
/// total order, so that each value is exactly what a fresh fetch of the
/// request with that ordering returns. It is the order in which SQLite
/// returns ties when it sorts the rows itself (no index serves the
/// ordering); an index on the ordering columns still serves the request,
/// with a sort of the rows that tie.
///
/// Each fetch holds the request's first rows and up to as many more (the
/// limit, at least 64) with their rowids. After a commit that changed the
/// rowids C, the request restricted to the held rows and C (`rowid IN
/// (...)`: a probe by rowid per row) gives the new first rows, up to the
/// last held row that did not change: every row the fetch did not hold and
/// that did not change comes after it, as it came after every held row.
/// When fewer rows than the limit remain so, or C is large, the observation
/// runs the request (with the larger limit) again.
///
/// - Complexity: O((m + k) log n) per commit, where m is the number of held
///   rows, k the number of changed rows and n the number of rows of the
///   table, instead of the request's own cost (a scan of the table when no
///   index serves its ordering).
struct TopRowsFetch<Element>: Sendable {
    /// The observed request, with its limit.
    private let request: QueryInterfaceRequest<Element>
    /// The request's limit.
    let limit: Int

    /// The number of rows a fetch holds: the limit and as many more, at least 64.
    var heldCount: Int { limit + max(limit, 64) }

    /// Nil when the request does not qualify by itself (see the type's
    /// documentation); the schema and statement are checked by each fetch.
    init?(_ request: QueryInterfaceRequest<Element>) {
        guard let limit = request.limit, (limit.offset ?? 0) == 0, limit.count > 0, limit.count <= 4_096,
            SQLiteFeatures.hasJSON
        else { return nil }
        for filter in request.filters {
            if case .sql(let sql, _) = filter, !SQLLexer.isRowLocalFragment(sql) { return nil }
        }
        for ordering in request.orderings {
            if case .sql(let sql) = ordering, !SQLLexer.isRowLocalFragment(sql) { return nil }
        }
        self.request = request
        self.limit = limit.count
    }

    /// The request, ordered totally, with the larger limit, and the name of
    /// the rowid column it selects; nil when the table or the statement do
    /// not qualify: a view, a missing table (the request's own fetch then
    /// runs, and fails if it must), a table without `INTEGER PRIMARY KEY`.
    /// Asked at each fetch: the table may have been dropped and created
    /// again since.
    private func plan(_ db: Database) throws -> (request: QueryInterfaceRequest<Element>, rowIDColumn: String)? {
        guard let schema = try? db.existingTableSchema(named: request.tableName),
            case .rowID(column: let column?) = schema.primaryKey
        else { return nil }
        let tieBreaker = SQLLexer.quote(schema.name) + "." + SQLLexer.quote(column)
        let ordered = request.order(sql: tieBreaker).limit(heldCount)
        let statement = try db.cachedStatement(sql: try ordered.makeSQL(db).sql)
        guard statement.isRowLocal, statement.layout.index(ofColumn: column) != nil else { return nil }
        return (ordered, column)
    }

    /// The rows of the request, held with their rowids; nil when the table
    /// or the statement do not qualify.
    func fetch(_ db: Database) throws -> TopRows? {
        guard let (ordered, column) = try plan(db) else { return nil }
        let rows = try ordered.asRequest(of: Row.self).fetchAll(db)
        return TopRows(
            rows: rows, rowIDs: try rows.map { try $0[column] as Int64 }, isComplete: rows.count < heldCount,
            limit: limit)
    }

    /// The rows of the request now, given the rows of an earlier fetch and
    /// the rowids changed since (a superset); nil when they do not tell.
    func fetch(_ db: Database, previous: TopRows, changedRowIDs: Set<Int64>) throws -> TopRows? {
        guard previous.limit == limit, changedRowIDs.count <= 4 * heldCount + 256,
            let (ordered, column) = try plan(db)
        else { return nil }
        if changedRowIDs.isEmpty { return previous }
        var candidates = changedRowIDs
        candidates.formUnion(previous.rowIDs)
        let restricted = ordered.filter(
            sql: SQLLexer.quote(request.tableName) + "." + SQLLexer.quote(column) + " IN (SELECT value FROM json_each(?))",
            arguments: ["[" + candidates.sorted().map(String.init).joined(separator: ",") + "]"])
        let rows = try restricted.asRequest(of: Row.self).fetchAll(db)
        let rowIDs = try rows.map { try $0[column] as Int64 }
        if previous.isComplete {
            // Every row of the request was held: the candidates are every
            // row that can be in it now.
            return TopRows(rows: rows, rowIDs: rowIDs, isComplete: rows.count < heldCount, limit: limit)
        }
        // Rows the fetch did not hold, unchanged, come after every held
        // row: the rows up to the last held unchanged row are exact.
        let held = Set(previous.rowIDs)
        guard let last = rowIDs.lastIndex(where: { held.contains($0) && !changedRowIDs.contains($0) }),
            last + 1 >= limit
        else { return nil }
        return TopRows(
            rows: Array(rows[...last]), rowIDs: Array(rowIDs[...last]), isComplete: false, limit: limit)
    }

    /// The incremental fetch of an observation whose full fetch returns
    /// `fetch(_:)`'s rows when they are not nil.
    func incrementalFetch() -> IncrementalFetch {
        IncrementalFetch(
            table: request.tableName, isApplicable: { try plan($0) != nil },
            rowIDsInRanges: { previous, ranges in
                // The rows outside the held ones do not matter when they go.
                (previous as? TopRows)?.rowIDs.filter { rowID in ranges.contains { $0.contains(rowID) } }
            }
        ) { db, previous, rowIDs in
            guard let previous = previous as? TopRows else { return nil }
            return try fetch(db, previous: previous, changedRowIDs: rowIDs)
        }
    }
}
