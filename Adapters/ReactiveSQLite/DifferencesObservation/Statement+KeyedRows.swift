import Differences
extension Statement {
    /// Runs the statement and returns its rows sorted by key.
    ///
    /// While the rows come sorted by key, each row is compared in place with
    /// the row of the same key in `hint`, if any: when they are equal, the
    /// hint's row is kept, and the row is not read into new values. An
    /// unchanged row thus costs one step and a comparison of its columns,
    /// with no allocation. Rows that do not come sorted (another `ORDER BY`)
    /// are read, then sorted.
    ///
    /// - Parameters:
    ///   - keyColumns: The names of the primary key columns, in key order,
    ///     to look up in the statement's columns.
    ///   - addedRowID: Whether the last column is a rowid the observation
    ///     added to the request's columns: it is then the key, and records do
    ///     not see it.
    ///   - tableName: For error messages.
    ///   - hint: Rows of a previous fetch of the same observation.
    /// - Throws: A `DifferencesObservationError` when the rows lack a key
    ///   column or two rows have the same key; a `DatabaseError` when SQLite
    ///   fails.
    /// - Complexity: O(n × c) with the rows in key order, O(n × c + n log n)
    ///   otherwise, where n is the number of rows and c the number of columns.
    func fetchKeyedRows(
        keyColumns: [String], addedRowID: Bool, tableName: String, hint: KeyedRows?
    ) throws -> KeyedRows {
        defer { reset() }
        var keyIndices = try keyColumnIndices(keyColumns, addedRowID: addedRowID, tableName: tableName)
        let resolvedColumnNames = columnNames
        var hint = usableHint(hint, keyIndices: keyIndices)
        let hintRows = hint?.rows ?? RowValues(width: columnCount)
        var rows = RowValues(width: columnCount, minimumCapacity: max(hintRows.count, keyedRowCountHint))
        var readIndices: [Int] = []
        // Without a hint, the rows are not built from an earlier fetch's,
        // and nobody asks which were read.
        let recordsReadIndices = hint != nil
        var unusedHintIndices: [Int] = []
        var isSorted = true
        var isFirstStep = true
        // The hint rows not examined yet start at `hintIndex`; those of
        // `reusedRange` are kept, and not appended to `rows` yet.
        var hintIndex = 0
        var reusedRange = 0..<0
        // The chunk of the hint rows last read (see `RowValues.rowValues(_:chunkHint:)`).
        var hintChunk = 0
        try withExtendedLifetime(hintRows) {
            // A copy local to the closure: reading an array out of a
            // captured variable, which lives in a box, would cost a retain
            // and a release per row.
            var loopKeyIndices = keyIndices
            defer { keyIndices = loopKeyIndices }
            while try step() {
                if isFirstStep {
                    isFirstStep = false
                    // SQLite may have recompiled the statement during its
                    // first step, after a schema change: look the key up
                    // again, forget a hint of other columns.
                    if columnNames != resolvedColumnNames {
                        loopKeyIndices = try keyColumnIndices(keyColumns, addedRowID: addedRowID, tableName: tableName)
                        rows = RowValues(width: columnCount)
                        if usableHint(hint, keyIndices: loopKeyIndices) == nil {
                            hint = nil
                            hintIndex = hintRows.count
                        }
                    }
                }
                if isSorted, hintIndex < hintRows.count,
                    let reused = matchHint(
                        hintRows, chunk: &hintChunk, at: &hintIndex, unused: &unusedHintIndices,
                        keyIndices: loopKeyIndices)
                {
                    if reused == reusedRange.upperBound {
                        reusedRange = reusedRange.lowerBound..<(reused + 1)
                    } else {
                        rows.appendRows(reusedRange, of: hintRows)
                        reusedRange = reused..<(reused + 1)
                    }
                    continue
                }
                rows.appendRows(reusedRange, of: hintRows)
                reusedRange = 0..<0
                if recordsReadIndices { readIndices.append(rows.count) }
                rows.appendRow { columnValue(at: Int32($0)) }
                if isSorted, rows.count > 1, rows.compareKeysOfLastTwoRows(keyIndices: loopKeyIndices) >= 0 {
                    isSorted = false
                }
            }
        }
        rows.appendRows(reusedRange, of: hintRows)
        keyedRowCountHint = rows.count
        // The observation keeps the rows: not a capacity reserved for more.
        rows.releaseExcessCapacity()
        if isSorted {
            unusedHintIndices.append(contentsOf: hintIndex..<hintRows.count)
        } else {
            rows = try sortedByKey(rows, keyIndices: keyIndices, tableName: tableName)
        }
        let recordLayout = addedRowID ? RowLayout(columnNames: Array(columnNames.dropLast()), sql: sql) : nil
        let reuse = isSorted ? hint.map {
            KeyedRows.Reuse(base: ObjectIdentifier($0), readIndices: readIndices, unusedBaseIndices: unusedHintIndices)
        } : nil
        return KeyedRows(rows: rows, layout: layout, keyIndices: keyIndices, recordLayout: recordLayout, reuse: reuse)
    }

