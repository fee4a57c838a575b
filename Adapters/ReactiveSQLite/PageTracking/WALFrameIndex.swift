/// The pages of a write-ahead log: for each page, the latest frame that
/// holds it, in the log's current generation, read from the frame headers
/// (each 24 bytes, big-endian: page number, database size after a commit
/// frame or 0, two salts, two checksums).
///
/// Reads only the frames it has not read: a commit of k pages costs k
/// reads of 24 bytes.
package struct WALFrameIndex: Sendable {
    /// The pages written since the previous state, and the number of commits.
    package struct Advance: Sendable {
        package var pages: Set<UInt32> = []
        package var commits = 0
    }

    package private(set) var salts: [UInt8] = []
    /// The frames read, 1 to `indexedFrames`, all of generation `salts`.
    package private(set) var indexedFrames: UInt32 = 0
    private var latestFrames: [UInt32: UInt32] = [:]
    private var pageSize = 0

    package init() {}

    /// Reads the frames up to `header.lastFrame`.
    ///
    /// All or nothing: when it throws, the index is as it was before the
    /// call (no frame of the failed advance is recorded, so no page goes
    /// unreported by a later call).
    ///
    /// - Returns: The pages of the frames read and their commits; when the
    ///   log restarted since the last call (new salts), those of the new
    ///   generation, from its first frame.
    /// - Throws: `DatabaseError` when the log cannot be read;
    ///   `TablePageError` when it does not hold what the header says (no
    ///   such frame, or a frame of another generation).
    package mutating func advance(to header: WALIndexHeader, in db: Database) throws -> Advance {
        let restarts = header.salts != salts || header.pageSize != pageSize || header.lastFrame < indexedFrames
        let firstFrame = restarts ? 1 : indexedFrames + 1
        // The frames' pages are read first, and recorded once all are read.
        var pages: [UInt32] = []
        var advance = Advance()
        var frame = firstFrame
        while frame <= header.lastFrame {
            guard let bytes = try db.readStoredFile(
                .journal, offset: Self.offset(of: frame, pageSize: header.pageSize), count: 24),
                bytes[8..<16].elementsEqual(header.salts)
            else {
                throw TablePageError()
            }
            let page = Self.bigEndian(bytes, 0)
            pages.append(page)
            advance.pages.insert(page)
            if Self.bigEndian(bytes, 4) != 0 { advance.commits += 1 }
            frame += 1
        }
        if restarts {
            salts = header.salts
            pageSize = header.pageSize
            indexedFrames = 0
            latestFrames.removeAll(keepingCapacity: true)
        }
        for (offset, page) in pages.enumerated() {
            latestFrames[page] = firstFrame + UInt32(offset)
        }
        indexedFrames = header.lastFrame
        return advance
    }

    /// The latest frame of `page` read so far, if any.
    package func frame(of page: UInt32) -> UInt32? {
        latestFrames[page]
    }

    /// The offset of a frame's header in the log.
    package func offset(of frame: UInt32) -> Int64 {
        Self.offset(of: frame, pageSize: pageSize)
    }

    private static func offset(of frame: UInt32, pageSize: Int) -> Int64 {
        32 + Int64(frame - 1) * Int64(24 + pageSize)
    }

    static func bigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }
}
