/// The values of rows of one width, row after row, in chunks of a few
/// thousand values (`RowValuesStorage`), with value semantics.
///
/// Flat within a chunk, so that reading a row of a previous fetch takes no
/// reference count, and a fetch appends a row with one capacity check. In
/// chunks, so that rows built from the rows of an earlier fetch share the
/// chunks they keep whole instead of copying their values: a commit that
/// changes k rows of n builds the new rows in O(k × b + n / b), where b is
/// the number of rows of a chunk, not O(n).
///
/// Chunks are immutable once this value shares them (with a copy, or with
/// other rows built from these): only the last chunk, the open one, grows,
/// and only while this value holds the only reference to it.
struct RowValues: Sendable {
    /// The number of values of each row.
    let width: Int
    /// The number of rows.
    private(set) var count = 0
    /// log2 of the number of rows of a full chunk.
    private let chunkShift: Int
    /// The chunks before the open one, in order, none empty. They never
    /// change (others may share them).
    private var closedChunks: [RowValuesStorage] = []
    /// The first row of each closed chunk, and then the number of rows of
    /// the closed chunks.
    private var chunkStarts: [Int] = [0]
    /// Whether every closed chunk holds `rowsPerChunk` rows: then row r is
    /// in closed chunk r >> chunkShift, with no search.
    private var closedChunksAreFull = true
    /// The chunk rows are appended to, after the closed chunks; nil when
    /// there is none yet. Copied before a change when shared.
    private var openChunk: RowValuesStorage?
    /// The capacity, in rows, of the first open chunk.
    private let initialCapacity: Int

    /// Values per full chunk, about: 96 KB of values. Small enough that a
    /// changed row copies little, large enough that a million rows are a
    /// few hundred chunks.
    private static let valuesPerChunk = 4_096

    init(width: Int, minimumCapacity: Int = 0) {
        precondition(width > 0, "RowValues: rows of no values")
        self.width = width
        // The largest power of two of rows whose values fit the chunk's
        // size, 16 rows at least.
        var shift = 4
        while (2 << shift) * width <= Self.valuesPerChunk { shift += 1 }
        chunkShift = shift
        initialCapacity = Swift.max(1, Swift.min(minimumCapacity, 1 << shift))
    }

    /// The number of rows of a full chunk.
    var rowsPerChunk: Int { 1 << chunkShift }

    /// The number of chunks, the open one included: for tests.
    var chunkCount: Int { closedChunks.count + (openChunk == nil ? 0 : 1) }

    /// The number of rows of the closed chunks.
    @inline(__always)
    private var closedRowCount: Int { chunkStarts[chunkStarts.count - 1] }

    // MARK: - Reading

    /// The closed chunk of row `row`, by binary search of `chunkStarts`.
    private func closedChunkIndex(ofRow row: Int) -> Int {
        chunkStarts.chunkIndex(containing: row, chunkCount: closedChunks.count)
    }

    /// The storage that holds row `row`, and the offset of the row's first
    /// value in it: for a `StatementRow` that reads the row in place.
    func storage(ofRow row: Int) -> (storage: RowValuesStorage, start: Int) {
        precondition(row >= 0 && row < count, "RowValues: a row out of the rows")
        let closedRows = closedRowCount
        if row >= closedRows { return (openChunk.unsafelyUnwrapped, (row - closedRows) * width) }
        let index = closedChunksAreFull ? row >> chunkShift : closedChunkIndex(ofRow: row)
        return (closedChunks[index], (row - chunkStarts[index]) * width)
    }

    /// The values of row `row`, in place, valid while these rows are alive.
    ///
    /// - Parameter chunkHint: The closed chunk the previous call found, or
    ///   any index: a call for the same or the next chunk skips the search,
    ///   so that reading rows in order costs O(1) per row.
    @inline(__always)
    func rowValues(_ row: Int, chunkHint: inout Int) -> UnsafeBufferPointer<DatabaseValue> {
        precondition(row >= 0 && row < count, "RowValues: a row out of the rows")
        let closedRows = closedRowCount
        let base: UnsafeMutablePointer<DatabaseValue>
        if row >= closedRows {
            base = openChunk.unsafelyUnwrapped.base + (row - closedRows) * width
        } else {
            if chunkHint < 0 || chunkHint >= closedChunks.count || row < chunkStarts[chunkHint] {
                chunkHint = closedChunksAreFull ? row >> chunkShift : closedChunkIndex(ofRow: row)
            } else {
                while row >= chunkStarts[chunkHint + 1] { chunkHint += 1 }
            }
            base = closedChunks[chunkHint].base + (row - chunkStarts[chunkHint]) * width
        }
        return UnsafeBufferPointer(start: base, count: width)
    }

    /// The value of column `column` of row `row`.
    @inline(__always)
    func value(_ row: Int, _ column: Int) -> DatabaseValue {
        precondition(column >= 0 && column < width, "RowValues: a value out of the rows")
        return pointer(toRow: row)[column]
    }

