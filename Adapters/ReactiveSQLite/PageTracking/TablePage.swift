/// One page of a table b-tree (a rowid table), decoded from its bytes as
/// SQLite's file format describes it: an interior page lists its children,
/// a leaf page the rowids of its rows and the first overflow page of rows
/// too large to fit in it.
///
/// Every offset is checked: bytes that are not a table page decode as
/// `nil` or throw, never trap.
package enum TablePage: Equatable, Sendable {
    case interior(children: [UInt32])
    /// Rowids in b-tree (ascending) order; `overflows`: for each row that
    /// spills, its rowid and the first page of its overflow chain.
    case leaf(rowIDs: [Int64], overflows: [Overflow])

    package struct Overflow: Equatable, Sendable {
        package var rowID: Int64
        package var firstPage: UInt32
    }

    /// Decodes a page; nil when it is not a table b-tree page (an index
    /// page, an overflow or freelist page).
    ///
    /// - Parameters:
    ///   - number: The page number (page 1 starts after the 100-byte file header).
    ///   - usableSize: The page size less the reserved bytes at the end of each page.
    /// - Throws: `TablePageError` for a table page whose cells do not fit.
    package init?(bytes: [UInt8], number: UInt32, usableSize: Int) throws {
        let start = number == 1 ? 100 : 0
        guard bytes.count > start + 8 else { return nil }
        let kind = bytes[start]
        guard kind == 5 || kind == 13 else { return nil }
        let reader = PageReader(bytes: bytes, limit: usableSize)
        let cellCount = Int(try reader.uint16(at: start + 3))
        let pointers = start + (kind == 5 ? 12 : 8)
        if kind == 5 {
            var children: [UInt32] = []
            children.reserveCapacity(cellCount + 1)
            for cell in 0..<cellCount {
                let offset = Int(try reader.uint16(at: pointers + 2 * cell))
                children.append(try reader.uint32(at: offset))
            }
            children.append(try reader.uint32(at: start + 8))
            self = .interior(children: children)
            return
        }
        var rowIDs: [Int64] = []
        rowIDs.reserveCapacity(cellCount)
        var overflows: [Overflow] = []
        // The largest payload stored in the page, and the least part of a
        // larger one kept in it (SQLite's X and M for table leaves).
        let maxLocal = usableSize - 35
        let minLocal = (usableSize - 12) * 32 / 255 - 23
        for cell in 0..<cellCount {
            var offset = Int(try reader.uint16(at: pointers + 2 * cell))
            let payload = try reader.varint(at: &offset)
            let rowID = Int64(bitPattern: try reader.varint(at: &offset))
            rowIDs.append(rowID)
            guard payload > UInt64(maxLocal) else { continue }
            guard payload < 1 << 40 else { throw TablePageError() }
            let size = Int(payload)
            let kept = minLocal + (size - minLocal) % (usableSize - 4)
            let local = kept <= maxLocal ? kept : minLocal
            overflows.append(Overflow(rowID: rowID, firstPage: try reader.uint32(at: offset + local)))
        }
        self = .leaf(rowIDs: rowIDs, overflows: overflows)
    }

    /// The next page of an overflow chain (0 at its end), from an overflow page.
    package static func nextOverflowPage(in bytes: [UInt8]) throws -> UInt32 {
        try PageReader(bytes: bytes, limit: bytes.count).uint32(at: 0)
    }
}

/// Pages, or a write-ahead log, that do not hold what the page tracking
/// expects (bytes that are not a table page, a frame that is missing or of
/// another generation): the changes cannot be known from the pages.
package struct TablePageError: Error, Sendable {}

/// Bounds-checked reads of a page's big-endian numbers and varints.
private struct PageReader {
    let bytes: [UInt8]
    let limit: Int

    func uint16(at offset: Int) throws -> UInt16 {
        guard offset >= 0, offset + 2 <= min(limit, bytes.count) else { throw TablePageError() }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    func uint32(at offset: Int) throws -> UInt32 {
        guard offset >= 0, offset + 4 <= min(limit, bytes.count) else { throw TablePageError() }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// SQLite's varint: 1 to 9 bytes, 7 bits each and all 8 of the ninth.
    func varint(at offset: inout Int) throws -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<9 {
            guard offset >= 0, offset < min(limit, bytes.count) else { throw TablePageError() }
            let byte = bytes[offset]
            offset += 1
            if index == 8 { return value << 8 | UInt64(byte) }
            value = value << 7 | UInt64(byte & 0x7f)
            if byte & 0x80 == 0 { return value }
        }
        return value
    }
}
