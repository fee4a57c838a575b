/// The values of rows of one width, row after row in one array.
///
/// Flat, so that reading a row of a previous fetch takes no reference
/// count, and a fetch that reuses rows of an earlier fetch copies their
/// values in bulk without allocating per row.
struct RowValues: Sendable {
    /// The values of every row, `width` per row, row after row.
    private(set) var values: [DatabaseValue] = []
    /// The number of values of each row.
    let width: Int
    /// The number of rows.
    private(set) var count = 0

    init(width: Int, minimumCapacity: Int = 0) {
        self.width = width
        values.reserveCapacity(minimumCapacity * width)
    }

    /// The values of row `row`.
    subscript(row: Int) -> ArraySlice<DatabaseValue> { values[(row * width)..<((row + 1) * width)] }

    /// The value of column `column` of row `row`.
    @inline(__always)
    func value(_ row: Int, _ column: Int) -> DatabaseValue {
        values[row * width + column]
    }

    /// Appends a row of `width` values, `value(column)` for each column.
    @inline(__always)
    mutating func appendRow(_ value: (Int) -> DatabaseValue) {
        for column in 0..<width { values.append(value(column)) }
        count += 1
    }

    /// Appends a row.
    mutating func appendRow(_ row: [DatabaseValue]) {
        assert(row.count == width, "RowValues: a row of \(row.count) values in rows of \(width)")
        values.append(contentsOf: row)
        count += 1
    }

    /// Appends the rows `range` of `other`, whose width is the same.
    ///
    /// - Complexity: O(range.count × width), with no allocation when the
    ///   capacity suffices.
    mutating func appendRows(_ range: Range<Int>, of other: RowValues) {
        guard !range.isEmpty else { return }
        assert(other.width == width, "RowValues: rows of \(other.width) values appended to rows of \(width)")
        other.values.withUnsafeBufferPointer { source in
            values.append(contentsOf: UnsafeBufferPointer(rebasing: source[(range.lowerBound * width)..<(range.upperBound * width)]))
        }
        count += range.count
    }

    /// Calls `body` with the values of all rows, row after row, in place.
    func withUnsafeValues<Result>(_ body: (UnsafeBufferPointer<DatabaseValue>) throws -> Result) rethrows -> Result {
        try values.withUnsafeBufferPointer(body)
    }

    /// Compares the keys of rows `left` and `right` in SQLite's `BINARY`
    /// order on raw values: negative, zero or positive.
    @inline(__always)
    func compareKeys(_ left: Int, _ right: Int, keyIndices: [Int]) -> Int {
        if keyIndices.count == 1 {
            // Integer keys (rowids) first: no call, no copy of the values.
            let keyIndex = keyIndices[0]
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
