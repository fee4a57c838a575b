// The writes of records, on encoded containers: what the public methods of
// `MutablePersistableRecord` and `PersistableRecord` run. Each write runs
// one statement of the record's `RecordWritePlan` through `Statement`'s
// usual path (`setRecordValues`, then `run` or `fetching`): changes reach
// the transaction observers as any other statement's.

extension Database {
    /// The number of plans kept per record type: a type whose records encode
    /// a few different lists of columns keeps one plan per list.
    private static let maximumPlansPerType = 4

    /// Calls `body` with the encoded columns of `record`, in a container
    /// whose storage is reused from one record to the next.
    ///
    /// - Throws: The record's encoding error, or the error of `body`.
    @inline(__always)
    func withPersistenceContainer<Record: EncodableRecord, T>(
        of record: Record, _ body: (inout PersistenceContainer) throws -> T
    ) throws -> T {
        checkAccess()
        var container = spareContainers.popLast() ?? PersistenceContainer()
        defer {
            container.removeAll()
            spareContainers.append(container)
        }
        try record.encode(to: &container)
        return try body(&container)
    }

    /// The plan of a record type for the columns of `container`, when there
    /// is one already: no schema read, no statement run.
    ///
    /// - Complexity: O(c), where c is the number of columns (they are
    ///   compared with the plan's), plus the cost of `databaseTableName`.
    @inline(__always)
    func cachedRecordWritePlan<Record: TableRecord>(
        _ type: Record.Type, for container: PersistenceContainer
    ) -> RecordWritePlan? {
        guard let plans = recordWritePlans[ObjectIdentifier(type)] else { return nil }
        let tableName = Record.databaseTableName
        for plan in plans where plan.columns == container.columns && plan.tableName == tableName {
            return plan
        }
        return nil
    }

