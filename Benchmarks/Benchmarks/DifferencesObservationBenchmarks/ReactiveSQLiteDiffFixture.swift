import Differences
import Dispatch
import Foundation
import ReactiveSQLite

/// The observed record, decoded by ReactiveSQLite's `Decodable` support.
struct ReactiveSQLitePlayer: Decodable, FetchableRecord, TableRecord, Identifiable, Equatable, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int
}

/// A running observation of set differences on `observed`, delivered on
/// a queue of its own, where `update` waits for them; the writes go
/// through `writer` (the observed queue itself, or another connection).
///
/// `@unchecked Sendable`: `latest` is written on `deliveryQueue` before
/// `delivered` is signalled, and read by `update` after waiting for it.
class ReactiveSQLiteFixtureBase: @unchecked Sendable {
    let observed: any DatabaseWriter
    let writer: any DatabaseWriter
    let deliveryQueue = DispatchQueue(label: "DifferencesObservationBenchmarks.ReactiveSQLite")
    let delivered = DispatchSemaphore(value: 0)
    var latest: UpdatedRecords?
    var cancellable: AnyDatabaseCancellable?

    init(observed: any DatabaseWriter, writer: any DatabaseWriter) {
        self.observed = observed
        self.writer = writer
    }

    /// A queue on a new file with the players, which observes and writes.
    init(path: String, rowCount: Int, configuration: Configuration = Configuration()) throws {
        let dbQueue = try DatabaseQueue(path: path, configuration: configuration)
        try dbQueue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        try dbQueue.write { db in
            try createPlayerTable(db, rowCount: rowCount) { $0 % 1000 }
        }
        observed = dbQueue
        writer = dbQueue
    }

    /// Starts `observation` and waits for its first difference.
    func start(_ observation: ValueObservation<SetDifference<ReactiveSQLitePlayer>>) {
        cancellable = observation.start(
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

extension ReactiveSQLiteFixtureBase: DiffFixture {
    @inline(never)
    func update(id: Int64, score: Int) throws -> UpdatedRecords {
        try writer.write { db in
            try db.execute(sql: "UPDATE player SET score = ? WHERE id = ?", arguments: [score, id])
        }
        delivered.wait()
        return latest!
    }

    @inline(never)
    func insertThenDelete(id: Int64) throws -> (inserted: UpdatedRecords, deleted: UpdatedRecords) {
        try writer.write { db in
            try db.execute(sql: "INSERT INTO player (id, name, score) VALUES (?, 'new', 0)", arguments: [id])
        }
        delivered.wait()
        let inserted = latest!
        try writer.write { db in
            try db.execute(sql: "DELETE FROM player WHERE id = ?", arguments: [id])
        }
        delivered.wait()
        return (inserted, latest!)
    }
}

/// `ValueObservation.trackingSetDifferences(Player.orderByPrimaryKey())`.
final class ReactiveSQLiteDiffFixture: ReactiveSQLiteFixtureBase, @unchecked Sendable {
    init(path: String, rowCount: Int) throws {
        try super.init(path: path, rowCount: rowCount)
        start(ValueObservation.trackingSetDifferences(ReactiveSQLitePlayer.orderByPrimaryKey()))
    }
}

/// The same observation on a connection that tracks changes with the update
/// hook (`Configuration.changeTracking = .updateHookOnly`), which does not
/// tell every changed row: the observation scans the table at each commit,
/// as it does for every request it cannot refetch row by row.
final class ReactiveSQLiteFullScanDiffFixture: ReactiveSQLiteFixtureBase, @unchecked Sendable {
    init(path: String, rowCount: Int) throws {
        var configuration = Configuration()
        configuration.changeTracking = .updateHookOnly
        try super.init(path: path, rowCount: rowCount, configuration: configuration)
        start(ValueObservation.trackingSetDifferences(ReactiveSQLitePlayer.orderByPrimaryKey()))
    }
}

/// `ValueObservation.trackingAll(Player.orderByPrimaryKey()).setDifferences()`:
/// every row decoded at each commit, then the scanner.
final class ReactiveSQLiteDecodingDiffFixture: ReactiveSQLiteFixtureBase, @unchecked Sendable {
    init(path: String, rowCount: Int) throws {
        try super.init(path: path, rowCount: rowCount)
        start(ValueObservation.trackingAll(ReactiveSQLitePlayer.orderByPrimaryKey()).setDifferences())
    }
}

/// Creates `player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER
/// NOT NULL)` with `rowCount` rows, of ids from 1 and scores `score(id)`.
func createPlayerTable(_ db: Database, rowCount: Int, score: (Int) -> Int) throws {
    try db.execute(sql: "CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL)")
    let statement = try db.cachedStatement(sql: "INSERT INTO player (id, name, score) VALUES (?, ?, ?)")
    for id in 1...rowCount {
        try statement.execute(arguments: [id, "Player \(id)", score(id)])
    }
}
