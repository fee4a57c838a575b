/// A record that writes its own row: `insert`, `update`, `updateChanges`,
/// `upsert`, `save`, `delete`, `exists`. Its `didInsert(_:)` may change it
/// after an insert: the way to learn an auto-incremented id.
///
/// ```swift
/// struct Player: Codable, FetchableRecord, MutablePersistableRecord {
///     var id: Int64?            // INTEGER PRIMARY KEY: nil is auto-incremented
///     var name: String
///     var score: Int
///
///     mutating func didInsert(_ inserted: InsertionSuccess) {
///         id = inserted.rowID
///     }
/// }
///
/// try dbQueue.write { db in
///     var player = Player(id: nil, name: "Arthur", score: 100)
///     try player.insert(db)                   // INSERT INTO "player" ...
///     print(player.id!)                       // the new rowid
///     player.score = 200
///     try player.update(db)                   // UPDATE "player" SET ... WHERE "id" = ?
/// }
/// ```
///
/// Records whose inserts do not change them adopt `PersistableRecord`,
/// whose methods do not mutate.
///
/// The row is the one of the record's primary key, read from the table's
/// schema (the rowid, encoded as a `rowid` column, for a table without
/// primary key). Each write runs one statement (`save` two, when its update
/// finds no row), compiled once per connection, and notifies observations
/// as any statement does. <doc:DefiningRecords> details keys, statements and
/// conversions.
///
/// Errors: constraint violations and other SQLite failures throw a
/// `DatabaseError` with the SQL and its arguments; an update of a row that
/// does not exist throws `RecordError.recordNotFound`; a record that does
/// not encode its primary key cannot update, delete or look for its row,
/// and throws a `DatabaseError` (`SQLITE_MISUSE`) that says so.
public protocol MutablePersistableRecord: EncodableRecord, TableRecord {
    /// Called after the record's row was inserted (by `insert`, `upsert`,
    /// and `save` when it inserts), with the rowid of the row. Not called
    /// when no row was inserted (`onConflict: .ignore` skipped it).
    ///
    /// The default implementation does nothing.
    mutating func didInsert(_ inserted: InsertionSuccess)
}

extension MutablePersistableRecord {
    /// Does nothing.
    public mutating func didInsert(_ inserted: InsertionSuccess) {}

    // MARK: - Insert

    /// Inserts the record's row, then calls `didInsert(_:)` with its rowid.
    ///
    /// `INSERT INTO "player" ("id", "name") VALUES (?1, ?2)`, with
    /// `INSERT OR REPLACE`, `OR IGNORE`... for a conflict resolution.
    ///
    /// - Parameters:
    ///   - db: A connection, in a write access.
    ///   - onConflict: What SQLite does when the row violates a constraint.
    ///     nil (the default) is a plain `INSERT`: the table's own resolution,
    ///     `ABORT` unless its schema says otherwise. With `.ignore`, a row
    ///     that would violate a constraint is skipped without error, and
    ///     `didInsert(_:)` is not called.
    /// - Throws: A `DatabaseError` (a constraint violation with its SQL and
    ///   arguments, no such table...), or the record's encoding error.
    /// - Complexity: One statement, compiled once per connection, record
    ///   type, columns and conflict resolution.
    public mutating func insert(_ db: Database, onConflict: Database.ConflictResolution? = nil) throws {
        try db.withPersistenceContainer(of: self) { container in
            if let inserted = try db.insertRecord(Self.self, &container, onConflict: onConflict) {
                didInsert(inserted)
            }
        }
    }

    /// Inserts the record's row and returns it as the database stored it
    /// (`INSERT ... RETURNING *`): with its auto-incremented id, the
    /// defaults of the columns it does not encode, and the changes of
    /// triggers that ran before the insert.
    ///
    /// ```swift
    /// let player = try Player(id: nil, name: "Arthur", score: 0).insertAndFetch(db)
    /// print(player.id!)
    /// ```
    ///
    /// The record itself is not changed, and `didInsert(_:)` is not called:
    /// the returned record comes from the row.
    ///
    /// - Throws: A `DatabaseError`; the errors of `init(row:)` and of the
    ///   record's encoding.
    /// - Complexity: One statement, compiled once per connection, record
    ///   type and columns.
    public func insertAndFetch(_ db: Database) throws -> Self where Self: FetchableRecord {
        try db.withPersistenceContainer(of: self) { container in
            try db.insertRecordAndFetch(Self.self, &container)
        }
    }

    /// Inserts the record's row or, when it conflicts with a row (same
    /// primary key, or same value in a `UNIQUE` column), updates every
    /// column of that row but the primary key; then calls `didInsert(_:)`
    /// with the rowid of the row, inserted or updated.
    ///
    /// `INSERT INTO "player" ("id", "name") VALUES (?1, ?2)
    /// ON CONFLICT DO UPDATE SET "name" = excluded."name" RETURNING rowid`
    /// (no `RETURNING` on a `WITHOUT ROWID` table, whose rowid is 0).
    ///
    /// - Throws: A `DatabaseError`, or the record's encoding error.
    /// - Complexity: One statement, compiled once per connection, record
    ///   type and columns.
    public mutating func upsert(_ db: Database) throws {
        try db.withPersistenceContainer(of: self) { container in
            if let inserted = try db.upsertRecord(Self.self, &container) {
                didInsert(inserted)
            }
        }
    }

    // MARK: - Update

