import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `start(in:scheduling: .mainActor, ...)`: `@MainActor` closures, checked
/// by the compiler, get every value on the main actor, in commit order, and
/// nothing once `cancel()` returned.
@Suite(.timeLimit(.minutes(3))) struct MainActorSchedulingTests {
    /// A view model isolated to the main actor, as apps hold them.
    @MainActor final class CountModel {
        var counts: [Int] = []
        var errors: [String] = []
        let recorder = Recorder<Int>()

        func receive(_ count: Int) {
            // Isolation the compiler checked, and the executor that runs it.
            MainActor.assertIsolated()
            counts.append(count)
            recorder.append(count)
        }
    }

    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func everyValueReachesTheMainActorInCommitOrder(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let model = CountModel()
        let cancellable = ValueObservation.trackingCount(ObservedPlayer.all())
            .start(in: writer, scheduling: .mainActor) { error in
                model.errors.append("\(error)")
            } onChange: { count in
                model.receive(count)
            }
        defer { cancellable.cancel() }
        // Nothing synchronously: values are delivered in a later turn.
        #expect(model.counts.isEmpty)
        #expect(try await model.recorder.wait(for: 1) == [3])
        // 50 commits, one after the other, while values are delivered.
        try await writer.write { db in
            for id in 4...53 {
                try db.execute(sql: "INSERT INTO player (id, name) VALUES (?, 'p')", arguments: [id])
            }
        }
        for id in 54...103 {
            try await writer.write { db in try db.execute(sql: "INSERT INTO player (id, name) VALUES (?, 'p')", arguments: [id]) }
        }
        _ = try await model.recorder.wait(forLast: 103)
        // In order, never a state older than one delivered, the last one the database's.
        #expect(model.counts == model.counts.sorted())
        #expect(Set(model.counts).count == model.counts.count)
        #expect(model.counts.first == 3 && model.counts.last == 103)
        #expect(model.errors.isEmpty)
    }

    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func theErrorReachesTheMainActorAndEndsTheObservation(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let errors = Recorder<String>()
        let cancellable = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM missing"))
            .start(in: test.writer, scheduling: .mainActor) { error in
                MainActor.assertIsolated()
                errors.append((error as? DatabaseError)?.message ?? "\(error)")
            } onChange: { _ in
                Issue.record("no value expected")
            }
        defer { cancellable.cancel() }
        #expect(try await errors.wait(for: 1) == ["no such table: missing"])
    }

    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func nothingArrivesAfterCancel(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let model = CountModel()
        let cancellable = ValueObservation.trackingCount(ObservedPlayer.all())
            .start(in: writer, scheduling: .mainActor, onError: { _ in }, onChange: { model.receive($0) })
        #expect(try await model.recorder.wait(for: 1) == [3])
        // Values on their way to the main actor when it cancels.
        for id in 4...20 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (\(id), 'p')")
        }
        cancellable.cancel()
        let seen = model.counts
        // Let the main actor run what was queued for it.
        for _ in 0..<20 { await Task.yield() }
        try await writer.write { db in try db.execute(sql: "INSERT INTO player (id, name) VALUES (21, 'p')") }
        for _ in 0..<20 { await Task.yield() }
        #expect(model.counts == seen)
    }
}
