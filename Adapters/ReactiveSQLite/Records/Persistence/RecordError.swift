/// An error of a record's write that is not SQLite's: the row the record
/// stands for does not exist.
///
/// Constraint violations and other SQLite failures throw a `DatabaseError`,
/// with the SQL and its arguments.
public enum RecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An update (`update`, `update(columns:)`, `updateChanges(from:)`)
    /// found no row with the record's primary key: the row was deleted, or
    /// the key is NULL.
    ///
    /// - Parameters:
    ///   - databaseTableName: The table, as the record type names it.
    ///   - key: The record's primary key, by column (the rowid column of a
    ///     table without primary key).
    case recordNotFound(databaseTableName: String, key: [String: DatabaseValue])

    /// `no row in table player with key [id: 1]`, the key's columns sorted
    /// by name.
    public var description: String {
        switch self {
        case .recordNotFound(let tableName, let key):
            let pairs = key.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
            return "no row in table \(tableName) with key [\(pairs.joined(separator: ", "))]"
        }
    }
}
