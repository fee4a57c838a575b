#if PostgreSQL
import ReactiveSQLiteReplication

/// A relation of the partition tree of a replica's partitioned table, as
/// PostgreSQL's catalog shows it now.
struct CatalogPartition: Equatable {
    /// The OID of the replica's table, the root of the tree.
    var root: UInt32
    /// The relation's OID (the root's own, for the root).
    var oid: UInt32
    /// `schema.name`.
    var name: String
    /// Whether the relation holds rows: a leaf partition (`relkind` `r`),
    /// not the root or a partitioned partition (`p`).
    var isLeaf: Bool
    /// `pg_class.relfilenode`: the storage of its rows.
    var relfilenode: UInt32
    /// The transaction that last wrote the relation's row of `pg_class`
    /// (`xmin`): the one that gave it its storage, until another one
    /// changes the row.
    var xmin: UInt32
}

/// A change of a partition's storage that no `TRUNCATE` of its table in
/// the stream explains yet: the `TRUNCATE` may come in the stream later
/// (it committed asynchronously, or the stream is behind).
struct UnexplainedPartition: Equatable {
    /// The storage that is not explained.
    var relfilenode: UInt32
    /// A WAL position after the commit of the transaction that gave it:
    /// once the stream was read up to it, no `TRUNCATE` of the table is
    /// still to come that could explain it.
    var committedBefore: ReplicationPosition
}

extension PostgresSourceState {
    /// Finds what happened to the partitions of the replica's partitioned
    /// tables (published through their root) that pgoutput does not send.
    ///
    /// pgoutput sends the changes of a partition's rows under the root's
    /// name, and a `TRUNCATE` of the table; but for a `TRUNCATE` of one
    /// partition alone it sends nothing (PostgreSQL 15 leaves partitions
    /// out of a `TRUNCATE` when the publication publishes through the
    /// root), nor for a partition dropped or detached, whose rows leave the
    /// table. The stream does not tell which partition a row of the
    /// replica is in, so the replica cannot delete them: it stops.
    ///
    /// The catalog shows it: a `TRUNCATE` gives the partition new storage
    /// (`relfilenode`). A `TRUNCATE` of the table does too, to each
    /// partition, in its transaction: storage given by the transaction of
    /// the last `TRUNCATE` of the table that the replica applied
    /// (`truncatedBy`, the `xmin` of the partition's row of `pg_class`) is
    /// explained; other new storage is not, once the stream was read past
    /// the transaction that gave it. New partitions are taken as they are.
    ///
    /// A rewrite of a partition (`VACUUM FULL`, `CLUSTER`, `ALTER TABLE
    /// ... SET TABLESPACE`) also gives it new storage, which the catalog
    /// does not tell from a `TRUNCATE`; and a `TRUNCATE` of the table
    /// inside a savepoint gives its partitions the savepoint's transaction
    /// ID, which the stream does not give: both stop the replica too.
    ///
    /// - Parameters:
    ///   - catalog: The partition trees of the replica's partitioned
    ///     tables, as the catalog shows them now.
    ///   - seenBefore: A WAL position read with `catalog` (in the same
    ///     statement): every transaction that `catalog` shows committed
    ///     before it.
    ///   - readThrough: The position up to which the stream was read and
    ///     applied.
    ///   - unexplained: Changes of storage not explained yet, by
    ///     partition OID, which the next checks find again.
    /// - Returns: Whether `tables` changed (partitions that the stream
    ///   explains, new partitions): to be stored.
    /// - Throws: A `ReplicationError` for a partition truncated or
    ///   rewritten, dropped or detached, that the stream does not explain.
    mutating func checkPartitions(
        _ catalog: [CatalogPartition], seenBefore: ReplicationPosition, readThrough: ReplicationPosition?,
        unexplained: inout [UInt32: UnexplainedPartition]
    ) throws(ReplicationError) -> Bool {
        let roots = Set(catalog.lazy.filter { $0.oid == $0.root }.map(\.root))
        var leavesByRoot: [UInt32: [CatalogPartition]] = [:]
        for relation in catalog where relation.isLeaf { leavesByRoot[relation.root, default: []].append(relation) }
        var isChanged = false
        for index in tables.indices {
            let table = tables[index]
            // Not partitioned, or dropped (as for another table, the
            // replica keeps its rows; a table created again under its name
            // stops it at its first change).
            guard roots.contains(table.oid) else { continue }
            let leaves = leavesByRoot[table.oid] ?? []
            guard let known = table.partitions else {
                // An earlier version made the replica: the partitions as
                // they are now.
                tables[index].partitions = leaves.map(Self.partition)
                isChanged = true
                continue
            }
            var checked: [PublishedTable.Partition] = []
            for leaf in leaves {
                guard let partition = known.first(where: { $0.oid == leaf.oid }) else {
                    // A new partition: its rows come in the stream.
                    checked.append(Self.partition(leaf))
                    continue
                }
                if partition.relfilenode == leaf.relfilenode {
                    checked.append(partition)
                    unexplained[leaf.oid] = nil
                } else if let truncatedBy = table.truncatedBy, leaf.xmin == truncatedBy {
                    checked.append(Self.partition(leaf))
                    unexplained[leaf.oid] = nil
                } else {
                    if unexplained[leaf.oid]?.relfilenode != leaf.relfilenode {
                        unexplained[leaf.oid] = UnexplainedPartition(
                            relfilenode: leaf.relfilenode, committedBefore: seenBefore)
                    }
                    if let readThrough, let change = unexplained[leaf.oid], readThrough >= change.committedBefore {
                        throw ReplicationError("""
                            \(table.qualifiedName): its partition \(leaf.name) was truncated or rewritten in \
                            PostgreSQL (it has new storage: TRUNCATE of the partition, VACUUM FULL, CLUSTER). \
                            \(Self.partitionAdvice)
                            """)
                    }
                    checked.append(partition)
                }
            }
            if let gone = known.first(where: { partition in !leaves.contains { $0.oid == partition.oid } }) {
                throw ReplicationError("""
                    \(table.qualifiedName): its partition \(gone.name) was dropped or detached in PostgreSQL, \
                    and its rows with it. \(Self.partitionAdvice)
                    """)
            }
            if checked != known {
                tables[index].partitions = checked
                isChanged = true
            }
        }
        return isChanged
    }

    /// Why a change of a partition stops the replica, and what to do.
    static let partitionAdvice = """
        pgoutput does not send it for a table published through its root (publish_via_partition_root), nor \
        which partition a row is in: the replica may hold rows that PostgreSQL no longer has. The replica stops \
        here; run again with --resync to copy the tables again (TRUNCATE the partitioned table itself, not one \
        partition, to stay in the stream).
        """

    /// A partition as the state keeps it.
    private static func partition(_ leaf: CatalogPartition) -> PublishedTable.Partition {
        PublishedTable.Partition(oid: leaf.oid, name: leaf.name, relfilenode: leaf.relfilenode)
    }
}
#endif
