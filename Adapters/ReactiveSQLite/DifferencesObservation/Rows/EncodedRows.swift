#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Rows identified by an integer key (a rowid), in ascending key order,
/// their values kept as compact bytes rather than as `Row` values: about
/// the size of the rows in SQLite's own encoding, and a few bytes more per
/// row.
///
/// The rows are in chunks of at most 128, each one array of bytes: per
/// row, the difference from the previous key (the first row of a chunk:
/// from the chunk's first key, so 0) and the length of its values, both
/// as variable-length integers, then its values. A value is a tag and a
/// payload: NULL, integers in the fewest of 1 to 8 bytes, reals in 8, texts
/// and blobs with their length (in the tag when it is short). Two rows have
/// equal bytes exactly when their values are stored identically (same
/// storage classes, integers, bits of reals, text or blob bytes).
///
/// The chunks are in blocks of at most 64. Successive values of an
/// observation share what did not change: a change of one row copies the
/// list of blocks and the chunks of one block (a retain each), not the
/// list of every chunk (about 10 000 for a million rows).
///
/// - Complexity: finding, replacing, inserting or removing a row is
///   O(log c + B + b), for c chunks of b rows in blocks of B chunks (one
///   chunk is read and written again, the chunk list of one block and the
///   block list are copied when they are shared).
struct EncodedRows: Sequence, Sendable {
    private static let maxChunkRows = 128
    /// The most chunks in a block. Rows appended in order fill chunks and
    /// blocks to three quarters, leaving room for insertions.
    static let maxBlockChunks = 64

    private struct Chunk: Sendable {
        var bytes: [UInt8] = []
        var count = 0
    }

    /// Consecutive chunks; never empty, and none of its chunks is.
    private struct Block: Sendable {
        var chunks: [Chunk] = []
        /// The key of each chunk's first row.
        var firstKeys: [Int64] = []
        /// The number of rows in its chunks.
        var count = 0
    }

    /// Where a chunk is.
    fileprivate struct Place {
        var block: Int
        var chunk: Int
    }

    private var blocks: [Block] = []
    /// The key of each block's first row.
    private var firstKeys: [Int64] = []
    private(set) var count = 0

    // MARK: - Reading

    /// A row: its key and the bytes of its values.
    typealias Element = (key: Int64, encoded: ArraySlice<UInt8>)

    /// The number of rows of each block, in order (see `row(at:blockStarts:)`).
    var blockRowCounts: [Int] { blocks.map { $0.count } }

    /// The row at `position` in key order, given the position of each
    /// block's first row (the running sums of `blockRowCounts`).
    ///
    /// - Complexity: O(log(c / B) + B + b).
    func row(at position: Int, blockStarts: [Int]) -> Element {
        guard let block = Self.lastIndex(in: blockStarts, atMost: position) else {
            preconditionFailure("EncodedRows position out of range")
        }
        var offset = position - blockStarts[block]
        for chunk in blocks[block].chunks.indices {
            let rowCount = blocks[block].chunks[chunk].count
            if offset < rowCount {
                var reader = reader(at: Place(block: block, chunk: chunk))
                for _ in 0..<offset { _ = reader.next() }
                if let row = reader.next() { return row }
                break
            }
            offset -= rowCount
        }
        preconditionFailure("EncodedRows position out of range")
    }

    /// The index of the last element of ascending `values` that is at most
    /// `value`; nil when every one is greater.
    private static func lastIndex<Value: Comparable>(in values: [Value], atMost value: Value) -> Int? {
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] <= value { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : low - 1
    }

    /// The chunk that holds `key` if any row does: the last chunk whose
    /// first key is at most `key`.
    private func place(for key: Int64) -> Place? {
        guard let block = Self.lastIndex(in: firstKeys, atMost: key),
              let chunk = Self.lastIndex(in: blocks[block].firstKeys, atMost: key)
        else { return nil }
        return Place(block: block, chunk: chunk)
    }

    /// The chunk after the one at `place` (past the last block after the last chunk).
    fileprivate func place(after place: Place) -> Place {
        place.chunk + 1 < blocks[place.block].chunks.count
            ? Place(block: place.block, chunk: place.chunk + 1) : Place(block: place.block + 1, chunk: 0)
    }

    fileprivate func reader(at place: Place) -> ChunkReader {
        ChunkReader(bytes: blocks[place.block].chunks[place.chunk].bytes, key: blocks[place.block].firstKeys[place.chunk])
    }

