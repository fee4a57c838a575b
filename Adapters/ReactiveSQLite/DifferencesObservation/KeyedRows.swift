/// The rows of a request, sorted by primary key: what each fetch of a
/// `trackingSetDifferences` observation returns.
///
/// Immutable, so that a later fetch can reuse its rows (see
/// `Statement.fetchKeyedRows`) while a reducer compares them.
@usableFromInline
final class KeyedRows: Sendable {
    /// How a fetch built its rows from the rows of an earlier fetch, its
    /// base: every row is either read from the statement, or a row of the
    /// base that it found equal, kept in order. So the rows differ from the
    /// base's only at `readIndices` and `unusedBaseIndices`, and a reducer
    /// that holds the base diffs them in O(changes).
    struct Reuse: Sendable {
        /// The identity of the base. Compare it only with an object that is
        /// alive (the reducer's previous rows): then equal identities are
        /// the same object.
        let base: ObjectIdentifier
        /// The offsets of the rows read from the statement, ascending.
        let readIndices: [Int]
        /// The offsets of the base rows that were not kept, ascending.
        let unusedBaseIndices: [Int]
    }

    /// The values of the fetched rows, sorted by strictly increasing key in
    /// SQLite's `BINARY` order on raw values.
    let rows: RowValues
    /// The layout of `rows`, the statement's.
    let layout: RowLayout
    /// The columns of `rows` that hold the primary key, in key order.
    let keyIndices: [Int]
    /// When the rows end with a column the observation added (the rowid of a
    /// table without primary key), the layout of the rows without it: the
    /// rows records see. Nil when records see the rows themselves.
    let recordLayout: RowLayout?
    /// Nil when the rows were not built from an earlier fetch's.
    let reuse: Reuse?

    init(rows: RowValues, layout: RowLayout, keyIndices: [Int], recordLayout: RowLayout?, reuse: Reuse?) {
        self.rows = rows
        self.layout = layout
        self.keyIndices = keyIndices
        self.recordLayout = recordLayout
        self.reuse = reuse
    }

    /// Decodes a record with `decode` from the row a record decodes from:
    /// row `row`, without the column the observation added, if any. The
    /// row reads the values of these rows in place, through `reused` (nil
    /// at first), a storage made by this method for these rows.
    ///
    /// The storage serves the next rows while no record keeps its row:
    /// decoding many records copies no values and allocates no row per
    /// record. When `decode` keeps the row (or throws it), the row gets its
    /// own copy of the values before this method returns
    /// (`StatementRow.detach()`), and `reused` becomes nil.
    ///
    /// - Complexity: O(1) plus `decode`, and O(c) for a kept row, where c
    ///   is the number of columns.
    func decodeRecord<Record>(
        _ row: Int, reusing reused: inout StatementRow?, _ decode: (Row) throws -> Record
    ) throws -> Record {
        prepareRecordRow(row, reusing: &reused)
        // The row lives only for the call: afterwards, only a record (or
        // an error) that kept it still holds the storage.
        let record: Record
        do {
            record = try decode(Row(reused!))
        } catch {
            Self.detachIfKept(&reused)
            throw error
        }
        Self.detachIfKept(&reused)
        return record
    }

    /// `decodeRecord(row, reusing: &reused, Record.init(row:))`, without a
    /// closure: the row is handed to `init(row:)`, which consumes it.
    func decodeRecord<Record: FetchableRecord>(
        _ row: Int, as _: Record.Type, reusing reused: inout StatementRow?
    ) throws -> Record {
        prepareRecordRow(row, reusing: &reused)
        let record: Record
        do {
            record = try Record(row: Row(reused!))
        } catch {
            Self.detachIfKept(&reused)
            throw error
        }
        Self.detachIfKept(&reused)
        return record
    }

