/// The end of a transaction in a pgoutput stream (message `C`): every
/// change since the matching `PgOutputBegin` is committed.
public struct PgOutputCommit: Equatable, Sendable {
    /// Flags; PostgreSQL 15 sends 0 (the field is unused), kept as read.
    public var flags: UInt8

    /// The LSN of the commit record (the `finalLSN` of the matching Begin).
    public var commitLSN: UInt64

    /// The LSN just past the commit record: where a consumer that applied
    /// the transaction resumes.
    public var endLSN: UInt64

    /// When the transaction committed, in microseconds since PostgreSQL's
    /// epoch, 2000-01-01 00:00:00 UTC.
    public var commitTime: Int64

    /// Creates a Commit message's content.
    public init(flags: UInt8 = 0, commitLSN: UInt64, endLSN: UInt64, commitTime: Int64) {
        self.flags = flags
        self.commitLSN = commitLSN
        self.endLSN = endLSN
        self.commitTime = commitTime
    }
}

extension PgOutputCommit {
    /// Reads the fields that follow the tag: Int8 flags, Int64 commit LSN,
    /// Int64 end LSN, Int64 commit time.
    init(reading reader: inout PgOutputReader) throws(PgOutputDecodingError) {
        flags = try reader.readUInt8("the commit flags")
        commitLSN = try reader.readUInt64("the commit LSN")
        endLSN = try reader.readUInt64("the end LSN")
        commitTime = try reader.readInt64("the commit time")
    }
}