    /// The rows of the chunk at `place`, in key order.
    private func rows(at place: Place) -> [Element] {
        var rows: [Element] = []
        rows.reserveCapacity(blocks[place.block].chunks[place.chunk].count)
        var reader = reader(at: place)
        while let row = reader.next() { rows.append(row) }
        return rows
    }

    /// The values of the row with `key`, encoded; nil when there is none.
    func encodedRow(forKey key: Int64) -> ArraySlice<UInt8>? {
        guard let place = place(for: key) else { return nil }
        var reader = reader(at: place)
        while let row = reader.next(), row.key <= key {
            if row.key == key { return row.encoded }
        }
        return nil
    }

    /// The keys of the rows in `range`, ascending.
    func keys(in range: ClosedRange<Int64>) -> [Int64] {
        var keys: [Int64] = []
        var place = place(for: range.lowerBound) ?? Place(block: 0, chunk: 0)
        while place.block < blocks.count, blocks[place.block].firstKeys[place.chunk] <= range.upperBound {
            var reader = reader(at: place)
            while let row = reader.next(), row.key <= range.upperBound {
                if row.key >= range.lowerBound { keys.append(row.key) }
            }
            place = self.place(after: place)
        }
        return keys
    }

    /// The rows, in key order.
    struct Iterator: IteratorProtocol {
        fileprivate let rows: EncodedRows
        fileprivate var nextPlace = Place(block: 0, chunk: 0)
        fileprivate var reader: ChunkReader?

        mutating func next() -> Element? {
            while true {
                if let row = reader?.next() { return row }
                guard nextPlace.block < rows.blocks.count else { return nil }
                reader = rows.reader(at: nextPlace)
                nextPlace = rows.place(after: nextPlace)
            }
        }
    }

    func makeIterator() -> Iterator { Iterator(rows: self) }

    var underestimatedCount: Int { count }

    // MARK: - Building

    /// A builder of rows that come in any order.
    struct Builder {
        private var rows = EncodedRows()
        /// The rows from the first one that came after a greater key on,
        /// to sort at the end.
        private var unordered: UnorderedRows?
        private var scratch: [UInt8] = []
        private var lastKey: Int64?

        init() {}

        /// Adds a row; `encode` appends its values' bytes (see `encode(_:into:)`).
        mutating func append(key: Int64, encode: (inout [UInt8]) -> Void) {
            if unordered == nil, lastKey.map({ $0 < key }) ?? true {
                scratch.removeAll(keepingCapacity: true)
                encode(&scratch)
                rows.appendLast(key: key, encoded: scratch[...])
                lastKey = key
            } else {
                if unordered == nil { unordered = UnorderedRows() }
                unordered!.append(key: key, encode: encode)
            }
        }

        /// Whether the rows so far came in ascending key order.
        var isInKeyOrder: Bool { unordered == nil }

        /// The rows, sorted by key; nil when two rows have the same key.
        ///
        /// - Complexity: O(n + m log m), where m rows came out of order.
        consuming func finish() -> EncodedRows? {
            guard var unordered else {
                rows.closeLastChunk()
                return rows
            }
            var merged = EncodedRows()
            var ordered = rows.makeIterator()
            var orderedRow = ordered.next()
            var lastKey: Int64?
            func append(_ row: Element) -> Bool {
                guard lastKey.map({ $0 < row.key }) ?? true else { return false }
                merged.appendLast(key: row.key, encoded: row.encoded)
                lastKey = row.key
                return true
            }
            for row in unordered.sorted() {
                while let next = orderedRow, next.key <= row.key {
                    guard append(next) else { return nil }
                    orderedRow = ordered.next()
                }
                guard append(row) else { return nil }
            }
            while let next = orderedRow {
                guard append(next) else { return nil }
                orderedRow = ordered.next()
            }
            merged.closeLastChunk()
            return merged
        }
    }

    /// Rows in any order, their bytes in one buffer (no allocation per row),
    /// sorted by key when read.
    struct UnorderedRows {
        private var bytes: [UInt8] = []
        private var index: [(key: Int64, start: Int, end: Int)] = []

        init() {}

        /// Adds a row; `encode` appends its values' bytes.
        mutating func append(key: Int64, encode: (inout [UInt8]) -> Void) {
            let start = bytes.count
            encode(&bytes)
            index.append((key, start, bytes.count))
        }

        /// The rows, in ascending key order (rows with the same key in the
        /// order they came).
        ///
        /// - Complexity: O(n log n) for the first sort.
        mutating func sorted() -> some Sequence<Element> {
            // A sort on keys only can move rows with equal keys: tell them
            // apart by their place in the buffer.
            index.sort { ($0.key, $0.start) < ($1.key, $1.start) }
            return index.lazy.map { [bytes] in ($0.key, bytes[$0.start..<$0.end]) }
        }
    }

