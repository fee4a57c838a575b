/// The header of a WAL database's wal-index (the start of its `-shm`
/// file): which frames of the write-ahead log make the latest committed
/// state, as SQLite's file format documents it.
///
/// Layout, in the machine's byte order: two copies of a 48-byte header
/// (version 3007000, unused, change counter, initialized flag, checksum
/// byte order, page size, last valid frame, page count, frame checksum,
/// salts, header checksum), then the checkpoint information (frames copied
/// back to the database file, read marks, locks).
///
/// A reader copies the bytes while writers may change them; the copy is
/// accepted only when both header copies are equal, initialized, and the
/// checksum matches (SQLite's own readers do the same).
package struct WALIndexHeader: Equatable, Sendable {
    /// The number of bytes to read: both header copies and the checkpoint
    /// information up to the backfill counter.
    package static let byteCount = 100

    /// The first 48 bytes, which identify a committed state (two states
    /// with equal bytes are the same state).
    package var state: [UInt8]
    /// Incremented by SQLite at each commit (not when the log restarts).
    package var changeCounter: UInt32
    package var pageSize: Int
    /// The last frame of the log that belongs to the committed state.
    package var lastFrame: UInt32
    /// The log's salts, as the log's header and frames store them (big-endian bytes).
    package var salts: [UInt8]
    /// The frames already copied back into the database file.
    package var backfilledFrames: UInt32

    /// Decodes a copy of the wal-index; nil when the copy is torn (a
    /// writer changed it meanwhile), uninitialized, or of another version.
    package init?(bytes: [UInt8]) {
        guard bytes.count >= Self.byteCount, bytes[0..<48].elementsEqual(bytes[48..<96]) else { return nil }
        func word(_ offset: Int) -> UInt32 {
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
                | UInt32(bytes[offset + 3]) << 24
        }
        // Little-endian machines only (the words are in native order).
        guard word(0) == 3_007_000, bytes[12] != 0 else { return nil }
        var first: UInt32 = 0
        var second: UInt32 = 0
        for offset in stride(from: 0, to: 40, by: 8) {
            first = first &+ word(offset) &+ second
            second = second &+ word(offset + 4) &+ first
        }
        guard first == word(40), second == word(44) else { return nil }
        state = Array(bytes[0..<48])
        changeCounter = word(8)
        let size = Int(UInt16(bytes[14]) | UInt16(bytes[15]) << 8)
        pageSize = size == 1 ? 65536 : size
        // SQLite's page sizes: powers of two from 512 to 65536.
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else { return nil }
        lastFrame = word(16)
        salts = Array(bytes[32..<40])
        backfilledFrames = word(96)
    }
}
