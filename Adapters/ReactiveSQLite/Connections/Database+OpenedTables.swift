import DatabaseRegions
#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

extension Database {
    /// The tables a read statement opens and the authorizer did not report:
    /// each as a whole table, added to the statement's recorded `region`.
    ///
    /// Recent SQLite reports a read with an empty column name for a table a
    /// statement reads no column of (`SELECT COUNT(*) FROM t`, `SELECT 1 FROM
    /// t`); an older one, such as the SQLite 3.15 inside SQLCipher 3.4.1,
    /// reports nothing, and such a statement's region would miss the table
    /// (`SQLiteFeatures.authorizerReportsTablesReadWithoutColumns`). On such
    /// a library, the program of each read statement (`EXPLAIN`) tells
    /// which tables it opens (`OpenRead`, `ReopenIdx`: a root page, of the
    /// table or of one of its indices). When that program cannot be read,
    /// the region is the full database: changes may be over-reported, never
    /// missed.
    ///
    /// - Complexity: One `EXPLAIN` of the statement, and one read of
    ///   `sqlite_master` per schema it opens pages of, at compile time only.
    func regionIncludingOpenedTables(_ region: DatabaseRegion, statement handle: OpaquePointer) -> DatabaseRegion {
        guard !SQLiteFeatures.authorizerReportsTablesReadWithoutColumns,
            sqlite3_stmt_readonly(handle) != 0, !region.isFullDatabase, let sql = sqlite3_sql(handle)
        else { return region }
        // The statements run here record nothing.
        let (savedRegionRecorder, savedEffectsRecorder) = (regionRecorder, effectsRecorder)
        (regionRecorder, effectsRecorder) = (nil, nil)
        defer { (regionRecorder, effectsRecorder) = (savedRegionRecorder, savedEffectsRecorder) }

        // Root pages by database index (0 main, 1 temp, then attached ones).
        var rootPages: [Int32: Set<Int64>] = [:]
        let explained = forEachRow(of: "EXPLAIN " + String(cString: sql)) { row in
            let opcode = sqlite3_column_text(row, 1).map { String(cString: $0) }
            guard opcode == "OpenRead" || opcode == "ReopenIdx" else { return }
            // Columns of EXPLAIN: addr, opcode, p1, p2 (root page), p3 (database), p4, p5, comment.
            let page = sqlite3_column_int64(row, 3)
            // Page 1 is sqlite_master, whose reads are not changes.
            if page > 1 { rootPages[sqlite3_column_int(row, 4), default: []].insert(page) }
        }
        guard explained else { return .fullDatabase }
        guard !rootPages.isEmpty else { return region }
        var schemaNames: [Int32: String] = [:]
        // Columns of PRAGMA database_list: seq, name, file.
        guard forEachRow(of: "PRAGMA database_list", { row in
            schemaNames[sqlite3_column_int(row, 0)] = sqlite3_column_text(row, 1).map { String(cString: $0) }
        }) else { return .fullDatabase }
        var result = region
        for (database, pages) in rootPages {
            guard let schemaName = schemaNames[database] else { return .fullDatabase }
            let master = schemaName == "temp" ? "sqlite_temp_master" : SQLLexer.quote(schemaName) + ".sqlite_master"
            var found = 0
            let read = forEachRow(of: "SELECT rootpage, tbl_name FROM \(master) WHERE rootpage > 1") { row in
                guard pages.contains(sqlite3_column_int64(row, 0)),
                    let table = sqlite3_column_text(row, 1).map({ String(cString: $0) })
                else { return }
                found += 1
                // A table already in the region keeps the columns recorded for it.
                if !result.isModified(byEventsOfKind: .insert(tableName: table)) {
                    result.formUnion(DatabaseRegion(table: table))
                }
            }
            guard read, found >= pages.count else { return .fullDatabase }
        }
        return result
    }

    /// Runs `sql` with the C API (no statement cache, no region), calling
    /// `body` with each row; false when it fails.
    private func forEachRow(of sql: String, _ body: (OpaquePointer) -> Void) -> Bool {
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            return false
        }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: body(statement)
            case SQLITE_DONE: return true
            default: return false
            }
        }
    }
}
