/// A query's result whose rows one column identifies by unique integers,
/// its values kept as `EncodedRows` rather than as `Row` values: what
/// `trackingRowDifferences` fetches for an unordered observation whose
/// identity is one column, when the column's values are unique integers.
///
/// Two results compare as bytes, in one pass in key order, so that only
/// the rows that changed are made into `Row` values. A result patched from
/// the previous one (the rows that commits changed, read again: see
/// `RowLookup`) knows the keys it changed, and compares in proportion to
/// them.
struct KeyedResult: Sendable {
    /// The rows, in key order.
    private(set) var rows: EncodedRows
    /// The index of the key column in the result's columns.
    let keyIndex: Int
    let columnNames: [String]
    let rowMaker: RowMaker
    /// The keys in the query's order, when it is not the keys' order; nil
    /// when the query returned its rows in ascending key order.
    let order: [Int64]?
    /// Tells this result from the others of the same observation.
    let generation: Int
    /// The keys that changed since earlier results, when this one was
    /// patched from the previous one.
    let patch: Patch?

    /// The keys each patch changed, from the result this one was patched
    /// from back to a few earlier ones: a result the observation skipped
    /// (results that wait for the comparison replace each other) still
    /// lets the next one compare by key.
    struct Patch: Sendable {
        /// The newest step first: `keys` changed from the result of
        /// generation `base` to the next one.
        var steps: [(base: Int, keys: [Int64])]

        /// How far back steps are kept.
        static let maxSteps = 32
        static let maxKeys = 10_000

        /// The keys changed since the result of `generation`, ascending;
        /// nil when the steps do not go back to it.
        func keysChanged(since generation: Int) -> [Int64]? {
            guard steps.count > 1 else { return steps.first.flatMap { $0.base == generation ? $0.keys : nil } }
            var keys = Set<Int64>()
            for step in steps {
                keys.formUnion(step.keys)
                if step.base == generation { return keys.sorted() }
            }
            return nil
        }

        /// The steps of a result patched from one with `earlier` steps.
        init(base: Int, keys: [Int64], earlier: Patch?) {
            steps = [(base, keys)]
            var count = keys.count
            for step in earlier?.steps ?? [] {
                count += step.keys.count
                guard steps.count < Self.maxSteps, count <= Self.maxKeys else { break }
                steps.append(step)
            }
        }
    }

    var count: Int { rows.count }

    /// The integer key of a row, nil when its key column holds another value.
    private static func key(of row: RawRow, at keyIndex: Int) -> Int64? {
        guard keyIndex < row.count, case .integer(let key) = row[keyIndex] else { return nil }
        return key
    }

    // MARK: - Fetching

    /// The result of `sql`, whose column at `keyIndex` identifies the rows;
    /// nil when a value of that column is not an integer, or two rows have
    /// the same.
    ///
    /// Given a `base` result of the same query in key order, the rows are
    /// compared with its rows as SQLite returns them, their values read in
    /// place, and the result is `base` with the rows that changed: only
    /// those are copied, and the result compares with `base` by key. Rows
    /// that come out of key order make the query run again, without `base`.
    ///
    /// Given `maxRows`, the reads stop at row `maxRows + 1`, which throws
    /// `RowLimitExceeded`.
    ///
    /// - Complexity: O(n) for rows that come in key order (with `base`:
    ///   O(n + m), plus O(k (log c + b)) for k changed rows, or O(n) when
    ///   many changed); O(n log m) when m of them come out of it.
    static func fetch(
        _ db: Database, sql: String, arguments: StatementArguments, columnNames: [String], keyIndex: Int,
        generation: Int, base: KeyedResult? = nil, maxRows: Int? = nil
    ) throws -> KeyedResult? {
        if let base, base.order == nil, base.keyIndex == keyIndex, base.columnNames == columnNames,
            let result = try base.refetched(
                db, sql: sql, arguments: arguments, generation: generation, maxRows: maxRows ?? .max)
        {
            return result
        }
        var builder = EncodedRows.Builder()
        var order: [Int64] = []
        let maxRows = maxRows ?? .max
        do {
            try db.forEachRawRow(sql: sql, arguments: arguments) { row in
                guard order.count < maxRows else { throw RowLimitExceeded(limit: maxRows) }
                // A key that is not an integer stops the statement.
                guard let key = Self.key(of: row, at: keyIndex) else { throw Unkeyed() }
                order.append(key)
                builder.append(key: key) { bytes in EncodedRows.encode(row, skipping: keyIndex, into: &bytes) }
            }
        } catch is Unkeyed {
            return nil
        }
        let isInKeyOrder = builder.isInKeyOrder
        guard let rows = builder.finish() else { return nil }
        return KeyedResult(
            rows: rows, keyIndex: keyIndex, columnNames: columnNames, rowMaker: RowMaker(columnNames: columnNames),
            order: isInKeyOrder ? nil : order, generation: generation, patch: nil)
    }

