import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// Records' writes are statements like any other: observations see them
/// exactly as they see the same changes made with raw SQL. And a record
/// observes its own row with `RecordObservation(record:)`.
@Suite(.timeLimit(.minutes(3))) struct RecordWriteObservationTests {
    typealias Player = RecordWriteFixtures.Player
    typealias Membership = RecordWriteFixtures.Membership

    /// The same changes, by records and by SQL.
    enum Writer: String, CaseIterable, CustomTestStringConvertible {
        case records, sql
        var testDescription: String { rawValue }

        /// Inserts 1, 2, 3; updates 2 (changed) and 3 (unchanged: no
        /// statement for a record, an UPDATE that changes nothing for SQL);
        /// deletes 1. One transaction per step.
        func run(on writer: any DatabaseWriter) throws {
            switch self {
            case .records:
                try writer.write { db in
                    for (id, name) in [(1, "Arthur"), (2, "Barbara"), (3, "Craig")] {
                        var player = Player(id: Int64(id), name: name, score: 10)
                        try player.insert(db)
                    }
                }
                try writer.write { db in
                    let barbara = Player(id: 2, name: "Barbara", score: 10)
                    var changed = barbara
                    changed.score = 20
                    try changed.updateChanges(db, from: barbara)
                }
                try writer.write { db in
                    let craig = Player(id: 3, name: "Craig", score: 10)
                    try craig.updateChanges(db, from: craig)
                }
                try writer.write { db in _ = try Player(id: 1, name: "Arthur").delete(db) }
            case .sql:
                try writer.writeSQL("INSERT INTO player (id, name, score) VALUES (1, 'Arthur', 10), (2, 'Barbara', 10), (3, 'Craig', 10)")
                try writer.writeSQL("UPDATE player SET score = 20 WHERE id = 2")
                try writer.writeSQL("UPDATE player SET score = 10 WHERE id = 3")
                try writer.writeSQL("DELETE FROM player WHERE id = 1")
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases, Writer.allCases)
    func valueObservationsSeeRecordWritesAsSQLWrites(kind: DatabaseKind, writer: Writer) async throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        let players = Recorder<[Player]>()
        let cancellable = ValueObservation.trackingAll(Player.orderByPrimaryKey())
            .removeDuplicates()
            .start(in: test.writer, scheduling: .observationQueue) { Issue.record($0) } onChange: { players.append($0) }
        defer { cancellable.cancel() }
        try await players.wait(for: 1)
        try writer.run(on: test.writer)
        let expected: [[Player]] = [
            [],
            [Player(id: 1, name: "Arthur", score: 10), Player(id: 2, name: "Barbara", score: 10), Player(id: 3, name: "Craig", score: 10)],
            [Player(id: 1, name: "Arthur", score: 10), Player(id: 2, name: "Barbara", score: 20), Player(id: 3, name: "Craig", score: 10)],
            [Player(id: 2, name: "Barbara", score: 20), Player(id: 3, name: "Craig", score: 10)],
        ]
        // Values may coalesce; the last one is the database's.
        try await waitUntil { players.values.last == expected.last }
        #expect(isOrderedSubsequence(players.values, of: expected))
    }

    @Test(arguments: DatabaseKind.allCases, Writer.allCases)
    func regionObservationsAreCalledOncePerTransactionThatChangedTheirRegion(
        kind: DatabaseKind, writer: Writer
    ) async throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        // Rows 2 and 3 only: the insert, the update of 2, and the update of 3
        // for SQL (with the pre-update hook, an UPDATE that changes nothing
        // is no change: both counts match).
        let (rowCounter, rowCancellable) = countChanges(in: test.writer, of: [Player.filter(keys: [2, 3])])
        let (tableCounter, tableCancellable) = countChanges(in: test.writer, of: [Player.all()])
        defer {
            rowCancellable.cancel()
            tableCancellable.cancel()
        }
        try writer.run(on: test.writer)
        #expect(rowCounter.value == 2)
        #expect(tableCounter.value == 3)
    }

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aRecordObservesItsOwnRowUntilItIsDeleted(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        var configuration = Configuration()
        configuration.changeTracking = tracking
        let test = try RecordWriteFixtures.makeDatabase(kind, configuration: configuration)
        var arthur = try await test.writer.write { db in
            var arthur = Player(name: "Arthur", score: 100)
            try arthur.insert(db)
            var barbara = Player(name: "Barbara", score: 200)
            try barbara.insert(db)
            return arthur
        }
        let values = Recorder<Player>()
        let deletions = Recorder<Bool>()
        let cancellable = RecordObservation(record: arthur).start(in: test.writer, scheduling: .observationQueue) {
            Issue.record($0)
        } onDeletion: {
            deletions.append(true)
        } onChange: {
            values.append($0)
        }
        defer { cancellable.cancel() }
        try await values.wait(for: 1)
        let inserted = arthur
        arthur.score = 101
        try await test.writer.write { [arthur] db in
            try arthur.updateChanges(db, from: inserted)
            // Another row: no value.
            try Player(id: 2, name: "Barbara", score: 201).update(db)
        }
        try await values.wait(for: 2)
        try await test.writer.write { [arthur] db in _ = try arthur.delete(db) }
        #expect(try await deletions.wait(for: 1) == [true])
        #expect(values.values == [Player(id: 1, name: "Arthur", score: 100), Player(id: 1, name: "Arthur", score: 101)])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRecordWithACompoundKeyObservesItsRow(kind: DatabaseKind) async throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        let captain = Membership(teamId: 1, playerId: 2, role: "captain")
        try await test.writer.write { db in
            try captain.insert(db)
            try Membership(teamId: 1, playerId: 3, role: "player").insert(db)
        }
        var roles: [String] = []
        for try await membership in RecordObservation(record: captain).values(in: test.writer) {
            roles.append(membership.role)
            if roles.count == 1 {
                try await test.writer.write { db in
                    try Membership(teamId: 1, playerId: 3, role: "coach").update(db)
                    try Membership(teamId: 1, playerId: 2, role: "coach").update(db)
                }
            } else {
                try await test.writer.write { db in _ = try captain.delete(db) }
            }
        }
        #expect(roles == ["captain", "coach"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRecordThatCannotIdentifyItsRowFailsTheObservation(kind: DatabaseKind) async throws {
        let test = try RecordWriteFixtures.makeDatabase(kind)
        let errors = Recorder<String>()
        let note = RecordWriteFixtures.AnonymousNoteObserved(text: "anonymous")
        let cancellable = RecordObservation(record: note).start(in: test.writer, scheduling: .observationQueue) {
            errors.append("\($0)")
        } onDeletion: {
            Issue.record("unexpected deletion")
        } onChange: {
            Issue.record("unexpected value \($0)")
        }
        defer { cancellable.cancel() }
        let error = try await errors.wait(for: 1)[0]
        #expect(error.contains("does not encode the column rowid"))
    }
}

extension RecordWriteFixtures {
    /// A note without its rowid, `Sendable` for an observation.
    struct AnonymousNoteObserved: Codable, FetchableRecord, PersistableRecord, Sendable {
        static let databaseTableName = "note"
        var text: String
    }
}
