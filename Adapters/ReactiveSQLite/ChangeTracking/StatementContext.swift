#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DatabaseRegions

/// The running statement, as the change hooks see it: the tables it may
/// write and their metadata, prepared before its first step (hooks must not
/// run SQL), and what its hooks did so far in this execution.
struct StatementContext {
    /// The statement (nil: none runs).
    var statement: ObjectIdentifier?
    var effects = StatementEffects()
    /// Per written table (same order as `effects.writes`): its metadata, nil
    /// for a view (whose writes no hook reports) or an unreadable table.
    var tableInfos: [TableHookInfo?] = []
    /// Per written table: whether an observation watches it. The row events
    /// of the other tables concern no observation, and cost one test.
    var tableWatched: [Bool] = []
    /// Update-hook path only: per written table, whether this execution may
    /// still delete rows that no hook reports (see `mayHideDeletions`);
    /// cleared once the table's observations are marked.
    var pendingHiddenDeletions: [Bool] = []
    /// Per written table: for a watched virtual table (or, on the
    /// update-hook path, a watched WITHOUT ROWID table), whether its
    /// observations still wait for this execution's first change of it.
    var pendingVirtualTables: [Bool] = []
    /// For a VACUUM: the tables whose rowids it renumbers (rowid tables
    /// without an `INTEGER PRIMARY KEY`), which no hook reports.
    var renumberedTables: [String] = []
    /// Which user observers want the events of the statement.
    var userObservers: [UserObserverInterest: [any TransactionObserver]] = [:]

    /// A kind of row event on a table, as a hook reports it.
    struct UserObserverInterest: Hashable {
        /// The table, lowercased.
        var table: String
        var operation: Int32
    }

    /// The index of a written table in `effects.writes`, from the name a hook
    /// reports, compared without allocating.
    @inline(__always)
    func writeIndex(ofTable table: UnsafePointer<CChar>) -> Int? {
        for (index, writes) in effects.writes.enumerated() {
            let isSame = writes.cName.withUnsafeBufferPointer { strcasecmp($0.baseAddress!, table) == 0 }
            if isSame { return index }
        }
        return nil
    }

    /// The index of the written virtual table that owns the shadow table a
    /// hook reports, if any.
    func virtualTableIndex(owningShadowTable table: UnsafePointer<CChar>) -> Int? {
        tableInfos.firstIndex { $0?.ownsShadowTable(table) == true }
    }
}