    /// Appends a row whose key is greater than every key, filling chunks
    /// and blocks to three quarters (room for insertions).
    private mutating func appendLast(key: Int64, encoded: ArraySlice<UInt8>) {
        if blocks.last?.chunks.last.map({ $0.count >= Self.maxChunkRows * 3 / 4 }) ?? true {
            // The size of the previous chunk, and a little more: most chunks
            // then grow without moving (moves leave the heap fragmented).
            let expected = blocks.last?.chunks.last.map { $0.bytes.count + $0.bytes.count / 8 } ?? 0
            closeLastChunk()
            if blocks.last.map({ $0.chunks.count >= Self.maxBlockChunks * 3 / 4 }) ?? true {
                blocks.append(Block())
                firstKeys.append(key)
            }
            var chunk = Chunk()
            chunk.bytes.reserveCapacity(expected)
            blocks[blocks.count - 1].chunks.append(chunk)
            blocks[blocks.count - 1].firstKeys.append(key)
            lastAppendedKey = key
        }
        let block = blocks.count - 1
        let chunk = blocks[block].chunks.count - 1
        Self.appendVarint(UInt64(bitPattern: key &- lastAppendedKey), to: &blocks[block].chunks[chunk].bytes)
        Self.appendVarint(UInt64(encoded.count), to: &blocks[block].chunks[chunk].bytes)
        blocks[block].chunks[chunk].bytes += encoded
        blocks[block].chunks[chunk].count += 1
        blocks[block].count += 1
        lastAppendedKey = key
        count += 1
    }

    /// Gives the last chunk's bytes an array of their size (appending
    /// leaves up to as much unused capacity).
    private mutating func closeLastChunk() {
        guard let block = blocks.indices.last, let chunk = blocks[block].chunks.indices.last,
              blocks[block].chunks[chunk].bytes.capacity > blocks[block].chunks[chunk].bytes.count + 64
        else { return }
        blocks[block].chunks[chunk].bytes = Array(blocks[block].chunks[chunk].bytes[...])
    }

    /// The key of the last row appended by `appendLast`.
    private var lastAppendedKey: Int64 = 0

    // MARK: - Changing

    /// Applies changes sorted by ascending key, each key once: the new
    /// bytes of a row (inserted or replaced), or nil to remove it.
    ///
    /// - Complexity: O(k (log c + B + b)) for k changes when they are few;
    ///   otherwise O(n + k), the rows rebuilt in one pass.
    mutating func apply(_ changes: some Collection<(key: Int64, encoded: ArraySlice<UInt8>?)>) {
        if changes.count <= Self.maxChunkRows || changes.count <= count / 32 {
            for change in changes {
                if let encoded = change.encoded { set(key: change.key, encoded: encoded) } else { remove(key: change.key) }
            }
            return
        }
        var builder = Builder()
        var old = makeIterator()
        var oldRow = old.next()
        for change in changes {
            while let row = oldRow, row.key < change.key {
                builder.append(key: row.key) { $0 += row.encoded }
                oldRow = old.next()
            }
            if let row = oldRow, row.key == change.key { oldRow = old.next() }
            if let encoded = change.encoded { builder.append(key: change.key) { $0 += encoded } }
        }
        while let row = oldRow {
            builder.append(key: row.key) { $0 += row.encoded }
            oldRow = old.next()
        }
        guard let rebuilt = builder.finish() else {
            preconditionFailure("changes applied to encoded rows must be sorted by key, each key once")
        }
        self = rebuilt
    }

    /// Inserts the row with `key`, or replaces it.
    mutating func set(key: Int64, encoded: some Collection<UInt8>) {
        guard !blocks.isEmpty else {
            blocks = [Block(chunks: [Chunk()], firstKeys: [key])]
            firstKeys = [key]
            rewrite(Place(block: 0, chunk: 0), with: [(key, ArraySlice(encoded))])
            count = 1
            return
        }
        // A key before every other goes to the first chunk.
        let place = place(for: key) ?? Place(block: 0, chunk: 0)
        var rows = self.rows(at: place)
        var low = 0
        while low < rows.count, rows[low].key < key { low += 1 }
        if low < rows.count, rows[low].key == key {
            rows[low].encoded = ArraySlice(encoded)
        } else {
            rows.insert((key, ArraySlice(encoded)), at: low)
            count += 1
        }
        guard rows.count > Self.maxChunkRows else {
            rewrite(place, with: rows[...])
            return
        }
        let half = rows.count / 2
        let next = Place(block: place.block, chunk: place.chunk + 1)
        blocks[place.block].chunks.insert(Chunk(), at: next.chunk)
        blocks[place.block].firstKeys.insert(rows[half].key, at: next.chunk)
        rewrite(next, with: rows[half...])
        rewrite(place, with: rows[..<half])
        if blocks[place.block].chunks.count > Self.maxBlockChunks { splitBlock(place.block) }
    }