    /// `hint`, when its rows have the statement's columns and key.
    private func usableHint(_ hint: KeyedRows?, keyIndices: [Int]) -> KeyedRows? {
        guard let hint, hint.keyIndices == keyIndices,
            hint.layout === layout || hint.layout.columnNames == columnNames
        else { return nil }
        return hint
    }

    /// Advances `hintIndex` past the hint rows whose key is less than the
    /// current row's, and past the hint row of the same key, and returns
    /// the offset of that row when it equals the current row. The hint rows
    /// passed over and not returned go to `unused`.
    ///
    /// Called while the rows come sorted by key (then a hint row passed
    /// over has no equal row further on), with `hintIndex < hintRows.count`.
    @inline(__always)
    private func matchHint(
        _ hintRows: RowValues, chunk: inout Int, at hintIndex: inout Int, unused: inout [Int], keyIndices: [Int]
    ) -> Int? {
        let hintCount = hintRows.count
        // The values of hint row `row`, in place (the caller keeps the rows alive).
        func hintRow(_ row: Int) -> UnsafeBufferPointer<DatabaseValue> {
            hintRows.rowValues(row, chunkHint: &chunk)
        }
        // Most rows are the next hint row, unchanged: one comparison of
        // every column, the key included, finds them.
        if currentRowEquals(hintRow(hintIndex), skipping: -1) {
            hintIndex += 1
            return hintIndex - 1
        }
        // The key is equal when compared: with one column, no need to
        // compare it again.
        let skippedIndex = keyIndices.count == 1 ? keyIndices[0] : -1
        while hintIndex < hintCount {
            let index = hintIndex
            // The current row's key compared with the hint row's.
            var order = 0
            let hintValues = hintRow(index)
            for keyIndex in keyIndices {
                order = compareColumn(at: Int32(keyIndex), with: hintValues[keyIndex])
                if order != 0 { break }
            }
            if order < 0 { return nil }
            hintIndex += 1
            if order == 0, currentRowEquals(hintRow(index), skipping: skippedIndex) {
                return index
            }
            unused.append(index)
            if order == 0 { return nil }
        }
        return nil
    }

    /// The rows sorted by key.
    ///
    /// - Throws: A `DifferencesObservationError` when two rows have the same key.
    private func sortedByKey(_ rows: RowValues, keyIndices: [Int], tableName: String) throws -> RowValues {
        let comparator = RowKeyComparator(rows, keyIndices: keyIndices, rows, keyIndices: keyIndices)
        let sorted = rows.sorted { comparator.compare($0, $1) < 0 }
        let sortedComparator = RowKeyComparator(sorted, keyIndices: keyIndices, sorted, keyIndices: keyIndices)
        for row in (0..<sorted.count).dropFirst() where sortedComparator.compare(row - 1, row) == 0 {
            throw DifferencesObservationError(
                kind: .duplicateIdentifier,
                message: "trackingSetDifferences: two rows have the same primary key "
                    + "(\(sortedComparator.rightKeyDescription(row))) of \(tableName): set differences need one "
                    + "row per key (a join, or NULL keys in a table that allows them); SQL: \(sql)")
        }
        return sorted
    }

    /// The indices of the key columns in the statement's columns.
    ///
    /// - Throws: A `DifferencesObservationError` when the statement does not select them.
    private func keyColumnIndices(_ keyColumns: [String], addedRowID: Bool, tableName: String) throws -> [Int] {
        if addedRowID { return [columnNames.count - 1] }
        return try keyColumns.map { column in
            guard let index = layout.index(ofColumn: column) else {
                throw DifferencesObservationError(
                    kind: .missingPrimaryKeyColumn,
                    message: "trackingSetDifferences: the rows lack the primary key column \(column) of "
                        + "\(tableName): set differences identify rows by their primary key "
                        + "(\(keyColumns.joined(separator: ", "))), select it; SQL: \(sql)")
            }
            return index
        }
    }
}