    /// A row that came out of ascending key order, or that the key does
    /// not identify: the reads stop the statement with it.
    private struct Unkeyed: Error {}

    /// The query run again, its rows compared with this result's as they
    /// come: this result with the rows that changed; nil when a row comes
    /// out of ascending key order or has no integer key. Row `maxRows + 1`
    /// throws `RowLimitExceeded`.
    private func refetched(
        _ db: Database, sql: String, arguments: StatementArguments, generation: Int, maxRows: Int
    ) throws -> KeyedResult? {
        var old = rows.makeIterator()
        var oldRow = old.next()
        var lastKey: Int64?
        var count = 0
        var changes: [(key: Int64, encoded: ArraySlice<UInt8>?)] = []
        var scratch: [UInt8] = []
        let keyIndex = self.keyIndex
        do {
            try db.forEachRawRow(sql: sql, arguments: arguments) { row in
                guard count < maxRows else { throw RowLimitExceeded(limit: maxRows) }
                count += 1
                guard let key = Self.key(of: row, at: keyIndex), lastKey.map({ $0 < key }) ?? true else { throw Unkeyed() }
                lastKey = key
                while let row = oldRow, row.key < key {
                    changes.append((row.key, nil))
                    oldRow = old.next()
                }
                scratch.removeAll(keepingCapacity: true)
                EncodedRows.encode(row, skipping: keyIndex, into: &scratch)
                if let row = oldRow, row.key == key {
                    oldRow = old.next()
                    if row.encoded.elementsEqual(scratch) { return }
                }
                changes.append((key, Array(scratch)[...]))
            }
        } catch is Unkeyed {
            return nil
        }
        while let row = oldRow {
            changes.append((row.key, nil))
            oldRow = old.next()
        }
        return applying(changes, generation: generation)
    }

    /// This result with `changes` (sorted by key, each key once: the new
    /// bytes of a row, or nil for a row gone), which its patch remembers.
    private func applying(_ changes: [(key: Int64, encoded: ArraySlice<UInt8>?)], generation: Int) -> KeyedResult {
        var changed = rows
        changed.apply(changes)
        return KeyedResult(
            rows: changed, keyIndex: keyIndex, columnNames: columnNames, rowMaker: rowMaker, order: nil,
            generation: generation, patch: Patch(base: self.generation, keys: changes.map(\.key), earlier: patch))
    }

    /// This result with the rows of `keys` read again by `lookup`: nil when
    /// this result is not in key order (a patch keeps key order), or when
    /// a row read again has a key it does not ask for or asks twice.
    ///
    /// - Parameter keys: Ascending keys, each once.
    /// - Complexity: O(k (log c + b)) for k keys, c chunks of b rows, and
    ///   the lookups of the k rows.
    func patched(_ db: Database, keys: [Int64], lookup: RowLookup, generation: Int) throws -> KeyedResult? {
        guard order == nil else { return nil }
        var fetched: [Int64: [UInt8]] = [:]
        do {
            try lookup.forEachRow(db, keys: keys) { row in
                guard let key = Self.key(of: row, at: keyIndex) else { throw Unkeyed() }
                var encoded: [UInt8] = []
                EncodedRows.encode(row, skipping: keyIndex, into: &encoded)
                if fetched.updateValue(encoded, forKey: key) != nil { throw Unkeyed() }
            }
        } catch is Unkeyed {
            return nil
        }
        var changes: [(key: Int64, encoded: ArraySlice<UInt8>?)] = []
        for key in keys {
            let old = rows.encodedRow(forKey: key)
            let new = fetched.removeValue(forKey: key).map { $0[...] }
            if old == nil && new == nil { continue }
            if let old, let new, old.elementsEqual(new) { continue }
            changes.append((key, new))
        }
        // A row whose key was not asked for: the lookup is not what it seems.
        guard fetched.isEmpty else { return nil }
        return applying(changes, generation: generation)
    }

    // MARK: - Reading

    /// The row of `key`, from its encoded values.
    func row(key: Int64, encoded: ArraySlice<UInt8>) -> Row {
        rowMaker.row(EncodedRows.decode(encoded, key: key, at: keyIndex))
    }

    /// The row of `key`, if any.
    func row(forKey key: Int64) -> Row? {
        rows.encodedRow(forKey: key).map { row(key: key, encoded: $0) }
    }

    /// Every row, in the query's order.
    var allRows: [Row] { Array(ResultRows(self)) }

    // MARK: - Differences

