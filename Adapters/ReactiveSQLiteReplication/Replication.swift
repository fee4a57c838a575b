import ReactiveSQLite

/// A position in a source's stream of committed transactions: a PostgreSQL
/// LSN, or any number that grows with each commit of the source.
///
/// The replica stores the position of the last source transaction it
/// applied in the same SQLite transaction as its changes: after a crash,
/// it resumes after that position, and applies nothing twice.
public struct ReplicationPosition: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The position, as the source numbers it.
    public var value: UInt64

    /// Creates a position.
    public init(_ value: UInt64) {
        self.value = value
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }

    /// PostgreSQL's spelling of an LSN: two hexadecimal halves, `16/B374D848`.
    public var description: String {
        String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    /// Reads PostgreSQL's spelling of an LSN (`16/B374D848`); nil when it
    /// is not one.
    public init?(lsn text: String) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, (1...8).contains(halves[0].count), (1...8).contains(halves[1].count),
            let high = UInt64(halves[0], radix: 16), let low = UInt64(halves[1], radix: 16)
        else { return nil }
        value = high << 32 | low
    }
}

/// One row change of a source transaction, on a table of the replica.
///
/// Rows and keys name their columns; a column missing from an update's
/// row keeps its value (PostgreSQL does not send a TOASTed value that the
/// change did not modify).
///
/// A key holds the values, before the change, of columns that identify
/// one row: the table's primary key, or one of its unique keys
/// (`ReplicaTable/uniqueKeys`; PostgreSQL's `REPLICA IDENTITY USING
/// INDEX`).
public enum ReplicatedChange: Sendable, Equatable {
    /// A new row.
    case insert(table: String, row: [String: DatabaseValue])
    /// The row that `key` identifies (before the change) now has the
    /// values of `row`, which may change the key itself.
    case update(table: String, key: [String: DatabaseValue], row: [String: DatabaseValue])
    /// The row that `key` identifies is deleted.
    case delete(table: String, key: [String: DatabaseValue])
    /// Every row of the tables is deleted.
    case truncate(tables: [String])
}

/// A committed source transaction: its changes, applied as one SQLite
/// transaction, and its position.
public struct ReplicatedTransaction: Sendable, Equatable {
    /// The position just after the transaction's commit.
    public var position: ReplicationPosition
    public var changes: [ReplicatedChange]

    /// Creates a transaction.
    public init(position: ReplicationPosition, changes: [ReplicatedChange]) {
        self.position = position
        self.changes = changes
    }
}

/// A table of the replica: its columns, their SQLite types, its primary key.
public struct ReplicaTable: Sendable, Equatable {
    /// A column and its declared SQLite type (`INTEGER`, `REAL`, `TEXT`,
    /// `BLOB`, or empty for none), which gives the column its affinity.
    public struct Column: Sendable, Equatable {
        public var name: String
        public var type: String

        /// Creates a column.
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    public var name: String
    public var columns: [Column]
    /// The columns of the primary key, never empty: a row that the source
    /// cannot identify cannot be replicated exactly.
    public var primaryKey: [String]
    /// Other keys that the source identifies rows by (PostgreSQL's
    /// `REPLICA IDENTITY USING INDEX` on another index than the primary
    /// key), each made a `UNIQUE` constraint of the replica's table, so
    /// that a change found by one of them finds its row through an index.
    public var uniqueKeys: [[String]]

    /// Creates a table description.
    public init(name: String, columns: [Column], primaryKey: [String], uniqueKeys: [[String]] = []) {
        self.name = name
        self.columns = columns
        self.primaryKey = primaryKey
        self.uniqueKeys = uniqueKeys
    }

    /// `CREATE TABLE` for the replica.
    var definition: String {
        let columns = columns.map { $0.type.isEmpty ? quoted($0.name) : "\(quoted($0.name)) \($0.type)" }
        let key = "PRIMARY KEY (" + primaryKey.map(quoted).joined(separator: ", ") + ")"
        let uniqueKeys = uniqueKeys.map { "UNIQUE (" + $0.map(quoted).joined(separator: ", ") + ")" }
        return "CREATE TABLE \(quoted(name)) (" + (columns + [key] + uniqueKeys).joined(separator: ", ") + ")"
    }
}

/// An error of replication: the replica does not hold what the source's
/// change expects (it was written by someone else, or a change was lost),
/// or a change names what the replica does not have.
///
/// The replica is never left half-applied: the SQLite transaction of the
/// failing source transaction is rolled back.
public struct ReplicationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Quotes an SQLite identifier.
func quoted(_ identifier: String) -> String {
    "\"" + identifier.replacing("\"", with: "\"\"") + "\""
}
