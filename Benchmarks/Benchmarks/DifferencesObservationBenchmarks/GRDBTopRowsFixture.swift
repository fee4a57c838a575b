import Dispatch
import Foundation
import GRDB

/// GRDB's leaderboard: `ValueObservation.trackingConstantRegion` of
/// `Player.order(Column("score").desc).limit(10)`, which refetches the
/// request (a scan of the table) at each commit.
///
/// `@unchecked Sendable`: `latestIDs` is written on `deliveryQueue` before
/// `delivered` is signalled, and read after waiting for it.
final class GRDBTopRowsFixture: TopRowsFixture, @unchecked Sendable {
    let dbQueue: DatabaseQueue
    let deliveryQueue = DispatchQueue(label: "DifferencesObservationBenchmarks.TopRows.GRDB")
    let delivered = DispatchSemaphore(value: 0)
    var latestIDs: [Int64] = []
    var cancellable: AnyDatabaseCancellable?

    init(path: String, rowCount: Int) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        dbQueue = try DatabaseQueue(path: path, configuration: configuration)
        try dbQueue.write { db in
            try createPlayerTable(db, rowCount: rowCount, score: topRowsScore(id:))
        }
        let observation = ValueObservation.trackingConstantRegion { db in
            try GRDBRowPlayer.order(Column("score").desc).limit(10).fetchAll(db)
        }
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
