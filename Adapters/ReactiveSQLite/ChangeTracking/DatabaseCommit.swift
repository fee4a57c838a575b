/// What the broker tells an observer of a commit that concerns it.
struct DatabaseCommit {
    /// The number of the commit: one more than the previous commit the
    /// broker saw, local or external (`ObservationBroker.lastCommitNumber`
    /// is the latest). The one clock of commits.
    var number: Int
    /// For an observation registered with a `rowIDTable`: the rows of that
    /// table the commit changed, or `unknown` when the hooks cannot tell
    /// (see `ChangedRowIDs`). `unknown` for the others.
    var changedRowIDs: ChangedRowIDs
    /// Whether the committed transaction changed the schema (a table or view
    /// created, dropped or altered), so that the regions recorded before it
    /// may be stale: an observation with explicit regions records them again.
    var changesSchema: Bool
}
