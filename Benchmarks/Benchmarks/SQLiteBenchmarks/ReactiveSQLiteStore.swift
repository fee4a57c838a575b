import Foundation
import ReactiveSQLite

/// The player record, decoded by ReactiveSQLite's `Decodable` support.
struct ReactiveSQLitePlayer: Decodable, FetchableRecord, TableRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Double
    var bonus: Int?
    var createdAt: Date?
}

/// The benchmarked operations, through ReactiveSQLite.
final class ReactiveSQLiteStore: PlayerStore {
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
            let row = try SQLRequest<Row>(sql: PlayerInputs.checksumSQL).fetchOne(db)!
            return Checksum(
                count: try row[0], idSum: try row[1], scoreSum: try row[2], bonusSum: try row[3],
                dateCount: try row[4], dateSum: try row[5])
        }
    }

    @inline(never)
    func fetchRows() throws -> Checksum {
        try dbQueue.read { db in
            let rows = try SQLRequest<Row>(sql: PlayerInputs.selectAllSQL).fetchAll(db)
            var checksum = Checksum()
            for row in rows {
                checksum.count += 1
                checksum.idSum &+= try row[0] as Int64
            }
            return checksum
        }
    }

    @inline(never)
    func fetchRecords() throws -> Checksum {
        try dbQueue.read { db in
            let players = try ReactiveSQLitePlayer.all().fetchAll(db)
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
                let player = try ReactiveSQLitePlayer.filter(key: id).fetchOne(db)!
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
                let player = try SQLRequest<ReactiveSQLitePlayer>(
                    sql: PlayerInputs.selectByIDSQL, arguments: [id]
                ).fetchOne(db)!
                checksum.add(id: player.id, score: player.score, bonus: player.bonus, dateMilliseconds: player.createdAt.map(milliseconds))
            }
            return checksum
        }
    }
}
