#if PostgreSQL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ReactiveSQLite
import ReactiveSQLiteReplication

/// Gathers pgoutput messages into transactions of the replica.
///
/// Each Relation message is matched with the replica's table of its
/// schema and name, and checked against what the copy found: the table's
/// OID, its columns' names, order and types, its key. A relation that
/// does not match, or is not in the replica (a partition that pgoutput
/// describes beside its published root, a table added to the
/// publication), refuses the transactions whose changes name it: each
/// carries the `ReplicationError` of its first such change, which stops
/// the replicator if the transaction is to be applied. A transaction that
/// the replica holds already (before its position, or in its copy's
/// snapshot) is not refused: after a resync, the stream replays the
/// transactions that stopped the replica, which the new copy shows.
struct TransactionDecoder {
    /// A transaction of the stream, decoded.
    struct DecodedTransaction {
        var xid: UInt32
        var transaction: ReplicatedTransaction
        /// Why the replica cannot take the transaction, if it cannot.
        var refusal: ReplicationError?
        /// The relations (OIDs) that its `TRUNCATE`s name.
        var truncatedRelations: Set<UInt32> = []
    }

    /// A table's schema and name.
    private struct QualifiedName: Hashable {
        var schema: String
        var name: String
    }

    /// A relation of the stream, as its last Relation message described it.
    private enum Relation {
        /// A table of the replica.
        case replicated(Table)
        /// Not in the replica: the error of a change that names it.
        case unreplicated(ReplicationError)
    }

    /// A relation of the stream that the replica holds.
    private struct Table {
        var name: String
        /// The columns as they were when the change was made, with their
        /// types.
        var columns: [(name: String, type: PostgresColumnType)]
        /// The columns that identify a row in the old tuples and in the
        /// replica: the replica identity index's, else the primary key.
        var key: [String]
    }

    /// The replica's tables, by schema and name.
    private let tables: [QualifiedName: PublishedTable]
    /// Relations by ID.
    private var relations: [UInt32: Relation] = [:]
    /// The replica's tables that Relation messages described since
    /// `takeDescribedTables()`, by OID.
    private var described: [UInt32: PublishedTable] = [:]
    private var xid: UInt32?
    private var changes: [ReplicatedChange] = []
    private var refusal: ReplicationError?
    /// The relations that the current transaction's `TRUNCATE`s name.
    private var truncatedRelations: Set<UInt32> = []

    init(tables: [PublishedTable]) {
        var byName: [QualifiedName: PublishedTable] = [:]
        for table in tables { byName[QualifiedName(schema: table.schema, name: table.name)] = table }
        self.tables = byName
    }

    /// The replica's tables that Relation messages described since the
    /// last call, by OID.
    mutating func takeDescribedTables() -> [UInt32: PublishedTable] {
        defer { described = [:] }
        return described
    }

    /// Consumes one message; returns the transaction a Commit ends.
    mutating func consume(_ message: PgOutputMessage) -> DecodedTransaction? {
        switch message {
        case .begin(let begin):
            xid = begin.xid
            changes = []
            refusal = nil
            truncatedRelations = []
        case .commit(let commit):
            defer { xid = nil; changes = []; refusal = nil; truncatedRelations = [] }
            return DecodedTransaction(
                xid: xid ?? 0,
                transaction: ReplicatedTransaction(position: ReplicationPosition(commit.endLSN), changes: changes),
                refusal: refusal, truncatedRelations: truncatedRelations)
        case .relation(let relation):
            do {
                relations[relation.id] = try describe(relation)
            } catch {
                relations[relation.id] = .unreplicated(error)
            }
        case .origin, .type, .message:
            break
        case .insert, .update, .delete, .truncate:
            // The first refusal of a transaction is its refusal; the
            // changes that follow it are of no use.
            guard refusal == nil else { break }
            do {
                try decodeChange(message)
            } catch {
                refusal = error
            }
        }
        return nil
    }

    /// Decodes a change into `changes`.
    private mutating func decodeChange(_ message: PgOutputMessage) throws(ReplicationError) {
        switch message {
        case .insert(let id, let new):
            let table = try self.table(id)
            changes.append(.insert(table: table.name, row: try Self.row(new, table)))
        case .update(let id, let old, let new):
            let table = try self.table(id)
            let row = try Self.row(new, table)
            let key: [String: DatabaseValue]
            switch old {
            case .key(let tuple)?, .row(let tuple)?:
                key = try Self.key(Self.row(tuple, table), table)
            case nil:
                key = try Self.key(row, table)
            }
            changes.append(.update(table: table.name, key: key, row: row))
        case .delete(let id, let old):
            let table = try self.table(id)
            switch old {
            case .key(let tuple), .row(let tuple):
                changes.append(.delete(table: table.name, key: try Self.key(Self.row(tuple, table), table)))
            }
        case .truncate(_, let ids):
            changes.append(.truncate(tables: try ids.map { id throws(ReplicationError) in try table(id).name }))
            truncatedRelations.formUnion(ids)
        case .begin, .commit, .relation, .origin, .type, .message:
            break
        }
    }

    /// What the replica advises when the stream no longer matches it.
    static let resyncAdvice = """
        The replica stops here, unchanged since the last transaction it applied; run again with --resync \
        to copy the tables again.
        """