    /// Moves the second half of a block's chunks to a new block after it.
    private mutating func splitBlock(_ index: Int) {
        let half = blocks[index].chunks.count / 2
        let chunks = Array(blocks[index].chunks[half...])
        let moved = Block(
            chunks: chunks, firstKeys: Array(blocks[index].firstKeys[half...]),
            count: chunks.reduce(0) { $0 + $1.count })
        blocks[index].chunks.removeSubrange(half...)
        blocks[index].firstKeys.removeSubrange(half...)
        blocks[index].count -= moved.count
        blocks.insert(moved, at: index + 1)
        firstKeys.insert(moved.firstKeys[0], at: index + 1)
    }

    /// Removes the row with `key`, if any.
    mutating func remove(key: Int64) {
        guard let place = place(for: key) else { return }
        var rows = self.rows(at: place)
        guard let index = rows.firstIndex(where: { $0.key == key }) else { return }
        rows.remove(at: index)
        count -= 1
        guard rows.isEmpty else {
            rewrite(place, with: rows[...])
            return
        }
        blocks[place.block].chunks.remove(at: place.chunk)
        blocks[place.block].firstKeys.remove(at: place.chunk)
        blocks[place.block].count -= 1
        if blocks[place.block].chunks.isEmpty {
            blocks.remove(at: place.block)
            firstKeys.remove(at: place.block)
        } else if place.chunk == 0 {
            firstKeys[place.block] = blocks[place.block].firstKeys[0]
        }
    }

