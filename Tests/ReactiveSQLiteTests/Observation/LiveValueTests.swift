import DatabaseTestSupport
import Foundation
import Observation
import ReactiveSQLite
import TestSupport
import Testing

/// `LiveValue`: an `@Observable` object of the main actor that holds the
/// latest value, pauses without cost, and keeps its value on error.
@MainActor
@Suite(.timeLimit(.minutes(3))) struct LiveValueTests {
    /// Counts the changes `withObservationTracking` sees on `value`,
    /// tracking again after each one, as SwiftUI does when it renders.
    @MainActor final class ChangeTracker {
        let changes = Recorder<Int>()
        private var count = 0
        private let live: LiveValue<Int>

        init(_ live: LiveValue<Int>) {
            self.live = live
            track()
        }

        private func track() {
            withObservationTracking {
                _ = live.value
            } onChange: { [weak self] in
                // Called before the change, on the main actor that makes it.
                Task { @MainActor in
                    guard let self else { return }
                    self.count += 1
                    self.changes.append(self.count)
                    self.track()
                }
            }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func theValueFollowsTheDatabaseOneChangePerValue(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let delivered = Recorder<Int>()
        let live = LiveValue(
            ValueObservation.trackingCount(ObservedPlayer.all()).handleEvents(didReceiveValue: { delivered.append($0) }),
            in: writer, initialValue: -1)
        #expect(live.value == -1)
        #expect(live.isLoading)
        let tracker = ChangeTracker(live)
        _ = try await tracker.changes.wait(for: 1)
        #expect(live.value == 3)
        #expect(!live.isLoading)
        for id in 4...23 {
            try await writer.write { db in try db.execute(sql: "INSERT INTO player (id, name) VALUES (?, 'p')", arguments: [id]) }
            _ = try await tracker.changes.wait(for: id - 2)
            #expect(live.value == id)
        }
        // One change seen per delivered value.
        #expect(tracker.changes.values.count == delivered.values.count)
        #expect(live.error == nil)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aPausedValueCostsNothingAndResumesInOneFetch(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let fetches = Locked(0)
        let values = Recorder<Int>()
        let live = LiveValue(
            ValueObservation.trackingCount(ObservedPlayer.all())
                .handleEvents(willFetch: { fetches.withLock { $0 += 1 } }, didReceiveValue: { values.append($0) }),
            in: writer, initialValue: 0)
        _ = try await values.wait(for: 1)
        await Task.yield()
        live.isPaused = true
        #expect(live.isPaused)
        let pausedValue = live.value
        for id in 4...103 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (\(id), 'p')")
        }
        // A commit notifies its observers before `write` returns: a fetch
        // would have started.
        #expect(fetches.value == 1)
        for _ in 0..<10 { await Task.yield() }
        #expect(live.value == pausedValue)
        live.isPaused = false
        #expect(live.isLoading)
        let tracker = ChangeTracker(live)
        _ = try await tracker.changes.wait(for: 1)
        #expect(live.value == 103)
        #expect(!live.isLoading)
        #expect(fetches.value == 2)
    }

    @Test(arguments: DatabaseKind.allCases)
    func anErrorKeepsTheLastValue(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let live = LiveValue(ValueObservation.trackingCount(ObservedPlayer.all()), in: writer, initialValue: 0)
        let tracker = ChangeTracker(live)
        _ = try await tracker.changes.wait(for: 1)
        #expect(live.value == 3)
        let errors = Recorder<String>()
        func trackError() {
            withObservationTracking { _ = live.error } onChange: {
                Task { @MainActor in errors.append("\(live.error.map { "\($0)" } ?? "nil")") }
            }
        }
        trackError()
        try writer.writeSQL("DROP TABLE player")
        _ = try await errors.wait(for: 1)
        #expect((live.error as? DatabaseError)?.message == "no such table: player")
        #expect(live.value == 3)
        // Pausing and resuming starts it again; its first value clears the error.
        try writer.writeSQL(playerSchemaSQL)
        live.isPaused = true
        live.isPaused = false
        _ = try await tracker.changes.wait(for: 2)
        #expect(live.value == 3)
        #expect(live.error == nil)
    }

    /// The README's shape: the observation's type comes from the initial value.
    @Test func theReadmeShapeCompilesAndLoads() async throws {
        let test = try DatabaseKind.inMemoryQueue.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let players = LiveValue(.trackingAll(ObservedPlayer.all().order(sql: "score DESC")), in: test.writer, initialValue: [])
        let tracker = Recorder<Int>()
        withObservationTracking { _ = players.value } onChange: { tracker.append(1) }
        _ = try await tracker.wait(for: 1)
        await Task.yield()
        #expect(players.value.map(\.id) == [2, 3, 1])
    }

    @Test(arguments: DatabaseKind.allCases)
    func releasingTheValueStopsTheObservation(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let values = Recorder<Int>()
        let cancels = Locked(0)
        var live: LiveValue<Int>? = LiveValue(
            ValueObservation.trackingCount(ObservedPlayer.all())
                .handleEvents(didReceiveValue: { values.append($0) }, didCancel: { cancels.withLock { $0 += 1 } }),
            in: test.writer, initialValue: 0)
        _ = try await values.wait(for: 1)
        weak let released = live
        live = nil
        #expect(released == nil)
        #expect(cancels.value == 1)
    }
}
