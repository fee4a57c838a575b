import Dispatch
import Differences

/// The state of one run of a `trackingSetDifferences` observation: the rows
/// and records of the last fetch, and the diff of each new fetch against
/// them.
///
/// Records are decoded only for inserted and updated rows: an unchanged row
/// (equal raw values) keeps its previous record instance, and costs no
/// decoding.
struct RecordSetDifferenceScanner<Record: FetchableRecord> {
    /// The rows of the last diff, sorted by key; nil before the first one.
    private var snapshot: KeyedRows?
    /// One record per row of `snapshot`.
    private var records = RecordChunks<Record>()
    /// The records the first diff starts from, with the columns they encode
    /// (consumed by the first diff).
    private var initialRecords: [(record: Record, columns: [(name: String, value: DatabaseValue)])]
    private let updateRecord: ((Record, Row) throws -> Record)?
    /// Decodes the records of every row, in order: a loop specialized for
    /// the record type where the observation was made.
    private let decodeRecords: (KeyedRows) throws -> [Record]

    /// - Parameters:
    ///   - initialRecords: The records the first diff starts from, with
    ///     their encoded columns, in any order.
    ///   - updateRecord: Given the kept record and the new row of an updated
    ///     row, returns the record to report and keep. When nil, the record
    ///     decoded from the row.
    ///   - decodeRecords: Decodes the records of every row, in order, as
    ///     `KeyedRows.decodeRecords(_:)` with `Record.init(row:)` does. By
    ///     default, that call here, generic over the record.
    init(
        initialRecords: [(record: Record, columns: [(name: String, value: DatabaseValue)])],
        updateRecord: ((Record, Row) throws -> Record)?,
        decodeRecords: ((KeyedRows) throws -> [Record])? = nil
    ) {
        self.initialRecords = initialRecords
        self.updateRecord = updateRecord
        self.decodeRecords = decodeRecords ?? { try $0.decodeRecords(Record.init(row:)) }
    }

    /// Returns the difference from the kept rows to `new`, and keeps them.
    ///
    /// - Throws: The error of a record's decoding or of `updateRecord`, and
    ///   leaves the scanner unchanged. A `DifferencesObservationError` when the
    ///   initial records lack a key column or two of them have the same key.
    /// - Complexity: O(n + m) row comparisons, where n is the number of kept
    ///   rows and m the number of new ones, plus the decoding of the inserted
    ///   and updated rows.
    mutating func diff(to new: KeyedRows) throws -> SetDifference<Record> {
        if let snapshot, let reuse = new.reuse, reuse.base == ObjectIdentifier(snapshot) {
            return try diff(to: new, from: snapshot, reuse: reuse)
        }
        return try mergeDiff(to: new)
    }

    /// The diff of rows that a fetch built from the kept rows: only the rows
    /// it read and the kept rows it did not reuse can differ.
    ///
    /// - Complexity: O(c) comparisons and decodings, where c is the number
    ///   of read and unused rows, plus, when rows were inserted or deleted,
    ///   O(n / b + c + b × a) to rebuild the a chunks they fall in (b
    ///   records per chunk).
    private mutating func diff(to new: KeyedRows, from old: KeyedRows, reuse: KeyedRows.Reuse) throws -> SetDifference<Record> {
        let comparator = RowKeyComparator(old.rows, keyIndices: old.keyIndices, new.rows, keyIndices: new.keyIndices)
        let hasSameColumns = new.hasSameColumns(as: old)
        let unused = reuse.unusedBaseIndices
        let read = reuse.readIndices
        var difference = SetDifference<Record>()
        // The row records decode from, its storage reused (see `KeyedRows.decodeRecord(_:reusing:_:)`).
        var row: StatementRow?
        // The record of each read row, in order.
        var readRecords: [Record] = []
        readRecords.reserveCapacity(read.count)
        var unusedIndex = 0
        var readIndex = 0
        while unusedIndex < unused.count || readIndex < read.count {
            let order =
                if unusedIndex == unused.count { 1 }
                else if readIndex == read.count { -1 }
                else { comparator.compare(unused[unusedIndex], read[readIndex]) }
            if order < 0 {
                difference.deleted.append(records[unused[unusedIndex]])
                unusedIndex += 1
            } else if order > 0 {
                let record = try new.decodeRecord(read[readIndex], as: Record.self, reusing: &row)
                difference.inserted.append(record)
                readRecords.append(record)
                readIndex += 1
            } else {
                let oldRecord = records[unused[unusedIndex]]
                let index = read[readIndex]
                if hasSameColumns, old.rows.row(unused[unusedIndex], equals: index, of: new.rows) {
                    // Equal after all: a text the fetch could not compare in place.
                    readRecords.append(oldRecord)
                } else {
                    let record = try updatedRecord(oldRecord, index, new, reusing: &row)
                    difference.updated.append(record)
                    readRecords.append(record)
                }
                unusedIndex += 1
                readIndex += 1
            }
        }
        if unused == read {
            // The kept rows have the same offsets: replace the others in place.
            for (offset, record) in zip(read, readRecords) { records[offset] = record }
        } else {
            // Rows inserted or deleted: the chunks they fall in are rebuilt
            // (see `RecordChunks`), not every record copied.
            records.replace(removing: unused, inserting: Array(zip(read, readRecords).map { (offset: $0, record: $1) }))
        }
        replaceSnapshot(with: new)
        return difference
    }

