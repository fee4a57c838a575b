/// The values of rows of one width, row after row in one buffer
/// (`RowValuesStorage`), with value semantics (copy on write).
///
/// Flat, so that reading a row of a previous fetch takes no reference
/// count, and a fetch that reuses rows of an earlier fetch copies their
/// values in bulk without allocating per row.
struct RowValues: Sendable {
    /// The values of every row, `width` per row, row after row. Shared
    /// with the rows of values records decode from (`StatementRow`).
    private(set) var storage: RowValuesStorage
    /// The number of values of each row.
    let width: Int
    /// The number of rows.
    private(set) var count = 0

    init(width: Int, minimumCapacity: Int = 0) {
        self.width = width
        storage = RowValuesStorage(capacity: minimumCapacity * width)
    }

    /// The value of column `column` of row `row`.
    @inline(__always)
    func value(_ row: Int, _ column: Int) -> DatabaseValue {
        precondition(row >= 0 && row < count && column >= 0 && column < width, "RowValues: a value out of the rows")
        return storage.base[row * width + column]
    }

    /// Whether row `row` and row `otherRow` of `other`, whose width is the
    /// same, have equal values.
    func row(_ row: Int, equals otherRow: Int, of other: RowValues) -> Bool {
        precondition(row < count && otherRow < other.count && width == other.width, "RowValues: rows out of the rows")
        let values = storage.base + row * width
        let otherValues = other.storage.base + otherRow * width
        return withExtendedLifetime((storage, other.storage)) {
            (0..<width).allSatisfy { values[$0] == otherValues[$0] }
        }
    }

    /// Makes the storage this value's own, with room for `additionalRows` more rows.
    @inline(__always)
    private mutating func prepareToAppend(rows additionalRows: Int) {
        let minimumCapacity = (count + additionalRows) * width
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(capacity: Swift.max(minimumCapacity, storage.capacity))
        }
        storage.reserveCapacity(minimumCapacity)
    }

    /// Appends a row of `width` values, `value(column)` for each column.
    @inline(__always)
    mutating func appendRow(_ value: (Int) -> DatabaseValue) {
        prepareToAppend(rows: 1)
        storage.appendAssumingCapacity(count: width) { values in
            for column in 0..<width { (values + column).initialize(to: value(column)) }
        }
        count += 1
    }

    /// Appends a row.
    mutating func appendRow(_ row: [DatabaseValue]) {
        assert(row.count == width, "RowValues: a row of \(row.count) values in rows of \(width)")
        prepareToAppend(rows: 1)
        row.withUnsafeBufferPointer { storage.appendAssumingCapacity(contentsOf: $0) }
        count += 1
    }

    /// Appends the rows `range` of `other`, whose width is the same.
    ///
    /// - Complexity: O(range.count × width), with no allocation when the
    ///   capacity suffices.
    @inline(__always)
    mutating func appendRows(_ range: Range<Int>, of other: RowValues) {
        guard !range.isEmpty else { return }
        appendNonEmptyRows(range, of: other)
    }

    private mutating func appendNonEmptyRows(_ range: Range<Int>, of other: RowValues) {
        precondition(other.width == width && range.upperBound <= other.count, "RowValues: rows appended out of their rows")
        let source = other.storage
        prepareToAppend(rows: range.count)
        withExtendedLifetime(source) {
            storage.appendAssumingCapacity(
                contentsOf: UnsafeBufferPointer(rebasing: source.values[(range.lowerBound * width)..<(range.upperBound * width)]))
        }
        count += range.count
    }

    /// Releases the capacity reserved beyond the values when it is large
    /// (more than the values and 4 096 more): a copy of the values.
    mutating func releaseExcessCapacity() {
        guard storage.capacity > 2 * storage.count + 4_096 else { return }
        storage = storage.copy(capacity: storage.count)
    }

    /// Calls `body` with the values of all rows, row after row, in place.
    func withUnsafeValues<Result>(_ body: (UnsafeBufferPointer<DatabaseValue>) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(storage) { try body(storage.values) }
    }

    /// Compares the keys of rows `left` and `right` in SQLite's `BINARY`
    /// order on raw values: negative, zero or positive.
    @inline(__always)
    func compareKeys(_ left: Int, _ right: Int, keyIndices: [Int]) -> Int {
        if keyIndices.count == 1 {
            // Integer keys (rowids) first: no call, no copy of the values.
            let keyIndex = keyIndices[0]
            precondition(left < count && right < count && keyIndex < width, "RowValues: a key out of the rows")
            let values = storage.base
            if let l = values[left * width + keyIndex].integerPayload,
                let r = values[right * width + keyIndex].integerPayload
            {
                return l < r ? -1 : (l == r ? 0 : 1)
            }
        }
        for keyIndex in keyIndices {
            let result = DatabaseValue.compare(value(left, keyIndex), value(right, keyIndex))
            if result != 0 { return result }
        }
        return 0
    }

    /// The same rows, ordered by `areInIncreasingOrder`, which compares row offsets.
    func sorted(by areInIncreasingOrder: (Int, Int) -> Bool) -> RowValues {
        var sorted = RowValues(width: width, minimumCapacity: count)
        for row in (0..<count).sorted(by: areInIncreasingOrder) { sorted.appendRows(row..<(row + 1), of: self) }
        return sorted
    }
}
