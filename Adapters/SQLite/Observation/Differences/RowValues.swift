/// The values of rows of one width, one array per row.
///
/// Copying a row copies one reference (rows share their arrays): a fetch
/// that reuses the rows of an earlier fetch copies them in bulk, and an
/// unchanged row costs no allocation.
struct RowValues: Sendable {
    /// The values of each row.
    private(set) var rows: [[DatabaseValue]] = []
    /// The number of values of each row.
    let width: Int

    init(width: Int, minimumCapacity: Int = 0) {
        self.width = width
        rows.reserveCapacity(minimumCapacity)
    }

    /// The number of rows.
    var count: Int { rows.count }

    /// The values of row `row`.
    subscript(row: Int) -> [DatabaseValue] { rows[row] }

    /// The value of column `column` of row `row`.
    @inline(__always)
    func value(_ row: Int, _ column: Int) -> DatabaseValue {
        rows[row][column]
    }

    /// Appends a row of `width` values, `value(column)` for each column.
    @inline(__always)
    mutating func appendRow(_ value: (Int) -> DatabaseValue) {
        let width = width
        rows.append([DatabaseValue](unsafeUninitializedCapacity: width) { buffer, initializedCount in
            for column in 0..<width { buffer.initializeElement(at: column, to: value(column)) }
            initializedCount = width
        })
    }

    /// Appends a row.
    mutating func appendRow(_ row: [DatabaseValue]) {
        assert(row.count == width, "RowValues: a row of \(row.count) values in rows of \(width)")
        rows.append(row)
    }

    /// Appends the rows `range` of `other`, whose width is the same.
    mutating func appendRows(_ range: Range<Int>, of other: RowValues) {
        guard !range.isEmpty else { return }
        assert(other.width == width, "RowValues: rows of \(other.width) values appended to rows of \(width)")
        rows.append(contentsOf: other.rows[range])
    }

    /// Compares the keys of rows `left` and `right` in SQLite's `BINARY`
    /// order on raw values: negative, zero or positive.
    @inline(__always)
    func compareKeys(_ left: Int, _ right: Int, keyIndices: [Int]) -> Int {
        for keyIndex in keyIndices {
            let result = DatabaseValue.compare(value(left, keyIndex), value(right, keyIndex))
            if result != 0 { return result }
        }
        return 0
    }

    /// The same rows, ordered by `areInIncreasingOrder`, which compares row offsets.
    func sorted(by areInIncreasingOrder: (Int, Int) -> Bool) -> RowValues {
        var sorted = RowValues(width: width, minimumCapacity: count)
        for row in (0..<count).sorted(by: areInIncreasingOrder) { sorted.rows.append(rows[row]) }
        return sorted
    }
}

/// Compares the keys of rows in SQLite's `BINARY` order on raw values.
struct RowKeyComparator {
    let left: RowValues
    let leftKeyIndices: [Int]
    let right: RowValues
    let rightKeyIndices: [Int]
    /// The key column of both sides, when keys have one column at the same index.
    private let singleKeyIndex: Int?

    init(_ left: RowValues, keyIndices leftKeyIndices: [Int], _ right: RowValues, keyIndices rightKeyIndices: [Int]) {
        precondition(leftKeyIndices.count == rightKeyIndices.count, "RowKeyComparator: keys of different lengths")
        self.left = left
        self.leftKeyIndices = leftKeyIndices
        self.right = right
        self.rightKeyIndices = rightKeyIndices
        singleKeyIndex = leftKeyIndices.count == 1 && leftKeyIndices == rightKeyIndices ? leftKeyIndices[0] : nil
    }

    /// Negative, zero or positive as the key of row `leftRow` of `left` is
    /// less than, equal to or greater than the key of row `rightRow` of `right`.
    @inline(__always)
    func compare(_ leftRow: Int, _ rightRow: Int) -> Int {
        if let index = singleKeyIndex {
            let leftValue = left.value(leftRow, index)
            let rightValue = right.value(rightRow, index)
            // Integer keys (rowids) first: no call.
            if case .integer(let l) = leftValue.storage, case .integer(let r) = rightValue.storage {
                return l < r ? -1 : (l == r ? 0 : 1)
            }
            return DatabaseValue.compare(leftValue, rightValue)
        }
        for (leftIndex, rightIndex) in zip(leftKeyIndices, rightKeyIndices) {
            let result = DatabaseValue.compare(left.value(leftRow, leftIndex), right.value(rightRow, rightIndex))
            if result != 0 { return result }
        }
        return 0
    }

    /// The key of row `rightRow` of `right`, for error messages.
    func rightKeyDescription(_ rightRow: Int) -> String {
        rightKeyIndices.map { right.value(rightRow, $0).description }.joined(separator: ", ")
    }
}
