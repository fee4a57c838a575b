#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// What a writer connection's transaction comes to, as its
/// `ObservationBroker` learns it: the changes marked at each level (the
/// transaction, its savepoints, its running statements: `ChangeLevelStack`),
/// a commit the commit hook allowed or a rollback the rollback hook
/// reported, which the broker confirms at the end of the statement, and
/// the numbers of the commits.
///
/// Writer's queue only. `levels` is written at each row event, the
/// pending outcomes read at each statement: `@exclusivity(unchecked)`, as
/// the broker's properties (see `ObservationBroker`).
final class CommitOutcome {
    @exclusivity(unchecked) var levels = ChangeLevelStack()
    /// The commit hook allowed a commit that the statement's end confirms.
    @exclusivity(unchecked) var commitIsPending = false
    /// The rollback hook ran; observers hear of it at the statement's end.
    @exclusivity(unchecked) var rollbackIsPending = false
    /// The number of the last commit (`DatabaseCommit.number`): commits
    /// seen since the broker exists, external commits detected by an
    /// `ExternalChangeDetector` included. 0 before the first one.
    private(set) var lastCommitNumber = 0

    /// Numbers a new commit.
    func countCommit() -> Int {
        lastCommitNumber += 1
        return lastCommitNumber
    }

    /// Forgets a commit or rollback that no statement's end confirmed.
    func forgetPending() {
        commitIsPending = false
        rollbackIsPending = false
    }

    /// At the end of a statement: whether a pending commit happened (the
    /// connection is back in autocommit mode; a commit that failed after
    /// the commit hook, `SQLITE_BUSY`, left the transaction open, and other
    /// failures ran the rollback hook). It is no longer pending.
    func takeCommit(connection: OpaquePointer?) -> Bool {
        guard commitIsPending else { return false }
        commitIsPending = false
        return sqlite3_get_autocommit(connection) != 0
    }

    /// At the end of a statement, after its commit was told: whether a
    /// rollback happened. It is no longer pending.
    func takeRollback() -> Bool {
        defer { rollbackIsPending = false }
        return rollbackIsPending
    }
}
