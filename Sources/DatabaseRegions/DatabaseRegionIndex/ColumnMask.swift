/// A set of column numbers (see `TableBuckets`), one bit per column.
///
/// Updated columns are gathered into a bit set of the same layout for the
/// duration of one query, so that checking a registration against them costs a few
/// word operations rather than hash lookups.
struct ColumnMask: Sendable {
    /// Bit `n % 64` of word `n / 64` is set when column `n` belongs to the set.
    private(set) var words: [UInt64]

    /// Creates a mask that contains the given column numbers.
    ///
    /// - Complexity: O(c + m / 64), where c is the number of columns and m the largest column number.
    init(columnNumbers: some Sequence<Int32>) {
        words = []
        for number in columnNumbers {
            let wordIndex = Int(number) >> 6
            if wordIndex >= words.count {
                words.append(contentsOf: repeatElement(0, count: wordIndex + 1 - words.count))
            }
            words[wordIndex] |= 1 &<< UInt64(number & 63)
        }
    }

    /// Whether `column`, which both the mask and `columns` contain, is the
    /// smallest column they share.
    ///
    /// Each column-restricted registration is listed under each of its columns, so
    /// a query that visits the lists of several updated columns meets a
    /// registration once per updated column it covers. Reporting the registration only
    /// from the list of the first column it shares with the update reports it
    /// exactly once.
    ///
    /// - Complexity: O(1 + column / 64).
    func isFirstCommonColumn(_ column: Int, with columns: UnsafeBufferPointer<UInt64>) -> Bool {
        let wordIndex = column >> 6
        assert(wordIndex < words.count && wordIndex < columns.count, "column must belong to both sets")
        for index in 0..<wordIndex where words[index] & columns[index] != 0 {
            return false
        }
        let lowerBits = (1 &<< UInt64(column & 63)) &- 1
        return words[wordIndex] & columns[wordIndex] & lowerBits == 0
    }
}
