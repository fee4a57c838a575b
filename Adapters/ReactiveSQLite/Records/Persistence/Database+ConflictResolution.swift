extension Database {
    /// What SQLite does when a write violates a constraint (`UNIQUE`,
    /// `NOT NULL`, `CHECK`, `PRIMARY KEY`): the `OR` clause of an `INSERT`
    /// (`INSERT OR REPLACE INTO ...`). Foreign key constraints ignore it.
    ///
    /// See <https://www.sqlite.org/lang_conflict.html>.
    public enum ConflictResolution: String, Sendable, CaseIterable {
        /// The statement fails, and the whole transaction is rolled back.
        case rollback = "ROLLBACK"
        /// The statement fails and its changes are undone; the transaction
        /// stays open with the changes of the previous statements. SQLite's
        /// default.
        case abort = "ABORT"
        /// The statement fails, keeping the changes it made before the
        /// violation (a single-row insert made none).
        case fail = "FAIL"
        /// The row that would violate the constraint is skipped, without
        /// error.
        case ignore = "IGNORE"
        /// The rows that conflict on a `UNIQUE` or `PRIMARY KEY` constraint
        /// are deleted before the row is written (without firing delete
        /// triggers unless recursive triggers are on); other violations
        /// abort.
        case replace = "REPLACE"
    }
}
