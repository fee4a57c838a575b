/// The rows of a query's result, in the result's order: the
/// ``RowsWithDifference/rows`` of a row-difference observation.
///
/// A random-access collection of `Row`. The rows of an unordered
/// observation whose rows one column identifies by unique integers (an
/// `INTEGER PRIMARY KEY`, or a given ``RowIdentity/columns(_:)`` key) are
/// kept as compact bytes, about the size of SQLite's own encoding, and
/// each `Row` is made when it is read: a value of a million rows holds no
/// million `Row` instances, and successive values share the bytes of the
/// rows that did not change. Other results hold their `Row` values.
///
/// Read every row by iterating (`for row in rows`, `map`, `Array(rows)`):
/// iteration decodes each chunk of rows once.
///
/// - Complexity: `count` is O(1). Iteration is O(1) amortized per row.
///   The subscript is O(1) for rows held as `Row` values, and
///   O(log c + B + b) for rows kept as bytes, in c chunks of b ≤ 128 rows
///   grouped in blocks of B ≤ 64 chunks.
public struct ResultRows: RandomAccessCollection, Sendable, Hashable, CustomStringConvertible,
    ExpressibleByArrayLiteral
{
    fileprivate enum Storage: Sendable {
        case rows([Row])
        /// The rows of a keyed result, and the position of the first row of
        /// each of its blocks of chunks (in key order).
        case keyed(KeyedResult, blockStarts: [Int])
    }

    private let storage: Storage

    /// The rows of an array.
    public init(_ rows: [Row]) {
        storage = .rows(rows)
    }

    /// The rows of an array literal.
    public init(arrayLiteral rows: Row...) {
        storage = .rows(rows)
    }

    /// The rows of a keyed result.
    ///
    /// - Complexity: O(c / B) for c chunks of rows in blocks of B.
    init(_ result: KeyedResult) {
        var starts: [Int] = []
        if result.order == nil {
            let counts = result.rows.blockRowCounts
            starts.reserveCapacity(counts.count)
            var start = 0
            for count in counts {
                starts.append(start)
                start += count
            }
        }
        storage = .keyed(result, blockStarts: starts)
    }

    /// The position of the first row: 0.
    public var startIndex: Int { 0 }

    /// The number of rows: the position after the last one.
    public var endIndex: Int {
        switch storage {
        case .rows(let rows): rows.count
        case .keyed(let result, _): result.count
        }
    }

    /// The row at `position` (0-based).
    ///
    /// - Complexity: O(1) for rows held as `Row` values; O(log c + B + b)
    ///   for rows kept as bytes (see the type's documentation).
    public subscript(position: Int) -> Row {
        switch storage {
        case .rows(let rows):
            return rows[position]
        case .keyed(let result, let blockStarts):
            precondition(position >= 0 && position < result.count, "ResultRows index out of range")
            if let order = result.order {
                // Every key of `order` is a key of the rows: an invariant.
                return result.row(forKey: order[position])!
            }
            let row = result.rows.row(at: position, blockStarts: blockStarts)
            return result.row(key: row.key, encoded: row.encoded)
        }
    }

    /// Iterates the rows in order, decoding each chunk of rows kept as
    /// bytes once.
    public struct Iterator: IteratorProtocol {
        private enum State {
            case rows(IndexingIterator<[Row]>)
            case keyOrder(KeyedResult, EncodedRows.Iterator)
            case queryOrder(KeyedResult, IndexingIterator<[Int64]>)
        }

        private var state: State

        fileprivate init(_ storage: Storage) {
            switch storage {
            case .rows(let rows):
                state = .rows(rows.makeIterator())
            case .keyed(let result, _):
                if let order = result.order {
                    state = .queryOrder(result, order.makeIterator())
                } else {
                    state = .keyOrder(result, result.rows.makeIterator())
                }
            }
        }

        /// The next row, or nil after the last one.
        public mutating func next() -> Row? {
            switch state {
            case .rows(var iterator):
                defer { state = .rows(iterator) }
                return iterator.next()
            case .keyOrder(let result, var iterator):
                defer { state = .keyOrder(result, iterator) }
                return iterator.next().map { result.row(key: $0.key, encoded: $0.encoded) }
            case .queryOrder(let result, var iterator):
                defer { state = .queryOrder(result, iterator) }
                return iterator.next().flatMap { result.row(forKey: $0) }
            }
        }
    }

    /// An iterator over the rows, in order.
    public func makeIterator() -> Iterator {
        Iterator(storage)
    }

    /// The rows, `size` at a time, each batch made when it is read: a way
    /// to write a large result in parts.
    ///
    /// - Precondition: `size` is positive.
    public func batches(of size: Int) -> some Sequence<[Row]> {
        precondition(size > 0, "a batch holds at least one row")
        let rows = self
        return AnySequence { () -> AnyIterator<[Row]> in
            var iterator = rows.makeIterator()
            return AnyIterator {
                var batch: [Row] = []
                batch.reserveCapacity(size)
                while batch.count < size, let row = iterator.next() { batch.append(row) }
                return batch.isEmpty ? nil : batch
            }
        }
    }

    /// The keyed result the rows are kept in, if they are.
    var keyedResult: KeyedResult? {
        if case .keyed(let result, _) = storage { return result }
        return nil
    }

    /// Whether both hold equal rows in the same order, whatever keeps them.
    ///
    /// - Complexity: O(n).
    public static func == (lhs: ResultRows, rhs: ResultRows) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    /// Hashes the rows, in order.
    ///
    /// - Complexity: O(n).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for row in self { hasher.combine(row) }
    }

    /// The rows, as an array's description.
    public var description: String {
        Array(self).description
    }
}
