#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// Which indices `sqlite3_preupdate_old` and `sqlite3_preupdate_new` give
/// the columns of a table with VIRTUAL generated columns, found once per
/// process by asking the SQLite library in use.
///
/// SQLite 3.40.1 (checked on this machine): for a rowid table, both take
/// the index of the column in the stored record, which holds no VIRTUAL
/// column (so the last indices return `SQLITE_RANGE`); for a WITHOUT ROWID
/// table, `_old` takes the index of the column in the table and `_new` its
/// index in the record. A table without VIRTUAL columns has the same
/// indices either way.
struct PreUpdateColumnLayout: Sendable {
    var oldIsStorageIndexed: Bool
    var newIsStorageIndexed: Bool

    static let rowIDTables = probe(
        schema: "CREATE TABLE t(a, v AS (a + 100) VIRTUAL, b); INSERT INTO t(a, b) VALUES (1, 2)")
    static let withoutRowIDTables = probe(
        schema: """
            CREATE TABLE t(a PRIMARY KEY, v AS (a + 100) VIRTUAL, b) WITHOUT ROWID;
            INSERT INTO t(a, b) VALUES (1, 2)
            """)

    /// Updates column `b` (2 → 3) of table `t` in `schema`, and looks at
    /// what index 1 holds: `b` when the index is a record index.
    private static func probe(schema: String) -> PreUpdateColumnLayout {
        let assumed = PreUpdateColumnLayout(oldIsStorageIndexed: true, newIsStorageIndexed: true)
        guard sqlite3_compileoption_used("ENABLE_PREUPDATE_HOOK") != 0 else { return assumed }
        var connection: OpaquePointer?
        defer { sqlite3_close_v2(connection) }
        guard sqlite3_open_v2(":memory:", &connection, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            // No generated columns (SQLite before 3.31): no layout question.
            sqlite3_exec(connection, schema, nil, nil, nil) == SQLITE_OK
        else { return assumed }
        final class Probe {
            var old: Int64?
            var new: Int64?
        }
        let probe = Probe()
        let context = Unmanaged.passUnretained(probe).toOpaque()
        sqlite3_preupdate_hook(
            connection,
            { context, connection, _, _, _, _, _ in
                guard let context else { return }
                let probe = Unmanaged<Probe>.fromOpaque(context).takeUnretainedValue()
                var value: OpaquePointer?
                if sqlite3_preupdate_old(connection, 1, &value) == SQLITE_OK,
                    sqlite3_value_type(value) == SQLITE_INTEGER
                {
                    probe.old = sqlite3_value_int64(value)
                }
                if sqlite3_preupdate_new(connection, 1, &value) == SQLITE_OK,
                    sqlite3_value_type(value) == SQLITE_INTEGER
                {
                    probe.new = sqlite3_value_int64(value)
                }
            }, context)
        guard sqlite3_exec(connection, "UPDATE t SET b = 3", nil, nil, nil) == SQLITE_OK else { return assumed }
        return PreUpdateColumnLayout(oldIsStorageIndexed: probe.old == 2, newIsStorageIndexed: probe.new == 3)
    }
}
