/// The records a `trackingSetDifferences` run keeps, one per kept row, in
/// chunks: a few inserted or deleted rows change the chunks they fall in,
/// not every record after them.
///
/// Made from one array (the records of the first difference, shared with
/// it) without a copy; the first change splits that array into chunks of
/// `recordsPerChunk` records (a copy of every record, once).
struct RecordChunks<Record> {
    /// The records, in order; no chunk is empty.
    private var chunks: [[Record]]
    /// The offset of each chunk's first record, then the number of records.
    private var starts: [Int]

    /// The number of records of the chunks a change splits an array into.
    static var recordsPerChunk: Int { 1_024 }

    /// The records of `records`, in one chunk that shares their storage.
    init(_ records: [Record] = []) {
        chunks = records.isEmpty ? [] : [records]
        starts = records.isEmpty ? [0] : [0, records.count]
    }

    /// The number of records.
    var count: Int { starts[starts.count - 1] }

    /// Every record, in order.
    ///
    /// - Complexity: O(n), a copy; O(1) while the records are one chunk.
    var array: [Record] {
        chunks.count == 1 ? chunks[0] : Array(chunks.joined())
    }

    /// The chunk of record `offset` (less than `count`), by binary search.
    private func chunkIndex(of offset: Int) -> Int {
        starts.chunkIndex(containing: offset, chunkCount: chunks.count)
    }

    /// The record at `offset`; O(log c), where c is the number of chunks.
    subscript(offset: Int) -> Record {
        get {
            precondition(offset >= 0 && offset < count, "RecordChunks: a record out of the records")
            let chunk = chunkIndex(of: offset)
            return chunks[chunk][offset - starts[chunk]]
        }
        set {
            precondition(offset >= 0 && offset < count, "RecordChunks: a record out of the records")
            splitLargeChunks()
            let chunk = chunkIndex(of: offset)
            chunks[chunk][offset - starts[chunk]] = newValue
        }
    }

    /// Removes the record at `offset`.
    ///
    /// - Complexity: O(b + c), where b is the number of records of a chunk
    ///   and c the number of chunks.
    mutating func remove(at offset: Int) {
        precondition(offset >= 0 && offset < count, "RecordChunks: a record out of the records")
        splitLargeChunks()
        let chunk = chunkIndex(of: offset)
        chunks[chunk].remove(at: offset - starts[chunk])
        for index in (chunk + 1)..<starts.count { starts[index] -= 1 }
        if chunks[chunk].isEmpty {
            // Its start now equals the next one's.
            chunks.remove(at: chunk)
            starts.remove(at: chunk + 1)
        }
    }

    /// Inserts `record` at `offset` (at most `count`).
    ///
    /// - Complexity: O(b + c), where b is the number of records of a chunk
    ///   and c the number of chunks.
    mutating func insert(_ record: Record, at offset: Int) {
        precondition(offset >= 0 && offset <= count, "RecordChunks: a record out of the records")
        splitLargeChunks()
        guard !chunks.isEmpty else {
            chunks = [[record]]
            starts = [0, 1]
            return
        }
        // The chunk that holds `offset`, or the last one for an offset at the end.
        let chunk = offset == count ? chunks.count - 1 : chunkIndex(of: offset)
        chunks[chunk].insert(record, at: offset - starts[chunk])
        for index in (chunk + 1)..<starts.count { starts[index] += 1 }
        if chunks[chunk].count >= 2 * Self.recordsPerChunk {
            // Split in two: chunks stay small.
            let half = chunks[chunk].count / 2
            let tail = Array(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunks.insert(tail, at: chunk + 1)
            starts.insert(starts[chunk] + half, at: chunk + 1)
        }
    }

    /// Splits every chunk of more than twice `recordsPerChunk` records
    /// (the array the records were made from) into chunks of that many.
    private mutating func splitLargeChunks() {
        guard chunks.contains(where: { $0.count > 2 * Self.recordsPerChunk }) else { return }
        var split: [[Record]] = []
        for chunk in chunks {
            guard chunk.count > 2 * Self.recordsPerChunk else {
                split.append(chunk)
                continue
            }
            var start = 0
            while start < chunk.count {
                let end = min(start + Self.recordsPerChunk, chunk.count)
                split.append(Array(chunk[start..<end]))
                start = end
            }
        }
        chunks = split
        starts = [0]
        for chunk in chunks { starts.append(starts[starts.count - 1] + chunk.count) }
    }

    /// The records in order, read once each from the first: O(1) per record.
    func makeIterator() -> FlattenSequence<[[Record]]>.Iterator {
        chunks.joined().makeIterator()
    }
}
