/// Something the broker notifies after a commit that modified its region:
/// value, region and record observations.
protocol DatabaseCommitObserver: AnyObject {
    /// Called on the writer, right after a commit that modified the
    /// observer's region, before any other statement runs.
    func databaseDidCommit(_ db: Database, _ commit: DatabaseCommit)
}
