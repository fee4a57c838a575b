import DatabaseRegions

// Read state of a connection that observations use: the commits of other
// connections (`dataVersion()`), and a read transaction that outlives the
// access that opens it (`beginPinnedRead(knowingSnapshot:)`), which lets a
// pool's reader fetch the state a commit made while the writer goes on.

extension Database {
    /// `PRAGMA data_version`: changes when another connection commits.
    func dataVersion() throws -> Int {
        try SQLRequest<Int>(sql: "PRAGMA data_version").fetchOne(self) ?? 0
    }
}

extension Database {
    /// Opens a read transaction and reads the schema, which pins the current
    /// committed state (the WAL snapshot) until `endPinnedRead()`, then
    /// checks the schema caches against another connection's schema
    /// changes, as a read access does.
    ///
    /// The transaction outlives the access that opens it (`isPinningRead`):
    /// call `endPinnedRead()` in the next access of the connection.
    ///
    /// - Parameter knowingSnapshot: Whether to begin the transaction as
    ///   `TablePageTracker.beginSnapshot` does, and return its snapshot
    ///   when it is known.
    @discardableResult
    func beginPinnedRead(knowingSnapshot: Bool = false) throws -> WALIndexHeader? {
        let snapshot: WALIndexHeader?
        if knowingSnapshot {
            snapshot = try TablePageTracker.beginSnapshot(self)
        } else {
            try cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
            snapshot = nil
        }
        do {
            if !knowingSnapshot { try cachedStatement(sql: "SELECT 1 FROM sqlite_master LIMIT 1").execute() }
            try refreshSchemaCacheIfNeeded()
        } catch {
            rollbackIfInsideTransaction()
            throw error
        }
        isPinningRead = true
        return snapshot
    }

    /// Ends the read transaction of `beginPinnedRead()`.
    ///
    /// With a commit, as a read access ends: a rollback may undo schema
    /// changes, so it makes the connection forget its cached statements and
    /// schema, and every fetch on this reader would compile its statements
    /// and read the schema again.
    func endPinnedRead() {
        isPinningRead = false
        do {
            try cachedStatement(sql: "COMMIT TRANSACTION").execute()
        } catch {
            rollbackIfInsideTransaction()
        }
    }
}
