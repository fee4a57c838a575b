import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `handleEvents(...)` and `print(_:to:)`: each event of a run, in the
/// order it happens, with its region, value and error.
@Suite(.timeLimit(.minutes(3))) struct ObservationEventsTests {
    /// Records events as lines, from whatever thread they come.
    static func recordingEvents<Value>(
        of observation: ValueObservation<Value>, into events: Recorder<String>
    ) -> ValueObservation<Value> {
        observation.handleEvents(
            willStart: { events.append("start") },
            willFetch: { events.append("fetch") },
            willTrackRegion: { events.append("region \($0)") },
            databaseDidChange: { events.append("change") },
            didReceiveValue: { events.append("value \($0)") },
            didFail: { events.append("fail \(($0 as? DatabaseError)?.message ?? "\($0)")") },
            didCancel: { events.append("cancel") })
    }

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func eachEventOfARunInOrder(kind: DatabaseKind, changeTracking: Configuration.ChangeTracking) async throws {
        let test = try kind.make(changeTracking: changeTracking, sql: playerSchemaSQL + "CREATE TABLE other (x);")
        let writer = test.writer
        let events = Recorder<String>()
        let values = Recorder<Int>()
        let observation = Self.recordingEvents(of: .trackingCount(ObservedPlayer.all()), into: events)
        let cancellable = observation.start(
            in: writer, scheduling: .async(onQueue: DispatchQueue(label: "events")),
            onError: { Issue.record($0) }, onChange: { values.append($0) })
        _ = try await values.wait(for: 1)
        #expect(events.values == ["start", "region player(*)", "fetch", "value 3"])
        // A commit of another table is no event of this run.
        try writer.writeSQL("INSERT INTO other VALUES (1)")
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'p')")
        _ = try await values.wait(for: 2)
        #expect(Array(events.values.dropFirst(4)) == ["change", "fetch", "value 4"])
        cancellable.cancel()
        #expect(events.values.last == "cancel")
        // Cancelling again, or a commit after, adds nothing.
        cancellable.cancel()
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (5, 'p')")
        #expect(events.values.count == 8)
    }

    @Test(arguments: DatabaseKind.allCases)
    func anErrorIsItsOwnEventAndNoCancel(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let events = Recorder<String>()
        let errors = Recorder<String>()
        let observation = Self.recordingEvents(
            of: ValueObservation.tracking { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM missing") }, into: events)
        let cancellable = observation.start(
            in: test.writer, scheduling: .async(onQueue: DispatchQueue(label: "events")),
            onError: { errors.append("\($0)") }, onChange: { _ in Issue.record("no value expected") })
        _ = try await errors.wait(for: 1)
        cancellable.cancel()
        #expect(events.values == ["start", "fetch", "fail no such table: missing"])
    }

    /// A recorded region is tracked again when the fetch reads other
    /// tables; `didReceiveValue` sees the values of its place in the chain.
    @Test(arguments: DatabaseKind.allCases)
    func aRecordedRegionThatChangesIsTrackedAgain(kind: DatabaseKind) async throws {
        let test = try kind.make(
            changeTracking: .automatic,
            sql: playerSchemaSQL + "CREATE TABLE flag (on_ INTEGER); INSERT INTO flag VALUES (0);")
        let writer = test.writer
        let regions = Recorder<String>()
        let raw = Recorder<Int>()
        let mapped = Recorder<String>()
        let observation = ValueObservation.tracking { db -> Int in
            let on = try Int.fetchOne(db, sql: "SELECT on_ FROM flag") ?? 0
            guard on == 1 else { return -1 }
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM player") ?? 0
        }
        .handleEvents(willTrackRegion: { regions.append("\($0)") }, didReceiveValue: { raw.append($0) })
        .map { "count \($0)" }
        .handleEvents(didReceiveValue: { mapped.append($0) })
        let cancellable = observation.start(
            in: writer, scheduling: .async(onQueue: DispatchQueue(label: "events")),
            onError: { Issue.record($0) }, onChange: { _ in })
        defer { cancellable.cancel() }
        _ = try await mapped.wait(for: 1)
        try writer.writeSQL("UPDATE flag SET on_ = 1")
        _ = try await mapped.wait(for: 2)
        // On a pool, the new region reaches the writer while the value goes
        // to the reduction queue: neither waits for the other.
        _ = try await regions.wait(for: 2)
        #expect(raw.values == [-1, 3])
        #expect(mapped.values == ["count -1", "count 3"])
        #expect(regions.values.count == 2)
        #expect(regions.values.first?.hasPrefix("flag(") == true && regions.values.first?.contains("player") == false)
        #expect(regions.values.last?.contains("player") == true)
    }

    /// One fetch per commit, counted by `willFetch`, whatever the fetch:
    /// a top-rows observation refetches from the rows a commit changed.
    @Test(arguments: DatabaseKind.allCases)
    func everyFetchIsCountedIncrementalOnesIncluded(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let fetches = Locked(0)
        let values = Recorder<[ObservedPlayer]>()
        let observation = ValueObservation.trackingAll(ObservedPlayer.all().order(sql: "score DESC").limit(2))
            .handleEvents(willFetch: { fetches.withLock { $0 += 1 } })
        let cancellable = observation.start(
            in: writer, scheduling: .async(onQueue: DispatchQueue(label: "events")),
            onError: { Issue.record($0) }, onChange: { values.append($0) })
        defer { cancellable.cancel() }
        _ = try await values.wait(for: 1)
        for score in 1...10 {
            try writer.writeSQL("UPDATE player SET score = \(score * 1000) WHERE id = 1")
            _ = try await values.wait(for: score + 1)
        }
        #expect(fetches.value == 11)
        #expect(values.values.last?.map(\.id) == [1, 2])
    }

    /// The difference operators keep the events and the throttle of the
    /// observation they apply to.
    @Test(arguments: DatabaseKind.allCases)
    func differenceOperatorsKeepEventsAndThrottle(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let interval = Duration.milliseconds(100)
        for makeDifferences in [
            { (o: ValueObservation<[IdentifiedPlayer]>) in o.setDifferences().map { _ in 0 } },
            { (o: ValueObservation<[IdentifiedPlayer]>) in o.orderedDifferences().map { _ in 0 } },
        ] {
            let fetches = Recorder<ContinuousClock.Instant>()
            let values = Recorder<Int>()
            let base = ValueObservation.trackingAll(IdentifiedPlayer.all().order(sql: "id"))
                .handleEvents(willFetch: { fetches.append(.now) })
                .throttle(interval)
            let cancellable = makeDifferences(base).start(
                in: writer, scheduling: .async(onQueue: DispatchQueue(label: "events")),
                onError: { Issue.record($0) }, onChange: { values.append($0) })
            _ = try await values.wait(for: 1)
            try writer.writeSQL("UPDATE player SET score = score + 1 WHERE id = 1")
            _ = try await values.wait(for: 2)
            cancellable.cancel()
            let instants = fetches.values
            #expect(instants.count == 2)
            // The throttle spaces the starts of the fetches; `willFetch` is
            // told a moment after the first one's start.
            if instants.count == 2 { #expect(instants[1] - instants[0] >= interval * 0.9) }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func printWritesOneLinePerEvent(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let output = LinesStream()
        let values = Recorder<Int>()
        let cancellable = ValueObservation.trackingCount(ObservedPlayer.all())
            .print("players", to: output)
            .start(
                in: writer, scheduling: .async(onQueue: DispatchQueue(label: "events")),
                onError: { Issue.record($0) }, onChange: { values.append($0) })
        _ = try await values.wait(for: 1)
        try writer.writeSQL("DELETE FROM player WHERE id = 1")
        _ = try await values.wait(for: 2)
        cancellable.cancel()
        #expect(output.lines == [
            "players: start", "players: region player(*)", "players: fetch", "players: value 3",
            "players: database changed", "players: fetch", "players: value 2", "players: cancel",
        ])
        // Without a prefix, the event alone.
        let bare = LinesStream()
        let second = ValueObservation.trackingCount(ObservedPlayer.all()).print(to: bare)
            .start(in: writer, scheduling: .async(onQueue: DispatchQueue(label: "events")), onError: { _ in }, onChange: { _ in })
        second.cancel()
        #expect(bare.lines.first == "start")
    }
}

/// A player with an id, for the difference operators.
struct IdentifiedPlayer: FetchableRecord, TableRecord, Identifiable, Equatable, Sendable {
    static let databaseTableName = "player"
    var id: Int64
    var score: Int

    init(row: Row) throws {
        id = try row["id"]
        score = try row["score"]
    }
}

/// A text stream that keeps its lines.
final class LinesStream: TextOutputStream, Sendable {
    private let text = Locked("")

    func write(_ string: String) {
        text.withLock { $0 += string }
    }

    var lines: [String] {
        text.value.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}
