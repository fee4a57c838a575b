import DatabaseTestSupport
import Dispatch
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// Where and when values arrive: the schedulers of `start`, and the
/// asynchronous sequence of `values(in:)`.
///
/// Some tests wait on async sequences: the time limit turns a hang into a failure.
@Suite(.timeLimit(.minutes(3))) struct ValueObservationSchedulingTests {
    // MARK: - Schedulers

    let mainQueueLabel = "com.apple.main-thread"

    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func immediateDeliversTheFirstValueBeforeStartReturns(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<Int>()
        let labels = Locked<[String?]>([])
        let cancellable = ValueObservation.trackingCount(ObservedPlayer.all())
            .start(in: writer, scheduling: .immediate, onError: { Issue.record($0) }) { count in
                labels.withLock { $0.append(currentDispatchQueueLabel()) }
                recorder.append(count)
            }
        defer { cancellable.cancel() }
        #expect(recorder.values == [3])

        // Later values arrive on the main queue, which runs while this test
        // awaits.
        try await writer.write { db in try db.execute(sql: "INSERT INTO player (id, name) VALUES (4, 'David')") }
        #expect(try await recorder.wait(for: 2) == [3, 4])
        // The main queue (on Linux, a process that runs `dispatchMain()`
        // has it run by a thread other than the main thread).
        #expect(labels.value == [mainQueueLabel, mainQueueLabel])
    }

    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func immediateDeliversAStartErrorBeforeStartReturns(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: "")
        let errors = Recorder<String>()
        let cancellable = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM missing"))
            .start(in: test.writer, scheduling: .immediate) { error in
                errors.append((error as? DatabaseError)?.message ?? "\(error)")
            } onChange: { _ in
                Issue.record("no value expected")
            }
        defer { cancellable.cancel() }
        #expect(errors.values == ["no such table: missing"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func asyncOnQueueDeliversEveryValueAsynchronouslyOnThatQueue(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let queueLabel = "observation-tests.delivery.\(UUID().uuidString)"
        let queue = DispatchQueue(label: queueLabel)
        let recorder = Recorder<Int>()
        let labels = Locked<[String?]>([])
        let cancellable = try synchronously {
            // The queue is busy while `start` runs: a value delivered
            // synchronously would show here.
            try queue.sync {
                let cancellable = ValueObservation.trackingCount(ObservedPlayer.all())
                    .start(in: writer, scheduling: .async(onQueue: queue), onError: { Issue.record($0) }) { count in
                        labels.withLock { $0.append(currentDispatchQueueLabel()) }
                        recorder.append(count)
                    }
                #expect(recorder.values.isEmpty)
                try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'David')")
                #expect(recorder.values.isEmpty)
                return cancellable
            }
        }
        defer { cancellable.cancel() }
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (5, 'Eve')")
        #expect(try await recorder.wait(for: 3) == [3, 4, 5])
        #expect(labels.value == [queueLabel, queueLabel, queueLabel])
    }

    @Test(arguments: DatabaseKind.allCases)
    func taskDeliversValuesInOrderOffTheMainThreadAndOffTheWriter(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let writerLabel = try await writer.write { _ in currentDispatchQueueLabel() }
        let recorder = Recorder<Int>()
        let places = Locked<[String]>([])
        let cancellable = ValueObservation.trackingCount(ObservedPlayer.all())
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }) { count in
                let label = currentDispatchQueueLabel()
                places.withLock {
                    $0.append(label == "com.apple.main-thread" ? "main" : label == writerLabel ? "writer" : "other")
                }
                recorder.append(count)
            }
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)
        for id in 4...8 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
            try await recorder.wait(for: id - 2)
        }
        #expect(recorder.values == [3, 4, 5, 6, 7, 8])
        #expect(places.value == Array(repeating: "other", count: 6))
    }

    // MARK: - values(in:)

    /// By default a slow consumer gets the newest value, never a backlog.
    @Test(arguments: DatabaseKind.allCases)
    func valuesKeepTheNewestValueByDefault(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let reduced = Recorder<Int>()
        let lastValueGate = Signal()
        let observation = ValueObservation.trackingCount(ObservedPlayer.all()).map { count in
            reduced.append(count)
            // The last value waits until the consumer has taken one value.
            if count == 7 { _ = lastValueGate.waitBlocking() }
            return count
        }
        var iterator = observation.values(in: writer).makeAsyncIterator()
        #expect(try await iterator.next() == 3)

        // Four commits nobody consumes.
        for id in 4...7 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
        }
        // Once 7 is being reduced, the values before it were handed over.
        let values = try await reduced.wait { $0.last == 7 }
        if kind != .pool { #expect(values == [3, 4, 5, 6, 7]) }
        let newestBeforeSeven = values.dropLast().last!
        #expect(try await iterator.next() == newestBeforeSeven)
        lastValueGate.open()
        #expect(try await iterator.next() == 7)
    }

    @Test(arguments: DatabaseKind.allCases)
    func valuesWithUnboundedBufferingKeepEveryValue(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        var iterator = ValueObservation.trackingCount(ObservedPlayer.all())
            .values(in: writer, bufferingPolicy: .unbounded)
            .makeAsyncIterator()
        #expect(try await iterator.next() == 3)
        for id in 4...7 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
        }
        var values: [Int] = []
        while let value = try await iterator.next() {
            values.append(value)
            if value == 7 { break }
        }
        if kind == .pool {
            // A pool may coalesce commits that happen during a fetch.
            #expect(isOrderedSubsequence(values, of: [4, 5, 6, 7]), "\(values)")
        } else {
            #expect(values == [4, 5, 6, 7])
        }
    }

    /// Iterates until two values were seen, inserting a row after the first;
    /// returns a reference to an object only the observation holds.
    private func iterateTwoValues(
        in writer: any DatabaseWriter, fetchCount: ChangeCounter
    ) async throws -> WeakReference<LifetimeToken> {
        let token = LifetimeToken()
        let reference = WeakReference(token)
        let observation = ValueObservation.tracking { db in
            withExtendedLifetime(token) { fetchCount.increment() }
            return try ObservedPlayer.all().fetchCount(db)
        }
        var values: [Int] = []
        for try await value in observation.values(in: writer) {
            values.append(value)
            if values.count == 1 {
                try await writer.write { db in try db.execute(sql: "INSERT INTO player (id, name) VALUES (4, 'David')") }
            } else {
                break
            }
        }
        #expect(values == [3, 4])
        return reference
    }

    @Test(arguments: DatabaseKind.allCases)
    func leavingTheLoopCancelsTheObservation(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let fetchCount = ChangeCounter()
        let reference = try await iterateTwoValues(in: writer, fetchCount: fetchCount)
        // The observer leaves the broker in a later writer access, and
        // releases everything it holds.
        try await writer.write { _ in }
        try await waitUntil { reference.isReleased }
        let fetches = fetchCount.value
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (5, 'Eve')")
        try writer.writeSQL("DELETE FROM player")
        #expect(fetchCount.value == fetches)
    }

    @Test(arguments: DatabaseKind.allCases)
    func cancellingTheTaskEndsTheLoop(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<Int>()
        let ended = Recorder<Bool>()
        let references = Recorder<WeakReference<LifetimeToken>>()
        let task = Task {
            let token = LifetimeToken()
            references.append(WeakReference(token))
            let observation = ValueObservation.tracking { db in
                withExtendedLifetime(token) {}
                return try ObservedPlayer.all().fetchCount(db)
            }
            do {
                for try await value in observation.values(in: writer) {
                    recorder.append(value)
                }
                ended.append(true)
            } catch {
                Issue.record(error)
                ended.append(false)
            }
        }
        try await recorder.wait(for: 1)
        task.cancel()
        #expect(try await ended.wait(for: 1) == [true])
        try await writer.write { _ in }
        let reference = try await references.wait(for: 1)[0]
        try await waitUntil { reference.isReleased }
    }
}
