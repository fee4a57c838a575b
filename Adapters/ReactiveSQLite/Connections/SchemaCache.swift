import DatabaseRegions

/// The schema information of one connection.
///
/// It stays valid while the schema does not change. The connection's own
/// schema changes clear it (statements that create, drop or alter a schema
/// object, and rollbacks, which may undo such a statement). Other connections
/// change the schema version (`PRAGMA schema_version`): the cache is checked
/// against it at the start of each read access, before a table is looked up
/// for the first time, and before a missing table is reported.
struct SchemaCache {
    /// Keyed by name, as SQLite compares identifiers (bytes, not
    /// `String.==`); `.some(nil)` records a missing table.
    var tables: [CaseInsensitiveName: TableSchema?] = [:]
    /// The schema version the entries were read at; nil when unknown.
    var schemaVersion: Int32?
}