    /// The first value of row `row`, in place: valid while these rows are
    /// alive (they hold the chunk).
    @inline(__always)
    private func pointer(toRow row: Int) -> UnsafeMutablePointer<DatabaseValue> {
        precondition(row >= 0 && row < count, "RowValues: a row out of the rows")
        let closedRows = closedRowCount
        if row >= closedRows { return openChunk.unsafelyUnwrapped.base + (row - closedRows) * width }
        let index = closedChunksAreFull ? row >> chunkShift : closedChunkIndex(ofRow: row)
        return closedChunks[index].base + (row - chunkStarts[index]) * width
    }

    /// Whether row `row` and row `otherRow` of `other`, whose width is the
    /// same, are stored identically (`DatabaseValue.isStoredIdentically`):
    /// the integer 1 and the real 1.0, equal for `==`, differ here, because
    /// an UPDATE from one to the other changes the raw row, and what a
    /// record decodes from it.
    func row(_ row: Int, equals otherRow: Int, of other: RowValues) -> Bool {
        precondition(width == other.width, "RowValues: rows of different widths")
        let values = pointer(toRow: row)
        let otherValues = other.pointer(toRow: otherRow)
        return withExtendedLifetime((self, other)) {
            (0..<width).allSatisfy { values[$0].isStoredIdentically(to: otherValues[$0]) }
        }
    }

    /// Compares the keys of rows `left` and `right` in SQLite's `BINARY`
    /// order on raw values: negative, zero or positive.
    @inline(__always)
    func compareKeys(_ left: Int, _ right: Int, keyIndices: [Int]) -> Int {
        if keyIndices.count == 1 {
            // Integer keys (rowids) first: no call.
            let keyIndex = keyIndices[0]
            if let l = value(left, keyIndex).integerPayload, let r = value(right, keyIndex).integerPayload {
                return l < r ? -1 : (l == r ? 0 : 1)
            }
        }
        for keyIndex in keyIndices {
            let result = DatabaseValue.compare(value(left, keyIndex), value(right, keyIndex))
            if result != 0 { return result }
        }
        return 0
    }

    /// Compares the keys of the last two rows, as `compareKeys(_:_:keyIndices:)`:
    /// O(1) whatever the chunks, for a fetch that checks the order of the
    /// rows it appends.
    @inline(__always)
    func compareKeysOfLastTwoRows(keyIndices: [Int]) -> Int {
        precondition(count >= 2 && openChunk != nil, "RowValues: fewer than two rows, or none appended")
        let open = openChunk.unsafelyUnwrapped
        let last = open.base + (open.count - width)
        let previous: UnsafeMutablePointer<DatabaseValue>
        if open.count >= 2 * width {
            previous = last - width
        } else {
            let chunk = closedChunks[closedChunks.count - 1]
            previous = chunk.base + (chunk.count - width)
        }
        for keyIndex in keyIndices {
            let (l, r) = (previous[keyIndex], last[keyIndex])
            if let li = l.integerPayload, let ri = r.integerPayload {
                if li != ri { return li < ri ? -1 : 1 }
                continue
            }
            let result = DatabaseValue.compare(l, r)
            if result != 0 { return result }
        }
        return 0
    }

    // MARK: - Appending

    /// Makes the open chunk this value's own, with room for one more row.
    @inline(__always)
    private mutating func prepareToAppendRow() {
        if isKnownUniquelyReferenced(&openChunk),
            openChunk.unsafelyUnwrapped.count + width <= openChunk.unsafelyUnwrapped.capacity
        {
            return
        }
        prepareOpenChunk()
    }

    /// `prepareToAppendRow()`'s slow path: closes a full open chunk, copies
    /// a shared one, grows a small one (up to a full chunk's values).
    @inline(never)
    private mutating func prepareOpenChunk() {
        let fullCount = rowsPerChunk * width
        guard let chunk = openChunk else {
            openChunk = RowValuesStorage(capacity: initialCapacity * width)
            return
        }
        if chunk.count >= fullCount {
            closeOpenChunk()
            openChunk = RowValuesStorage(capacity: fullCount)
        } else if !isKnownUniquelyReferenced(&openChunk) {
            openChunk = chunk.copy(capacity: Swift.min(fullCount, Swift.max(chunk.capacity, chunk.count + width)))
        } else {
            chunk.reserveCapacity(exactly: Swift.min(fullCount, Swift.max(chunk.count + width, 2 * chunk.capacity)))
        }
    }

    /// Makes the open chunk, if it has rows, the last closed chunk.
    private mutating func closeOpenChunk() {
        guard let chunk = openChunk else { return }
        openChunk = nil
        guard chunk.count > 0 else { return }
        closedChunks.append(chunk)
        chunkStarts.append(count)
        if chunk.count != rowsPerChunk * width { closedChunksAreFull = false }
    }

