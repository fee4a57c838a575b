/// The start of a transaction in a pgoutput stream (message `B`): the
/// changes that follow, up to the next `PgOutputCommit`, belong to it.
public struct PgOutputBegin: Equatable, Sendable {
    /// The LSN of the transaction's commit record: where it ends in the WAL.
    public var finalLSN: UInt64

    /// When the transaction committed, in microseconds since PostgreSQL's
    /// epoch, 2000-01-01 00:00:00 UTC.
    public var commitTime: Int64

    /// The transaction ID.
    public var xid: UInt32

    /// Creates a Begin message's content.
    public init(finalLSN: UInt64, commitTime: Int64, xid: UInt32) {
        self.finalLSN = finalLSN
        self.commitTime = commitTime
        self.xid = xid
    }
}

extension PgOutputBegin {
    /// Reads the fields that follow the tag: Int64 final LSN, Int64 commit
    /// time, Int32 transaction ID.
    init(reading reader: inout PgOutputReader) throws(PgOutputDecodingError) {
        finalLSN = try reader.readUInt64("the final LSN")
        commitTime = try reader.readInt64("the commit time")
        xid = try reader.readUInt32("the transaction ID")
    }
}
