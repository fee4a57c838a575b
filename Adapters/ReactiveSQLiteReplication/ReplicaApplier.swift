import ReactiveSQLite

/// Applies a source's committed transactions to a SQLite replica: one
/// SQLite transaction per source transaction, with the source's position
/// stored in the same transaction.
///
/// Guarantees:
/// - **Atomic.** Observers of the replica see each source transaction as
///   one commit: two tables changed by one source transaction are never
///   seen half-applied.
/// - **Exactly once.** The position is written with the changes, so a
///   crash leaves either both or neither. A transaction at or before the
///   stored position is skipped (`apply(_:)` returns false): a source that
///   sends again what it sent before a crash applies nothing twice.
/// - **Never silently wrong.** An update or a deletion that finds no row,
///   an insertion whose key exists, an update that gives a row the key of
///   another, a table or column the replica does not have: each throws a
///   `ReplicationError` (or the `DatabaseError` of SQLite, for a table or
///   column it does not have), and the transaction is rolled back.
///
/// The positions are kept in the table `_reactivesqlite_replication`, one
/// row per source name, with the source's own state (see `sourceState`).
/// The app reads the replica; only the applier writes it.
public final class ReplicaApplier: Sendable {
    /// The replica.
    public let writer: any DatabaseWriter
    /// The name of the source, which keys its position.
    public let source: String

    /// The table of positions.
    static let stateTable = "_reactivesqlite_replication"

