#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// Installs SQLite's change hooks on a writer connection, with its broker
/// as their unretained context, and C callbacks that capture nothing.
///
/// The broker lives as long as its `Database`, which closes the connection
/// (and so uninstalls the hooks) before it is deallocated.
enum ChangeHooks {
    /// Installs the commit and rollback hooks, and the pre-update hook
    /// (`preUpdate`) or the update hook.
    static func install(on connection: OpaquePointer?, broker: ObservationBroker, preUpdate: Bool) {
        let context = Unmanaged.passUnretained(broker).toOpaque()
        sqlite3_commit_hook(
            connection,
            { context in
                Unmanaged<ObservationBroker>.fromOpaque(context!).takeUnretainedValue().commitHook()
            }, context)
        sqlite3_rollback_hook(
            connection,
            { context in
                Unmanaged<ObservationBroker>.fromOpaque(context!).takeUnretainedValue().rollbackHook()
            }, context)
        installRowHook(on: connection, broker: broker, preUpdate: preUpdate)
    }

    /// Installs the pre-update hook (`preUpdate`) or the update hook alone:
    /// after `removeRowHook(from:preUpdate:)`, for a statement that writes
    /// no watched table (see `ObservationBroker.statementWillStart(_:)`).
    static func installRowHook(on connection: OpaquePointer?, broker: ObservationBroker, preUpdate: Bool) {
        let context = Unmanaged.passUnretained(broker).toOpaque()
        if preUpdate {
            sqlite3_preupdate_hook(
                connection,
                { context, connection, operation, schema, table, oldKey, newKey in
                    guard let context, let connection, let schema, let table else { return }
                    let broker = Unmanaged<ObservationBroker>.fromOpaque(context).takeUnretainedValue()
                    PreUpdateChangeTracking.rowDidChange(
                        broker, connection: connection, operation: operation, schema: schema, table: table,
                        oldKey: oldKey, newKey: newKey)
                }, context)
        } else {
            sqlite3_update_hook(
                connection,
                { context, operation, schema, table, rowID in
                    guard let context, let schema, let table else { return }
                    let broker = Unmanaged<ObservationBroker>.fromOpaque(context).takeUnretainedValue()
                    UpdateHookChangeTracking.rowDidChange(
                        broker, operation: operation, schema: schema, table: table, rowID: rowID)
                }, context)
        }
    }

    /// Removes the pre-update hook (`preUpdate`) or the update hook, so
    /// that SQLite prepares no row event at all for each row a statement
    /// changes. The commit and rollback hooks stay.
    static func removeRowHook(from connection: OpaquePointer?, preUpdate: Bool) {
        if preUpdate {
            sqlite3_preupdate_hook(connection, nil, nil)
        } else {
            sqlite3_update_hook(connection, nil, nil)
        }
    }
}
