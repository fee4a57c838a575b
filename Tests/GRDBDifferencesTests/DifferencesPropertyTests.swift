#if GRDB
// Built with the package trait GRDB only.
import Differences
import GRDB
import GRDBDifferences
import Testing
import TestSupport

/// Random writes (seeded), observed through GRDB: every delivered
/// difference is consistent with the previously delivered state, and the
/// last state is the database's.
@Suite(.onItsOwnThread) struct DifferencesPropertyTests {
    struct RankedPlayer: FetchableRecord, TableRecord, Identifiable, Equatable, Sendable {
        static let databaseTableName = "player"
        var id: Int64
        var score: Int

        init(row: Row) {
            id = row["id"]
            score = row["score"]
        }
    }

    static let leaderboard = RankedPlayer.order(Column("score").desc, Column("id")).limit(10)

    /// Applies `difference` to `old` as its documentation says: removes the
    /// deletions and move sources, inserts the new elements at the
    /// insertions and move destinations in ascending order, replaces the
    /// updated values.
    static func apply(
        _ difference: OrderedDifference<RankedPlayer>, to old: [RankedPlayer], newElements: [RankedPlayer]
    ) -> [RankedPlayer] {
        let removed = Set(difference.deletions + difference.moves.map(\.from))
        var result = old.indices.filter { !removed.contains($0) }.map { old[$0] }
        for offset in (difference.insertions + difference.moves.map(\.to)).sorted() {
            result.insert(newElements[offset], at: offset)
        }
        for offset in difference.updates {
            result[offset] = newElements[offset]
        }
        return result
    }

    /// A leaderboard (`ORDER BY score DESC LIMIT 10`) under random score
    /// changes, insertions and deletions.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func orderedDifferencesOfALeaderboardUnderRandomWrites(kind: GRDBDatabaseKind) async throws {
        let test = try kind.make(sql: "CREATE TABLE player (id INTEGER PRIMARY KEY, score INTEGER NOT NULL)")
        var generator = SplitMix64(seed: 0x1EAD_B0A2D + UInt64(GRDBDatabaseKind.allCases.firstIndex(of: kind)!))
        let initialScores = (1...30).map { _ in Int.random(in: 0..<100, using: &generator) }
        try await test.writer.write { db in
            for (index, score) in initialScores.enumerated() {
                try db.execute(sql: "INSERT INTO player VALUES (?, ?)", arguments: [index + 1, score])
            }
        }
        let recorder = Recorder<ElementsWithDifference<RankedPlayer>>()
        let cancellable = ValueObservation
            .tracking { db in try Self.leaderboard.fetchAll(db) }
            .orderedDifferences()
            .record(in: test.writer, into: recorder)
        defer { cancellable.cancel() }

        let stepCount = 2_000
        for _ in 0..<stepCount {
            let id = Int.random(in: 1...40, using: &generator)
            let score = Int.random(in: 0..<100, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0:
                try test.writer.writeSQL("DELETE FROM player WHERE id = ?", arguments: [id])
            case 1:
                try test.writer.writeSQL("INSERT OR REPLACE INTO player VALUES (?, ?)", arguments: [id, score])
            default:
                try test.writer.writeSQL(
                    "UPDATE player SET score = ? WHERE id IN (?, ?)",
                    arguments: [score, id, Int.random(in: 1...40, using: &generator)])
            }
        }
        let finalElements = try await test.writer.read { db in try Self.leaderboard.fetchAll(db) }
        let changes = try await recorder.wait { $0.last?.elements == finalElements }

        var previous: [RankedPlayer] = []
        for (index, change) in changes.enumerated() {
            let difference = change.difference
            #expect(index == 0 || !difference.isEmpty, "an empty difference was delivered")
            #expect(Self.apply(difference, to: previous, newElements: change.elements) == change.elements)
            #expect(previous.applying(difference.collectionDifference) == change.elements)
            previous = change.elements
        }
        // Values coalesce under bursts, but many were delivered.
        #expect(changes.count > 10)
    }

    struct Tag: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "tag"
        var name: String
        var count: Int

        init(row: Row) {
            name = row["name"]
            count = row["count"]
        }
    }

    /// Text keys declared `COLLATE NOCASE`, some canonically equivalent,
    /// some differing by case only (`INSERT OR REPLACE` then changes the
    /// row's key), under random writes: applying each set difference to a
    /// model keyed by raw bytes keeps it equal to the database.
    @Test(arguments: GRDBDatabaseKind.allCases)
    func trackingSetDifferencesOfNocaseTextKeysUnderRandomWrites(kind: GRDBDatabaseKind) async throws {
        let test = try kind.make(
            sql: "CREATE TABLE tag (name TEXT NOT NULL COLLATE NOCASE PRIMARY KEY, count INTEGER NOT NULL)")
        let names = ["a", "A", "b", "B", "caf\u{E9}", "cafe\u{301}", "Caf\u{E9}", "\u{1F600}", "z", "Z"]
        var generator = SplitMix64(seed: 0x7A65 + UInt64(GRDBDatabaseKind.allCases.firstIndex(of: kind)!))
        let recorder = Recorder<SetDifference<Tag>>()
        let cancellable = ValueObservation.trackingSetDifferences(Tag.orderByPrimaryKey())
            .record(in: test.writer, into: recorder)
        defer { cancellable.cancel() }

        for step in 0..<600 {
            let name = names.randomElement(using: &generator)!
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                try test.writer.writeSQL("DELETE FROM tag WHERE name = ?", arguments: [name])
            case 1:
                try test.writer.writeSQL("UPDATE tag SET count = ? WHERE name = ?", arguments: [step, name])
            default:
                try test.writer.writeSQL("INSERT OR REPLACE INTO tag VALUES (?, ?)", arguments: [name, step])
            }
        }
        let finalTags = try await test.writer.read { db in
            Dictionary(uniqueKeysWithValues: try Tag.fetchAll(db).map { (Array($0.name.utf8), $0.count) })
        }
        @Sendable func model(_ differences: [SetDifference<Tag>]) -> [[UInt8]: Int]? {
            var model: [[UInt8]: Int] = [:]
            for difference in differences {
                for tag in difference.deleted {
                    guard model.removeValue(forKey: Array(tag.name.utf8)) == tag.count else { return nil }
                }
                for tag in difference.updated {
                    guard model.updateValue(tag.count, forKey: Array(tag.name.utf8)) != nil else { return nil }
                }
                for tag in difference.inserted {
                    guard model.updateValue(tag.count, forKey: Array(tag.name.utf8)) == nil else { return nil }
                }
            }
            return model
        }
        let differences = try await recorder.wait { model($0) == nil || model($0) == finalTags }
        #expect(model(differences) == finalTags, "a difference does not apply to the previous state")
        for difference in differences {
            for array in [difference.inserted, difference.updated, difference.deleted] {
                let keys = array.map { Array($0.name.utf8) }
                #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) }, "not in BINARY order")
            }
        }
    }
}

#endif
