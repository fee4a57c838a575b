// Mirrors a server payload into a database table with the fewest writes.
// Run it with `swift run payload-sync`.
//
// The payload (10 000 players, generated from a seeded generator, as JSON) is
// decoded and sorted by id; the database players are fetched sorted by
// primary key, in one SELECT; `SortedDifference` pairs the two lists in one
// pass; each pair becomes at most one write: `delete` for a player gone from
// the payload, `insert` for a new one, `updateChanges(from:)` for the others,
// which writes only the columns that changed, and nothing when none did. All
// in one transaction.
//
// The program mirrors three payloads: into an empty table; the same payload
// again (nothing to write); and the payload with 1 % of its players
// inserted, deleted or changed. For each run it prints the statements the
// connection ran (from `Database.trace`), the rows changed, and a line that
// CI checks:
//
//     run 2: 1 select, 0 inserts, 0 updates, 0 deletes
//
// It exits with status 1 when a count is not the one the payloads call for.

import Differences
import Foundation
import ReactiveSQLite

// MARK: - Players

/// A player as the server sends it.
struct APIPlayer: Codable, Identifiable {
    var id: Int64
    var name: String
    var score: Int
    var team: String?
    var joinedAt: Date
}

/// A player as the database stores it: a record that reads and writes itself.
struct Player: Codable, Identifiable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "player"
    var id: Int64
    var name: String
    var score: Int
    var team: String?
    var joinedAt: Date

    init(_ player: APIPlayer) {
        id = player.id
        name = player.name
        score = player.score
        team = player.team
        joinedAt = player.joinedAt
    }
}

// MARK: - The synchronization

/// Makes the `player` table hold exactly the players of the payload.
///
/// - Complexity: O(n log n) to sort the payload, then one SELECT, one pass
///   over both lists, and one statement per inserted, deleted or changed
///   player, where n is the number of players.
func synchronize(_ payload: [APIPlayer], in dbQueue: DatabaseQueue) throws {
    // SortedDifference needs both lists sorted by id.
    let apiPlayers = payload.sorted { $0.id < $1.id }
    try dbQueue.write { db in
        let dbPlayers = try Player.orderByPrimaryKey().fetchAll(db)
        for change in SortedDifference(left: dbPlayers, right: apiPlayers) {
            switch change {
            case .left(let dbPlayer):
                // In the database, not on the server.
                try dbPlayer.delete(db)
            case .right(let apiPlayer):
                // On the server, not in the database.
                try Player(apiPlayer).insert(db)
            case .common(let dbPlayer, let apiPlayer):
                // In both: written only if something changed.
                try Player(apiPlayer).updateChanges(db, from: dbPlayer)
            }
        }
    }
}

// MARK: - Payloads

/// A small seeded generator (SplitMix64): the same payloads on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let teams = ["Red", "Blue", "Green", "Yellow"]

/// A new player of the payload.
func makePlayer(id: Int64, using generator: inout SeededGenerator) -> APIPlayer {
    APIPlayer(
        id: id, name: "Player \(id)", score: Int.random(in: 0..<10_000, using: &generator),
        team: Bool.random(using: &generator) ? teams.randomElement(using: &generator) : nil,
        // Whole seconds since 2020: JSON's ISO 8601 dates keep them exactly.
        joinedAt: Date(timeIntervalSince1970: 1_577_836_800 + Double(Int.random(in: 0..<150_000_000, using: &generator))))
}

/// The changes of the third payload: who is inserted, deleted, changed.
struct PayloadChanges {
    var inserted = 0
    var deleted = 0
    var changed = 0
}

/// The payload as the server would send it, and the same players in a
/// shuffled order (the server does not sort them).
func encodePayload(_ players: [APIPlayer], using generator: inout SeededGenerator) throws -> Data {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    return try encoder.encode(players.shuffled(using: &generator))
}

func decodePayload(_ data: Data) throws -> [APIPlayer] {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode([APIPlayer].self, from: data)
}

/// 1 % of the players inserted, deleted or changed (a third each, one more
/// insertion), at random places.
func modify(_ players: [APIPlayer], using generator: inout SeededGenerator) -> ([APIPlayer], PayloadChanges) {
    let total = players.count / 100
    var changes = PayloadChanges(inserted: total - 2 * (total / 3), deleted: total / 3, changed: total / 3)
    var picked = Array(players.indices.shuffled(using: &generator).prefix(changes.deleted + changes.changed))
    let deletedIndices = Set(picked.prefix(changes.deleted))
    picked.removeFirst(changes.deleted)
    var modified: [APIPlayer] = []
    for (index, player) in players.enumerated() where !deletedIndices.contains(index) {
        modified.append(player)
    }
    // The ids of the players to change.
    let changedIDs = Set(picked.map { players[$0].id })
    for index in modified.indices where changedIDs.contains(modified[index].id) {
        // A change the database will see: a new score, sometimes a new team.
        modified[index].score += Int.random(in: 1...100, using: &generator)
        if Bool.random(using: &generator) {
            modified[index].team = modified[index].team == nil ? teams[0] : nil
        }
    }
    let nextID = (players.map(\.id).max() ?? 0) + 1
    for id in nextID..<(nextID + Int64(changes.inserted)) {
        modified.append(makePlayer(id: id, using: &generator))
    }
    changes.changed = changedIDs.count
    return (modified, changes)
}

