import ReactiveSQLite

/// `trackingSetDifferences(Player.orderByPrimaryKey())` on a queue or pool
/// whose configuration observes external changes, fed by another
/// connection (a `DatabaseQueue` on the same file, which the observed
/// connections' hooks do not see): each difference comes from the
/// detection of the other connection's commit (`PRAGMA data_version`,
/// woken by inotify), then a fetch.
///
/// - `walPool`: a `DatabasePool` (WAL): the observation refetches the rows
///   that the commit's pages in the write-ahead log name
///   (`ObservedTablePages`).
/// - `rollbackQueue`: a `DatabaseQueue` on a file in rollback-journal mode,
///   whose commits leave no log to read: every external commit refetches
///   the whole table, compared in place with the kept rows.
final class ExternalDiffFixture: ReactiveSQLiteFixtureBase, @unchecked Sendable {
    enum Mode {
        case walPool
        case rollbackQueue
    }

    init(path: String, rowCount: Int, mode: Mode) throws {
        let external = try DatabaseQueue(path: path)
        // No fsync, as the other fixtures.
        try external.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = \(mode == .walPool ? "WAL" : "DELETE"); PRAGMA synchronous = OFF")
        }
        try external.write { db in try createPlayerTable(db, rowCount: rowCount) { $0 % 1000 } }
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        let observed: any DatabaseWriter = mode == .walPool
            ? try DatabasePool(path: path, configuration: configuration)
            : try DatabaseQueue(path: path, configuration: configuration)
        super.init(observed: observed, writer: external)
        start(ValueObservation.trackingSetDifferences(ReactiveSQLitePlayer.orderByPrimaryKey()))
    }
}
