/// Something the broker notifies after a commit that modified its region:
/// value, region and record observations.
protocol DatabaseCommitObserver: AnyObject {
    /// Called on the writer, right after a commit that modified the
    /// observer's region, before any other statement runs.
    func databaseDidCommit(_ db: Database, _ commit: DatabaseCommit)

    /// Called on the writer when the database file was deleted or replaced
    /// under its connections (`SQLITE_READONLY_DBMOVED`): what it reads is
    /// no longer the file at its path.
    func databaseFileDidMove(_ db: Database, _ error: DatabaseError)
}

extension DatabaseCommitObserver {
    /// Nothing, by default: an observer without an error channel goes on.
    func databaseFileDidMove(_ db: Database, _ error: DatabaseError) {}
}
