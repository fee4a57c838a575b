import DatabaseTestSupport
import Differences
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `orderedDifferences`: the differences of a leaderboard, exactly, and
/// under thousands of random score changes.
@Suite(.onItsOwnThread) struct OrderedDifferencesObservationTests {
    /// A row of `player(id, name, score)`.
    struct Ranked: FetchableRecord, TableRecord, Identifiable, Equatable, Sendable, CustomStringConvertible {
        static let databaseTableName = "player"
        var id: Int64
        var name: String
        var score: Int

        init(row: Row) throws {
            id = try row["id"]
            name = try row["name"]
            score = try row["score"]
        }

        var description: String { "\(name):\(score)" }
    }

    static let schemaSQL = """
        CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL);
        """

    /// `elements / deletions insertions moves updates`.
    static func describe(_ value: ElementsWithDifference<Ranked>) -> String {
        let difference = value.difference
        return "\(value.elements) / d\(difference.deletions) i\(difference.insertions) m\(difference.moves) u\(difference.updates)"
    }

    @Test(arguments: DatabaseKind.allCases)
    func leaderboardDifferences(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL + """
            INSERT INTO player (id, name, score) VALUES (1, 'A', 100), (2, 'B', 90), (3, 'C', 80), (4, 'D', 70);
            """)
        let writer = test.writer
        let observation = ValueObservation.trackingAll(Ranked.all().order(sql: "score DESC, id").limit(3))
            .orderedDifferences()
        let recorder = Recorder<ElementsWithDifference<Ranked>>()
        let cancellable = observation.start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        try writer.writeSQL("UPDATE player SET score = 95 WHERE id = 3")
        try await recorder.wait(for: 2)
        try writer.writeSQL("UPDATE player SET score = 200 WHERE id = 4")
        try await recorder.wait(for: 3)
        try writer.writeSQL("UPDATE player SET score = 201 WHERE id = 4")
        try await recorder.wait(for: 4)
        // Outside the leaderboard: the difference is empty, not delivered.
        try writer.writeSQL("UPDATE player SET score = 10 WHERE id = 2")
        try writer.writeSQL("DELETE FROM player WHERE id = 1")
        let values = try await recorder.wait(for: 5)
        #expect(values.map(Self.describe) == [
            "[A:100, B:90, C:80] / d[] i[0, 1, 2] m[] u[]",
            "[A:100, C:95, B:90] / d[] i[] m[2->1] u[1]",
            "[D:200, A:100, C:95] / d[2] i[0] m[] u[]",
            "[D:201, A:100, C:95] / d[] i[] m[] u[0]",
            "[D:201, C:95, B:10] / d[1] i[2] m[] u[]",
        ])
    }

    /// Applies `difference` to `old` as its documentation says: remove the
    /// deletions and the move sources, insert the new elements at the
    /// insertions and move destinations in ascending order, then replace
    /// the values at `updates`. Also checks that `updates` names exactly the
    /// positions whose value changed.
    static func apply<Element: Identifiable & Equatable>(
        _ difference: OrderedDifference<Element>, to old: [Element], new: [Element]
    ) -> [Element]? {
        let removed = Set(difference.deletions + difference.moves.map(\.from))
        var result = old.indices.filter { !removed.contains($0) }.map { old[$0] }
        let sourceByDestination = Dictionary(uniqueKeysWithValues: difference.moves.map { ($0.to, $0.from) })
        let insertions = Set(difference.insertions)
        for offset in (difference.insertions + difference.moves.map(\.to)).sorted() {
            guard offset <= result.count else { return nil }
            if insertions.contains(offset) {
                result.insert(new[offset], at: offset)
            } else if let source = sourceByDestination[offset] {
                result.insert(old[source], at: offset)
            }
        }
        guard result.count == new.count else { return nil }
        let updates = Set(difference.updates)
        for offset in result.indices {
            guard result[offset].id == new[offset].id else { return nil }
            // The values at `updates`, and only they, changed.
            guard (result[offset] != new[offset]) == updates.contains(offset) else { return nil }
            result[offset] = new[offset]
        }
        return result
    }

    /// Ids come from the database: two rows with the same id fail the
    /// observation, with an error rather than a trap.
    @Test(arguments: DatabaseKind.allCases)
    func duplicateIDsFailTheObservation(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL + """
            INSERT INTO player (id, name, score) VALUES (1, 'Arthur', 10);
            """)
        let join = SQLRequest<Ranked>(sql: "SELECT p1.* FROM player p1, player p2, (SELECT 1 UNION ALL SELECT 2)")
        let error = try await firstError(of: ValueObservation.trackingAll(join).orderedDifferences(), in: test.writer)
        #expect((error as? DifferencesObservationError)?.kind == .duplicateIdentifier)
        #expect((error as? DifferencesObservationError)?.message.hasPrefix("orderedDifferences: two elements have the same id (1)") == true)
    }

    /// Thousands of random score changes, insertions and deletions, one
    /// transaction each, seeded: applying each delivered difference to the
    /// previously delivered elements gives the new elements, and the last
    /// value is the final leaderboard.
    @Test(arguments: DatabaseKind.allCases)
    func leaderboardDifferencesApplyToThePreviousElements(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.schemaSQL)
        let writer = test.writer
        // Commits need not reach the disk here.
        try writer.writeSQLWithoutTransaction("PRAGMA synchronous = OFF")
        var random = SplitMix64(seed: 0x1EAD_B0A2D + UInt64(DatabaseKind.allCases.firstIndex(of: kind)!))
        var nextID: Int64 = 1
        var seedPlayers: [(Int64, Int)] = []
        for _ in 0..<16 {
            seedPlayers.append((nextID, Int.random(in: 0..<100, using: &random)))
            nextID += 1
        }
        try await writer.write { [seedPlayers] db in
            for (id, score) in seedPlayers {
                try db.execute(
                    sql: "INSERT INTO player (id, name, score) VALUES (?, ?, ?)",
                    arguments: [id, "P\(id)", score])
            }
        }
        let request = Ranked.all().order(sql: "score DESC, id").limit(10)
        // The successive leaderboards, read in each write transaction.
        var leaderboards = [try await writer.read { db in try request.fetchAll(db) }]
        let recorder = Recorder<ElementsWithDifference<Ranked>>()
        let cancellable = ValueObservation.trackingAll(request).orderedDifferences()
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }

        let stepCount = isRunningUnderThreadSanitizer ? 400 : 3000
        for _ in 0..<stepCount {
            let id = Int64.random(in: 1..<nextID, using: &random)
            let sql: String
            let arguments: StatementArguments
            switch Int.random(in: 0..<20, using: &random) {
            case 0:
                (sql, arguments) = ("DELETE FROM player WHERE id = ?", [id])
            case 1:
                sql = "INSERT INTO player (id, name, score) VALUES (?, ?, ?)"
                arguments = [nextID, "P\(nextID)", Int.random(in: 0..<100, using: &random)]
                nextID += 1
            case 2:
                // Renames change values without moving anything.
                (sql, arguments) = ("UPDATE player SET name = name || '+' WHERE id = ?", [id])
            default:
                sql = "UPDATE player SET score = ? WHERE id = ?"
                arguments = [Int.random(in: 0..<100, using: &random), id]
            }
            leaderboards.append(try await writer.write { db in
                try db.execute(sql: sql, arguments: arguments)
                return try request.fetchAll(db)
            })
        }
        // Each leaderboard once, and no empty first one: what the
        // observation delivers when no value coalesces.
        var expected: [[Ranked]] = []
        for leaderboard in leaderboards where leaderboard != (expected.last ?? []) {
            expected.append(leaderboard)
        }
        let final = leaderboards.last!
        let values = try await recorder.wait { $0.last?.elements == final }
        if kind == .pool {
            // Fetches run on readers, concurrently with writes: values may coalesce.
            #expect(isOrderedSubsequence(values.map(\.elements), of: expected))
        } else {
            #expect(values.map(\.elements) == expected)
        }
        // A good share of the commits change the leaderboard (about a
        // quarter with this seed): the test checks hundreds of differences.
        #expect(expected.count > stepCount / 5)

        var previous: [Ranked] = []
        for (index, value) in values.enumerated() {
            #expect(!value.difference.isEmpty, "value \(index) has an empty difference")
            #expect(Self.apply(value.difference, to: previous, new: value.elements) == value.elements, "value \(index)")
            #expect(previous.applying(value.difference.collectionDifference) == value.elements, "value \(index)")
            previous = value.elements
        }
    }
}
