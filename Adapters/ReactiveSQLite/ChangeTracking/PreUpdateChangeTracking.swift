#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import DatabaseRegions

/// The change-tracking strategy of the pre-update hook: it knows the old
/// and new values of every changed row, so an UPDATE is reduced to the
/// columns whose values changed (none: no event), a changed rowid concerns
/// the observers of the old rowid and of the new one, the rows a REPLACE
/// deletes are seen, and WITHOUT ROWID tables give events without rowid.
enum PreUpdateChangeTracking {
    /// > The preupdate hook is invoked [...] before each INSERT, UPDATE, and
    /// > DELETE operation on a database table. https://www.sqlite.org/c3ref/preupdate_blobwrite.html
    @inline(__always)
    static func rowDidChange(
        _ broker: ObservationBroker, connection: OpaquePointer, operation: Int32,
        schema: UnsafePointer<CChar>, table: UnsafePointer<CChar>, oldKey: Int64, newKey: Int64
    ) {
        #if REACTIVESQLITE_INTERNAL_CHECKS
        broker.rowEventCount += 1
        #endif
        guard broker.isObserving, let (tableName, info, _) = broker.hookedTable(table, schema: schema) else { return }
        let withoutRowID = info?.withoutRowID ?? false
        // The row, for the observations' row filters of the table, if any
        // (nothing is allocated otherwise).
        let isFiltered = broker.registry.hasFilters(ofTable: tableName)
        func row(_ sides: ObservationBroker.HookRow.Sides, key: Int64) -> ObservationBroker.HookRow? {
            guard isFiltered, let info else { return nil }
            return ObservationBroker.HookRow(connection: connection, info: info, sides: sides, key: key)
        }
        switch operation {
        case SQLITE_INSERT:
            broker.dispatch(
                DatabaseEvent(kind: .insert(tableName: tableName), rowID: withoutRowID ? nil : newKey), operation,
                row: row(.new, key: newKey))
        case SQLITE_DELETE:
            broker.dispatch(
                DatabaseEvent(kind: .delete(tableName: tableName), rowID: withoutRowID ? nil : oldKey), operation,
                row: row(.old, key: oldKey))
        case SQLITE_UPDATE:
            guard let info else {
                // Unknown columns: an insertion event concerns every observer
                // of the table, whatever its columns. Conservative, never missed.
                broker.dispatch(DatabaseEvent(kind: .insert(tableName: tableName), rowID: nil), operation)
                return
            }
            if !withoutRowID && oldKey != newKey {
                // The row moved: observers of the old rowid and of the new one.
                broker.dispatch(
                    DatabaseEvent(kind: .delete(tableName: tableName), rowID: oldKey), SQLITE_DELETE,
                    row: row(.old, key: oldKey))
                broker.dispatch(
                    DatabaseEvent(kind: .insert(tableName: tableName), rowID: newKey), SQLITE_INSERT,
                    row: row(.new, key: newKey))
                return
            }
            let changedColumns = changedColumns(connection, info)
            // Nothing changed: no event (`UPDATE player SET score = score`).
            guard !changedColumns.isEmpty else { return }
            broker.dispatch(
                DatabaseEvent(kind: .update(tableName: tableName, columnNames: changedColumns),
                              rowID: withoutRowID ? nil : newKey), operation,
                row: row(.both, key: newKey))
        default:
            break
        }
    }

    /// The columns whose old and new values differ, plus the VIRTUAL
    /// generated columns computed from one of them (their values are in no
    /// record; when the columns one is computed from are unknown, any
    /// changed column counts). A value that cannot be read counts as changed.
    private static func changedColumns(_ connection: OpaquePointer, _ info: TableHookInfo) -> Set<String> {
        var changedColumns: Set<String> = []
        for column in info.storedColumns {
            var old: OpaquePointer?
            var new: OpaquePointer?
            guard sqlite3_preupdate_old(connection, column.old, &old) == SQLITE_OK,
                sqlite3_preupdate_new(connection, column.new, &new) == SQLITE_OK
            else {
                changedColumns.insert(column.name)
                continue
            }
            if !sameRawValue(old, new) { changedColumns.insert(column.name) }
        }
        guard !changedColumns.isEmpty else { return changedColumns }
        let storedChanges = changedColumns
        for column in info.virtualColumns
        where column.sources.map({ !$0.isDisjoint(with: storedChanges) }) ?? true {
            changedColumns.insert(column.name)
        }
        return changedColumns
    }

    /// Whether two protected values hold the same raw value (same type and
    /// same bytes), as an index would compare them.
    private static func sameRawValue(_ old: OpaquePointer?, _ new: OpaquePointer?) -> Bool {
        let oldType = sqlite3_value_type(old)
        guard oldType == sqlite3_value_type(new) else { return false }
        switch oldType {
        case SQLITE_NULL:
            return true
        case SQLITE_INTEGER:
            return sqlite3_value_int64(old) == sqlite3_value_int64(new)
        case SQLITE_FLOAT:
            return sqlite3_value_double(old).bitPattern == sqlite3_value_double(new).bitPattern
        default:
            let oldBytes = sqlite3_value_blob(old)
            let oldCount = sqlite3_value_bytes(old)
            let newBytes = sqlite3_value_blob(new)
            let newCount = sqlite3_value_bytes(new)
            guard oldCount == newCount else { return false }
            guard oldCount > 0, let oldBytes, let newBytes else { return true }
            return memcmp(oldBytes, newBytes, Int(oldCount)) == 0
        }
    }
}
