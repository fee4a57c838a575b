#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
import DatabaseTestSupport
import ReactiveSQLite
import ReactiveSQLiteCombine
import Testing
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// `RecordObservation.publisher(in:scheduling:)`: the record's values, then
/// the end when the record is deleted.
@Suite struct RecordObservationPublisherTests {
    @Test(arguments: DatabaseKind.allCases)
    func publishesTheRecordThenFinishesWhenItIsDeleted(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let subscriber = RecordingSubscriber<Player>()
        RecordObservation<Player>(key: 1).publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        defer { subscriber.cancel() }
        try await subscriber.events.wait(for: 1)
        try test.writer.writeSQL("UPDATE player SET name = 'Barbara' WHERE id = 2")  // another row
        try test.writer.writeSQL("UPDATE player SET name = 'Art' WHERE id = 1")
        try await subscriber.events.wait(for: 2)
        try test.writer.writeSQL("DELETE FROM player WHERE id = 1")
        let events = try await subscriber.events.wait(for: 3)
        #expect(events.compactMap(\.value) == [Player(id: 1, name: "Arthur"), Player(id: 1, name: "Art")])
        guard case .finished = events[2] else {
            Issue.record("expected the end, got \(events[2])")
            return
        }
        // Nothing after the end (the subscriber records any delivery as an issue).
        try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (1, 'Arthur')")
        #expect(subscriber.events.values.count == 3)
    }

    @Test(arguments: DatabaseKind.allCases)
    func finishesAtOnceWhenTheRecordDoesNotExist(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let subscriber = RecordingSubscriber<Player>()
        RecordObservation<Player>(key: 42).publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        let events = try await subscriber.events.wait(for: 1)
        guard case .finished = events[0] else {
            Issue.record("expected the end, got \(events)")
            return
        }
    }

    /// The end needs no demand; a record kept for lack of demand is dropped
    /// when the deletion comes after it.
    @Test(arguments: DatabaseKind.allCases)
    func theEndNeedsNoDemand(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let subscriber = RecordingSubscriber<Player>(initialDemand: .none)
        RecordObservation<Player>(key: 1).publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        defer { subscriber.cancel() }
        try test.writer.writeSQL("UPDATE player SET name = 'Art' WHERE id = 1")
        try test.writer.writeSQL("DELETE FROM player WHERE id = 1")
        let events = try await subscriber.events.wait(for: 1)
        guard case .finished = events[0] else {
            Issue.record("expected the end, got \(events)")
            return
        }
        subscriber.request(.unlimited)
        #expect(subscriber.events.values.count == 1)
    }

    @Test(arguments: DatabaseKind.allCases)
    func failsWithTheObservationsError(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let subscriber = RecordingSubscriber<Player>()
        RecordObservation<Player>(key: 1).publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        defer { subscriber.cancel() }
        try await subscriber.events.wait(for: 1)
        try test.writer.writeSQL("DROP TABLE player")
        let events = try await subscriber.events.wait(for: 2)
        guard case .failure(let error) = events[1] else {
            Issue.record("expected a failure, got \(events)")
            return
        }
        #expect((error as? DatabaseError)?.message == "no such table: player")
    }
}

#endif
