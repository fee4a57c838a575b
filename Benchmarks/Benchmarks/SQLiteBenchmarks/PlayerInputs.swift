import BenchmarkSupport
import Foundation

/// The rows of `player`, built once, outside timing, and identical for both
/// libraries: every benchmark works on the same schema and the same values.
///
/// Schema: `player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL,
/// bonus INTEGER, createdAt TEXT)`. `bonus` is NULL in one row of 3,
/// `createdAt` in one row of 5; other dates are UTC texts
/// `YYYY-MM-DD HH:MM:SS.SSS`, the storage format of both libraries.
struct PlayerInputs: Sendable {
    static let createTableSQL = """
        CREATE TABLE player(
            id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL NOT NULL, bonus INTEGER, createdAt TEXT)
        """
    static let insertSQL = "INSERT INTO player (id, name, score, bonus, createdAt) VALUES (?, ?, ?, ?, ?)"
    static let selectAllSQL = "SELECT * FROM player"
    static let selectByIDSQL = "SELECT * FROM player WHERE id = ?"
    /// The checksum of the table, computed by SQLite (integer sums are exact).
    static let checksumSQL = """
        SELECT COUNT(*), SUM(id), TOTAL(score), SUM(bonus), COUNT(createdAt),
            SUM(strftime('%s', createdAt) * 1000 + substr(createdAt, 21, 3))
        FROM player
        """

    let ids: [Int64]
    let names: [String]
    let scores: [Double]
    let bonuses: [Int?]
    let createdAts: [String?]
    /// A seeded permutation of the ids: the order of the primary key lookups.
    let lookupIDs: [Int64]

    /// What a fetch of every row must find.
    let expected: Checksum
    /// What the lookups of `lookupIDs` must find.
    let expectedLookups: Checksum

    init(count: Int, seed: UInt64 = 2026) {
        ids = (1...count).map { Int64($0) }
        names = ids.map { "Player \($0)" }
        // Multiples of 1/4: sums are exact whatever the order.
        scores = ids.map { Double($0) * 0.25 }
        bonuses = ids.map { $0 % 3 == 0 ? nil : Int($0 % 100) }
        createdAts = ids.map { $0 % 5 == 0 ? nil : Self.dateText(secondsSince2026: $0, milliseconds: $0 * 7 % 1000) }
        var generator = SplitMix64(seed: seed)
        lookupIDs = ids.shuffled(using: &generator)

        var expected = Checksum()
        for index in ids.indices {
            let id = ids[index]
            expected.add(
                id: id, score: scores[index], bonus: bonuses[index],
                dateMilliseconds: createdAts[index] == nil ? nil : (Self.january2026 + id) * 1000 + id * 7 % 1000)
        }
        self.expected = expected
        // Every id is looked up once: the lookups find every row.
        expectedLookups = expected
    }

    /// 2026-01-01 00:00:00 UTC, in seconds since 1970.
    static let january2026: Int64 = 1_767_225_600

    /// `2026-01-01 00:00:00.000` plus the given time, as UTC text.
    private static func dateText(secondsSince2026 seconds: Int64, milliseconds: Int64) -> String {
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let day = 1 + seconds / 86_400
        precondition(day <= 31, "The dates must stay in January 2026")
        let hour = seconds % 86_400 / 3600
        let minute = seconds % 3600 / 60
        let second = seconds % 60
        return "2026-01-\(pad(day, 2)) \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(milliseconds, 3))"
    }
}

/// A summary of fetched rows that both libraries must reproduce exactly.
struct Checksum: Equatable, Sendable, CustomStringConvertible {
    var count = 0
    var idSum: Int64 = 0
    var scoreSum = 0.0
    var bonusSum = 0
    var dateCount = 0
    /// The sum of the dates, in milliseconds since 1970.
    var dateSum: Int64 = 0

    /// Accounts for one row.
    @inline(__always)
    mutating func add(id: Int64, score: Double, bonus: Int?, dateMilliseconds: Int64?) {
        count += 1
        idSum &+= id
        scoreSum += score
        bonusSum &+= bonus ?? 0
        if let dateMilliseconds {
            dateCount += 1
            dateSum &+= dateMilliseconds
        }
    }

    /// The part that a fetch of rows checks: the count and the sum of the ids.
    var rowPart: Checksum { Checksum(count: count, idSum: idSum) }

    var description: String {
        "count \(count), ids \(idSum), scores \(scoreSum), bonuses \(bonusSum), dates \(dateCount) (sum \(dateSum) ms)"
    }
}

/// A date in whole milliseconds since 1970, as the checksums count it.
@inline(__always)
func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
}

/// The operations every benchmark runs, implemented once per library in its
/// own file (`ReactiveSQLiteStore.swift`, `GRDBStore.swift`), so that each
/// file imports one library only (both have a `Row`, a `Database`...).
protocol PlayerStore: AnyObject {
    /// Empties `player`, in its own transaction.
    func deleteAll() throws
    /// Inserts the rows in one transaction with one cached statement.
    func insert(_ inputs: PlayerInputs) throws
    /// The checksum of the table, computed by SQLite.
    func tableChecksum() throws -> Checksum
    /// Fetches every row as `[Row]`: the count and the sum of the ids read from the rows.
    func fetchRows() throws -> Checksum
    /// Fetches every row as a `Decodable` record.
    func fetchRecords() throws -> Checksum
    /// Fetches one record per id, with the query interface, in one read.
    func fetchRecordsByPrimaryKey(_ ids: [Int64]) throws -> Checksum
    /// Fetches one record per id, with raw SQL and a cached statement, in one read.
    func fetchRecordsBySQL(_ ids: [Int64]) throws -> Checksum
}
