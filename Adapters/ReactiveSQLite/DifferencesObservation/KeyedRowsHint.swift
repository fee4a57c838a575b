/// A weak reference to the rows of the latest fetch of an observation, the
/// hint of its next fetch.
///
/// Shared by every run of one observation value: a fetch reuses, for each
/// row equal to a row of the hint, the hint's values instead of reading new
/// ones. Reuse never changes what a fetch returns (the reused row is equal),
/// whichever run's rows the hint holds. Weak, so that rows live only as long
/// as a run or a fetch in flight needs them.
final class KeyedRowsHint: Sendable {
    private struct Storage: Sendable {
        weak var rows: KeyedRows?
    }

    private let storage = LockedState(Storage())

    init() {}

    var rows: KeyedRows? {
        get { storage.withLock { $0.rows } }
        set { storage.withLock { $0.rows = newValue } }
    }
}