    /// Appends a row of `width` values, `value(column)` for each column.
    @inline(__always)
    mutating func appendRow(_ value: (Int) -> DatabaseValue) {
        prepareToAppendRow()
        let width = width
        openChunk.unsafelyUnwrapped.appendAssumingCapacity(count: width) { values in
            for column in 0..<width { (values + column).initialize(to: value(column)) }
        }
        count += 1
    }

    /// Appends a row.
    mutating func appendRow(_ row: [DatabaseValue]) {
        precondition(row.count == width, "RowValues: a row of \(row.count) values in rows of \(width)")
        appendRow { row[$0] }
    }

    /// Appends the rows `range` of `other`, whose width is the same. The
    /// chunks of `other` that the range covers whole, and that are at least
    /// half full, are shared, not copied.
    ///
    /// - Complexity: O(c × width + r / b), where c is the number of rows
    ///   copied (those of chunks the range covers in part or that are less
    ///   than half full), r the number of rows and b the rows of a chunk.
    @inline(__always)
    mutating func appendRows(_ range: Range<Int>, of other: RowValues) {
        guard !range.isEmpty else { return }
        appendNonEmptyRows(range, of: other)
    }

    private mutating func appendNonEmptyRows(_ range: Range<Int>, of other: RowValues) {
        precondition(
            other.width == width && range.lowerBound >= 0 && range.upperBound <= other.count,
            "RowValues: rows appended out of their rows")
        var row = range.lowerBound
        var chunkHint = 0
        while row < range.upperBound {
            // The chunk of `other` that holds `row`: its storage and first row.
            let chunk: RowValuesStorage
            let chunkFirstRow: Int
            let otherClosedRows = other.closedRowCount
            if row >= otherClosedRows {
                chunk = other.openChunk.unsafelyUnwrapped
                chunkFirstRow = otherClosedRows
            } else {
                _ = other.rowValues(row, chunkHint: &chunkHint)
                chunk = other.closedChunks[chunkHint]
                chunkFirstRow = other.chunkStarts[chunkHint]
            }
            let chunkRowCount = chunk.count / width
            let end = Swift.min(range.upperBound, chunkFirstRow + chunkRowCount)
            if row == chunkFirstRow, end == chunkFirstRow + chunkRowCount, 2 * chunkRowCount >= rowsPerChunk {
                share(chunk, rowCount: chunkRowCount)
            } else {
                copyRows(of: chunk, from: (row - chunkFirstRow) * width, count: end - row)
            }
            row = end
        }
    }

    /// Appends the rows of `chunk` as a closed chunk, shared.
    private mutating func share(_ chunk: RowValuesStorage, rowCount: Int) {
        closeOpenChunk()
        closedChunks.append(chunk)
        count += rowCount
        chunkStarts.append(count)
        if rowCount != rowsPerChunk { closedChunksAreFull = false }
    }

    /// Appends copies of `rowCount` rows of `chunk`, from its value `start`.
    private mutating func copyRows(of chunk: RowValuesStorage, from start: Int, count rowCount: Int) {
        let fullCount = rowsPerChunk * width
        var copied = 0
        while copied < rowCount {
            // An open chunk of this value's own, with room for a row at least.
            prepareToAppendRow()
            let open = openChunk.unsafelyUnwrapped
            let rows = Swift.min(rowCount - copied, (fullCount - open.count) / width)
            if open.count + rows * width > open.capacity {
                open.reserveCapacity(exactly: Swift.min(fullCount, Swift.max(open.count + rows * width, 2 * open.capacity)))
            }
            withExtendedLifetime(chunk) {
                open.appendAssumingCapacity(
                    contentsOf: UnsafeBufferPointer(start: chunk.base + start + copied * width, count: rows * width))
            }
            count += rows
            copied += rows
        }
    }

    /// Releases the capacity of the open chunk beyond its values when it is
    /// large (more than its values and 4 096 more): a copy of its values.
    mutating func releaseExcessCapacity() {
        guard let chunk = openChunk, chunk.capacity > 2 * chunk.count + 4_096 else { return }
        openChunk = chunk.copy(capacity: chunk.count)
    }

    /// The same rows, ordered by `areInIncreasingOrder`, which compares row offsets.
    func sorted(by areInIncreasingOrder: (Int, Int) -> Bool) -> RowValues {
        var sorted = RowValues(width: width, minimumCapacity: count)
        var chunkHint = 0
        for row in (0..<count).sorted(by: areInIncreasingOrder) {
            let values = rowValues(row, chunkHint: &chunkHint)
            sorted.appendRow { values[$0] }
        }
        return sorted
    }
}

extension Array where Element == Int {
    /// Given the first offsets of `chunkCount` chunks (ascending; these
    /// starts may be followed by more), the chunk that holds `offset`: the
    /// last chunk whose start is not above it. Binary search, for the rows
    /// of `RowValues` and the records of `RecordChunks`.
    func chunkIndex(containing offset: Int, chunkCount: Int) -> Int {
        var low = 0
        var high = chunkCount - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if self[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