    /// The plan of a record type for the columns of `container`. Building
    /// one merges the columns the record encoded twice (then no plan is kept:
    /// such a record builds one for each write), and reads the table's
    /// schema.
    ///
    /// - Throws: A `DatabaseError` when the record encodes no column, or
    ///   when the table does not exist.
    func recordWritePlan<Record: TableRecord>(
        _ type: Record.Type, for container: inout PersistenceContainer
    ) throws -> RecordWritePlan {
        if let plan = cachedRecordWritePlan(type, for: container) { return plan }
        let isCacheable = !container.hasDuplicateColumns
        if !isCacheable { container.deduplicateColumns() }
        let tableName = Record.databaseTableName
        guard !container.isEmpty else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE,
                message: "\(Record.self) encodes no column: a record writes at least one column of \(tableName)",
                connectionLabel: label)
        }
        let table = try existingTableSchema(named: tableName)
        let plan = RecordWritePlan(tableName: tableName, columns: container.columns, table: table)
        if isCacheable {
            // After the schema was read: reading it may have cleared the plans.
            var plans = recordWritePlans[ObjectIdentifier(type)] ?? []
            if plans.count == Self.maximumPlansPerType { plans.removeFirst() }
            plans.append(plan)
            recordWritePlans[ObjectIdentifier(type)] = plans
        }
        return plan
    }

    // MARK: - Writes

    /// Inserts the record's row.
    ///
    /// - Returns: What the record learns, or nil when no row was inserted
    ///   (the conflict resolution or a trigger ignored it).
    func insertRecord<Record: TableRecord>(
        _ type: Record.Type, _ container: inout PersistenceContainer, onConflict: ConflictResolution?
    ) throws -> InsertionSuccess? {
        let plan = try recordWritePlan(type, for: &container)
        let statement = try plan.statement(.insert(onConflict), in: self)
        try statement.setRecordValues(container.values)
        try statement.run(arguments: StatementArguments())
        // An ignored row changes nothing, and leaves the last rowid stale.
        guard changesCount > 0 else { return nil }
        return insertionSuccess(plan, plan.hasRowID ? lastInsertedRowID : 0, &container)
    }

    /// Inserts the record's row, and decodes the inserted row (`RETURNING *`).
    ///
    /// - Throws: A `DatabaseError` when the insert fails, or returns no row
    ///   (a trigger ignored it); the error of `init(row:)`.
    func insertRecordAndFetch<Record: TableRecord & FetchableRecord>(
        _ type: Record.Type, _ container: inout PersistenceContainer
    ) throws -> Record {
        let plan = try recordWritePlan(type, for: &container)
        guard SQLiteFeatures.hasReturning else {
            return try Record(row: insertRecordThenFetch(plan, &container))
        }
        let statement = try plan.statement(.insertReturningRow, in: self)
        try statement.setRecordValues(container.values)
        let row = try statement.fetching { statement -> Row? in
            guard try statement.step() else { return nil }
            let row = statement.currentRow()
            while try statement.step() {}
            return row
        }
        guard let row else {
            throw DatabaseError(
                resultCode: .SQLITE_ERROR, message: "the insert returned no row: a trigger ignored it",
                sql: statement.sql, arguments: StatementArguments(databaseValues: container.values),
                connectionLabel: label)
        }
        return try Record(row: row)
    }

    /// `insertRecordAndFetch` on an SQLite without `RETURNING` (before
    /// 3.35): inserts the row, then selects it by its rowid (or its primary
    /// key, in a WITHOUT ROWID table) in the same access. The row is read
    /// after the statement, and so shows what AFTER INSERT triggers changed.
    private func insertRecordThenFetch(_ plan: RecordWritePlan, _ container: inout PersistenceContainer) throws -> Row {
        let statement = try plan.statement(.insert(nil), in: self)
        try statement.setRecordValues(container.values)
        try statement.run(arguments: StatementArguments())
        let table = SQLLexer.quote(plan.tableName)
        let rows: [Row]
        if changesCount == 0 {
            rows = []
        } else if plan.hasRowID {
            // `*` and the hidden rowid, which `*` leaves out, as `RETURNING` does.
            var columns = "*"
            if case .rowID(column: nil) = plan.table.primaryKey { columns += ", " + plan.table.rowIDName }
            rows = try fetchRows(
                sql: "SELECT \(columns) FROM \(table) WHERE \(plan.table.rowIDName) = ?",
                arguments: [lastInsertedRowID])
        } else if let keyValues = plan.keyValues(in: container) {
            let condition = plan.table.primaryKeyColumnNames.map { SQLLexer.quote($0) + " = ?" }
                .joined(separator: " AND ")
            rows = try fetchRows(
                sql: "SELECT * FROM \(table) WHERE \(condition)",
                arguments: StatementArguments(databaseValues: keyValues))
        } else {
            throw DatabaseError(
                resultCode: .SQLITE_ERROR,
                message: SQLiteFeatures.missingFeatureMessage(
                    "insertAndFetch of a record that does not encode its WITHOUT ROWID table's primary key "
                        + "(INSERT ... RETURNING)", since: "3.35"),
                sql: statement.sql, connectionLabel: label)
        }
        guard let row = rows.first else {
            throw DatabaseError(
                resultCode: .SQLITE_ERROR, message: "the insert returned no row: a trigger ignored it",
                sql: statement.sql, arguments: StatementArguments(databaseValues: container.values),
                connectionLabel: label)
        }
        return row
    }

    /// Inserts the record's row, or updates the non-key columns of the row
    /// it conflicts with.
    ///
    /// - Returns: The rowid of the inserted or updated row, or nil when no
    ///   row was written (a trigger ignored it).
    func upsertRecord<Record: TableRecord>(
        _ type: Record.Type, _ container: inout PersistenceContainer
    ) throws -> InsertionSuccess? {
        guard SQLiteFeatures.hasUpsert else {
            throw DatabaseError(
                resultCode: .SQLITE_ERROR,
                message: SQLiteFeatures.missingFeatureMessage("upsert (INSERT ... ON CONFLICT DO UPDATE)", since: "3.24"),
                connectionLabel: label)
        }
        let plan = try recordWritePlan(type, for: &container)
        let statement = try plan.statement(.upsert, in: self)
        try statement.setRecordValues(container.values)
        guard plan.hasRowID else {
            try statement.run(arguments: StatementArguments())
            guard changesCount > 0 else { return nil }
            return insertionSuccess(plan, 0, &container)
        }
        let rowID = try statement.fetching { statement -> Int64? in
            guard try statement.step() else { return nil }
            let value = statement.columnValue(at: 0)
            while try statement.step() {}
            guard case .integer(let rowID) = value.storage else { return nil }
            return rowID
        }
        guard let rowID else { return nil }
        return insertionSuccess(plan, rowID, &container)
    }

    /// The container with the rowid in the column that holds it.
    private func insertionSuccess(
        _ plan: RecordWritePlan, _ rowID: Int64, _ container: inout PersistenceContainer
    ) -> InsertionSuccess {
        if let position = plan.rowIDPosition, plan.hasRowID {
            container.values[position] = DatabaseValue(storage: .integer(rowID))
        }
        return InsertionSuccess(rowID: rowID, rowIDColumn: plan.rowIDColumn, persistenceContainer: container)
    }

    /// Updates the columns of the record's row.
    ///
    /// - Returns: Whether the row exists (false for a NULL key).
    /// - Throws: A `DatabaseError` when the record does not encode its key
    ///   columns, or when the update fails.
    func updateRecord<Record: TableRecord>(
        _ type: Record.Type, _ container: inout PersistenceContainer, columns: RecordUpdatedColumns
    ) throws -> Bool {
        let plan = try recordWritePlan(type, for: &container)
        try checkKeyIsEncoded(plan, Record.self)
        if plan.keyIsNull(in: container) { return false }
        let statement = try plan.statement(.update(columns), in: self)
        try statement.setRecordValues(container.values)
        try statement.run(arguments: StatementArguments())
        return changesCount > 0
    }

    /// Updates the columns of the record's row, or throws
    /// `RecordError.recordNotFound`.
    func updateExistingRecord<Record: TableRecord>(
        _ type: Record.Type, _ container: inout PersistenceContainer, columns: RecordUpdatedColumns
    ) throws {
        guard try updateRecord(type, &container, columns: columns) else {
            throw recordNotFound(type, &container)
        }
    }

    /// Updates the columns whose values differ between `container` and
    /// `oldContainer`: no statement at all when none does.
    ///
    /// - Returns: Whether a column changed.
    /// - Throws: `RecordError.recordNotFound` when a column changed and the
    ///   row does not exist; a `DatabaseError`.
    /// - Complexity: O(c) value comparisons, where c is the number of
    ///   columns, when both records encode the same columns in the same
    ///   order; O(c²) name comparisons otherwise.
    func updateRecordChanges<Record: TableRecord>(
        _ type: Record.Type, _ container: inout PersistenceContainer, from oldContainer: inout PersistenceContainer
    ) throws -> Bool {
        if cachedRecordWritePlan(type, for: container) == nil {
            // A plan may have to merge columns encoded twice: compare the
            // merged columns, and changes are positions in the plan's columns.
            container.deduplicateColumns()
            oldContainer.deduplicateColumns()
        }
        var changed: [Int] = []
        var mask: UInt64 = 0
        let count = container.count
        if container.columns == oldContainer.columns {
            for position in 0..<count where container.values[position] != oldContainer.values[position] {
                if position < 64 { mask |= 1 << UInt64(position) }
                if count > 64 { changed.append(position) }
            }
        } else {
            if oldContainer.hasDuplicateColumns { oldContainer.deduplicateColumns() }
            for position in 0..<count {
                let oldPosition = oldContainer.index(ofColumn: container.columns[position])
                guard oldPosition.map({ oldContainer.values[$0] }) != container.values[position] else { continue }
                if position < 64 { mask |= 1 << UInt64(position) }
                if count > 64 { changed.append(position) }
            }
        }
        let columns: RecordUpdatedColumns
        if count > 64 {
            guard !changed.isEmpty else { return false }
            columns = RecordUpdatedColumns(positions: changed)
        } else {
            guard mask != 0 else { return false }
            columns = .mask(mask)
        }
        try updateExistingRecord(type, &container, columns: columns)
        return true
    }

    /// Updates the record's row, or inserts it when the key is NULL or no
    /// row has it.
    ///
    /// - Returns: What the record learns when it was inserted.
    func saveRecord<Record: TableRecord>(
        _ type: Record.Type, _ container: inout PersistenceContainer
    ) throws -> InsertionSuccess? {
        let plan = try recordWritePlan(type, for: &container)
        if plan.keyPositions != nil, try updateRecord(type, &container, columns: .all) {
            return nil
        }
        return try insertRecord(type, &container, onConflict: nil)
    }

    /// Deletes the record's row.
    ///
    /// - Returns: Whether a row was deleted.
    func deleteRecord<Record: TableRecord>(_ type: Record.Type, _ container: inout PersistenceContainer) throws -> Bool {
        let plan = try recordWritePlan(type, for: &container)
        try checkKeyIsEncoded(plan, Record.self)
        if plan.keyIsNull(in: container) { return false }
        let statement = try plan.statement(.delete, in: self)
        try statement.setRecordValues(container.values)
        try statement.run(arguments: StatementArguments())
        return changesCount > 0
    }

    /// Whether the record's row exists.
    func recordExists<Record: TableRecord>(_ type: Record.Type, _ container: inout PersistenceContainer) throws -> Bool {
        let plan = try recordWritePlan(type, for: &container)
        try checkKeyIsEncoded(plan, Record.self)
        if plan.keyIsNull(in: container) { return false }
        let statement = try plan.statement(.exists, in: self)
        try statement.setRecordValues(container.values)
        return try statement.fetching { statement in
            guard try statement.step(), case .integer(let exists) = statement.columnValue(at: 0).storage else {
                return false
            }
            return exists != 0
        }
    }

    // MARK: - Errors

    /// Throws when the record does not encode every primary key column: it
    /// cannot say which row it is.
    private func checkKeyIsEncoded<Record>(_ plan: RecordWritePlan, _ type: Record.Type) throws {
        guard plan.keyPositions == nil else { return }
        let keyColumns = plan.table.primaryKeyColumnNames
        let missing = keyColumns.filter { column in !plan.columns.contains { $0.isSameIdentifier(as: column) } }
        let what: String
        if case .rowID(column: nil) = plan.table.primaryKey {
            what = "table \(plan.table.name) has no primary key: its rows are identified by their rowid, "
                + "which \(Record.self) must encode as a column named \(plan.table.rowIDName)"
        } else {
            what = "the primary key of table \(plan.table.name) is (\(keyColumns.joined(separator: ", "))), "
                + "and \(Record.self) does not encode \(missing.joined(separator: ", "))"
        }
        throw DatabaseError(
            resultCode: .SQLITE_MISUSE, message: "\(Record.self) cannot identify its row: \(what)",
            connectionLabel: label)
    }

    /// `RecordError.recordNotFound` for the record's key.
    private func recordNotFound<Record: TableRecord>(
        _ type: Record.Type, _ container: inout PersistenceContainer
    ) -> RecordError {
        let key = (try? recordWritePlan(type, for: &container))?.keyDescription(in: container) ?? [:]
        return RecordError.recordNotFound(databaseTableName: Record.databaseTableName, key: key)
    }
}
