/// The error of a `trackingRowDifferences` observation given a row limit
/// (the live-query server's `maxRows`): the query returned more rows than
/// `limit`. The fetch stops reading at row `limit + 1`, so that a result
/// of millions of rows costs no more than the limit.
package struct RowLimitExceeded: Error, Sendable, CustomStringConvertible {
    /// The most rows the observation takes.
    package var limit: Int

    /// `the query returned more than LIMIT rows`.
    package var description: String { "the query returned more than \(limit) rows" }
}

/// What a fetch of `trackingRowDifferences` hands its reducer.
struct FetchedResult: Sendable {
    enum Rows: Sendable {
        case rows([Row])
        case keyed(KeyedResult)
    }

    var rows: Rows
    var columnNames: [String]
    var identity: RowIdentity

    /// The rows, in the query's order.
    var resultRows: ResultRows {
        switch rows {
        case .rows(let rows): ResultRows(rows)
        case .keyed(let result): ResultRows(result)
        }
    }

    /// The rows as `Row` values, in the query's order.
    var allRows: [Row] {
        switch rows {
        case .rows(let rows): rows
        case .keyed(let result): result.allRows
        }
    }
}

/// The fetches of one `trackingRowDifferences` observation: the full
/// fetch, and the incremental one of a query over one rowid table
/// identified by its `INTEGER PRIMARY KEY`.
///
/// An unordered observation whose rows one column identifies by unique
/// integers keeps them as `KeyedResult` (compact bytes, compared as bytes);
/// other rows, and rows whose key column holds other values or the same
/// integer twice (from then on, until the columns change), are fetched as
/// `Row` values.
///
/// Given `maxRows`, every fetch throws `RowLimitExceeded` as soon as it
/// reads one row more.
final class RowDifferencesFetch: Sendable {
    private let sql: String
    private let arguments: StatementArguments
    private let identity: RowIdentity?
    private let isOrdered: Bool
    private let maxRows: Int?

    private struct State {
        /// The identity inferred for the columns and schemas of the last
        /// fetch: a temporary table may hide the main one with the same
        /// columns and another key.
        var inferred: (columnNames: [String], schemas: ResolutionSchemaVersions, identity: RowIdentity)?
        /// The columns for which the key column did not identify the rows
        /// by unique integers: they are fetched as `Row` values.
        var unkeyedColumns: [String]?
        /// The last keyed result: the next full fetch compares its rows
        /// with it as they come (see `KeyedResult.fetch`).
        var lastKeyed: KeyedResult?
        /// The lookup of rows by key, for the columns and schemas it was
        /// made for (nil: the query does not qualify).
        var lookup: (columnNames: [String], schemas: ResolutionSchemaVersions, lookup: RowLookup?)?
    }

    private let state = LockedState(State())

    init(sql: String, arguments: StatementArguments, identity: RowIdentity?, isOrdered: Bool, maxRows: Int? = nil) {
        self.sql = sql
        self.arguments = arguments
        self.identity = identity
        self.isOrdered = isOrdered
        self.maxRows = maxRows
    }

    /// A number no other keyed result of the process has, so that a
    /// result never takes another's for its base (see `KeyedResult.patch`),
    /// even one of another observation given as initial rows.
    private func nextGeneration() -> Int {
        Self.generations.withLock { last in
            last += 1
            return last
        }
    }

    private static let generations = LockedState(0)

