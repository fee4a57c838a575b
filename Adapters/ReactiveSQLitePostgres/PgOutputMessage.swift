/// One message of PostgreSQL's `pgoutput` logical replication protocol,
/// version 1 (the streaming messages of version 2 and the two-phase
/// messages of version 3 are not decoded).
///
/// A transaction reads `begin`, then its changes (`insert`, `update`,
/// `delete`, `truncate`, transactional `message`s), each preceded, the
/// first time its table appears in the session or after the table changed,
/// by the table's `relation` (and the `type` of each column of a
/// user-defined type), then `commit`. A non-transactional `message` comes
/// alone, outside any transaction.
///
/// Decode the `data` column of `pg_logical_slot_peek_binary_changes` (or
/// `pg_logical_slot_get_binary_changes`), or the payload of a replication
/// connection's XLogData message:
///
/// ```swift
/// switch try PgOutputMessage(decoding: data) {
/// case .begin(let begin): startTransaction(begin.xid)
/// case .relation(let relation): relations[relation.id] = relation
/// case .insert(let relationID, let new): insert(new, into: relations[relationID])
/// case .commit(let commit): commitTransaction(at: commit.endLSN)
/// default: break
/// }
/// ```
///
/// The protocol's reference:
/// <https://www.postgresql.org/docs/15/protocol-logicalrep-message-formats.html>.
public enum PgOutputMessage: Equatable, Sendable {
    /// The start of a transaction (`B`).
    case begin(PgOutputBegin)

    /// The end of a transaction (`C`).
    case commit(PgOutputCommit)

    /// The transaction came to this server from another one (`O`), by
    /// logical replication with a replication origin: the LSN of its commit
    /// on the origin server, and the origin's name.
    case origin(lsn: UInt64, name: String)

    /// The description of a table that the following changes cite (`R`).
    case relation(PgOutputRelation)

    /// A user-defined type that a relation's column has (`Y`): its OID (the
    /// column's `typeOID`), its schema and its name.
    case type(oid: UInt32, namespace: String, name: String)

    /// A row inserted in the relation `relationID` (`I`).
    case insert(relationID: UInt32, new: PgOutputTuple)

    /// A row updated in the relation `relationID` (`U`): `new` is the row
    /// after the update (with `unchangedToast` for the large values it did
    /// not modify).
    ///
    /// `old` is the old key ('K') or the old row ('O') when PostgreSQL sends one.
    /// It sends the old key when the update changed the replica identity
    /// key, and the old row when the table has `REPLICA IDENTITY FULL`;
    /// otherwise `old` is nil and the key of `new` identifies the row.
    case update(relationID: UInt32, old: PgOutputOldRow?, new: PgOutputTuple)

    /// A row deleted from the relation `relationID` (`D`): its replica
    /// identity key, or its whole row with `REPLICA IDENTITY FULL`.
    case delete(relationID: UInt32, old: PgOutputOldRow)

    /// The relations `relationIDs` truncated by one `TRUNCATE` (`T`).
    /// `options` bit 1 is `CASCADE`, bit 2 is `RESTART IDENTITY`.
    case truncate(options: UInt8, relationIDs: [UInt32])

    /// A message of `pg_logical_emit_message` (`M`), sent when the `messages`
    /// option is on: whether it was emitted as part of its transaction
    /// (else it comes alone, as soon as it was written), its LSN, its
    /// prefix and its content.
    case message(transactional: Bool, lsn: UInt64, prefix: String, content: [UInt8])

    /// Decodes one message (the `data` bytea of
    /// `pg_logical_slot_peek_binary_changes`, or the payload of an XLogData
    /// message). Throws `PgOutputDecodingError` on any malformed input
    /// (truncated, unknown tag, bad counts, trailing bytes); never traps.
    ///
    /// Every field is checked against the bytes that remain before it is
    /// read, and every count before anything is reserved for it, so that
    /// decoding allocates no more than the input holds. Strings (names,
    /// prefixes, text values) must be valid UTF-8; flags and kind bytes must
    /// be ones that protocol version 1 defines.
    ///
    /// - Parameter bytes: The message, its tag first.
    /// - Throws: `PgOutputDecodingError`, with the offset of the field at
    ///   fault from the tag.
    /// - Complexity: O(n), where n is the number of bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(PgOutputDecodingError) {
        var reader = PgOutputReader(Array(bytes))
        let tag = try reader.readUInt8("the message tag")
        switch tag {
        case UInt8(ascii: "B"):
            self = .begin(try PgOutputBegin(reading: &reader))
        case UInt8(ascii: "C"):
            self = .commit(try PgOutputCommit(reading: &reader))
        case UInt8(ascii: "O"):
            self = .origin(lsn: try reader.readUInt64("the origin LSN"), name: try reader.readString("the origin name"))
        case UInt8(ascii: "R"):
            self = .relation(try PgOutputRelation(reading: &reader))
        case UInt8(ascii: "Y"):
            self = .type(
                oid: try reader.readUInt32("the type OID"), namespace: try reader.readString("the type namespace"),
                name: try reader.readString("the type name"))
        case UInt8(ascii: "I"):
            self = try Self.readInsert(&reader)
        case UInt8(ascii: "U"):
            self = try Self.readUpdate(&reader)
        case UInt8(ascii: "D"):
            self = try Self.readDelete(&reader)
        case UInt8(ascii: "T"):
            self = try Self.readTruncate(&reader)
        case UInt8(ascii: "M"):
            self = try Self.readMessage(&reader)
        default:
            throw reader.error("unknown message tag \(PgOutputReader.describe(tag))", at: 0)
        }
        try reader.requireEnd()
    }
}

