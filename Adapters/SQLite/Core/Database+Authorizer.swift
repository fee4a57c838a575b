internal import CSQLite
import DatabaseRegions

// SQLite's authorizer is called while a statement is compiled, once for each
// table and column the statement reads, and for each other action it may
// perform. We use it to record regions: https://www.sqlite.org/c3ref/set_authorizer.html
// > The authorizer callback is invoked as SQL statements are being compiled
// > by sqlite3_prepare() or its variants [...] The 3rd through 6th parameters
// > to the callback are either NULL pointers or zero-terminated strings that
// > contain additional details about the action to be authorized.

extension Database {
    /// Installs the connection's authorizer. The callback captures nothing:
    /// it finds the `Database` through the unretained context pointer, which
    /// stays valid because the connection is closed before the `Database` is
    /// deallocated.
    func installAuthorizer() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_set_authorizer(
            connection,
            { context, action, argument1, argument2, argument3, argument4 in
                guard let context else { return SQLITE_OK }
                let database = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                database.regionRecorder?.record(
                    action: action, argument1, argument2, argument3, argument4)
                return SQLITE_OK
            },
            context)
    }
}

/// What one statement reads, as reported by the authorizer while it compiles.
final class RegionRecorder {
    private struct TableReads {
        var name: String
        /// nil: every column (SQLite reports an empty column name for
        /// `COUNT(*)` and for `rowid`).
        var columns: Set<String>?
    }

    /// Reads, keyed by lowercased table name.
    private var reads: [String: TableReads] = [:]

    /// Whether the statement creates, drops or alters a schema object.
    private(set) var changesSchema = false

    func record(
        action: Int32,
        _ argument1: UnsafePointer<CChar>?, _ argument2: UnsafePointer<CChar>?,
        _ argument3: UnsafePointer<CChar>?, _ argument4: UnsafePointer<CChar>?
    ) {
        switch action {
        case SQLITE_READ:
            // argument1: table, argument2: column, argument3: database,
            // argument4: the innermost trigger or view responsible, if any.
            guard let argument1 else { return }
            let table = String(cString: argument1)
            let key = table.asciiLowercased
            let column = argument2.map { String(cString: $0) } ?? ""
            var entry = reads[key] ?? TableReads(name: table, columns: [])
            if column.isEmpty {
                entry.columns = nil
            } else {
                entry.columns?.insert(column.asciiLowercased)
            }
            reads[key] = entry
        case SQLITE_CREATE_INDEX, SQLITE_CREATE_TABLE, SQLITE_CREATE_TEMP_INDEX, SQLITE_CREATE_TEMP_TABLE,
            SQLITE_CREATE_TEMP_TRIGGER, SQLITE_CREATE_TEMP_VIEW, SQLITE_CREATE_TRIGGER, SQLITE_CREATE_VIEW,
            SQLITE_DROP_INDEX, SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_INDEX, SQLITE_DROP_TEMP_TABLE,
            SQLITE_DROP_TEMP_TRIGGER, SQLITE_DROP_TEMP_VIEW, SQLITE_DROP_TRIGGER, SQLITE_DROP_VIEW,
            SQLITE_ALTER_TABLE, SQLITE_CREATE_VTABLE, SQLITE_DROP_VTABLE, SQLITE_ATTACH, SQLITE_DETACH:
            changesSchema = true
        default:
            break
        }
    }

    /// The recorded region: schema tables dropped, views dropped (their base
    /// tables were recorded as well), and a table whose every column is read
    /// recorded as the whole table.
    func region(in database: Database) throws -> DatabaseRegion {
        var region = DatabaseRegion()
        for (key, entry) in reads {
            switch key {
            case "sqlite_master", "sqlite_temp_master", "sqlite_schema", "sqlite_temp_schema":
                continue
            default:
                break
            }
            let schema = try database.tableSchema(named: entry.name)
            if schema?.isView == true { continue }
            var columns = entry.columns
            if let readColumns = columns, let schema,
                schema.columns.allSatisfy({ readColumns.contains($0.asciiLowercased) })
            {
                columns = nil
            }
            region.formUnion(DatabaseRegion(table: schema?.name ?? entry.name, columns: columns))
        }
        return region
    }
}