    /// The statement's columns and the rows' identity, once the statement
    /// is checked, and the versions of the schemas they were read at (nil
    /// when the identity was given: no inference to check against them).
    private func shape(
        _ db: Database
    ) throws -> (columnNames: [String], identity: RowIdentity, schemas: ResolutionSchemaVersions?) {
        let statement = try db.cachedStatement(sql: sql)
        // The fetch runs the statement after each commit: it must change nothing.
        guard statement.isReadOnly, statement.columnCount > 0 else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE,
                message: "trackingRowDifferences observes a read-only statement that returns rows",
                sql: sql)
        }
        let columnNames = statement.columnNames
        if let identity { return (columnNames, identity, nil) }
        let schemas = try db.resolutionSchemaVersions()
        if let known = state.withLock({ $0.inferred }), known.columnNames == columnNames, known.schemas == schemas {
            return (columnNames, known.identity, schemas)
        }
        let inferred = try RowIdentity.inferred(fromSQL: sql, in: db)
        state.withLock { $0.inferred = (columnNames, schemas, inferred) }
        return (columnNames, inferred, schemas)
    }

    /// The index of the one key column, when the rows may be kept as a
    /// `KeyedResult`.
    private func keyIndex(identity: RowIdentity, columnNames: [String]) -> Int? {
        guard !isOrdered, let indexes = identity.columnIndexes(in: columnNames), indexes.count == 1,
            state.withLock({ $0.unkeyedColumns }) != columnNames
        else { return nil }
        return indexes[0]
    }

    // MARK: - Full fetch

    /// The whole result.
    ///
    /// - Throws: `RowLimitExceeded` at row `maxRows + 1`.
    func fetch(_ db: Database) throws -> FetchedResult {
        let (columnNames, identity, _) = try shape(db)
        if let keyIndex = keyIndex(identity: identity, columnNames: columnNames) {
            if let result = try KeyedResult.fetch(
                db, sql: sql, arguments: arguments, columnNames: columnNames, keyIndex: keyIndex,
                generation: nextGeneration(), base: state.withLock { $0.lastKeyed }, maxRows: maxRows)
            {
                state.withLock { $0.lastKeyed = result }
                return FetchedResult(rows: .keyed(result), columnNames: columnNames, identity: identity)
            }
            state.withLock {
                $0.unkeyedColumns = columnNames
                $0.lastKeyed = nil
            }
        }
        return FetchedResult(rows: .rows(try fetchRows(db)), columnNames: columnNames, identity: identity)
    }

    /// The rows as `Row` values, up to `maxRows`.
    private func fetchRows(_ db: Database) throws -> [Row] {
        let request = SQLRequest<Row>(sql: sql, arguments: arguments)
        guard let maxRows else { return try request.fetchAll(db) }
        let cursor = try request.fetchCursor(db)
        var rows: [Row] = []
        while let row = try cursor.next() {
            guard rows.count < maxRows else { throw RowLimitExceeded(limit: maxRows) }
            rows.append(row)
        }
        return rows
    }

    // MARK: - Incremental fetch

    /// Reads again the rows that commits changed, when the observation is
    /// unordered and its rows are identified by the `INTEGER PRIMARY KEY`
    /// of the only table a `RowLookup` reads; nil when ordered.
    func incrementalFetch() -> IncrementalFetch? {
        guard !isOrdered else { return nil }
        return IncrementalFetch(
            resolvingTable: { [self] db in
                let (_, identity, _) = try shape(db)
                guard case .primaryKey(let table, let columns) = identity, columns.count == 1 else { return nil }
                let schema = try db.existingTableSchema(named: table)
                guard case .rowID(column: let column?) = schema.primaryKey,
                    column.lowercased() == columns[0].lowercased()
                else { return nil }
                return schema.name
            },
            isApplicable: { [self] db, _ in
                let (columnNames, identity, schemas) = try shape(db)
                guard let keyIndex = keyIndex(identity: identity, columnNames: columnNames) else { return false }
                return try lookup(db, columnNames: columnNames, keyIndex: keyIndex, schemas: schemas) != nil
            },
            rowIDsInRanges: { previous, ranges in
                guard let previous = previous as? FetchedResult, case .keyed(let result) = previous.rows else {
                    return nil
                }
                return ranges.flatMap { result.rows.keys(in: $0) }
            },
            fetch: { [self] db, previous, rowIDs in
                try patch(db, previous: previous, rowIDs: rowIDs)
            })
    }

    /// The previous result with the rows of `rowIDs` read again; nil when
    /// it cannot tell the current state (then the observation runs the
    /// full fetch).
    private func patch(_ db: Database, previous: any Sendable, rowIDs: Set<Int64>) throws -> FetchedResult? {
        guard let previous = previous as? FetchedResult, case .keyed(let result) = previous.rows,
            rowIDs.count <= max(64, result.count / 4)
        else { return nil }
        // A schema change may have changed the columns, the key or the plan.
        let (columnNames, identity, schemas) = try shape(db)
        guard columnNames == previous.columnNames, identity == previous.identity,
            keyIndex(identity: identity, columnNames: columnNames) == result.keyIndex,
            let lookup = try lookup(db, columnNames: columnNames, keyIndex: result.keyIndex, schemas: schemas),
            let patched = try result.patched(db, keys: rowIDs.sorted(), lookup: lookup, generation: nextGeneration())
        else { return nil }
        if let maxRows, patched.count > maxRows { throw RowLimitExceeded(limit: maxRows) }
        state.withLock { $0.lastKeyed = patched }
        return FetchedResult(rows: .keyed(patched), columnNames: columnNames, identity: identity)
    }

    /// The lookup of rows by key, made again when the columns or the
    /// schemas changed.
    private func lookup(
        _ db: Database, columnNames: [String], keyIndex: Int, schemas: ResolutionSchemaVersions?
    ) throws -> RowLookup? {
        let schemas = try schemas ?? db.resolutionSchemaVersions()
        if let known = state.withLock({ $0.lookup }), known.columnNames == columnNames, known.schemas == schemas {
            return known.lookup
        }
        let lookup = try RowLookup(
            sql: sql, arguments: arguments, columnNames: columnNames, keyIndex: keyIndex, in: db)
        state.withLock { $0.lookup = (columnNames, schemas, lookup) }
        return lookup
    }
}
