/// Why a pgoutput message could not be decoded, and where.
///
/// `PgOutputMessage(decoding:)` throws it for every malformed input: a
/// message cut short, an unknown tag or kind byte, a count that the bytes
/// cannot hold, a string without its terminating NUL or not UTF-8, bytes
/// left after the message. Decoding never traps on the input.
public struct PgOutputDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The position, from the message's first byte (its tag), of the field
    /// that could not be read.
    public var offset: Int

    /// What was wrong, in words (for example
    /// `"truncated: the relation ID needs 4 bytes, 2 remain"`).
    public var reason: String

    /// Creates an error at `offset` of the message, for `reason`.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// The reason and the offset, in one line.
    public var description: String {
        "malformed pgoutput message at byte \(offset): \(reason)"
    }
}
