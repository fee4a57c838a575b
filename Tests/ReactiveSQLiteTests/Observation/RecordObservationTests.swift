import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `RecordObservation`: one record, until its row is deleted.
///
/// Some tests wait on async sequences: the time limit turns a hang into a failure.
@Suite(.timeLimit(.minutes(3))) struct RecordObservationTests {
    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aRecordObservationEmitsTheRecordAfterEachChangeOfItsRow(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: playerSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<ObservedPlayer>()
        let cancellable = RecordObservation<ObservedPlayer>(key: 1).start(in: writer, scheduling: .observationQueue) {
            Issue.record($0)
        } onDeletion: {
            Issue.record("unexpected deletion")
        } onChange: {
            recorder.append($0)
        }
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        try writer.writeSQL("UPDATE player SET score = 0 WHERE id = 2")  // another row
        try writer.writeSQL("UPDATE player SET score = 101 WHERE id = 1")
        try await recorder.wait(for: 2)
        try writer.writeSQL("UPDATE player SET name = name, score = score WHERE id = 1")  // same values
        try writer.writeSQL("DELETE FROM player WHERE id = 3")
        try writer.writeSQL("UPDATE player SET name = 'Arthur II' WHERE id = 1")
        #expect(try await recorder.wait(for: 3) == [
            ObservedPlayer(id: 1, name: "Arthur", score: 100),
            ObservedPlayer(id: 1, name: "Arthur", score: 101),
            ObservedPlayer(id: 1, name: "Arthur II", score: 101),
        ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func deletingTheRowFinishesTheObservation(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<ObservedPlayer>()
        let deletions = Recorder<Bool>()
        let reference: WeakReference<LifetimeToken>
        let cancellable: AnyDatabaseCancellable
        do {
            let token = LifetimeToken()
            reference = WeakReference(token)
            cancellable = RecordObservation<ObservedPlayer>(key: 1).start(in: writer, scheduling: .observationQueue) {
                Issue.record($0)
            } onDeletion: {
                deletions.append(true)
            } onChange: { player in
                withExtendedLifetime(token) { recorder.append(player) }
            }
        }
        try await recorder.wait(for: 1)
        try writer.writeSQL("DELETE FROM player WHERE id = 1")
        #expect(try await deletions.wait(for: 1) == [true])
        // Finished: the observation left the broker and released its callbacks,
        // although the cancellable is still held.
        try await writer.write { _ in }
        try await waitUntil { reference.isReleased }
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (1, 'Arthur again')")
        #expect(recorder.values == [ObservedPlayer(id: 1, name: "Arthur", score: 100)])
        #expect(deletions.values == [true])
        cancellable.cancel()
    }

    @Test(arguments: DatabaseKind.allCases)
    func valuesEndWhenTheRecordIsDeleted(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        var values: [ObservedPlayer] = []
        for try await player in RecordObservation<ObservedPlayer>(key: 2).values(in: writer) {
            values.append(player)
            if values.count == 1 {
                try await writer.write { db in try db.execute(sql: "UPDATE player SET score = 0 WHERE id = 2") }
            } else {
                try await writer.write { db in try db.execute(sql: "DELETE FROM player WHERE id = 2") }
            }
        }
        #expect(values == [
            ObservedPlayer(id: 2, name: "Barbara", score: 200), ObservedPlayer(id: 2, name: "Barbara", score: 0),
        ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aMissingRowFinishesAtOnceWithNoValue(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let deletions = Recorder<Bool>()
        let cancellable = RecordObservation<ObservedPlayer>(key: 42).start(in: writer, scheduling: .observationQueue) {
            Issue.record($0)
        } onDeletion: {
            deletions.append(true)
        } onChange: {
            Issue.record("unexpected value \($0)")
        }
        defer { cancellable.cancel() }
        #expect(try await deletions.wait(for: 1) == [true])

        var count = 0
        for try await _ in RecordObservation<ObservedPlayer>(key: 42).values(in: writer) {
            count += 1
        }
        #expect(count == 0)
        // Inserting the row later does not revive it.
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (42, 'Late')")
        try await writer.write { _ in }
        #expect(deletions.values == [true])
    }

    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func aMissingRowFinishesBeforeAnImmediateStartReturns(kind: DatabaseKind) throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let deletions = Recorder<Bool>()
        let values = Recorder<ObservedPlayer>()
        let missing = RecordObservation<ObservedPlayer>(key: 42).start(in: test.writer, scheduling: .immediate) {
            Issue.record($0)
        } onDeletion: {
            deletions.append(true)
        } onChange: {
            values.append($0)
        }
        defer { missing.cancel() }
        #expect(deletions.values == [true])
        let present = RecordObservation<ObservedPlayer>(key: 1).start(in: test.writer, scheduling: .immediate) {
            Issue.record($0)
        } onDeletion: {
            deletions.append(true)
        } onChange: {
            values.append($0)
        }
        defer { present.cancel() }
        #expect(values.values == [ObservedPlayer(id: 1, name: "Arthur", score: 100)])
        #expect(deletions.values == [true])
    }
}
