#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// What the SQLite library in use offers among the features ReactiveSQLite
/// uses that older versions lack, read once per process.
///
/// Debian's libsqlite3 (3.40) has them all. An older library, such as the
/// SQLite 3.15 inside Debian's SQLCipher 3.4.1 (the `SQLCipher` trait),
/// lacks some; each has a fallback or a clear error:
/// - `PRAGMA table_list` (3.37), `PRAGMA table_xinfo` (3.26): the schema is
///   read from `sqlite_master` and `PRAGMA table_info` (such a library has
///   no generated columns, 3.31, nor `STRICT` tables).
/// - `RETURNING` (3.35): `insertAndFetch` inserts, then fetches the row by
///   its rowid in the same access.
/// - UPSERT (3.24): `upsert` throws a `DatabaseError` (`SQLITE_ERROR`).
/// - `json_each` (JSON1, in the library from 3.38, an option before): a set
///   difference observation on a table reads the whole table instead of
///   the changed rows.
/// - The pre-update hook (a compile option): the update-hook path (see
///   `Configuration.ChangeTracking`).
/// - Reads of a table without a column (`SELECT COUNT(*) FROM t`), which an
///   old authorizer does not report: the tables the statement's program
///   opens (`Database.regionIncludingOpenedTables(_:statement:)`).
enum SQLiteFeatures {
    /// `sqlite3_libversion_number()`, 3040001 for 3.40.1.
    static let versionNumber = Int(sqlite3_libversion_number())

    /// `PRAGMA table_list` (SQLite 3.37).
    static let hasTableList = versionNumber >= 3_037_000

    /// `PRAGMA table_xinfo` (SQLite 3.26).
    static let hasTableXInfo = versionNumber >= 3_026_000

    /// `INSERT ... RETURNING` (SQLite 3.35).
    static let hasReturning = versionNumber >= 3_035_000

    /// `INSERT ... ON CONFLICT DO UPDATE` (SQLite 3.24).
    static let hasUpsert = versionNumber >= 3_024_000

    /// The JSON functions, `json_each` included: built in since 3.38 unless
    /// omitted, an option before. Asked of the library, on a connection of
    /// its own.
    static let hasJSON: Bool = {
        var connection: OpaquePointer?
        defer { sqlite3_close_v2(connection) }
        guard sqlite3_open_v2(":memory:", &connection, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { return false }
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        return sqlite3_prepare_v2(connection, "SELECT value FROM json_each('[1]')", -1, &statement, nil) == SQLITE_OK
    }()

    /// Whether the authorizer reports a read (with an empty column name) of
    /// a table a statement reads no column of (`SELECT COUNT(*) FROM t`).
    /// SQLite 3.15 does not. Asked of the library, on a connection of its own.
    static let authorizerReportsTablesReadWithoutColumns: Bool = {
        final class Probe {
            var sawRead = false
        }
        var connection: OpaquePointer?
        defer { sqlite3_close_v2(connection) }
        guard sqlite3_open_v2(":memory:", &connection, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            sqlite3_exec(connection, "CREATE TABLE t(a)", nil, nil, nil) == SQLITE_OK
        else { return false }
        let probe = Probe()
        return withExtendedLifetime(probe) {
            sqlite3_set_authorizer(
                connection,
                { context, action, _, _, _, _ in
                    if action == SQLITE_READ, let context {
                        Unmanaged<Probe>.fromOpaque(context).takeUnretainedValue().sawRead = true
                    }
                    return SQLITE_OK
                }, Unmanaged.passUnretained(probe).toOpaque())
            var statement: OpaquePointer?
            defer { sqlite3_finalize(statement) }
            guard sqlite3_prepare_v2(connection, "SELECT COUNT(*) FROM t", -1, &statement, nil) == SQLITE_OK else {
                return false
            }
            return probe.sawRead
        }
    }()

    /// The message of the errors thrown when a feature is missing.
    static func missingFeatureMessage(_ feature: String, since version: String) -> String {
        let current = String(cString: sqlite3_libversion())
        return "\(feature) needs SQLite \(version) or later, and this library is SQLite \(current)"
    }
}
