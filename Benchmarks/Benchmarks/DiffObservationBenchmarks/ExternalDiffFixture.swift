import Differences
import Dispatch
import Foundation
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
///
/// `@unchecked Sendable`: `latest` is written on `deliveryQueue` before
/// `delivered` is signalled, and read by `update` after waiting for it.
final class ExternalDiffFixture: @unchecked Sendable {
    enum Mode {
        case walPool
        case rollbackQueue
    }

    let observed: any DatabaseWriter
    /// The other connection, which writes.
    let external: DatabaseQueue
    let deliveryQueue = DispatchQueue(label: "DiffObservationBenchmarks.External")
    let delivered = DispatchSemaphore(value: 0)
    var latest: UpdatedRecords?
    var cancellable: AnyDatabaseCancellable?

    init(path: String, rowCount: Int, mode: Mode) throws {
        external = try DatabaseQueue(path: path)
        // No fsync, as the other fixtures.
        try external.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = \(mode == .walPool ? "WAL" : "DELETE"); PRAGMA synchronous = OFF")
        }
        try external.write { db in try createPlayerTable(db, rowCount: rowCount) { $0 % 1000 } }
        var configuration = Configuration()
        configuration.observesExternalChanges = true
        observed = mode == .walPool
            ? try DatabasePool(path: path, configuration: configuration)
            : try DatabaseQueue(path: path, configuration: configuration)
        cancellable = ValueObservation.trackingSetDifferences(ReactiveSQLitePlayer.orderByPrimaryKey()).start(
            in: observed, scheduling: .async(onQueue: deliveryQueue),
            onError: { error in fatalError("observation failed: \(error)") },
            onChange: { [unowned self] difference in
                latest = UpdatedRecords(
                    insertedCount: difference.inserted.count, updatedCount: difference.updated.count,
                    deletedCount: difference.deleted.count, firstUpdated: difference.updated.first.map { ($0.id, $0.score) })
                delivered.signal()
            })
        delivered.wait()
    }
}

extension ExternalDiffFixture: DiffFixture {
    @inline(never)
    func update(id: Int64, score: Int) throws -> UpdatedRecords {
        try external.write { db in
            try db.execute(sql: "UPDATE player SET score = ? WHERE id = ?", arguments: [score, id])
        }
        delivered.wait()
        return latest!
    }

    @inline(never)
    func insertThenDelete(id: Int64) throws -> (inserted: UpdatedRecords, deleted: UpdatedRecords) {
        try external.write { db in
            try db.execute(sql: "INSERT INTO player (id, name, score) VALUES (?, 'new', 0)", arguments: [id])
        }
        delivered.wait()
        let inserted = latest!
        try external.write { db in
            try db.execute(sql: "DELETE FROM player WHERE id = ?", arguments: [id])
        }
        delivered.wait()
        return (inserted, latest!)
    }
}
