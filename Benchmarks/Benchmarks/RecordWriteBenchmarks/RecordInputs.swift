import BenchmarkSupport
import Foundation

/// The players of every benchmark, in two versions, built once, outside
/// timing, and identical for both libraries.
///
/// Schema: `player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL,
/// bonus INTEGER, createdAt TEXT)`. `bonus` is NULL in one row of 3,
/// `createdAt` in one row of 5. Version B is version A with every score
/// raised by 0.5: an update of it from A changes one column of every row.
struct RecordInputs: Sendable {
    static let createTableSQL = """
        CREATE TABLE player(
            id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL, bonus INTEGER, createdAt TEXT)
        """
    /// Both libraries' durability, set explicitly on their one connection
    /// (a `DatabaseQueue` on a file): WAL, and `synchronous = NORMAL` (the
    /// setting of both libraries' pools).
    static let durabilitySQL = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL"
    /// The checksum of the table, computed by SQLite (integer sums are exact).
    static let checksumSQL = """
        SELECT COUNT(*), SUM(id), TOTAL(score), SUM(bonus), COUNT(createdAt),
            SUM(strftime('%s', createdAt) * 1000 + substr(createdAt, 21, 3))
        FROM player
        """

    /// One player: the columns of a row.
    struct Values: Sendable {
        var id: Int64
        var name: String
        var score: Double
        var bonus: Int?
        var createdAt: Date?
    }

    let versionA: [Values]
    let versionB: [Values]
    let checksumA: Checksum
    let checksumB: Checksum
    /// The checksum of the even rows of version A, then of every row of B:
    /// what an upsert of B over the even rows of A leaves.
    let evenChecksumA: Checksum

    init(count: Int, seed: UInt64 = 2026) {
        var generator = SplitMix64(seed: seed)
        var versionA: [Values] = []
        versionA.reserveCapacity(count)
        for id in 1...Int64(count) {
            // Multiples of 1/4: sums are exact whatever the order.
            let quarters: Int = .random(in: 0..<1_000_000, using: &generator)
            let score = Double(quarters) * 0.25
            let bonus: Int? = id % 3 == 0 ? nil : Int(id % 100)
            // Whole milliseconds since 2026-01-01 UTC.
            let milliseconds: Int64 = Self.january2026 * 1000 + id * 1000 + id * 7 % 1000
            let createdAt: Date? = id % 5 == 0 ? nil : Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            versionA.append(Values(id: id, name: "Player \(id)", score: score, bonus: bonus, createdAt: createdAt))
        }
        self.versionA = versionA
        versionB = versionA.map { values in
            var values = values
            values.score += 0.5
            return values
        }
        checksumA = Checksum(versionA)
        checksumB = Checksum(versionB)
        evenChecksumA = Checksum(versionA.filter { $0.id % 2 == 0 })
    }

    /// 2026-01-01 00:00:00 UTC, in seconds since 1970.
    static let january2026: Int64 = 1_767_225_600
}

/// A summary of the rows of the table that both libraries must reproduce exactly.
struct Checksum: Equatable, Sendable, CustomStringConvertible {
    var count = 0
    var idSum: Int64 = 0
    var scoreSum = 0.0
    var bonusSum = 0
    var dateCount = 0
    /// The sum of the dates, in milliseconds since 1970.
    var dateSum: Int64 = 0

    init(count: Int = 0, idSum: Int64 = 0, scoreSum: Double = 0, bonusSum: Int = 0, dateCount: Int = 0, dateSum: Int64 = 0) {
        self.count = count
        self.idSum = idSum
        self.scoreSum = scoreSum
        self.bonusSum = bonusSum
        self.dateCount = dateCount
        self.dateSum = dateSum
    }

    init(_ rows: [RecordInputs.Values]) {
        for row in rows {
            count += 1
            idSum += row.id
            scoreSum += row.score
            bonusSum += row.bonus ?? 0
            if let date = row.createdAt {
                dateCount += 1
                dateSum += Int64((date.timeIntervalSince1970 * 1000).rounded())
            }
        }
    }

    var description: String {
        "count \(count), ids \(idSum), scores \(scoreSum), bonuses \(bonusSum), dates \(dateCount) (sum \(dateSum) ms)"
    }
}

/// The operations every benchmark runs, implemented once per library in its
/// own file, so that each file imports one library only.
protocol RecordStore: AnyObject {
    /// Replaces the table's rows by those of `rows`, in one transaction, with SQL.
    func reset(to rows: [RecordInputs.Values]) throws
    /// Deletes the rows of odd ids, in one transaction, with SQL.
    func deleteOddRows() throws
    /// `record.insert(db)` for each record of `version`, in one transaction.
    func insert(_ version: Int) throws
    /// `record.update(db)` for each record of `version`, in one transaction.
    func update(_ version: Int) throws
    /// `record.upsert(db)` for each record of `version`, in one transaction.
    func upsert(_ version: Int) throws
    /// `new.updateChanges(db, from: old)` for each record of `version` and
    /// the same record of `oldVersion`, in one transaction.
    func updateChanges(_ version: Int, from oldVersion: Int) throws
    /// The checksum of the table, computed by SQLite.
    func tableChecksum() throws -> Checksum
}
