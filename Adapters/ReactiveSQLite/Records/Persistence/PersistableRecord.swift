/// A record that writes its own row, and that inserts do not change: the
/// methods of `MutablePersistableRecord`, none of them mutating.
///
/// ```swift
/// struct Player: Codable, Identifiable, FetchableRecord, PersistableRecord {
///     var id: Int64
///     var name: String
///     var score: Int
/// }
///
/// try dbQueue.write { db in
///     let dbPlayers = try Player.orderByPrimaryKey().fetchAll(db)
///     for change in SortedDifference(left: dbPlayers, right: serverPlayers) {
///         switch change {
///         case .left(let dbPlayer): try dbPlayer.delete(db)
///         case .right(let serverPlayer): try serverPlayer.insert(db)
///         case .common(let dbPlayer, let serverPlayer): try serverPlayer.updateChanges(db, from: dbPlayer)
///         }
///     }
/// }
/// ```
///
/// See `MutablePersistableRecord` for keys, statements and errors.
public protocol PersistableRecord: MutablePersistableRecord {
    /// Called after the record's row was inserted, with its rowid. Not
    /// called when no row was inserted (`onConflict: .ignore` skipped it).
    ///
    /// The default implementation does nothing.
    func didInsert(_ inserted: InsertionSuccess)
}

extension PersistableRecord {
    /// Does nothing.
    public func didInsert(_ inserted: InsertionSuccess) {}

    /// Inserts the record's row, then calls `didInsert(_:)`. See
    /// `MutablePersistableRecord.insert(_:onConflict:)`.
    ///
    /// - Throws: A `DatabaseError`, or the record's encoding error.
    /// - Complexity: One statement, compiled once per connection, record
    ///   type, columns and conflict resolution.
    public func insert(_ db: Database, onConflict: Database.ConflictResolution? = nil) throws {
        try db.withPersistenceContainer(of: self) { container in
            if let inserted = try db.insertRecord(Self.self, &container, onConflict: onConflict) {
                didInsert(inserted)
            }
        }
    }

    /// Inserts the record's row, or updates the row it conflicts with, then
    /// calls `didInsert(_:)`. See `MutablePersistableRecord.upsert(_:)`.
    ///
    /// - Throws: A `DatabaseError`, or the record's encoding error.
    /// - Complexity: One statement, compiled once per connection, record
    ///   type and columns.
    public func upsert(_ db: Database) throws {
        try db.withPersistenceContainer(of: self) { container in
            if let inserted = try db.upsertRecord(Self.self, &container) {
                didInsert(inserted)
            }
        }
    }

    /// Updates the record's row when it exists, and inserts it otherwise.
    /// See `MutablePersistableRecord.save(_:)`.
    ///
    /// - Throws: A `DatabaseError`, or the record's encoding error.
    /// - Complexity: One statement, or two when the update finds no row.
    public func save(_ db: Database) throws {
        try db.withPersistenceContainer(of: self) { container in
            if let inserted = try db.saveRecord(Self.self, &container) {
                didInsert(inserted)
            }
        }
    }
}
