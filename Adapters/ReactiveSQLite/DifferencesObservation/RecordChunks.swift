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
    /// Whether a chunk has more than twice `recordsPerChunk` records (only
    /// the array the records were made from may): the first change splits
    /// it. A flag, so that a change of one record costs no look at every
    /// chunk.
    private var hasLargeChunk: Bool

    /// The number of records of the chunks a change splits an array into.
    static var recordsPerChunk: Int { 1_024 }

    /// The records of `records`, in one chunk that shares their storage.
    init(_ records: [Record] = []) {
        chunks = records.isEmpty ? [] : [records]
        starts = records.isEmpty ? [0] : [0, records.count]
        hasLargeChunk = records.count > 2 * Self.recordsPerChunk
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

    /// Removes the records at `removed` (ascending offsets of the current
    /// records), and inserts `inserted` (ascending offsets of the result,
    /// with their records), in one pass: only the chunks that lose or gain
    /// records are rebuilt.
    ///
    /// A record inserted at offset p, the i-th of the inserted ones, comes
    /// before the kept record p - i (the number of kept records before it),
    /// or after every kept record: it goes into that kept record's chunk.
    ///
    /// - Complexity: O(c + k + b × a), where c is the number of chunks, k
    ///   the number of records removed and inserted, b the number of
    ///   records of a chunk and a the number of chunks rebuilt (one call per
    ///   record would cost O(k × (b + c))).
    mutating func replace(removing removed: [Int], inserting inserted: [(offset: Int, record: Record)]) {
        precondition(
            (removed.first.map { $0 >= 0 } ?? true) && (removed.last.map { $0 < count } ?? true),
            "RecordChunks: a record out of the records")
        precondition(
            (inserted.first.map { $0.offset >= 0 } ?? true)
                && (inserted.last.map { $0.offset < count - removed.count + inserted.count } ?? true),
            "RecordChunks: a record out of the records")
        guard !removed.isEmpty || !inserted.isEmpty else { return }
        splitLargeChunks()
        if chunks.isEmpty {
            self = RecordChunks(inserted.map(\.record))
            splitLargeChunks()
            return
        }
        var newChunks: [[Record]] = []
        newChunks.reserveCapacity(chunks.count + inserted.count / Self.recordsPerChunk + 1)
        var removedIndex = 0
        var insertedIndex = 0
        // The number of kept records in the chunks before the current one.
        var keptBefore = 0
        for chunk in chunks.indices {
            let start = starts[chunk]
            let end = starts[chunk + 1]
            let removedStart = removedIndex
            while removedIndex < removed.count, removed[removedIndex] < end { removedIndex += 1 }
            let keptCount = (end - start) - (removedIndex - removedStart)
            // The inserted records that come before a kept record of this
            // chunk, and, for the last chunk, those after every kept record.
            let insertedStart = insertedIndex
            let isLast = chunk == chunks.count - 1
            while insertedIndex < inserted.count,
                isLast || inserted[insertedIndex].offset - insertedIndex < keptBefore + keptCount
            {
                insertedIndex += 1
            }
            guard removedIndex > removedStart || insertedIndex > insertedStart else {
                newChunks.append(chunks[chunk])
                keptBefore += keptCount
                continue
            }
            var records: [Record] = []
            records.reserveCapacity(keptCount + insertedIndex - insertedStart)
            var nextRemoved = removedStart
            var nextInserted = insertedStart
            var kept = keptBefore
            for (offset, record) in zip(start..<end, chunks[chunk]) {
                if nextRemoved < removedIndex, removed[nextRemoved] == offset {
                    nextRemoved += 1
                    continue
                }
                while nextInserted < insertedIndex, inserted[nextInserted].offset - nextInserted == kept {
                    records.append(inserted[nextInserted].record)
                    nextInserted += 1
                }
                records.append(record)
                kept += 1
            }
            while nextInserted < insertedIndex {
                records.append(inserted[nextInserted].record)
                nextInserted += 1
            }
            keptBefore += keptCount
            // Chunks stay small, and none is empty.
            var part = 0
            while part < records.count {
                let partEnd = records.count - part >= 2 * Self.recordsPerChunk ? part + Self.recordsPerChunk : records.count
                newChunks.append(Array(records[part..<partEnd]))
                part = partEnd
            }
        }
        chunks = newChunks
        starts = [0]
        starts.reserveCapacity(chunks.count + 1)
        for chunk in chunks { starts.append(starts[starts.count - 1] + chunk.count) }
    }

    /// Splits every chunk of more than twice `recordsPerChunk` records
    /// (the array the records were made from) into chunks of that many.
    private mutating func splitLargeChunks() {
        guard hasLargeChunk else { return }
        hasLargeChunk = false
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
