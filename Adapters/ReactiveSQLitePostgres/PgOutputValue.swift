/// One column's value in a `PgOutputTuple`.
public enum PgOutputValue: Equatable, Sendable {
    /// SQL `NULL` (`n`).
    case null

    /// A TOASTed value that the change did not modify: PostgreSQL does not
    /// send it (`u`). The column keeps the value it had.
    case unchangedToast

    /// The text representation (`t`), UTF-8 as the server sends it (the
    /// type's output function: `t` and `f` for booleans, `\x...` for bytea,
    /// timestamps in the session's `DateStyle` and `TimeZone`).
    case text(String)

    /// The binary representation (`b`), when the `binary` option is on (the
    /// type's send function: big-endian integers, for example).
    case binary([UInt8])
}

extension PgOutputValue {
    /// The fewest bytes a value takes: its kind byte (`n` or `u`).
    static let minimumSize = 1

    /// Reads one value: a kind byte, then for `t` and `b` an Int32 length
    /// and as many bytes. `column` names the value in errors.
    init(reading reader: inout PgOutputReader, column: Int) throws(PgOutputDecodingError) {
        let kindOffset = reader.offset
        let kind = try reader.readUInt8("the kind of value \(column)")
        switch kind {
        case UInt8(ascii: "n"):
            self = .null
        case UInt8(ascii: "u"):
            self = .unchangedToast
        case UInt8(ascii: "t"):
            let textOffset = reader.offset + 4
            let bytes = try reader.readCountedBytes("value \(column)")
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw reader.error("the text of value \(column) is not valid UTF-8", at: textOffset)
            }
            self = .text(text)
        case UInt8(ascii: "b"):
            self = .binary(try reader.readCountedBytes("value \(column)"))
        default:
            throw reader.error("unknown kind \(PgOutputReader.describe(kind)) of value \(column)", at: kindOffset)
        }
    }
}