    /// Keeps `new` as the rows of the next diff, and releases the previous
    /// rows off the observation's queue: dropping the last reference to a
    /// large fetch (a release per row) would delay the difference.
    private mutating func replaceSnapshot(with new: KeyedRows) {
        guard let previous = snapshot else {
            snapshot = new
            return
        }
        snapshot = new
        DispatchQueue.global(qos: .utility).async { withExtendedLifetime(previous) {} }
    }

    /// The diff of any rows: one merge of the kept rows and the new ones.
    private mutating func mergeDiff(to new: KeyedRows) throws -> SetDifference<Record> {
        let oldRows: RowValues
        let oldRecords: RecordChunks<Record>
        let oldKeyIndices: [Int]
        let hasSameColumns: Bool
        // The initial records whose columns do not give a comparable row:
        // reported updated when their key persists.
        var incomparable: [Bool] = []
        if let snapshot {
            guard new.hasSameKey(as: snapshot) else { return try replaceAll(with: new) }
            oldRows = snapshot.rows
            oldRecords = records
            oldKeyIndices = snapshot.keyIndices
            hasSameColumns = new.hasSameColumns(as: snapshot)
        } else {
            let initial = try makeInitialSnapshot(layout: new)
            (oldRows, oldRecords, incomparable) = (initial.rows, RecordChunks(initial.records), initial.incomparable)
            oldKeyIndices = new.keyIndices
            hasSameColumns = true
        }
        if oldRows.count == 0 {
            // Every row is inserted (the first diff, without initial
            // records): the records are the inserted ones, one array.
            let difference = try insertingAll(new)
            initialRecords = []
            return difference
        }
        let newRows = new.rows
        let comparator = RowKeyComparator(oldRows, keyIndices: oldKeyIndices, newRows, keyIndices: new.keyIndices)
        var difference = SetDifference<Record>()
        // The row records decode from, its storage reused (see `KeyedRows.decodeRecord(_:reusing:_:)`).
        var row: StatementRow?
        var nextRecords: [Record] = []
        nextRecords.reserveCapacity(newRows.count)
        // The old records, read once each, in order.
        var oldRecordIterator = oldRecords.makeIterator()
        var oldIndex = 0
        var newIndex = 0
        while oldIndex < oldRows.count, newIndex < newRows.count {
            let order = comparator.compare(oldIndex, newIndex)
            if order < 0 {
                difference.deleted.append(oldRecordIterator.next()!)
                oldIndex += 1
            } else if order > 0 {
                let record = try new.decodeRecord(newIndex, as: Record.self, reusing: &row)
                difference.inserted.append(record)
                nextRecords.append(record)
                newIndex += 1
            } else {
                let oldRecord = oldRecordIterator.next()!
                let isUpdated = !hasSameColumns || !oldRows.row(oldIndex, equals: newIndex, of: newRows)
                    || (!incomparable.isEmpty && incomparable[oldIndex])
                if isUpdated {
                    let record = try updatedRecord(oldRecord, newIndex, new, reusing: &row)
                    difference.updated.append(record)
                    nextRecords.append(record)
                } else {
                    nextRecords.append(oldRecord)
                }
                oldIndex += 1
                newIndex += 1
            }
        }
        while oldIndex < oldRows.count {
            difference.deleted.append(oldRecordIterator.next()!)
            oldIndex += 1
        }
        while newIndex < newRows.count {
            let record = try new.decodeRecord(newIndex, as: Record.self, reusing: &row)
            difference.inserted.append(record)
            nextRecords.append(record)
            newIndex += 1
        }
        replaceSnapshot(with: new)
        records = RecordChunks(nextRecords)
        initialRecords = []
        return difference
    }