    /// Opens the replica of `source` in `writer`, creating the table of
    /// positions if needed.
    ///
    /// - Throws: A `DatabaseError` when the database cannot be written.
    public init(writer: any DatabaseWriter, source: String = "default") throws {
        self.writer = writer
        self.source = source
        try writer.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS \(Self.stateTable) (
                    source TEXT PRIMARY KEY, position INTEGER NOT NULL, sourceState TEXT)
                """)
        }
    }

    /// The position of the last transaction applied, nil before the first
    /// copy.
    public func position() throws -> ReplicationPosition? {
        try writer.read { db in try Self.storedPosition(db, source: source) }
    }

    /// The position of the last transaction applied, as `position()`
    /// gives it, without blocking the calling thread.
    public func position() async throws -> ReplicationPosition? {
        let source = self.source
        return try await writer.read { db in try Self.storedPosition(db, source: source) }
    }

    /// What the source stored with its position (a PostgreSQL snapshot
    /// during the initial copy's catch-up), nil when nothing.
    public func sourceState() throws -> String? {
        let source = self.source
        return try writer.read { db in try Self.storedState(db, source: source) }
    }

    /// The source's state, as `sourceState()` gives it, without blocking
    /// the calling thread.
    public func sourceState() async throws -> String? {
        let source = self.source
        return try await writer.read { db in try Self.storedState(db, source: source) }
    }

    static func storedState(_ db: Database, source: String) throws -> String? {
        let row = try Row.fetchOne(db, sql: "SELECT sourceState FROM \(stateTable) WHERE source = ?", arguments: [source])
        guard let row else { return nil }
        let state: String? = try row[0]
        return state
    }

    static func storedPosition(_ db: Database, source: String) throws -> ReplicationPosition? {
        let stored = try Int64.fetchOne(
            db, sql: "SELECT position FROM \(stateTable) WHERE source = ?", arguments: [source])
        return stored.map { ReplicationPosition(UInt64(bitPattern: $0)) }
    }

    /// The replica's tables, as the last copy made them (the table of
    /// positions aside).
    public func tables() async throws -> [ReplicaTable] {
        try await writer.read { db in
            let names = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                AND name <> '\(Self.stateTable)' ORDER BY name
                """)
            return try names.map { name in
                let columns = try Row.fetchAll(db, sql: "SELECT name, type, pk FROM pragma_table_info(?)", arguments: [name])
                let key: [(Int, String)] = try columns.compactMap { row in
                    let position: Int = try row[2]
                    return position > 0 ? (position, try row[0]) : nil
                }
                // The UNIQUE constraints of the definition, in its order.
                let uniqueIndexes = try String.fetchAll(
                    db, sql: "SELECT name FROM pragma_index_list(?) WHERE origin = 'u' ORDER BY seq DESC",
                    arguments: [name])
                let uniqueKeys = try uniqueIndexes.map { index in
                    try String.fetchAll(
                        db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [index])
                }
                return ReplicaTable(
                    name: name,
                    columns: try columns.map { ReplicaTable.Column(name: try $0[0], type: try $0[1]) },
                    primaryKey: key.sorted { $0.0 < $1.0 }.map(\.1),
                    uniqueKeys: uniqueKeys)
            }
        }
    }

    // MARK: - Initial copy

    /// Replaces the replica's tables with `tables` and their rows, and
    /// stores `position` and `sourceState`, in one SQLite transaction.
    ///
    /// - Parameters:
    ///   - tables: The tables of the copy; each replaces the replica's
    ///     table of its name.
    ///   - position: The source's position that the copy stands for: the
    ///     copy shows every source transaction at or before it (see
    ///     `waitUntilReplicated(_:source:in:)`). It replaces the stored
    ///     position, even a later one.
    ///   - sourceState: What the source needs to resume after the copy
    ///     (PostgreSQL: the copy's snapshot), or nil.
    ///   - rows: Called once per table, in order, with a function that
    ///     inserts one row (values in the order of the table's columns).
    /// - Throws: The error of `rows`, or a `DatabaseError`; nothing is kept.
    public func replaceTables(
        _ tables: [ReplicaTable], position: ReplicationPosition, sourceState: String?,
        rows: (ReplicaTable, (_ values: [DatabaseValue]) throws -> Void) throws -> Void
    ) throws {
        try writer.write { db in
            for table in tables {
                let insert = try Self.recreate(table, in: db)
                try rows(table) { values in try Self.insert(values, into: table, with: insert) }
            }
            try Self.store(position, sourceState: sourceState, source: source, in: db)
        }
    }

    /// Replaces the replica's tables with `tables` and `rows` (per table,
    /// in order; values in the order of its columns), as
    /// `replaceTables(_:position:sourceState:rows:)` does, without blocking
    /// the calling thread.
    public func replaceTables(
        _ tables: [ReplicaTable], rows: [[[DatabaseValue]]], position: ReplicationPosition, sourceState: String?
    ) async throws {
        precondition(tables.count == rows.count, "one list of rows per table")
        let source = self.source
        try await writer.write { db in
            for (table, rows) in zip(tables, rows) {
                let insert = try Self.recreate(table, in: db)
                for values in rows { try Self.insert(values, into: table, with: insert) }
            }
            try Self.store(position, sourceState: sourceState, source: source, in: db)
        }
    }

    /// Replaces the replica's tables with `tables` and the rows that
    /// `batches` reads from the source, and stores `position` and
    /// `sourceState`, in one SQLite transaction, as
    /// `replaceTables(_:position:sourceState:rows:)` does, without
    /// blocking the calling thread and without holding every row: each
    /// batch is inserted as it comes.
    ///
    /// The writer's access waits on its connection's queue for each batch,
    /// so the source can read the next batch while the writer inserts
    /// this one: at most two batches are held at once. Observers of the
    /// replica see the tables replaced in one commit, as before.
    ///
    /// ```swift
    /// try await applier.replaceTables(tables, position: position, sourceState: nil) { table, write in
    ///     while let batch = try await source.nextRows(of: table.name, limit: 1_000) {
    ///         try await write(batch)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - tables: The tables of the copy; each replaces the replica's
    ///     table of its name.
    ///   - position: The source's position that the copy stands for: the
    ///     copy shows every source transaction at or before it.
    ///   - sourceState: What the source needs to resume after the copy,
    ///     or nil.
    ///   - batches: Called once per table, in order, with a function that
    ///     inserts a batch of its rows (values in the order of the table's
    ///     columns), and returns once the writer took the batch: when the
    ///     next call returns, the batch before was inserted. `batches`
    ///     must not access the replica: the writer waits for it.
    /// - Throws: The error of `batches`, or a `DatabaseError` or a
    ///   `ReplicationError` of the insertion (then the `write` that
    ///   `batches` awaits throws it too); nothing is kept.
    public func replaceTables(
        _ tables: [ReplicaTable], position: ReplicationPosition, sourceState: String?,
        batches: (_ table: ReplicaTable, _ write: ([[DatabaseValue]]) async throws -> Void) async throws -> Void
    ) async throws {
        let handoff = RowBatchHandoff()
        let writer = self.writer
        let source = self.source
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await writer.write { db in
                        for table in tables {
                            let insert = try Self.recreate(table, in: db)
                            while case .rows(let rows) = try handoff.receive() {
                                for values in rows { try Self.insert(values, into: table, with: insert) }
                            }
                        }
                        try Self.store(position, sourceState: sourceState, source: source, in: db)
                    }
                } catch {
                    // A sender waiting, or the next one, throws it.
                    handoff.fail(error)
                    throw error
                }
            }
            do {
                for table in tables {
                    try await batches(table) { rows in try await handoff.send(.rows(rows)) }
                    try await handoff.send(.endOfTable)
                }
            } catch {
                // The writer throws it and rolls back; the write's own
                // error, when it failed first, is the one `batches` met.
                handoff.fail(error)
                try? await group.waitForAll()
                throw error
            }
            try await group.waitForAll()
        }
    }

    /// Drops and creates `table`; returns its insertion statement.
    private static func recreate(_ table: ReplicaTable, in db: Database) throws -> Statement {
        try db.execute(sql: "DROP TABLE IF EXISTS \(quoted(table.name))")
        try db.execute(sql: table.definition)
        return try db.makeStatement(sql: """
            INSERT INTO \(quoted(table.name)) (\(table.columns.map { quoted($0.name) }.joined(separator: ", "))) \
            VALUES (\(Array(repeating: "?", count: table.columns.count).joined(separator: ", ")))
            """)
    }

    private static func insert(_ values: [DatabaseValue], into table: ReplicaTable, with insert: Statement) throws {
        guard values.count == table.columns.count else {
            throw ReplicationError("\(table.name): a copied row has \(values.count) values for \(table.columns.count) columns")
        }
        try insert.execute(arguments: StatementArguments(values))
    }

    // MARK: - Transactions

    /// Applies a source transaction in one SQLite transaction, with its
    /// position, unless the replica already holds it.
    ///
    /// - Parameters:
    ///   - transaction: The source transaction, with its position.
    ///   - sourceState: Replaces the source's state, when given
    ///     (`.some(nil)` clears it).
    /// - Returns: False when the transaction's position is at or before the
    ///   stored one: it was applied before (exactly once).
    /// - Throws: A `ReplicationError` when the replica does not match the
    ///   change, or a `DatabaseError`; the SQLite transaction is rolled back.
    @discardableResult
    public func apply(_ transaction: ReplicatedTransaction, sourceState: String?? = .none) throws -> Bool {
        let source = self.source
        return try writer.write { db in try Self.apply(transaction, sourceState: sourceState, source: source, in: db) }
    }

    /// Applies a source transaction, as `apply(_:sourceState:)` does,
    /// without blocking the calling thread: for a replicator that runs in
    /// Swift concurrency, whose threads must not wait for the writer.
    @discardableResult
    public func apply(_ transaction: ReplicatedTransaction, sourceState: String?? = .none) async throws -> Bool {
        let source = self.source
        return try await writer.write { db in
            try Self.apply(transaction, sourceState: sourceState, source: source, in: db)
        }
    }

    /// Forgets the source's position and state, in a commit of its own,
    /// and keeps the tables: the replica then holds no position of the
    /// source, as before its first copy, and `waitUntilReplicated` waits
    /// for the next copy. For a replica whose position belongs to another
    /// history of its source (PostgreSQL: another server, or a server
    /// restored to an earlier point), whose rows no position of the
    /// source's own history describes.
    package func forgetPosition() async throws {
        let source = self.source
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM \(Self.stateTable) WHERE source = ?", arguments: [source])
        }
    }

    /// Stores a later position with no change (the source is known to have
    /// no change of the replica's tables up to it), when it is after the
    /// stored one. Waiters of `waitUntilReplicated` up to it resume.
    public func advance(to position: ReplicationPosition) throws {
        try apply(ReplicatedTransaction(position: position, changes: []))
    }

    /// Stores a later position with no change, as `advance(to:)` does,
    /// without blocking the calling thread.
    public func advance(to position: ReplicationPosition) async throws {
        try await apply(ReplicatedTransaction(position: position, changes: []))
    }

    private static func apply(
        _ transaction: ReplicatedTransaction, sourceState: String??, source: String, in db: Database
    ) throws -> Bool {
        let stored = try storedPosition(db, source: source)
        if let stored, transaction.position <= stored { return false }
        for change in transaction.changes { try apply(change, in: db) }
        if let sourceState {
            try store(transaction.position, sourceState: sourceState, source: source, in: db)
        } else if stored != nil {
            // The source's state stays: only the position is written.
            try db.execute(
                sql: "UPDATE \(stateTable) SET position = ? WHERE source = ?",
                arguments: [Int64(bitPattern: transaction.position.value), source])
        } else {
            try store(transaction.position, sourceState: nil, source: source, in: db)
        }
        return true
    }

    private static func store(
        _ position: ReplicationPosition, sourceState: String?, source: String, in db: Database
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO \(stateTable) (source, position, sourceState) VALUES (?, ?, ?)
                ON CONFLICT (source) DO UPDATE SET position = excluded.position, sourceState = excluded.sourceState
                """,
            arguments: [source, Int64(bitPattern: position.value), sourceState])
    }

    private static func apply(_ change: ReplicatedChange, in db: Database) throws {
        switch change {
        case .insert(let table, let row):
            let columns = row.keys.sorted()
            guard !columns.isEmpty else { throw ReplicationError("\(table): an inserted row has no column") }
            let sql = "INSERT INTO \(quoted(table)) (\(columns.map(quoted).joined(separator: ", "))) VALUES ("
                + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
            do {
                try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(columns.map { row[$0]! }))
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw ReplicationError(
                    "\(table): an inserted row's key exists in the replica (\(error.message ?? "constraint")): \(describe(row))")
            }
        case .update(let table, let key, let row):
            let keyColumns = key.keys.sorted()
            let columns = row.keys.sorted()
            guard !keyColumns.isEmpty else { throw ReplicationError("\(table): an update has no key") }
            let condition = keyColumns.map { "\(quoted($0)) IS ?" }.joined(separator: " AND ")
            let sql: String
            if columns.isEmpty {
                // Only unchanged TOASTed values: the row must exist.
                sql = "UPDATE \(quoted(table)) SET \(quoted(keyColumns[0])) = \(quoted(keyColumns[0])) WHERE \(condition)"
            } else {
                sql = "UPDATE \(quoted(table)) SET " + columns.map { "\(quoted($0)) = ?" }.joined(separator: ", ")
                    + " WHERE " + condition
            }
            let arguments = columns.map { row[$0]! } + keyColumns.map { key[$0]! }
            do {
                try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments))
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                // The source accepted the update: its keys are checked at
                // another time than the replica's (a deferred constraint).
                throw ReplicationError("""
                    \(table): an update breaks a constraint of the replica (\(error.message ?? "constraint")): \
                    key \(describe(key)), new values \(describe(row))
                    """)
            }
            guard db.changesCount == 1 else {
                throw ReplicationError("\(table): the updated row is not in the replica: key \(describe(key))")
            }
        case .delete(let table, let key):
            let keyColumns = key.keys.sorted()
            guard !keyColumns.isEmpty else { throw ReplicationError("\(table): a deletion has no key") }
            let sql = "DELETE FROM \(quoted(table)) WHERE "
                + keyColumns.map { "\(quoted($0)) IS ?" }.joined(separator: " AND ")
            try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(keyColumns.map { key[$0]! }))
            guard db.changesCount == 1 else {
                throw ReplicationError("\(table): the deleted row is not in the replica: key \(describe(key))")
            }
        case .truncate(let tables):
            for table in tables { try db.execute(sql: "DELETE FROM \(quoted(table))") }
        }
    }

    private static func describe(_ row: [String: DatabaseValue]) -> String {
        row.keys.sorted().map { "\($0) = \(row[$0]!)" }.joined(separator: ", ")
    }

    // MARK: - Read-your-writes

    /// Waits until the replica in `reader` holds every source transaction
    /// up to `position`: an app that just wrote to the source, and read
    /// the source's position after its commit (PostgreSQL:
    /// `pg_current_wal_lsn()`), then reads its own write in the replica.
    /// (After an asynchronous commit, `synchronous_commit = off`, the
    /// replica reaches it once PostgreSQL flushed its WAL: logical decoding
    /// reads no further.)
    ///
    /// It returns once the stored position is at or after `position`; the
    /// replica then holds every source transaction whose commit is at or
    /// before `position`, resyncs included:
    /// - A source transaction's changes and its position are stored in one
    ///   SQLite transaction.
    /// - A copy (the first one, or a resync) stores its position in the
    ///   one SQLite transaction that replaces the tables, and the copy
    ///   shows every transaction up to that position. While a copy runs,
    ///   `reader` sees the replica as it was, with the position it had,
    ///   which its rows still satisfy: no waiter returns on the copy's
    ///   position before the copy's rows are there.
    /// - The stored position never goes back while the source's history
    ///   goes on: a resync stores at least the position the replica had
    ///   (`PostgresReplicator` does; `replaceTables` stores the position
    ///   it is given). Positions read one after the other never decrease,
    ///   and a position reached stays reached.
    /// - A replica of another history of the source (PostgreSQL: another
    ///   server, or one restored to an earlier point, whose WAL ends
    ///   before the replica's position) forgets its position before it
    ///   is copied again: a waiter of the new history's positions waits
    ///   for the copy, rather than return with the other history's rows.
    ///
    /// The replicator may run in another process: give `reader` a
    /// configuration with `observesExternalChanges` then.
    ///
    /// - Throws: `CancellationError` when the task is cancelled, or the
    ///   error of the observation.
    public static func waitUntilReplicated(
        _ position: ReplicationPosition, source: String = "default", in reader: some DatabaseReader
    ) async throws {
        let observation = ValueObservation.tracking { db -> ReplicationPosition? in
            // The table appears with the replica's first copy.
            guard try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = ?)", arguments: [stateTable]) == true
            else { return nil }
            return try storedPosition(db, source: source)
        }
        for try await stored in observation.values(in: reader) {
            if let stored, stored >= position { return }
            try Task.checkCancellation()
        }
        try Task.checkCancellation()
    }
}