    /// Decodes a record from each row, in order, with `decode`, as
    /// `decodeRecord(_:reusing:_:)` does, through one storage for all rows.
    ///
    /// Inlinable, so that a caller's module specializes the loop for its
    /// record type: no witness call and no generic metadata look-up per
    /// record (the observation's inlinable factory hands this loop to the
    /// reducer, see `ValueObservation.trackingSetDifferences(_:updateRecord:)`).
    ///
    /// - Complexity: O(n) plus n calls to `decode`, where n is the number of rows.
    @inlinable
    func decodeRecords<Record>(_ decode: (consuming Row) throws -> Record) throws -> [Record] {
        let count = rowCount
        let width = rowWidth
        // Not through `init(unsafeUninitializedCapacity:)`, which writes the
        // count of the shared empty array (a race the thread sanitizer
        // reports, harmless as it writes 0).
        guard count > 0 else { return [] }
        // Records written in place, one per row: the array keeps those
        // decoded before an error, and releases them.
        return try [Record](unsafeUninitializedCapacity: count) { records, decodedCount in
            // The storage of the rows, moved from row to row, and replaced
            // after a record kept its row (see `decodeRecord(_:reusing:_:)`).
            var storage = makeRecordRow(0)
            for row in 0..<count {
                let record: Record
                do {
                    // The row lives only for the call.
                    record = try decode(Row(storage))
                } catch {
                    if !isKnownUniquelyReferenced(&storage) { storage.detach() }
                    throw error
                }
                (records.baseAddress! + row).initialize(to: record)
                decodedCount = row + 1
                guard row + 1 < count else { break }
                if isKnownUniquelyReferenced(&storage) {
                    if !storage.moveToNextRow(stride: width) { moveRecordRow(storage, to: row + 1) }
                } else {
                    storage.detach()
                    storage = makeRecordRow(row + 1)
                }
            }
            // A record that kept the last row: it gets its own values.
            if !isKnownUniquelyReferenced(&storage) { storage.detach() }
        }
    }

    /// The number of rows.
    @usableFromInline
    var rowCount: Int { rows.count }

    /// The number of values of a row.
    @usableFromInline
    var rowWidth: Int { rows.width }

    /// A storage that reads row `row` of these rows, the row records see.
    @usableFromInline
    func makeRecordRow(_ row: Int) -> StatementRow {
        let (storage, start) = rows.storage(ofRow: row)
        return StatementRow(layout: recordLayout ?? layout, rows: storage, start: start)
    }

    /// Makes `storage`, made by `makeRecordRow(_:)` for these rows and held
    /// by no row, read row `row`.
    @usableFromInline
    func moveRecordRow(_ storage: StatementRow, to row: Int) {
        let (chunk, start) = rows.storage(ofRow: row)
        storage.move(to: start, in: chunk)
    }

    /// Makes `reused` a storage that reads row `row` of these rows, the
    /// row records see.
    @inline(__always)
    private func prepareRecordRow(_ row: Int, reusing reused: inout StatementRow?) {
        let layout = recordLayout ?? self.layout
        if reused?.layout === layout, reused!.readsRowsOfValues {
            moveRecordRow(reused!, to: row)
        } else {
            reused = makeRecordRow(row)
        }
    }

    /// Detaches `reused` and forgets it when a row still holds it.
    @inlinable @inline(__always)
    static func detachIfKept(_ reused: inout StatementRow?) {
        if !isKnownUniquelyReferenced(&reused) {
            reused?.detach()
            reused = nil
        }
    }

    /// Whether these rows and `other` are keyed by the same columns (ASCII
    /// case-insensitive names), so that their keys compare. Not so after a
    /// schema change that gave the table another primary key.
    func hasSameKey(as other: KeyedRows) -> Bool {
        keyIndices.count == other.keyIndices.count
            && zip(keyIndices, other.keyIndices).allSatisfy { index, otherIndex in
                layout.columnNames[index].lowercasedIdentifier == other.layout.columnNames[otherIndex].lowercasedIdentifier
            }
    }

    /// Whether these rows and `other` have the same columns, so that equal
    /// values mean equal rows.
    func hasSameColumns(as other: KeyedRows) -> Bool {
        layout === other.layout || layout.columnNames == other.layout.columnNames
    }
}