extension PgOutputMessage {
    /// Reads an `I` message: Int32 relation ID, `N`, the new tuple.
    private static func readInsert(_ reader: inout PgOutputReader) throws(PgOutputDecodingError) -> Self {
        let relationID = try reader.readUInt32("the relation ID")
        try readNewTupleMarker(&reader)
        return .insert(relationID: relationID, new: try PgOutputTuple(reading: &reader))
    }

    /// Reads a `U` message: Int32 relation ID, optionally `K` or `O` and the
    /// old tuple, then `N` and the new tuple.
    private static func readUpdate(_ reader: inout PgOutputReader) throws(PgOutputDecodingError) -> Self {
        let relationID = try reader.readUInt32("the relation ID")
        let kindOffset = reader.offset
        let kind = try reader.readUInt8("the tuple kind")
        let old = try PgOutputOldRow(kind: kind, reading: &reader)
        if old == nil {
            guard kind == UInt8(ascii: "N") else {
                throw reader.error(
                    "unknown tuple kind \(PgOutputReader.describe(kind)) (expected 'K', 'O' or 'N')", at: kindOffset)
            }
        } else {
            try readNewTupleMarker(&reader)
        }
        return .update(relationID: relationID, old: old, new: try PgOutputTuple(reading: &reader))
    }

    /// Reads a `D` message: Int32 relation ID, `K` or `O`, the old tuple.
    private static func readDelete(_ reader: inout PgOutputReader) throws(PgOutputDecodingError) -> Self {
        let relationID = try reader.readUInt32("the relation ID")
        let kindOffset = reader.offset
        let kind = try reader.readUInt8("the tuple kind")
        guard let old = try PgOutputOldRow(kind: kind, reading: &reader) else {
            throw reader.error(
                "unknown tuple kind \(PgOutputReader.describe(kind)) (expected 'K' or 'O')", at: kindOffset)
        }
        return .delete(relationID: relationID, old: old)
    }

    /// Reads a `T` message: Int32 number of relations, Int8 options, then
    /// each Int32 relation ID.
    private static func readTruncate(_ reader: inout PgOutputReader) throws(PgOutputDecodingError) -> Self {
        let countOffset = reader.offset
        let count = Int(try reader.readInt32("the number of relations"))
        let options = try reader.readUInt8("the truncate options")
        try reader.validateCount(count, at: countOffset, of: "relations", minimumItemSize: 4)
        var relationIDs: [UInt32] = []
        relationIDs.reserveCapacity(count)
        for index in 0..<count {
            relationIDs.append(try reader.readUInt32("relation ID \(index)"))
        }
        return .truncate(options: options, relationIDs: relationIDs)
    }

    /// Reads an `M` message: Int8 flags (1: transactional), Int64 LSN,
    /// String prefix, Int32 length and the content.
    private static func readMessage(_ reader: inout PgOutputReader) throws(PgOutputDecodingError) -> Self {
        let flagsOffset = reader.offset
        let flags = try reader.readUInt8("the message flags")
        guard flags <= 1 else {
            throw reader.error("unknown message flags \(PgOutputReader.describe(flags))", at: flagsOffset)
        }
        return .message(
            transactional: flags == 1, lsn: try reader.readUInt64("the message LSN"),
            prefix: try reader.readString("the message prefix"),
            content: try reader.readCountedBytes("the message content"))
    }

    /// Reads the `N` byte that introduces a new tuple.
    private static func readNewTupleMarker(_ reader: inout PgOutputReader) throws(PgOutputDecodingError) {
        let kindOffset = reader.offset
        let kind = try reader.readUInt8("the new tuple marker")
        guard kind == UInt8(ascii: "N") else {
            throw reader.error(
                "unknown tuple kind \(PgOutputReader.describe(kind)) (expected 'N')", at: kindOffset)
        }
    }
}
