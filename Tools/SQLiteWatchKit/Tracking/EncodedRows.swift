import Foundation
import ReactiveSQLite

/// Rows identified by an integer key (a rowid), in ascending key order,
/// their values kept as compact bytes rather than as `Row` values: a
/// million rows of a few columns take tens of megabytes, about their size
/// in SQLite's own encoding.
///
/// Each row is a length (4 bytes) and, per value, a tag and its payload:
/// NULL, integers in 1, 2, 4 or 8 bytes, reals in 8, texts and blobs with
/// their length. Two rows have equal bytes exactly when their values are
/// stored identically (same storage classes, same integers, same bits of
/// reals, same text or blob bytes).
///
/// - Complexity: `index(of:)` is O(log n); inserting or removing a row
///   moves the keys after it (O(n) memory moves of 16 bytes a row, about a
///   millisecond for a million rows); replacing a row appends its bytes,
///   and the unused bytes are reclaimed when they outgrow the used ones.
struct EncodedRows: Sendable {
    private(set) var keys: [Int64] = []
    /// Where each row's bytes start in `bytes`.
    private var starts: [Int] = []
    private var bytes: [UInt8] = []
    private var unusedByteCount = 0

    var count: Int { keys.count }

    /// The index of the row with `key`, if any.
    func index(of key: Int64) -> Int? {
        let index = lowerBound(of: key)
        return index < keys.count && keys[index] == key ? index : nil
    }

    /// The index of the first row whose key is not less than `key`.
    func lowerBound(of key: Int64) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The encoded bytes of a row.
    func encodedRow(at index: Int) -> ArraySlice<UInt8> {
        let start = starts[index]
        let length = Int(UInt32(bytes[start]) | UInt32(bytes[start + 1]) << 8 | UInt32(bytes[start + 2]) << 16
            | UInt32(bytes[start + 3]) << 24)
        return bytes[(start + 4)..<(start + 4 + length)]
    }

    /// The values of a row.
    func values(at index: Int) -> [DatabaseValue] {
        Self.decode(encodedRow(at: index))
    }

    // MARK: - Building

    /// Appends a row; call `sortByKey()` once all are appended, before any
    /// other use.
    mutating func append(key: Int64, values: [DatabaseValue]) {
        keys.append(key)
        let start = bytes.count
        starts.append(start)
        Self.appendLength(0, to: &bytes)
        Self.encode(values, into: &bytes)
        let length = UInt32(truncatingIfNeeded: bytes.count - start - 4)
        for index in 0..<4 { bytes[start + index] = UInt8(truncatingIfNeeded: length >> (8 * index)) }
    }

    /// Sorts the rows appended by key.
    ///
    /// - Returns: false when two rows have the same key.
    mutating func sortByKey() -> Bool {
        if !zip(keys, keys.dropFirst()).allSatisfy({ $0 < $1 }) {
            let order = keys.indices.sorted { keys[$0] < keys[$1] }
            keys = order.map { keys[$0] }
            starts = order.map { starts[$0] }
        }
        return zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
    }

    // MARK: - Changing

    /// Inserts the row with `key`, or replaces it.
    mutating func set(key: Int64, encoded: [UInt8]) {
        let start = bytes.count
        Self.appendLength(encoded.count, to: &bytes)
        bytes += encoded
        let index = lowerBound(of: key)
        if index < keys.count, keys[index] == key {
            unusedByteCount += encodedRow(at: index).count + 4
            starts[index] = start
        } else {
            keys.insert(key, at: index)
            starts.insert(start, at: index)
        }
        compactIfNeeded()
    }

    /// Removes the row with `key`, if any.
    mutating func remove(key: Int64) {
        guard let index = index(of: key) else { return }
        unusedByteCount += encodedRow(at: index).count + 4
        keys.remove(at: index)
        starts.remove(at: index)
        compactIfNeeded()
    }

