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
            if let l = leftValue.integerPayload, let r = rightValue.integerPayload {
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
