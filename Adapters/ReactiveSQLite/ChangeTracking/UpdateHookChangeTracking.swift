#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import DatabaseRegions

/// The change-tracking strategy of the update hook, where the pre-update
/// hook is not available (or `Configuration.changeTracking` asks for it).
///
/// The hook gives no old values: an UPDATE is a potential change of every
/// column the statement sets, and of every generated column; the new
/// rowid only; no event for WITHOUT ROWID tables, nor for the rows a
/// REPLACE deletes on a unique index (observations of such a table are
/// marked once per execution of a statement that may do it).
enum UpdateHookChangeTracking {
    /// > The sqlite3_update_hook() interface registers a callback function
    /// > [...] to be invoked whenever a row is updated, inserted or deleted
    /// > in a rowid table. https://www.sqlite.org/c3ref/update_hook.html
    @inline(__always)
    static func rowDidChange(
        _ broker: ObservationBroker, operation: Int32, schema: UnsafePointer<CChar>, table: UnsafePointer<CChar>,
        rowID: Int64
    ) {
        #if REACTIVESQLITE_INTERNAL_CHECKS
        broker.rowEventCount += 1
        #endif
        guard broker.isObserving, let (tableName, info, index) = broker.hookedTable(table, schema: schema) else { return }
        if operation != SQLITE_DELETE { broker.markHiddenDeletions(ofTableAt: index, named: tableName) }
        switch operation {
        case SQLITE_INSERT:
            broker.dispatch(DatabaseEvent(kind: .insert(tableName: tableName), rowID: rowID), operation)
        case SQLITE_DELETE:
            broker.dispatch(DatabaseEvent(kind: .delete(tableName: tableName), rowID: rowID), operation)
        case SQLITE_UPDATE:
            // No old values on this path: every column the statement may
            // update is a potential change, and so is every generated column.
            guard let info else {
                // Unknown columns (no metadata, or another schema's table of
                // this name): a potential change of every row and column.
                broker.dispatch(DatabaseEvent(kind: .insert(tableName: tableName), rowID: nil), operation)
                return
            }
            var columns = broker.updatedColumns(ofTableAt: index)
            if !columns.isEmpty { columns.formUnion(info.generatedColumns) }
            let kind: DatabaseEventKind =
                columns.isEmpty ? .insert(tableName: tableName) : .update(tableName: tableName, columnNames: columns)
            let event = DatabaseEvent(kind: kind, rowID: rowID)
            // The hook reports the new rowid only. When the statement may
            // change rowids, the observers of the old rowid must hear of it
            // too: mark at table level.
            if !info.rowIDColumns.isDisjoint(with: columns) {
                broker.dispatch(event, operation, markedAs: DatabaseEvent(kind: kind, rowID: nil))
            } else {
                broker.dispatch(event, operation)
            }
        default:
            break
        }
    }

    /// For each table the statement writes (same order as
    /// `statement.effects.writes`), whether it may delete rows that the
    /// update hook does not report. That is a REPLACE conflict resolution on
    /// a unique index other than the rowid: it deletes the conflicting row
    /// silently, unlike a conflict on the rowid, which the hook reports as
    /// the insertion or update of that rowid.
    ///
    /// REPLACE may come from the statement (`INSERT OR REPLACE`, `REPLACE
    /// INTO`, `UPDATE OR REPLACE`: a scan of its text, conservative), from a
    /// trigger's statement (any write by a trigger counts), or from an
    /// `ON CONFLICT REPLACE` constraint of the table.
    static func mayHideDeletions(_ statement: Statement, tableInfos: [TableHookInfo?]) -> [Bool] {
        var statementReplaces: Bool?
        return statement.effects.writes.enumerated().map { index, writes in
            guard writes.inserts || !writes.updatedColumns.isEmpty else { return false }
            // No metadata (a view, whose writes no hook reports): assume the worst.
            guard let info = tableInfos[index] else { return true }
            guard info.hasUniqueIndex else { return false }
            if writes.isWrittenByTrigger || info.replacesOnConflict { return true }
            if statementReplaces == nil { statementReplaces = SQLLexer.containsKeyword("REPLACE", in: statement.sql) }
            return statementReplaces!
        }
    }
}
