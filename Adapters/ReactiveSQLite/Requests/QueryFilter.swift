import DatabaseRegions

/// A condition of a `QueryInterfaceRequest`.
enum QueryFilter: Sendable {
    case sql(String, StatementArguments)
    /// Primary key values; each key is one value per primary key column, in
    /// the order of the primary key.
    case keys([[DatabaseValue]])
    /// One primary key, given by column name.
    case namedKey([String: DatabaseValue])
    /// The primary key of an encoded record (its key columns, by name), or
    /// the error of its encoding, thrown when the SQL is built.
    case recordKey(Result<PersistenceContainer, any Error>)
}