extension KeyedRows {
    /// The rows of `base`, keyed by rowid, with the rows of the rowids
    /// `rowIDs` replaced by the rows of `changed`: the rows those rowids
    /// have now, among the rows of the request. So a row of `base` whose
    /// rowid is in `rowIDs` and is not in `changed` is gone.
    ///
    /// The result is built from `base` (see `Reuse`): its read rows are
    /// those of `changed`, and the unused rows of `base` those of `rowIDs`.
    ///
    /// Nil when the rows do not have the same columns, or are not keyed by
    /// one integer column, or when `changed` has a row whose rowid is not
    /// in `rowIDs`.
    ///
    /// - Parameters:
    ///   - base: Rows of an earlier fetch.
    ///   - rowIDs: The rowids that may have changed since, ascending, unique.
    ///   - changed: The rows of the request among `rowIDs`, now.
    /// - Complexity: O(k log n + k × b + n / b), where k is the number of
    ///   rowids, n the number of rows and b the number of rows of a chunk: a
    ///   binary search per rowid, copies of the chunks the changed rows are
    ///   in, and the others shared (see `RowValues.appendRows(_:of:)`).
    convenience init?(base: KeyedRows, replacingRowIDs rowIDs: [Int64], with changed: KeyedRows) {
        guard base.keyIndices.count == 1, changed.keyIndices == base.keyIndices, changed.hasSameColumns(as: base)
        else { return nil }
        let keyIndex = base.keyIndices[0]
        func rowID(_ rows: RowValues, _ row: Int) -> Int64? {
            rows.value(row, keyIndex).integerPayload
        }
        let baseRows = base.rows
        let changedRows = changed.rows
        var rows = RowValues(width: baseRows.width, minimumCapacity: baseRows.count + changedRows.count)
        var readIndices: [Int] = []
        var unusedBaseIndices: [Int] = []
        // The base rows before `position` are handled.
        var position = 0
        var changedIndex = 0
        for target in rowIDs {
            // The first base row at or after `position` whose rowid is not
            // less than `target`.
            var low = position
            var high = baseRows.count
            while low < high {
                let middle = low + (high - low) / 2
                guard let middleRowID = rowID(baseRows, middle) else { return nil }
                if middleRowID < target { low = middle + 1 } else { high = middle }
            }
            rows.appendRows(position..<low, of: baseRows)
            position = low
            if position < baseRows.count, rowID(baseRows, position) == target {
                unusedBaseIndices.append(position)
                position += 1
            }
            if changedIndex < changedRows.count, rowID(changedRows, changedIndex) == target {
                readIndices.append(rows.count)
                rows.appendRows(changedIndex..<(changedIndex + 1), of: changedRows)
                changedIndex += 1
            }
        }
        guard changedIndex == changedRows.count else { return nil }
        rows.appendRows(position..<baseRows.count, of: baseRows)
        self.init(
            rows: rows, layout: base.layout, keyIndices: base.keyIndices, recordLayout: base.recordLayout,
            reuse: Reuse(base: ObjectIdentifier(base), readIndices: readIndices, unusedBaseIndices: unusedBaseIndices))
    }
}

extension KeyedRows {
    /// The keys of the rows whose key is in one of `ranges`, when the rows
    /// are keyed by one integer column (the rowid of the rows of a rowid
    /// table, in the incremental fetch); nil otherwise.
    ///
    /// - Parameter ranges: Ranges of rowids, in any order.
    /// - Complexity: O(r log n + m), where r is the number of ranges, n the
    ///   number of rows and m the number of keys returned.
    func rowIDs(in ranges: [ClosedRange<Int64>]) -> [Int64]? {
        guard keyIndices.count == 1 else { return nil }
        let keyIndex = keyIndices[0]
        let count = rows.count
        var rowIDs: [Int64] = []
        for range in ranges {
            // The first row whose key is not less than the range's lower bound.
            var low = 0
            var high = count
            while low < high {
                let middle = low + (high - low) / 2
                guard let key = rows.value(middle, keyIndex).integerPayload else { return nil }
                if key < range.lowerBound { low = middle + 1 } else { high = middle }
            }
            while low < count {
                guard let key = rows.value(low, keyIndex).integerPayload else { return nil }
                guard key <= range.upperBound else { break }
                rowIDs.append(key)
                low += 1
            }
        }
        return rowIDs
    }
}