    /// Writes every column of the record into its row, but its primary key.
    ///
    /// `UPDATE "player" SET "name" = ?2, "score" = ?3 WHERE "id" = ?1`
    ///
    /// - Throws: `RecordError.recordNotFound` when no row has the record's
    ///   key (or the key is NULL); a `DatabaseError`; the record's
    ///   encoding error.
    /// - Complexity: One statement, compiled once per connection, record
    ///   type and columns.
    public func update(_ db: Database) throws {
        try db.withPersistenceContainer(of: self) { container in
            try db.updateExistingRecord(Self.self, &container, columns: .all)
        }
    }

    /// Writes some columns of the record into its row.
    ///
    /// ```swift
    /// player.score += 1
    /// try player.update(db, columns: ["score"])
    /// // UPDATE "player" SET "score" = ?3 WHERE "id" = ?1
    /// ```
    ///
    /// Names compare ASCII case-insensitively; primary key columns among
    /// them are not written (they identify the row). When only key columns
    /// are given, the row is checked to exist by setting its key to itself.
    ///
    /// - Throws: `RecordError.recordNotFound` when no row has the record's
    ///   key; a `DatabaseError` (`SQLITE_MISUSE`) when a name is not one of
    ///   the record's columns, or another `DatabaseError`.
    /// - Complexity: One statement, compiled once per connection, record
    ///   type and set of columns (for records of at most 64 columns).
    public func update<Columns: Sequence>(_ db: Database, columns: Columns) throws where Columns.Element == String {
        try db.withPersistenceContainer(of: self) { container in
            let plan = try db.recordWritePlan(Self.self, for: &container)
            var positions: [Int] = []
            for column in columns {
                guard let position = container.index(ofColumn: column) else {
                    throw DatabaseError(
                        resultCode: .SQLITE_MISUSE,
                        message: "\(Self.self) does not encode the column \(column) of table \(plan.table.name): "
                            + "its columns are \(container.columns.joined(separator: ", "))",
                        connectionLabel: db.label)
                }
                positions.append(position)
            }
            let updated = RecordUpdatedColumns(positions: Array(Set(positions)).sorted())
            try db.updateExistingRecord(Self.self, &container, columns: updated)
        }
    }

    /// Writes into the record's row the columns whose values differ from
    /// those of `record`, its previous version (fetched earlier, or before
    /// a change): only them, and nothing at all when no value differs.
    ///
    /// ```swift
    /// let old = try Player.filter(key: 1).fetchOne(db)!
    /// var new = old
    /// new.score = 200
    /// try new.updateChanges(db, from: old)   // UPDATE "player" SET "score" = ?3 WHERE "id" = ?1
    /// try new.updateChanges(db, from: new)   // no statement: returns false
    /// ```
    ///
    /// Values compare as database values (`DatabaseValue`'s equality: the
    /// encoded text of a `Date`, the JSON of a structure), so a change that
    /// the database would not see is not one. The row is the one of this
    /// record's primary key.
    ///
    /// - Returns: Whether a column changed, and so a statement ran.
    /// - Throws: `RecordError.recordNotFound` when a column changed and no
    ///   row has the record's key; a `DatabaseError`; the encoding errors
    ///   of the records.
    /// - Complexity: O(c) to compare, where c is the number of columns, and
    ///   one statement when something changed, compiled once per connection,
    ///   record type and set of changed columns (for records of at most 64
    ///   columns).
    @discardableResult
    public func updateChanges(_ db: Database, from record: Self) throws -> Bool {
        try db.withPersistenceContainer(of: record) { oldContainer in
            try db.withPersistenceContainer(of: self) { container in
                try db.updateRecordChanges(Self.self, &container, from: &oldContainer)
            }
        }
    }

    // MARK: - Save

    /// Updates the record's row when it exists, and inserts it otherwise
    /// (then calls `didInsert(_:)`).
    ///
    /// A record whose primary key is NULL (an auto-incremented id not known
    /// yet), or that does not encode it, is inserted at once. Otherwise the
    /// update runs first, and the insert only when it found no row.
    ///
    /// - Throws: A `DatabaseError`, or the record's encoding error.
    /// - Complexity: One statement, or two when the update finds no row.
    public mutating func save(_ db: Database) throws {
        try db.withPersistenceContainer(of: self) { container in
            if let inserted = try db.saveRecord(Self.self, &container) {
                didInsert(inserted)
            }
        }
    }

    // MARK: - Delete and exists

    /// Deletes the record's row.
    ///
    /// `DELETE FROM "player" WHERE "id" = ?1`
    ///
    /// - Returns: Whether a row was deleted: false when none has the
    ///   record's key (no statement runs for a NULL key).
    /// - Throws: A `DatabaseError` (a foreign key violation...), or the
    ///   record's encoding error.
    /// - Complexity: One statement, compiled once per connection, record
    ///   type and columns.
    @discardableResult
    public func delete(_ db: Database) throws -> Bool {
        try db.withPersistenceContainer(of: self) { container in
            try db.deleteRecord(Self.self, &container)
        }
    }

    /// Whether a row has the record's primary key (false for a NULL key,
    /// without a statement).
    ///
    /// `SELECT EXISTS (SELECT 1 FROM "player" WHERE "id" = ?1)`
    ///
    /// - Throws: A `DatabaseError`, or the record's encoding error.
    /// - Complexity: One statement, compiled once per connection, record
    ///   type and columns.
    public func exists(_ db: Database) throws -> Bool {
        try db.withPersistenceContainer(of: self) { container in
            try db.recordExists(Self.self, &container)
        }
    }
}
