/// The statements a record's write can run.
enum RecordStatementKind {
    /// `INSERT [OR ...] INTO t (...) VALUES (...)`.
    case insert(Database.ConflictResolution?)
    /// `INSERT INTO t (...) VALUES (...) RETURNING *`: `insertAndFetch`.
    case insertReturningRow
    /// `INSERT INTO t (...) VALUES (...) ON CONFLICT DO UPDATE SET ...`,
    /// `RETURNING rowid` for a table with rowids.
    case upsert
    /// `UPDATE t SET ... WHERE key`.
    case update(RecordUpdatedColumns)
    /// `DELETE FROM t WHERE key`.
    case delete
    /// `SELECT EXISTS (SELECT 1 FROM t WHERE key)`.
    case exists
}
