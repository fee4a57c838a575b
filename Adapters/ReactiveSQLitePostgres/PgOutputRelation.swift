/// The description of a table (message `R`), which PostgreSQL sends before
/// the first change of that table in a session, and again after its schema
/// changes: the changes that follow refer to it by `id`, and their tuples
/// list values in the order of `columns`.
public struct PgOutputRelation: Equatable, Sendable {
    /// The relation's ID (its OID on the server), which the changes cite.
    public var id: UInt32

    /// The schema, or the empty string for `pg_catalog`.
    public var namespace: String

    /// The table's name.
    public var name: String

    /// The table's replica identity, as `relreplident` in `pg_class`, in
    /// ASCII: `d` (default: the primary key), `n` (nothing), `f` (full: the
    /// whole old row), `i` (a unique index).
    public var replicaIdentity: UInt8

    /// The published columns, in the order of the tuples' values
    /// (generated columns are not sent).
    public var columns: [Column]

    /// Creates a Relation message's content.
    public init(id: UInt32, namespace: String, name: String, replicaIdentity: UInt8, columns: [Column]) {
        self.id = id
        self.namespace = namespace
        self.name = name
        self.replicaIdentity = replicaIdentity
        self.columns = columns
    }

    /// One column of a relation.
    public struct Column: Equatable, Sendable {
        /// Whether the column is part of the replica identity (the key that
        /// old keys of updates and deletes carry; every column with
        /// `REPLICA IDENTITY FULL`).
        public var isKey: Bool

        /// The column's name.
        public var name: String

        /// The OID of the column's type (`pg_type.oid`: 23 for `integer`,
        /// 25 for `text`; a `PgOutputMessage.type` message describes a type
        /// that is not built in).
        public var typeOID: UInt32

        /// The type modifier (`atttypmod`), -1 when the type has none.
        public var typeModifier: Int32

        /// Creates a column's description.
        public init(isKey: Bool, name: String, typeOID: UInt32, typeModifier: Int32 = -1) {
            self.isKey = isKey
            self.name = name
            self.typeOID = typeOID
            self.typeModifier = typeModifier
        }
    }
}

extension PgOutputRelation {
    /// The replica identities PostgreSQL sends (`relreplident`).
    private static let replicaIdentities: [UInt8] = [
        UInt8(ascii: "d"), UInt8(ascii: "n"), UInt8(ascii: "f"), UInt8(ascii: "i"),
    ]

    /// The fewest bytes a column takes: flags, an empty name's NUL, the type
    /// OID and the type modifier.
    private static let minimumColumnSize = 1 + 1 + 4 + 4

    /// Reads the fields that follow the tag: Int32 ID, String namespace,
    /// String name, Int8 replica identity, Int16 number of columns, then for
    /// each column Int8 flags (1: part of the key), String name, Int32 type
    /// OID, Int32 type modifier.
    init(reading reader: inout PgOutputReader) throws(PgOutputDecodingError) {
        id = try reader.readUInt32("the relation ID")
        namespace = try reader.readString("the namespace")
        name = try reader.readString("the relation name")
        let identityOffset = reader.offset
        replicaIdentity = try reader.readUInt8("the replica identity")
        guard Self.replicaIdentities.contains(replicaIdentity) else {
            throw reader.error(
                "unknown replica identity \(PgOutputReader.describe(replicaIdentity))", at: identityOffset)
        }
        let countOffset = reader.offset
        let count = Int(try reader.readInt16("the number of columns"))
        try reader.validateCount(count, at: countOffset, of: "columns", minimumItemSize: Self.minimumColumnSize)
        columns = []
        columns.reserveCapacity(count)
        for index in 0..<count {
            let flagsOffset = reader.offset
            let flags = try reader.readUInt8("the flags of column \(index)")
            guard flags <= 1 else {
                throw reader.error(
                    "unknown flags \(PgOutputReader.describe(flags)) of column \(index)", at: flagsOffset)
            }
            columns.append(
                Column(
                    isKey: flags == 1,
                    name: try reader.readString("the name of column \(index)"),
                    typeOID: try reader.readUInt32("the type OID of column \(index)"),
                    typeModifier: try reader.readInt32("the type modifier of column \(index)")))
        }
    }
}