    /// Matches a Relation message with the replica's table.
    private mutating func describe(_ relation: PgOutputRelation) throws(ReplicationError) -> Relation {
        let name = relation.namespace + "." + relation.name
        guard let copied = tables[QualifiedName(schema: relation.namespace, name: relation.name)] else {
            // SQLite compares table names without case (ASCII).
            let lowercased = relation.name.lowercased()
            if let other = tables.values.first(where: { $0.name.lowercased() == lowercased }) {
                return .unreplicated(ReplicationError("""
                    \(name) is in the stream, but the replica's table \(other.name) is \(other.qualifiedName): \
                    a replica names its tables without their schema, so their rows would mix. The replica stops \
                    here, unchanged since the last transaction it applied; leave one of them out of the \
                    publication, then run again with --resync to copy the tables again.
                    """))
            }
            return .unreplicated(ReplicationError("""
                \(name) is in the stream but not in the replica: run again with --resync to copy the tables again.
                """))
        }
        guard relation.id == copied.oid else {
            throw ReplicationError("""
                \(name) was dropped and created again in PostgreSQL (OID \(relation.id), the copy's \
                \(copied.oid)): the replica holds the old table's rows. \(Self.resyncAdvice)
                """)
        }
        let streamed = relation.columns.map(\.name)
        let copiedNames = copied.columns.map(\.name)
        guard streamed == copiedNames else {
            let added = streamed.filter { !copiedNames.contains($0) }
            let dropped = copiedNames.filter { !streamed.contains($0) }
            let change = added.isEmpty && dropped.isEmpty
                ? "renamed or reordered: now \(streamed.joined(separator: ", ")); in the replica: \(copiedNames.joined(separator: ", "))"
                : "added: \(added.joined(separator: ", ")); dropped: \(dropped.joined(separator: ", "))"
            throw ReplicationError("\(name): its columns changed in PostgreSQL (\(change)). \(Self.resyncAdvice)")
        }
        let retyped = zip(relation.columns, copied.columns).filter { streamed, copied in
            streamed.typeOID != copied.typeOID
                || (streamed.typeModifier != copied.typeModifier && !Self.modifierKeepsText(copied.typeOID))
        }
        guard retyped.isEmpty else {
            let list = retyped.map { streamed, copied in
                "\(copied.name): type OID \(copied.typeOID) (modifier \(copied.typeModifier)), now \(streamed.typeOID) "
                    + "(modifier \(streamed.typeModifier))"
            }
            throw ReplicationError("""
                \(name): the type of a column changed in PostgreSQL (\(list.joined(separator: "; "))): the replica's \
                rows hold the old type's values. \(Self.resyncAdvice)
                """)
        }
        let identity = relation.columns.filter(\.isKey).map(\.name)
        let key: [String]
        switch relation.replicaIdentity {
        case UInt8(ascii: "i"):
            // The old tuples hold the index's columns only.
            key = identity.isEmpty ? copied.primaryKey : identity
        case UInt8(ascii: "d"):
            guard Set(identity) == Set(copied.primaryKey) else {
                throw ReplicationError("""
                    \(name): its primary key changed in PostgreSQL (now: \(identity.joined(separator: ", ")); \
                    in the replica: \(copied.primaryKey.joined(separator: ", "))). \(Self.resyncAdvice)
                    """)
            }
            key = copied.primaryKey
        default:
            // FULL: the old tuples hold every column. NOTHING: PostgreSQL
            // refuses updates and deletes, and the new row has the key.
            key = copied.primaryKey
        }
        described[relation.id] = copied
        return .replicated(Table(
            name: copied.name, columns: relation.columns.map { ($0.name, PostgresColumnType(oid: $0.typeOID)) },
            key: key))
    }

    /// Whether a change of the type modifier of a column of this type
    /// leaves every value's text as it was: `varchar(n)` (a longer limit,
    /// or a shorter one that PostgreSQL checks without rewriting values).
    private static func modifierKeepsText(_ typeOID: UInt32) -> Bool {
        typeOID == 1043
    }

    private func table(_ id: UInt32) throws(ReplicationError) -> Table {
        switch relations[id] {
        case .replicated(let table)?: return table
        case .unreplicated(let error)?: throw error
        case nil: throw ReplicationError("a change names relation \(id), never described")
        }
    }

    /// The known values of a tuple, by column (nulls of a key tuple's
    /// other columns and unchanged TOASTed values left out).
    private static func row(_ tuple: PgOutputTuple, _ table: Table) throws(ReplicationError) -> [String: DatabaseValue] {
        guard tuple.values.count == table.columns.count else {
            throw ReplicationError("\(table.name): a row has \(tuple.values.count) values for \(table.columns.count) columns")
        }
        var row: [String: DatabaseValue] = [:]
        for (value, column) in zip(tuple.values, table.columns) {
            switch value {
            case .null: row[column.name] = .null
            case .unchangedToast: break
            case .text(let text): row[column.name] = column.type.value(fromText: text)
            case .binary(let bytes): row[column.name] = DatabaseValue(storage: .blob(Data(bytes)))
            }
        }
        return row
    }

    private static func key(_ row: [String: DatabaseValue], _ table: Table) throws(ReplicationError) -> [String: DatabaseValue] {
        var key: [String: DatabaseValue] = [:]
        for column in table.key {
            guard let value = row[column] else { throw ReplicationError("\(table.name): a change lacks key column \(column)") }
            key[column] = value
        }
        return key
    }
}
#endif