    /// The diff to rows keyed by other columns than the kept rows (the
    /// table got another primary key): keys do not compare, so every kept
    /// record is deleted and every row inserted.
    private mutating func replaceAll(with new: KeyedRows) throws -> SetDifference<Record> {
        let deleted = records.array
        var difference = try insertingAll(new)
        difference.deleted = deleted
        return difference
    }

    /// The diff that inserts every row of `new` and deletes nothing; keeps
    /// `new` and its records, which share the storage of `inserted`.
    private mutating func insertingAll(_ new: KeyedRows) throws -> SetDifference<Record> {
        var difference = SetDifference<Record>()
        difference.inserted = try decodeRecords(new)
        replaceSnapshot(with: new)
        records = RecordChunks(difference.inserted)
        return difference
    }

    /// The record to report and keep for row `row` of `rows`, updated from
    /// `old`, decoded from `reused` (see `KeyedRows.decodeRecord(_:reusing:_:)`).
    private func updatedRecord(_ old: Record, _ row: Int, _ rows: KeyedRows, reusing reused: inout StatementRow?) throws -> Record {
        try rows.decodeRecord(row, reusing: &reused) { row in
            if let updateRecord { return try updateRecord(old, row) }
            return try Record(row: row)
        }
    }

    /// The rows and records of the initial records, sorted by key, in the
    /// layout of the first fetch: the row of a record has its encoded value
    /// for each column (ASCII case-insensitive names). A record that does
    /// not encode every column of the fetched rows has no comparable row:
    /// it is reported updated if its key persists.
    ///
    /// - Throws: A `DifferencesObservationError` when a record does not encode a key
    ///   column, or two records have the same key.
    private func makeInitialSnapshot(layout rows: KeyedRows) throws -> (rows: RowValues, records: [Record], incomparable: [Bool]) {
        guard !initialRecords.isEmpty else { return (RowValues(width: rows.rows.width), [], []) }
        let columnNames = rows.layout.columnNames
        let keyIndices = rows.keyIndices
        var entries: [(row: [DatabaseValue], record: Record, isIncomparable: Bool)] = []
        entries.reserveCapacity(initialRecords.count)
        for (record, columns) in initialRecords {
            var valueByName: [String: DatabaseValue] = [:]
            for (name, value) in columns { valueByName[name.lowercasedIdentifier] = value }
            var values: [DatabaseValue] = []
            values.reserveCapacity(columnNames.count)
            var isIncomparable = false
            for (index, name) in columnNames.enumerated() {
                var value = valueByName[name.lowercasedIdentifier]
                if value == nil, index == columnNames.count - 1, rows.recordLayout != nil {
                    // The rowid the observation added: under any of its names.
                    value = ["rowid", "_rowid_", "oid"].lazy.compactMap { valueByName[$0] }.first
                }
                if let value {
                    values.append(value)
                } else if keyIndices.contains(index) {
                    throw DifferencesObservationError(
                        kind: .missingPrimaryKeyColumn,
                        message: "trackingSetDifferences: an initial record does not encode the primary key column "
                            + "\(name): initial records are identified by the primary key columns they encode")
                } else {
                    values.append(.null)
                    isIncomparable = true
                }
            }
            entries.append((values, record, isIncomparable))
        }
        var unsortedRows = RowValues(width: columnNames.count, minimumCapacity: entries.count)
        for entry in entries { unsortedRows.appendRow(entry.row) }
        let order = (0..<entries.count).sorted { unsortedRows.compareKeys($0, $1, keyIndices: keyIndices) < 0 }
        var sortedRows = RowValues(width: columnNames.count, minimumCapacity: entries.count)
        for index in order { sortedRows.appendRow(entries[index].row) }
        for row in (0..<sortedRows.count).dropFirst() where sortedRows.compareKeys(row - 1, row, keyIndices: keyIndices) == 0 {
            let key = keyIndices.map { sortedRows.value(row, $0).description }
            throw DifferencesObservationError(
                kind: .duplicateIdentifier,
                message: "trackingSetDifferences: two initial records have the same primary key "
                    + "(\(key.joined(separator: ", ")))")
        }
        return (sortedRows, order.map { entries[$0].record }, order.map { entries[$0].isIncomparable })
    }
}
