import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `trackingSetDifferences` of a table of tens of thousands of rows: many
/// chunks of rows (see `RowValues`), which each commit's rows share with the
/// previous commit's where they kept them whole. Under random commits that
/// change one row, a few, a range of hundreds, or most rows, the records the
/// differences lead to equal a fresh fetch after every commit, whether the
/// observation refetches the changed rows only (pre-update hook), or every
/// row (update hook, or a request that cannot refetch rows alone).
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct LargeSetDifferencesTests {
    typealias Player = UnequatablePlayer

    static let rowCount = 8_000

    /// `id -> "name/score"`.
    typealias State = [Int64: String]

    static func fetchState(_ db: Database) throws -> State {
        var state = State()
        for player in try Player.all().fetchAll(db) { state[player.id] = "\(player.name)/\(player.score)" }
        return state
    }

    static func apply(_ difference: SetDifference<Player>, to state: inout State) {
        for player in difference.deleted { state[player.id] = nil }
        for player in difference.inserted + difference.updated { state[player.id] = "\(player.name)/\(player.score)" }
    }

    /// A random commit: its statements and arguments.
    static func randomCommit(nextID: inout Int64, using random: inout SplitMix64) -> [(String, StatementArguments)] {
        let id = Int64.random(in: 1...nextID, using: &random)
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<8:
            return [("UPDATE player SET score = score + 1 WHERE id = ?", [id])]
        case 8..<11:
            return (0..<3).map { _ in
                ("UPDATE player SET name = name || 'x' WHERE id = ?", [Int64.random(in: 1...nextID, using: &random)])
            }
        case 11..<14:
            nextID += 1
            return [("INSERT INTO player (id, name, score) VALUES (?, ?, ?)", [nextID, "p\(nextID)", 0])]
        case 14..<16:
            return [("DELETE FROM player WHERE id = ?", [id])]
        case 16:
            // Hundreds of rows at once: still fewer than a quarter.
            return [("DELETE FROM player WHERE id BETWEEN ? AND ?", [id, id + 300])]
        case 17:
            return [("UPDATE player SET score = score + 1 WHERE id BETWEEN ? AND ?", [id, id + 1_000])]
        case 18:
            // Most rows: the fetch reads every row.
            return [("UPDATE player SET score = score - 1 WHERE id % 3 <> ?", [id % 3])]
        default:
            // Rows inserted among the others.
            let base = nextID
            nextID += 50
            return [(
                "INSERT INTO player (id, name, score) SELECT ? + value, 'n' || value, value FROM json_each(?)",
                [base, "[" + (1...50).map(String.init).joined(separator: ",") + "]"]
            )]
        }
    }

    @Test(arguments: DatabaseKind.allCases, [Configuration.ChangeTracking.automatic, .updateHookOnly])
    func differencesOfManyChunksEqualAFreshFetchAfterEveryCommit(
        kind: DatabaseKind, changeTracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(
            changeTracking: changeTracking,
            sql: "CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL)")
        let writer = test.writer
        try writer.writeSQLWithoutTransaction("PRAGMA synchronous = OFF")
        try await writer.write { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO player (id, name, score) SELECT i, 'player' || i, i % 1000 FROM n
                    """,
                arguments: [Self.rowCount])
        }
        // The table alone (changed rows refetched with the pre-update hook),
        // and a request with a subquery (every row refetched).
        let requests: [QueryInterfaceRequest<Player>] = [
            Player.all(),
            Player.filter(sql: "id >= (SELECT 0)"),
        ]
        let states = requests.map { _ in ObservedState(State()) }
        let cancellables = zip(requests, states).map { request, state in
            ValueObservation.trackingSetDifferences(request).start(
                in: writer, scheduling: .observationQueue, onError: { Issue.record($0) },
                onChange: { difference in state.update { Self.apply(difference, to: &$0) } })
        }
        defer { cancellables.forEach { $0.cancel() } }

        var random = SplitMix64(seed: 0x1A26E + UInt64(DatabaseKind.allCases.firstIndex(of: kind)!))
        var nextID = Int64(Self.rowCount)
        for step in 0..<(isRunningUnderThreadSanitizer ? 20 : 80) {
            let statements = Self.randomCommit(nextID: &nextID, using: &random)
            let expected = try await writer.write { db in
                for (sql, arguments) in statements { try db.execute(sql: sql, arguments: arguments) }
                return try Self.fetchState(db)
            }
            for (index, state) in states.enumerated() {
                let reached = await state.wait(until: { $0 == expected }, timeout: observationPatience)
                if reached == nil {
                    let actual = state.value
                    let wrong = expected.filter { actual[$0.key] != $0.value }.prefix(5)
                    let extra = actual.keys.filter { expected[$0] == nil }.prefix(5)
                    Issue.record("step \(step), request \(index), \(statements): \(actual.count) rows for \(expected.count); wrong: \(Array(wrong)), extra: \(Array(extra))")
                    return
                }
            }
        }
    }
}