// MARK: - Counting statements

/// The statements the connection runs, from `Database.trace`.
final class StatementLog {
    private(set) var statements: [String] = []

    func record(_ sql: String) { statements.append(sql) }
    func reset() { statements = [] }

    /// How many statements start with `keyword`.
    func count(_ keyword: String) -> Int {
        statements.count { $0.hasPrefix(keyword) }
    }

    /// Each distinct statement, with how many times it ran, in order of
    /// first run.
    var summary: [(sql: String, count: Int)] {
        var result: [(sql: String, count: Int)] = []
        var positions: [String: Int] = [:]
        for sql in statements {
            if let position = positions[sql] {
                result[position].count += 1
            } else {
                positions[sql] = result.count
                result.append((sql, 1))
            }
        }
        return result
    }
}

// MARK: - Main

func runExample() throws -> Bool {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("payload-sync-\(ProcessInfo.processInfo.processIdentifier).sqlite").path
    defer {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let dbQueue = try DatabaseQueue(path: path)
    try dbQueue.write { db in
        try db.execute(sql: """
            CREATE TABLE player (
                id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL, team TEXT, joinedAt TEXT NOT NULL)
            """)
    }
    let count = try dbQueue.read { db in try Player.all().fetchCount(db) }
    print("The player table is empty: \(count) players.")

    let log = StatementLog()
    try dbQueue.writeWithoutTransaction { db in
        db.trace { log.record($0.sql) }
    }

    var generator = SeededGenerator(state: 2026)
    let players = (1...10_000).map { makePlayer(id: Int64($0), using: &generator) }
    let (modifiedPlayers, changes) = modify(players, using: &generator)
    let runs: [(title: String, payload: Data, expected: PayloadChanges)] = [
        ("into an empty table", try encodePayload(players, using: &generator), PayloadChanges(inserted: players.count)),
        ("the same payload again", try encodePayload(players, using: &generator), PayloadChanges()),
        ("1 % of the players inserted, deleted or changed", try encodePayload(modifiedPlayers, using: &generator), changes),
    ]

    var succeeded = true
    for (number, run) in zip(1..., runs) {
        let payload = try decodePayload(run.payload)
        print("\nRun \(number): \(run.title) (a payload of \(payload.count) players, \(run.payload.count) bytes of JSON)")
        let changesBefore = try dbQueue.read { db in db.totalChangesCount }
        log.reset()
        let start = ContinuousClock.now
        try synchronize(payload, in: dbQueue)
        let duration = ContinuousClock.now - start
        // The statements of the synchronization alone: the read below comes after.
        let statementCount = log.statements.count
        let summary = log.summary
        let selects = log.count("SELECT")
        let inserts = log.count("INSERT")
        let updates = log.count("UPDATE")
        let deletes = log.count("DELETE")
        let changesAfter = try dbQueue.read { db in db.totalChangesCount }
        print("  \(statementCount) statements in \(duration.formatted(.units(allowed: [.milliseconds]))):")
        for (sql, count) in summary {
            print("    " + (count == 1 ? "" : "\(count) × ") + sql)
        }
        print("  rows changed: \(changesAfter - changesBefore)")
        let line = "run \(number): \(selects) select, \(inserts) inserts, \(updates) updates, \(deletes) deletes"
        print(line)
        let expected = "run \(number): 1 select, \(run.expected.inserted) inserts, \(run.expected.changed) updates, "
            + "\(run.expected.deleted) deletes"
        let expectedChanges = run.expected.inserted + run.expected.changed + run.expected.deleted
        if line != expected || changesAfter - changesBefore != expectedChanges {
            print("error: expected \"\(expected)\" and \(expectedChanges) rows changed")
            succeeded = false
        }
    }
    let stored = try dbQueue.read { db in try Player.orderByPrimaryKey().fetchAll(db) }
    let expectedIDs = modifiedPlayers.map(\.id).sorted()
    if stored.map(\.id) != expectedIDs {
        print("error: the table does not hold the players of the last payload")
        succeeded = false
    }
    return succeeded
}

if try !runExample() {
    exit(1)
}
