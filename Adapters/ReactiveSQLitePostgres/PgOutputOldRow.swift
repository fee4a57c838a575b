/// What an update or a delete says of the row before the change.
public enum PgOutputOldRow: Equatable, Sendable {
    /// The old replica identity key (`K`): values for the key columns,
    /// `null` for the others. An update sends it only when it changed the
    /// key.
    case key(PgOutputTuple)

    /// The whole old row (`O`), for a table with `REPLICA IDENTITY FULL`.
    case row(PgOutputTuple)
}

extension PgOutputOldRow {
    /// Reads the tuple that follows a `K` or `O` byte; nil for another byte
    /// (which the caller has read as `kind`).
    init?(kind: UInt8, reading reader: inout PgOutputReader) throws(PgOutputDecodingError) {
        switch kind {
        case UInt8(ascii: "K"): self = .key(try PgOutputTuple(reading: &reader))
        case UInt8(ascii: "O"): self = .row(try PgOutputTuple(reading: &reader))
        default: return nil
        }
    }
}
