import Foundation
import GRDB

/// The player record, decoded by GRDB's `Decodable` support.
struct GRDBPlayer: Decodable, FetchableRecord, TableRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Double
    var bonus: Int?
    var createdAt: Date?
}

/// The benchmarked operations, through GRDB: the same calls as
/// `ReactiveSQLiteStore`, line for line.
final class GRDBStore: PlayerStore {
    let dbQueue: DatabaseQueue

    init(path: String, inputs: PlayerInputs) throws {
        dbQueue = try DatabaseQueue(path: path)
        try dbQueue.write { db in try db.execute(sql: PlayerInputs.createTableSQL) }
        try insert(inputs)
    }

    func deleteAll() throws {
        try dbQueue.write { db in try db.execute(sql: "DELETE FROM player") }
    }

    @inline(never)
    func insert(_ inputs: PlayerInputs) throws {
        try dbQueue.write { db in
            let statement = try db.cachedStatement(sql: PlayerInputs.insertSQL)
            for index in inputs.ids.indices {
                try statement.execute(arguments: [
                    inputs.ids[index], inputs.names[index], inputs.scores[index], inputs.bonuses[index],
                    inputs.createdAts[index],
                ])
            }
        }
    }

    func tableChecksum() throws -> Checksum {
        try dbQueue.read { db in
            let row = try Row.fetchOne(db, sql: PlayerInputs.checksumSQL)!
            return Checksum(
                count: row[0], idSum: row[1], scoreSum: row[2], bonusSum: row[3],
                dateCount: row[4], dateSum: row[5])
        }
    }

    @inline(never)
    func fetchRows() throws -> Checksum {
        try dbQueue.read { db in
            let rows = try Row.fetchAll(db, sql: PlayerInputs.selectAllSQL)
            var checksum = Checksum()
            for row in rows {
                checksum.count += 1
                checksum.idSum &+= try row.decode(Int64.self, atIndex: 0)
            }
            return checksum
        }
    }

    @inline(never)
    func fetchRecords() throws -> Checksum {
        try dbQueue.read { db in
            let players = try GRDBPlayer.all().fetchAll(db)
            var checksum = Checksum()
            for player in players {
                checksum.add(id: player.id, score: player.score, bonus: player.bonus, dateMilliseconds: player.createdAt.map(milliseconds))
            }
            return checksum
        }
    }

    @inline(never)
    func fetchRecordsByPrimaryKey(_ ids: [Int64]) throws -> Checksum {
        try dbQueue.read { db in
            var checksum = Checksum()
            for id in ids {
                let player = try GRDBPlayer.filter(key: id).fetchOne(db)!
                checksum.add(id: player.id, score: player.score, bonus: player.bonus, dateMilliseconds: player.createdAt.map(milliseconds))
            }
            return checksum
        }
    }

    @inline(never)
    func fetchRecordsBySQL(_ ids: [Int64]) throws -> Checksum {
        try dbQueue.read { db in
            var checksum = Checksum()
            for id in ids {
                let player = try SQLRequest<GRDBPlayer>(
                    sql: PlayerInputs.selectByIDSQL, arguments: [id], cached: true
                ).fetchOne(db)!
                checksum.add(id: player.id, score: player.score, bonus: player.bonus, dateMilliseconds: player.createdAt.map(milliseconds))
            }
            return checksum
        }
    }
}
