import Dispatch
import Foundation
import ReactiveSQLite

/// A live leaderboard, `ORDER BY score DESC LIMIT 10`, of a million players
/// whose scores are distinct and have no index: a fetch of the request
/// scans the table. One fixture per library and connection kind.
protocol TopRowsFixture: AnyObject, Sendable {
    /// Sets the score of a row in one transaction and waits for the next
    /// value of the observation: the ids of its rows.
    func update(id: Int64, score: Int) throws -> [Int64]
    /// The ids of the rows of the latest value.
    var latestIDs: [Int64] { get }
}

/// The scores of the fixtures' rows: distinct, in 0 ..< 4 × rows, the same
/// for both libraries.
func topRowsScore(id: Int) -> Int { (id &* 2_654_435_761) % (4 * largeRowCount) }

/// `ValueObservation.trackingAll(Player.all().order(sql: "score DESC").limit(10))`
/// on a ReactiveSQLite queue: with the pre-update hook, it keeps its rows
/// from the rows it holds and the changed ones (`refetches == false`); with
/// the update hook only, it refetches the request at each commit.
///
/// `@unchecked Sendable`: `latest` is written on `deliveryQueue` before
/// `delivered` is signalled, and read after waiting for it.
final class ReactiveSQLiteTopRowsFixture: TopRowsFixture, @unchecked Sendable {
    let dbQueue: DatabaseQueue
    let deliveryQueue = DispatchQueue(label: "DifferencesObservationBenchmarks.TopRows.ReactiveSQLite")
    let delivered = DispatchSemaphore(value: 0)
    var latestIDs: [Int64] = []
    var cancellable: AnyDatabaseCancellable?

    init(path: String, rowCount: Int, refetches: Bool) throws {
        var configuration = Configuration()
        if refetches { configuration.changeTracking = .updateHookOnly }
        dbQueue = try DatabaseQueue(path: path, configuration: configuration)
        try dbQueue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        try dbQueue.write { db in
            try createPlayerTable(db, rowCount: rowCount, score: topRowsScore(id:))
        }
        let observation = ValueObservation.trackingAll(ReactiveSQLitePlayer.all().order(sql: "score DESC").limit(10))
        cancellable = observation.start(
            in: dbQueue, scheduling: .async(onQueue: deliveryQueue),
            onError: { error in fatalError("observation failed: \(error)") },
            onChange: { [unowned self] players in
                latestIDs = players.map(\.id)
                delivered.signal()
            })
        delivered.wait()
    }

    @inline(never)
    func update(id: Int64, score: Int) throws -> [Int64] {
        try dbQueue.write { db in
            try db.execute(sql: "UPDATE player SET score = ? WHERE id = ?", arguments: [score, id])
        }
        delivered.wait()
        return latestIDs
    }
}
