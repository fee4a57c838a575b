/// How an observation refetches only the rows that commits changed, when
/// it can (see `ChangedRowIDs`).
package struct IncrementalFetch: Sendable {
    /// The table whose changed rowids the fetch needs, or nil when the
    /// fetch does not apply; asked once when a run starts, outside of any
    /// transaction (an observation of SQL learns its table from the
    /// database).
    let table: @Sendable (_ db: Database) throws -> String?
    /// Whether the fetch may apply to the observation at all (its request
    /// and table qualify), asked once when a run starts, in the read
    /// transaction of its first fetch, with the table `table` gave: a run for
    /// which it does not never records rowids nor keeps its last value.
    let isApplicable: @Sendable (_ db: Database, _ table: String) throws -> Bool
    /// Returns the value of the current state, given the value the same run
    /// fetched last and the rowids of the table changed since (a superset of
    /// them), or nil when it cannot: the observation then runs its full fetch.
    let fetch: @Sendable (_ db: Database, _ previous: any Sendable, _ changedRowIDs: Set<Int64>) throws -> (any Sendable)?
    /// The rowids of the rows of `previous` (a value the fetch returned)
    /// whose rowid is in one of `ranges`, ascending ranges that do not
    /// overlap; nil when it cannot tell. The written pages of a commit
    /// name the rows they hold after it, and the ranges of rowids of the
    /// pages it rewrote or removed (see `ObservedTablePages`): the rows of
    /// `previous` in those ranges may have changed or gone too.
    let rowIDsInRanges: @Sendable (_ previous: any Sendable, _ ranges: [ClosedRange<Int64>]) -> [Int64]?

    /// The incremental fetch of an observation of `table`.
    init(
        table: String,
        isApplicable: @escaping @Sendable (_ db: Database) throws -> Bool,
        rowIDsInRanges: @escaping @Sendable (_ previous: any Sendable, _ ranges: [ClosedRange<Int64>]) -> [Int64]?,
        fetch: @escaping @Sendable (_ db: Database, _ previous: any Sendable, _ changedRowIDs: Set<Int64>) throws -> (any Sendable)?
    ) {
        self.init(
            resolvingTable: { _ in table }, isApplicable: { db, _ in try isApplicable(db) },
            rowIDsInRanges: rowIDsInRanges, fetch: fetch)
    }

    /// The incremental fetch of an observation whose table is known from
    /// the database only (see `table`).
    init(
        resolvingTable table: @escaping @Sendable (_ db: Database) throws -> String?,
        isApplicable: @escaping @Sendable (_ db: Database, _ table: String) throws -> Bool,
        rowIDsInRanges: @escaping @Sendable (_ previous: any Sendable, _ ranges: [ClosedRange<Int64>]) -> [Int64]?,
        fetch: @escaping @Sendable (_ db: Database, _ previous: any Sendable, _ changedRowIDs: Set<Int64>) throws -> (any Sendable)?
    ) {
        self.table = table
        self.isApplicable = isApplicable
        self.rowIDsInRanges = rowIDsInRanges
        self.fetch = fetch
    }
    #if REACTIVESQLITE_INTERNAL_CHECKS
    /// How many fetches were incremental, in every run of the observation.
    package let statistics = IncrementalFetchStatistics()
    #endif
}

#if REACTIVESQLITE_INTERNAL_CHECKS
/// The number of incremental and full fetches of an observation, for
/// tests: they check that an observation refetches only changed rows when
/// it should, and never when it should not. Commits that come while a
/// fetch runs are coalesced into the next one, so that how many fetches an
/// observation makes depends on timing: tests compare the two counts
/// rather than one count with the number of commits. Compiled only with
/// the `REACTIVESQLITE_INTERNAL_CHECKS` flag (debug builds of this package).
package final class IncrementalFetchStatistics: Sendable {
    private let counts = LockedState((incremental: 0, unknownRows: 0, refused: 0))

    /// The number of fetches that were incremental.
    package var incrementalFetchCount: Int { counts.withLock { $0.incremental } }

    /// The number of fetches after the first one of a run that read every
    /// row: `unknownRowsFetchCount` plus `refusedFetchCount`.
    package var fullFetchCount: Int { counts.withLock { $0.unknownRows + $0.refused } }

    /// The number of full fetches for which the rows changed since the
    /// previous one were unknown (an external commit the pages could not
    /// tell, a statement the hooks do not report).
    package var unknownRowsFetchCount: Int { counts.withLock { $0.unknownRows } }

    /// The number of full fetches that the incremental fetch refused, the
    /// changed rows known (too many, a window it cannot patch).
    package var refusedFetchCount: Int { counts.withLock { $0.refused } }

    func recordIncrementalFetch() {
        counts.withLock { $0.incremental += 1 }
    }

    func recordFullFetch(knowingChangedRows: Bool) {
        counts.withLock { knowingChangedRows ? ($0.refused += 1) : ($0.unknownRows += 1) }
    }
}
#endif