    private mutating func compactIfNeeded() {
        guard unusedByteCount > 1 << 16, unusedByteCount > bytes.count / 2 else { return }
        var compacted: [UInt8] = []
        compacted.reserveCapacity(bytes.count - unusedByteCount)
        for index in keys.indices {
            let row = encodedRow(at: index)
            starts[index] = compacted.count
            Self.appendLength(row.count, to: &compacted)
            compacted += row
        }
        bytes = compacted
        unusedByteCount = 0
    }

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        appendLittleEndian(UInt64(UInt32(truncatingIfNeeded: length)), byteCount: 4, to: &bytes)
    }

    // MARK: - Encoding

    private enum Tag: UInt8 {
        case null, integer1, integer2, integer4, integer8, real, text, blob, invalidText
    }

    /// The bytes of a row's values.
    static func encode(_ values: [DatabaseValue], into bytes: inout [UInt8]) {
        for value in values {
            switch value.storage {
            case .null:
                bytes.append(Tag.null.rawValue)
            case .integer(let integer):
                if let small = Int8(exactly: integer) {
                    bytes.append(Tag.integer1.rawValue)
                    bytes.append(UInt8(bitPattern: small))
                } else if let small = Int16(exactly: integer) {
                    bytes.append(Tag.integer2.rawValue)
                    appendLittleEndian(UInt64(UInt16(bitPattern: small)), byteCount: 2, to: &bytes)
                } else if let small = Int32(exactly: integer) {
                    bytes.append(Tag.integer4.rawValue)
                    appendLittleEndian(UInt64(UInt32(bitPattern: small)), byteCount: 4, to: &bytes)
                } else {
                    bytes.append(Tag.integer8.rawValue)
                    appendLittleEndian(UInt64(bitPattern: integer), byteCount: 8, to: &bytes)
                }
            case .real(let real):
                bytes.append(Tag.real.rawValue)
                appendLittleEndian(real.bitPattern, byteCount: 8, to: &bytes)
            case .text(var text):
                if value.isInvalidUTF8Text, let exact = value.textBytes {
                    bytes.append(Tag.invalidText.rawValue)
                    appendLittleEndian(UInt64(exact.count), byteCount: 4, to: &bytes)
                    bytes += exact
                } else {
                    bytes.append(Tag.text.rawValue)
                    text.withUTF8 { utf8 in
                        appendLittleEndian(UInt64(utf8.count), byteCount: 4, to: &bytes)
                        bytes += utf8
                    }
                }
            case .blob(let data):
                bytes.append(Tag.blob.rawValue)
                appendLittleEndian(UInt64(data.count), byteCount: 4, to: &bytes)
                bytes += data
            }
        }
    }

    /// The values of encoded bytes.
    static func decode(_ bytes: ArraySlice<UInt8>) -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        var offset = bytes.startIndex
        func littleEndian(_ count: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in (0..<count).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
            offset += count
            return value
        }
        while offset < bytes.endIndex {
            let tag = Tag(rawValue: bytes[offset])
            offset += 1
            switch tag {
            case .null, nil: values.append(.null)
            case .integer1: values.append(DatabaseValue(storage: .integer(Int64(Int8(bitPattern: UInt8(littleEndian(1)))))))
            case .integer2: values.append(DatabaseValue(storage: .integer(Int64(Int16(bitPattern: UInt16(littleEndian(2)))))))
            case .integer4: values.append(DatabaseValue(storage: .integer(Int64(Int32(bitPattern: UInt32(littleEndian(4)))))))
            case .integer8: values.append(DatabaseValue(storage: .integer(Int64(bitPattern: littleEndian(8)))))
            case .real: values.append(DatabaseValue(storage: .real(Double(bitPattern: littleEndian(8)))))
            case .text, .invalidText, .blob:
                let count = Int(littleEndian(4))
                let payload = bytes[offset..<(offset + count)]
                offset += count
                values.append(tag == .blob ? DatabaseValue(storage: .blob(Data(payload))) : DatabaseValue(textBytes: payload))
            }
        }
        return values
    }

    private static func appendLittleEndian(_ value: UInt64, byteCount: Int, to bytes: inout [UInt8]) {
        for index in 0..<byteCount { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}
