#if PostgreSQL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ReactiveSQLiteReplication

/// What `PostgresReplicator` stores with the replica's position, in the
/// same SQLite transaction (`ReplicaApplier.sourceState()`), as JSON: the
/// published tables as the copy found them in PostgreSQL's catalog, which
/// the stream's Relation messages must match, and, until the first
/// transaction after the copy is applied, the copy's snapshot.
///
/// A replica whose state is not of this form (made by an earlier version)
/// is copied again.
struct PostgresSourceState: Codable, Equatable {
    /// The form of the state; any other is not read.
    var version = 1
    /// The copy's snapshot (`pg_current_snapshot()`), while the stream
    /// replays transactions that the copy may already show.
    var snapshot: String?
    /// The replica's tables, as the copy found them.
    var tables: [PublishedTable]

    init(snapshot: String?, tables: [PublishedTable]) {
        self.snapshot = snapshot
        self.tables = tables
    }

    /// Reads a stored state; nil when there is none, or of another form.
    init?(text: String?) {
        guard let text, let state = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)), state.version == 1
        else { return nil }
        self = state
    }

    /// The state to store.
    func text() throws -> String {
        String(decoding: try JSONEncoder().encode(self), as: UTF8.self)
    }
}

/// A published table, as the copy found it in PostgreSQL's catalog.
struct PublishedTable: Codable, Equatable {
    /// One published column.
    struct Column: Codable, Equatable {
        var name: String
        /// `atttypid`, which Relation messages give as the type OID.
        var typeOID: UInt32
        /// `atttypmod`, which Relation messages give as the type modifier.
        var typeModifier: Int32
        /// `attnum`: a column dropped then added again under its name has
        /// another number, which Relation messages do not tell.
        var number: Int
    }

    var schema: String
    var name: String
    /// The table's OID, which Relation messages give as their ID: another
    /// one is a table dropped and created again.
    var oid: UInt32
    /// The published columns, in the order of the stream's tuples.
    var columns: [Column]
    /// The columns of the primary key, in the order of its index.
    var primaryKey: [String]
    /// The columns of the replica identity index (`REPLICA IDENTITY USING
    /// INDEX`), when it is another index than the primary key.
    var identityKey: [String]?

    /// A leaf partition of a partitioned table, and its storage.
    struct Partition: Codable, Equatable {
        /// The partition's OID.
        var oid: UInt32
        /// `schema.name`, for messages.
        var name: String
        /// `pg_class.relfilenode`: the storage of its rows, which a
        /// `TRUNCATE` (or a rewrite: `VACUUM FULL`, `CLUSTER`) replaces.
        var relfilenode: UInt32
    }

    /// For a partitioned table published through its root: its leaf
    /// partitions, as the copy found them, then as the replicator checked
    /// them (see `PostgresSourceState.checkPartitions`). Nil for any other
    /// table, and for a partitioned table of a replica that an earlier
    /// version made, until the replicator's first check.
    var partitions: [Partition]?
    /// For a partitioned table published through its root: the
    /// transaction (xid) of the last `TRUNCATE` of the table that the
    /// replica applied, which gave each of its partitions new storage.
    var truncatedBy: UInt32?

    /// `schema.name`, as messages spell it.
    var qualifiedName: String { schema + "." + name }

    /// The replica's table.
    var replica: ReplicaTable {
        ReplicaTable(
            name: name,
            columns: columns.map { .init(name: $0.name, type: PostgresColumnType(oid: $0.typeOID).sqliteType) },
            primaryKey: primaryKey, uniqueKeys: identityKey.map { [$0] } ?? [])
    }
}
#endif