    /// What changed from `previous` to this result: nil when nothing did.
    /// Rows are in key order in each list, with no positions.
    ///
    /// - Complexity: O(k (log c + b)) when this result was patched from
    ///   `previous`, or from results patched from it (k changed keys);
    ///   otherwise O(n + m), the rows of both compared as bytes.
    func difference(from previous: KeyedResult) -> RowDifference? {
        var difference = RowDifference()
        func add(key: Int64, old: ArraySlice<UInt8>?, new: ArraySlice<UInt8>?) {
            switch (old, new) {
            case (let old?, let new?):
                guard !old.elementsEqual(new) else { return }
                let previousRow = previous.row(key: key, encoded: old)
                let row = row(key: key, encoded: new)
                difference.updated.append(RowDifference.Update(
                    row: row, previous: previousRow, changedColumns: row.changedColumns(from: previousRow),
                    position: nil))
            case (let old?, nil):
                difference.deleted.append(RowDifference.Entry(row: previous.row(key: key, encoded: old), position: nil))
            case (nil, let new?):
                difference.inserted.append(RowDifference.Entry(row: row(key: key, encoded: new), position: nil))
            case (nil, nil):
                return
            }
        }
        if let keys = patch?.keysChanged(since: previous.generation) {
            for key in keys {
                add(key: key, old: previous.rows.encodedRow(forKey: key), new: rows.encodedRow(forKey: key))
            }
        } else {
            var old = previous.rows.makeIterator()
            var new = rows.makeIterator()
            var oldRow = old.next()
            var newRow = new.next()
            while oldRow != nil || newRow != nil {
                if let o = oldRow, newRow.map({ o.key < $0.key }) ?? true {
                    add(key: o.key, old: o.encoded, new: nil)
                    oldRow = old.next()
                } else if let n = newRow, oldRow.map({ n.key < $0.key }) ?? true {
                    add(key: n.key, old: nil, new: n.encoded)
                    newRow = new.next()
                } else if let o = oldRow, let n = newRow {
                    add(key: o.key, old: o.encoded, new: n.encoded)
                    oldRow = old.next()
                    newRow = new.next()
                }
            }
        }
        return difference.isEmpty ? nil : difference
    }
}

/// Reads again the rows of a query that have given keys: the query
/// restricted to a list of keys, `SELECT * FROM (query) WHERE key IN
/// (SELECT value FROM json_each(?))`, when SQLite runs it as lookups of one
/// rowid table and nothing else (no subquery reading a table, no `LIMIT`,
/// aggregate, window, `DISTINCT` or compound query), so that each result
/// row depends on its table row only, and the rows that commits changed
/// are the rows of the rowids they changed.
struct RowLookup: Sendable {
    /// The query restricted to a JSON list of keys, its last parameter.
    let sql: String
    /// The query's own arguments (positional), before the list.
    let arguments: StatementArguments

    /// The lookup of the rows of `sql`, whose column at `keyIndex` is the
    /// `INTEGER PRIMARY KEY` of its only table; nil when SQLite would not
    /// run it as lookups, or the arguments are named.
    init?(
        sql: String, arguments: StatementArguments, columnNames: [String], keyIndex: Int, in db: Database
    ) throws {
        guard arguments.namedValues.isEmpty, SQLiteFeatures.hasJSON else { return nil }
        let key = SQLLexer.quote(columnNames[keyIndex])
        // New lines: a query that ends with a `--` comment.
        let restrictedSQL = "SELECT * FROM (\n\(sql)\n) WHERE \(key) IN (SELECT value FROM json_each(?) AS \(Self.keyListName))"
        guard let statement = try? db.makeStatement(sql: restrictedSQL), statement.columnNames == columnNames,
            !statement.hasNamedParameters, statement.parameterNames.count == arguments.values.count + 1,
            try Self.looksUpRowIDsOnly(restrictedSQL, arguments: arguments, in: db)
        else { return nil }
        self.sql = restrictedSQL
        self.arguments = arguments
    }

    /// The name of the list of keys in the restricted query, which tells
    /// its scan from a `json_each` of the user's query in the plan.
    private static let keyListName = "reactivesqlite_keys"

    /// Whether SQLite runs the restricted query as rowid lookups of one
    /// table, with no other table access.
    private static func looksUpRowIDsOnly(
        _ sql: String, arguments: StatementArguments, in db: Database
    ) throws -> Bool {
        var planArguments = arguments
        planArguments.append(contentsOf: ["[]"])
        let plan = try SQLRequest<Row>(sql: "EXPLAIN QUERY PLAN \(sql)", arguments: planArguments).fetchAll(db)
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

    /// Runs the restricted query for `keys`, 10 000 at a time.
    func forEachRow(_ db: Database, keys: [Int64], _ body: (RawRow) throws -> Void) throws {
        var start = 0
        while start < keys.count {
            let batch = keys[start..<min(start + 10_000, keys.count)]
            var batchArguments = arguments
            batchArguments.append(contentsOf: ["[" + batch.map(String.init).joined(separator: ",") + "]"])
            try db.forEachRawRow(sql: sql, arguments: batchArguments, body)
            start += batch.count
        }
    }
}
