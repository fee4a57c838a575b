import Foundation
import GRDB

/// The player record, persisted by GRDB's `Encodable` support.
struct GRDBPlayer: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Double
    var bonus: Int?
    var createdAt: Date?

    init(_ values: RecordInputs.Values) {
        id = values.id
        name = values.name
        score = values.score
        bonus = values.bonus
        createdAt = values.createdAt
    }
}

/// The benchmarked writes, through GRDB: the same calls as
/// `ReactiveSQLiteRecordStore`, line for line.
final class GRDBRecordStore: RecordStore {
    let dbQueue: DatabaseQueue
    /// The records of versions A (0) and B (1), built outside timing.
    let versions: [[GRDBPlayer]]

    init(path: String, inputs: RecordInputs) throws {
        dbQueue = try DatabaseQueue(path: path)
        try dbQueue.writeWithoutTransaction { db in try db.execute(sql: RecordInputs.durabilitySQL) }
        try dbQueue.write { db in try db.execute(sql: RecordInputs.createTableSQL) }
        versions = [inputs.versionA.map(GRDBPlayer.init), inputs.versionB.map(GRDBPlayer.init)]
    }

    func reset(to rows: [RecordInputs.Values]) throws {
        try dbQueue.write { db in
            try db.execute(sql: "DELETE FROM player")
            let statement = try db.makeStatement(sql: "INSERT INTO player VALUES (?, ?, ?, ?, ?)")
            for row in rows {
                try statement.execute(arguments: [row.id, row.name, row.score, row.bonus, row.createdAt])
            }
        }
    }

    func deleteOddRows() throws {
        try dbQueue.write { db in try db.execute(sql: "DELETE FROM player WHERE id % 2 = 1") }
    }

    @inline(never)
    func insert(_ version: Int) throws {
        let records = versions[version]
        try dbQueue.write { db in
            for record in records {
                try record.insert(db)
            }
        }
    }

    @inline(never)
    func update(_ version: Int) throws {
        let records = versions[version]
        try dbQueue.write { db in
            for record in records {
                try record.update(db)
            }
        }
    }

    @inline(never)
    func upsert(_ version: Int) throws {
        let records = versions[version]
        try dbQueue.write { db in
            for record in records {
                try record.upsert(db)
            }
        }
    }

    @inline(never)
    func updateChanges(_ version: Int, from oldVersion: Int) throws {
        let records = versions[version]
        let oldRecords = versions[oldVersion]
        try dbQueue.write { db in
            for index in records.indices {
                try records[index].updateChanges(db, from: oldRecords[index])
            }
        }
    }

    func tableChecksum() throws -> Checksum {
        try dbQueue.read { db in
            let row = try Row.fetchOne(db, sql: RecordInputs.checksumSQL)!
            return Checksum(
                count: row[0], idSum: row[1] ?? 0, scoreSum: row[2], bonusSum: row[3] ?? 0,
                dateCount: row[4], dateSum: row[5] ?? 0)
        }
    }
}
