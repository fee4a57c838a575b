/// Reads the fields of one pgoutput message in order: big-endian integers,
/// NUL-terminated UTF-8 strings and counted byte runs, each one checked
/// against the bytes that remain, so that a malformed message throws a
/// `PgOutputDecodingError` at the field it breaks, and no count read from
/// the message makes it allocate more than the message holds.
struct PgOutputReader {
    /// The message, its tag at index 0.
    private let bytes: [UInt8]

    /// The index of the next byte to read.
    private(set) var offset = 0

    /// A reader at the first byte of `bytes`.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// How many bytes are left to read.
    var remainingCount: Int { bytes.count - offset }

    /// An error at `offset` (by default, the next byte to read).
    func error(_ reason: String, at offset: Int? = nil) -> PgOutputDecodingError {
        PgOutputDecodingError(offset: offset ?? self.offset, reason: reason)
    }

    /// Throws unless `count` more bytes remain; `field` names what needs them.
    private func requireBytes(_ count: Int, for field: @autoclosure () -> String) throws(PgOutputDecodingError) {
        guard count <= remainingCount else {
            let unit = count == 1 ? "byte" : "bytes"
            throw error("truncated: \(field()) needs \(count) \(unit), \(remainingCount) remain")
        }
    }

    /// Reads one byte.
    mutating func readUInt8(_ field: @autoclosure () -> String) throws(PgOutputDecodingError) -> UInt8 {
        try requireBytes(1, for: field())
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads a big-endian unsigned integer of `T`'s width.
    private mutating func readBigEndian<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, _ field: @autoclosure () -> String
    ) throws(PgOutputDecodingError) -> T {
        let width = T.bitWidth / 8
        try requireBytes(width, for: field())
        var value: T = 0
        for byte in bytes[offset..<offset + width] {
            value = value &<< 8 | T(byte)
        }
        offset += width
        return value
    }

    /// Reads a big-endian `Int16`.
    mutating func readInt16(_ field: @autoclosure () -> String) throws(PgOutputDecodingError) -> Int16 {
        Int16(bitPattern: try readBigEndian(UInt16.self, field()))
    }

    /// Reads a big-endian `UInt32` (an OID, a transaction ID).
    mutating func readUInt32(_ field: @autoclosure () -> String) throws(PgOutputDecodingError) -> UInt32 {
        try readBigEndian(UInt32.self, field())
    }

    /// Reads a big-endian `Int32`.
    mutating func readInt32(_ field: @autoclosure () -> String) throws(PgOutputDecodingError) -> Int32 {
        Int32(bitPattern: try readBigEndian(UInt32.self, field()))
    }

    /// Reads a big-endian `UInt64` (an LSN).
    mutating func readUInt64(_ field: @autoclosure () -> String) throws(PgOutputDecodingError) -> UInt64 {
        try readBigEndian(UInt64.self, field())
    }

    /// Reads a big-endian `Int64` (a timestamp).
    mutating func readInt64(_ field: @autoclosure () -> String) throws(PgOutputDecodingError) -> Int64 {
        Int64(bitPattern: try readBigEndian(UInt64.self, field()))
    }

    /// Reads a NUL-terminated string, which must be valid UTF-8.
    mutating func readString(_ field: @autoclosure () -> String) throws(PgOutputDecodingError) -> String {
        guard let end = bytes[offset...].firstIndex(of: 0) else {
            throw error("truncated: \(field()) has no terminating NUL")
        }
        guard let string = String(validating: bytes[offset..<end], as: UTF8.self) else {
            throw error("\(field()) is not valid UTF-8")
        }
        offset = end + 1
        return string
    }

    /// Reads a big-endian `Int32` length, then as many bytes.
    ///
    /// Throws when the length is negative or exceeds the bytes that remain,
    /// before anything is allocated.
    mutating func readCountedBytes(_ field: @autoclosure () -> String) throws(PgOutputDecodingError) -> [UInt8] {
        let lengthOffset = offset
        let length = try readInt32("the length of \(field())")
        guard length >= 0 else {
            throw error("the length of \(field()) is negative (\(length))", at: lengthOffset)
        }
        try requireBytes(Int(length), for: field())
        defer { offset += Int(length) }
        return Array(bytes[offset..<offset + Int(length)])
    }

    /// Throws when `count`, read at `countOffset`, is negative, or when the
    /// bytes that remain cannot hold that many items of at least
    /// `minimumItemSize` bytes each: past this check, a caller can reserve
    /// `count` items without allocating more than the message holds.
    func validateCount(
        _ count: Int, at countOffset: Int, of items: String, minimumItemSize: Int
    ) throws(PgOutputDecodingError) {
        guard count >= 0 else {
            throw error("the number of \(items) is negative (\(count))", at: countOffset)
        }
        guard count <= remainingCount / minimumItemSize else {
            throw error(
                "\(count) \(items) announced, but \(remainingCount) bytes remain "
                    + "(at least \(minimumItemSize) each)",
                at: countOffset)
        }
    }

    /// Throws unless every byte was read.
    func requireEnd() throws(PgOutputDecodingError) {
        guard remainingCount == 0 else {
            throw error("\(remainingCount) trailing bytes after the message")
        }
    }

    /// A byte as people read it in the protocol's documentation: `'N'` when
    /// it is printable ASCII, `0x4e` otherwise.
    static func describe(_ byte: UInt8) -> String {
        if byte >= 0x20, byte < 0x7F {
            return "'\(Character(Unicode.Scalar(byte)))'"
        }
        return "0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
    }
}
