/// The pages of the table that an incremental observation reads, for an
/// observation of a database in WAL mode whose configuration observes
/// external changes: the pages written between the snapshot of its last
/// fetch and the snapshot of the next one name the rows that any commit
/// may have changed, another connection's or another process's included
/// (see `TablePageTracker`), where the hooks only see this connection's.
/// An external commit that changes a few rows of a large table then costs
/// a refetch of those rows, not of the whole request.
///
/// Each fetch of the observation runs in a read transaction whose
/// snapshot is known (`TablePageTracker.beginSnapshot`), asks
/// `changedRowIDs` before it fetches, and calls `didFetch` after, in the
/// same transaction, on the same connection. The pages serve a fetch only
/// when the tracker read the snapshot of the value the fetch starts from
/// (`isInSync`): after a fetch the pages could not serve, the tracker
/// reads the table's tree again in the new snapshot.
///
/// The pages cannot tell (and the observation fetches as it would without
/// them) after a schema change, when the log restarted and lost commits
/// the tracker did not read, when a commit wrote more than half of the
/// table's pages, for an encrypted file, and for a snapshot that other
/// connections kept changing while the transaction began.
final class ObservedTablePages: Sendable {
    private struct State {
        var tracker: TablePageTracker
        /// Whether the tracker is at the snapshot of the observation's last
        /// fetched value.
        var isInSync = false
        /// Whether `changedRowIDs` moved the tracker to the snapshot of
        /// the running fetch.
        var reachedSnapshot = false
    }

    /// The fetches of one observation run never overlap, and each uses the
    /// state on its own connection: the lock is never contended.
    private let state: LockedState<State>

    /// The pages of `table`; nil when the database is not in WAL mode.
    ///
    /// - Parameter db: A connection to the observed database.
    init?(table: String, in db: Database) throws {
        guard let tracker = try TablePageTracker(table: table, in: db) else { return nil }
        state = LockedState(State(tracker: tracker))
    }

    /// The rowids of the table that the commits between the snapshot of the
    /// last fetch and `snapshot`, the snapshot of the read transaction of
    /// `db`, may have changed (a superset of them), or nil when the pages
    /// cannot tell.
    ///
    /// - Parameter rowIDsInRanges: The rowids of the rows of the last fetched
    ///   value in the given ranges of rowids (the rows of the pages that the
    ///   commits rewrote or removed), or nil when it cannot tell.
    /// - Complexity: O(p log p) in the number of pages written, plus the
    ///   reads of those pages and of their log frames' headers.
    func changedRowIDs(
        _ db: Database, snapshot: WALIndexHeader?, rowIDsInRanges: ([ClosedRange<Int64>]) -> [Int64]?
    ) throws -> Set<Int64>? {
        try state.withLock { state in
            state.reachedSnapshot = false
            guard state.isInSync, let changes = try state.tracker.changes(db, snapshot: snapshot) else { return nil }
            state.reachedSnapshot = true
            var rowIDs = Set(changes.rowIDs)
            if !changes.ranges.isEmpty {
                guard let rowIDsInRanges = rowIDsInRanges(changes.ranges) else { return nil }
                rowIDs.formUnion(rowIDsInRanges)
            }
            return rowIDs
        }
    }

    /// Records that the fetch of the read transaction of `db`, whose
    /// snapshot is `snapshot`, succeeded: the tracker reads the table's
    /// tree in that snapshot, unless `changedRowIDs` brought it there.
    ///
    /// A tree it cannot read (an I/O error) leaves the next fetch to run
    /// as without pages.
    ///
    /// - Complexity: O(1) after `changedRowIDs` gave rowids; else the reads
    ///   of every page of the table's tree.
    func didFetch(_ db: Database, snapshot: WALIndexHeader?) {
        state.withLock { state in
            defer { state.reachedSnapshot = false }
            if state.reachedSnapshot {
                state.isInSync = true
                return
            }
            do {
                try state.tracker.start(db, snapshot: snapshot)
                state.isInSync = state.tracker.isStarted
            } catch {
                state.isInSync = false
            }
        }
    }

}
