import Dispatch
import Foundation
import GRDB

/// A record of the `player` table for GRDB.
protocol GRDBPlayerRecord: FetchableRecord, TableRecord, Equatable, Sendable {
    var id: Int64 { get }
    var score: Int { get }
}

/// The observed record, decoded by GRDB's `Decodable` support.
struct GRDBPlayer: Decodable, GRDBPlayerRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int
}

/// The observed record, decoded by a hand-written `init(row:)` that reads
/// columns by index: GRDB's fastest decoding.
struct GRDBRowPlayer: GRDBPlayerRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int

    init(row: Row) {
        id = row[0]
        name = row[1]
        score = row[2]
    }
}

/// The set difference of two arrays sorted by id: one merge, `==` on the
/// records of common ids.
struct GRDBSetDifference<Player: GRDBPlayerRecord> {
    var inserted: [Player] = []
    var updated: [Player] = []
    var deleted: [Player] = []

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    @inline(never)
    init(from old: [Player], to new: [Player]) {
        var oldIndex = 0
        var newIndex = 0
        while oldIndex < old.count, newIndex < new.count {
            let oldID = old[oldIndex].id
            let newID = new[newIndex].id
            if oldID < newID {
                deleted.append(old[oldIndex])
                oldIndex += 1
            } else if oldID > newID {
                inserted.append(new[newIndex])
                newIndex += 1
            } else {
                if old[oldIndex] != new[newIndex] { updated.append(new[newIndex]) }
                oldIndex += 1
                newIndex += 1
            }
        }
        deleted.append(contentsOf: old[oldIndex...])
        inserted.append(contentsOf: new[newIndex...])
    }
}

/// A GRDB database queue observed by a `ValueObservation` of every record,
/// diffed with the previous array on the delivery queue.
///
/// `@unchecked Sendable`: `previous` is only used on `deliveryQueue`;
/// `latest` is written there before `delivered` is signalled, and read by
/// `update` after waiting for it.
final class GRDBDiffFixture<Player: GRDBPlayerRecord>: DiffFixture, @unchecked Sendable {
    let dbQueue: DatabaseQueue
    let deliveryQueue = DispatchQueue(label: "DifferencesObservationBenchmarks.GRDB")
    let delivered = DispatchSemaphore(value: 0)
    var previous: [Player] = []
    var latest: UpdatedRecords?
    var cancellable: AnyDatabaseCancellable?

    init(path: String, rowCount: Int) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        dbQueue = try DatabaseQueue(path: path, configuration: configuration)
        try dbQueue.write { db in
            try createPlayerTable(db, rowCount: rowCount) { $0 % 1000 }
        }
        let observation = ValueObservation.trackingConstantRegion { db in
            try Player.orderByPrimaryKey().fetchAll(db)
        }
        cancellable = observation.start(
            in: dbQueue, scheduling: .async(onQueue: deliveryQueue),
            onError: { error in fatalError("observation failed: \(error)") },
            onChange: { [unowned self] players in
                let difference = GRDBSetDifference(from: previous, to: players)
                previous = players
                guard !difference.isEmpty else { return }
                latest = UpdatedRecords(
                    insertedCount: difference.inserted.count, updatedCount: difference.updated.count,
                    deletedCount: difference.deleted.count, firstUpdated: difference.updated.first.map { ($0.id, $0.score) })
                delivered.signal()
            })
        delivered.wait()
    }

    @inline(never)
    func update(id: Int64, score: Int) throws -> UpdatedRecords {
        try dbQueue.write { db in
            try db.execute(sql: "UPDATE player SET score = ? WHERE id = ?", arguments: [score, id])
        }
        delivered.wait()
        return latest!
    }

    @inline(never)
    func insertThenDelete(id: Int64) throws -> (inserted: UpdatedRecords, deleted: UpdatedRecords) {
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO player (id, name, score) VALUES (?, 'new', 0)", arguments: [id])
        }
        delivered.wait()
        let inserted = latest!
        try dbQueue.write { db in
            try db.execute(sql: "DELETE FROM player WHERE id = ?", arguments: [id])
        }
        delivered.wait()
        return (inserted, latest!)
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