    /// Writes the chunk at `place` again with `rows` (at least one).
    private mutating func rewrite(_ place: Place, with rows: ArraySlice<Element>) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rows.reduce(0) { $0 + $1.encoded.count + 3 })
        var previous = rows.first?.key ?? 0
        for row in rows {
            Self.appendVarint(UInt64(bitPattern: row.key &- previous), to: &bytes)
            Self.appendVarint(UInt64(row.encoded.count), to: &bytes)
            bytes += row.encoded
            previous = row.key
        }
        blocks[place.block].count += rows.count - blocks[place.block].chunks[place.chunk].count
        blocks[place.block].chunks[place.chunk] = Chunk(bytes: bytes, count: rows.count)
        if let first = rows.first {
            blocks[place.block].firstKeys[place.chunk] = first.key
            if place.chunk == 0 { firstKeys[place.block] = first.key }
        }
    }

    // MARK: - Variable-length integers

    /// Reads the variable-length integer at `offset`, and moves past it.
    private static func readVarint<Bytes: RandomAccessCollection<UInt8>>(
        _ bytes: Bytes, at offset: inout Int
    ) -> UInt64 where Bytes.Index == Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Reads the rows of a chunk's bytes.
    fileprivate struct ChunkReader {
        let bytes: [UInt8]
        var key: Int64
        var offset = 0

        init(bytes: [UInt8], key: Int64) {
            self.bytes = bytes
            self.key = key
        }

        mutating func next() -> Element? {
            guard offset < bytes.count else { return nil }
            key = key &+ Int64(bitPattern: varint())
            let length = Int(varint())
            let start = offset
            offset += length
            return (key, bytes[start..<offset])
        }

        private mutating func varint() -> UInt64 {
            EncodedRows.readVarint(bytes, at: &offset)
        }
    }

    // MARK: - Values

    /// The first byte of a value: its storage class, and the size of its
    /// payload. Texts and blobs shorter than `shortLimit` bytes keep their
    /// length in it.
    private enum Tag {
        static let null: UInt8 = 0
        /// 1 to 8: an integer in that many bytes, little-endian, sign-extended.
        static let integer: UInt8 = 0
        static let real: UInt8 = 9
        /// A text or blob whose length follows, as a variable-length integer.
        static let longText: UInt8 = 10
        static let longBlob: UInt8 = 11
        /// 16 + length: a text of fewer than `shortLimit` bytes.
        static let shortText: UInt8 = 16
        /// 128 + length: a blob of fewer than `shortLimit` bytes.
        static let shortBlob: UInt8 = 128
        static let shortLimit = 112
    }

    /// Appends the bytes of the values of `row` to `bytes`, skipping the
    /// value at `skipped` (the key, kept apart).
    static func encode(_ row: RawRow, skipping skipped: Int? = nil, into bytes: inout [UInt8]) {
        for index in 0..<row.count where index != skipped {
            encode(row[index], into: &bytes)
        }
    }

    /// Appends the bytes of `values` to `bytes`, skipping the value at
    /// `skipped` (the key, kept apart): the same bytes as the row of a
    /// statement that returns these values.
    static func encode(_ values: [DatabaseValue], skipping skipped: Int? = nil, into bytes: inout [UInt8]) {
        for (index, value) in values.enumerated() where index != skipped {
            switch value.storage {
            case .null: encode(.null, into: &bytes)
            case .integer(let integer): encode(.integer(integer), into: &bytes)
            case .real(let real): encode(.real(real), into: &bytes)
            case .text(var text):
                // A text that is not valid UTF-8 keeps its exact bytes apart from its repaired `String`.
                if value.isInvalidUTF8Text, let exact = value.textBytes {
                    exact.withUnsafeBytes { encode(.text($0), into: &bytes) }
                } else {
                    text.withUTF8 { encode(.text(UnsafeRawBufferPointer($0)), into: &bytes) }
                }
            case .blob(let data):
                data.withUnsafeBytes { encode(.blob($0), into: &bytes) }
            }
        }
    }

    /// Appends the tag and payload of `value`.
    @inline(__always)
    private static func encode(_ value: RawValue, into bytes: inout [UInt8]) {
        switch value {
        case .null:
            bytes.append(Tag.null)
        case .integer(let integer):
            // The fewest bytes that keep the sign: the bits above them
            // repeat the sign bit.
            let significantBits = 65 - (integer < 0 ? (~integer).leadingZeroBitCount : integer.leadingZeroBitCount)
            let byteCount = Swift.max(1, (significantBits + 7) / 8)
            bytes.append(Tag.integer + UInt8(byteCount))
            appendLittleEndian(UInt64(bitPattern: integer), byteCount: byteCount, to: &bytes)
        case .real(let real):
            bytes.append(Tag.real)
            appendLittleEndian(real.bitPattern, byteCount: 8, to: &bytes)
        case .text(let payload), .blob(let payload):
            let isText = if case .text = value { true } else { false }
            if payload.count < Tag.shortLimit {
                bytes.append((isText ? Tag.shortText : Tag.shortBlob) + UInt8(payload.count))
            } else {
                bytes.append(isText ? Tag.longText : Tag.longBlob)
                appendVarint(UInt64(payload.count), to: &bytes)
            }
            bytes.append(contentsOf: payload)
        }
    }

    /// The values of encoded bytes, with `key` inserted at `keyIndex`
    /// when it is not nil.
    static func decode(_ bytes: ArraySlice<UInt8>, key: Int64? = nil, at keyIndex: Int = 0) -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        var offset = bytes.startIndex
        func littleEndian(_ count: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in (0..<count).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
            offset += count
            return value
        }
        func payload(_ count: Int) -> ArraySlice<UInt8> {
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }
        while offset < bytes.endIndex {
            if let key, values.count == keyIndex { values.append(DatabaseValue(storage: .integer(key))) }
            let tag = bytes[offset]
            offset += 1
            switch tag {
            case Tag.null:
                values.append(.null)
            case 1...8:
                let shift = UInt64(64 - 8 * Int(tag))
                let integer = Int64(bitPattern: littleEndian(Int(tag)) << shift) >> shift
                values.append(DatabaseValue(storage: .integer(integer)))
            case Tag.real:
                values.append(DatabaseValue(storage: .real(Double(bitPattern: littleEndian(8)))))
            case Tag.longText:
                values.append(DatabaseValue(textBytes: payload(Int(readVarint(bytes, at: &offset)))))
            case Tag.longBlob:
                values.append(DatabaseValue(storage: .blob(Data(payload(Int(readVarint(bytes, at: &offset)))))))
            case Tag.shortText..<(Tag.shortText + UInt8(Tag.shortLimit)):
                values.append(DatabaseValue(textBytes: payload(Int(tag - Tag.shortText))))
            default:
                values.append(DatabaseValue(storage: .blob(Data(payload(Int(tag - Tag.shortBlob))))))
            }
        }
        if let key, values.count == keyIndex { values.append(DatabaseValue(storage: .integer(key))) }
        return values
    }

    private static func appendLittleEndian(_ value: UInt64, byteCount: Int, to bytes: inout [UInt8]) {
        for index in 0..<byteCount { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}
