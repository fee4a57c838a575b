#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
import DatabaseTestSupport
import Dispatch
import Foundation
import ReactiveSQLite
import ReactiveSQLiteCombine
import TestSupport
import Testing
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// `ValueObservation.publisher(in:scheduling:)`: the scenarios of the
/// observation engine, through a publisher and a recording subscriber that
/// checks Combine's rules (no overlapping deliveries, no value beyond
/// demand, nothing after completion or after `cancel()` returned).
@Suite struct ValueObservationPublisherTests {
    // MARK: - Values

    /// The engine's `trackingCount` scenario: a no-op UPDATE is not a change
    /// (pre-update hook), then 0, then 3; a queue publishes exactly these
    /// values, a pool an ordered subsequence that ends with the last state.
    @Test(arguments: DatabaseKind.allCases)
    func publishesTheValuesOfTheObservationOnTheSchedulersQueue(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: """
            CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO person (name) VALUES ('Arthur'), ('Barbara');
            """)
        let (queue, label) = makeDeliveryQueue()
        let subscriber = RecordingSubscriber<Int>()
        ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM person"))
            .publisher(in: test.writer, scheduling: .async(onQueue: queue))
            .subscribe(subscriber)
        defer { subscriber.cancel() }
        try await subscriber.events.wait(for: 1)
        try test.writer.writeSQL("UPDATE person SET name = name")
        try test.writer.writeSQL("DELETE FROM person")
        try test.writer.writeSQL("INSERT INTO person (name) VALUES ('a'), ('b'), ('c')")
        let values = try await subscriber.events.wait { $0.values.last == 3 }.values
        if kind == .pool {
            #expect(values.first == 2)
            #expect(isOrderedSubsequence(values, of: [2, 0, 3]))
        } else {
            #expect(values == [2, 0, 3])
        }
        #expect(subscriber.deliveryQueueLabels.value.allSatisfy { $0 == label })
    }

    /// Nothing rolled back is published: a rolled-back transaction, a
    /// savepoint rolled back inside a committed transaction.
    @Test(arguments: DatabaseKind.allCases)
    func rolledBackChangesAreNotPublished(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL + "CREATE TABLE other (id INTEGER PRIMARY KEY);")
        let subscriber = RecordingSubscriber<Int>()
        playerCount.publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        defer { subscriber.cancel() }
        try await subscriber.events.wait(for: 1)
        try test.writer.writeSQLWithoutTransaction("""
            BEGIN; INSERT INTO player (id, name) VALUES (10, 'x'); ROLLBACK;
            BEGIN; SAVEPOINT s; INSERT INTO player (id, name) VALUES (11, 'y'); ROLLBACK TO s; RELEASE s;
            INSERT INTO other DEFAULT VALUES; COMMIT;
            BEGIN; SAVEPOINT t; DELETE FROM player; RELEASE t; ROLLBACK;
            """)
        try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'David')")
        let values = try await subscriber.events.wait { $0.values.last == 4 }.values
        #expect(values == [3, 4])
    }

    // MARK: - Errors

    @Test(arguments: DatabaseKind.allCases)
    func failsWithTheObservationsError(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let subscriber = RecordingSubscriber<Int>()
        playerCount.publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        defer { subscriber.cancel() }
        try await subscriber.events.wait(for: 1)
        try test.writer.writeSQL("DROP TABLE player")
        let events = try await subscriber.events.wait { $0.last?.isCompletion == true }
        #expect(events.values == [3])
        guard case .failure(let error) = events.last else {
            Issue.record("expected a failure, got \(events)")
            return
        }
        #expect((error as? DatabaseError)?.message == "no such table: player")
        // Nothing after the completion: a later commit publishes nothing.
        try test.writer.writeSQL("CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        #expect(subscriber.events.values.count == 2)
    }

    @Test(arguments: DatabaseKind.allCases)
    func failsAtOnceWhenTheFirstFetchFails(kind: DatabaseKind) async throws {
        let test = try kind.make()
        let subscriber = RecordingSubscriber<Int>()
        playerCount.publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        let events = try await subscriber.events.wait(for: 1)
        guard case .failure(let error) = events[0] else {
            Issue.record("expected a failure, got \(events)")
            return
        }
        #expect((error as? DatabaseError)?.message == "no such table: player")
    }

    // MARK: - Demand

    /// Demand of one value at a time: each value waits for the next request.
    @Test(arguments: DatabaseKind.allCases)
    func demandOfOneAtATime(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let subscriber = RecordingSubscriber<Int>(initialDemand: .max(1))
        playerCount.publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        defer { subscriber.cancel() }
        #expect(try await subscriber.events.wait(for: 1).values == [3])
        for id in 4...6 {
            try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
            subscriber.request(.max(1))
            #expect(try await subscriber.events.wait(for: id - 2).values == Array(3...id))
        }
    }

    /// A subscriber that asks for one more value from each value it gets.
    @Test(arguments: DatabaseKind.allCases)
    func demandFromEachValue(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let subscriber = RecordingSubscriber<Int>(initialDemand: .max(1), demandPerValue: .max(1))
        playerCount.publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        defer { subscriber.cancel() }
        try await subscriber.events.wait(for: 1)
        for id in 4...6 {
            try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
            try await subscriber.events.wait(for: id - 2)
        }
        #expect(subscriber.values == [3, 4, 5, 6])
    }

    /// Without demand nothing is delivered, and only the newest value is
    /// kept: the first request after many commits gets a recent value, not
    /// the oldest, and the last state follows. The kept value is delivered
    /// on the scheduler's queue, although demand comes from another thread.
    @Test(arguments: DatabaseKind.allCases)
    func withoutDemandOnlyTheNewestValueIsKept(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let (queue, label) = makeDeliveryQueue()
        let reduced = Recorder<Int>()
        let subscriber = RecordingSubscriber<Int>(initialDemand: .none)
        playerCount
            .map { count in
                reduced.append(count)
                return count
            }
            .publisher(in: test.writer, scheduling: .async(onQueue: queue))
            .subscribe(subscriber)
        defer { subscriber.cancel() }
        for id in 4...20 {
            try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
        }
        // The observation reduced the state of the last commit, then 21: the
        // value 20 was handed to the delivery queue before 21 was reduced
        // (one serial reduction queue), and is delivered once the queue drains.
        try await reduced.wait(forLast: 20)
        try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (21, 'x')")
        try await reduced.wait(forLast: 21)
        await queue.drain()
        #expect(subscriber.events.values.isEmpty)

        subscriber.request(.max(1))
        let first = try await subscriber.events.wait(for: 1).values
        #expect(first == [20] || first == [21], "got \(first)")
        subscriber.request(.unlimited)
        let values = try await subscriber.events.wait { $0.values.last == 21 }.values
        #expect(values == [20, 21] || values == [21])
        #expect(subscriber.deliveryQueueLabels.value.allSatisfy { $0 == label })
    }

    /// A request made with no demand outstanding delivers nothing: a kept
    /// value waits for a real demand.
    @Test func aRequestOfNoDemandDeliversNothing() async throws {
        let test = try DatabaseKind.inMemoryQueue.make(sql: playerSchemaSQL)
        let (queue, _) = makeDeliveryQueue()
        let delivered = Recorder<Int>()
        let subscriber = RecordingSubscriber<Int>(initialDemand: .none)
        playerCount
            .map { count in
                delivered.append(count)
                return count
            }
            .publisher(in: test.writer, scheduling: .async(onQueue: queue))
            .subscribe(subscriber)
        defer { subscriber.cancel() }
        try await delivered.wait(for: 1)
        await queue.drain()
        subscriber.request(.none)
        await queue.drain()
        #expect(subscriber.events.values.isEmpty)
        subscriber.request(.max(1))
        #expect(try await subscriber.events.wait(for: 1).values == [3])
    }

    /// `.immediate` delivers on the main queue after the first value: a value
    /// kept for lack of demand too, when demand comes from another thread.
    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func immediateDeliversAKeptValueOnTheMainQueue(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let subscriber = RecordingSubscriber<Int>(initialDemand: .none)
        playerCount.publisher(in: test.writer, scheduling: .immediate).subscribe(subscriber)
        defer { subscriber.cancel() }
        await Task.detached { subscriber.request(.max(1)) }.value
        #expect(try await subscriber.events.wait(for: 1).values == [3])
        #expect(subscriber.deliveryQueueLabels.value == [DispatchQueue.main.label])
    }

    /// `.immediate`: a subscriber that requests demand when it receives the
    /// subscription gets the first value during `subscribe`; one without
    /// demand gets it from its first request.
    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func immediateDeliversTheFirstValueDuringSubscribe(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let eager = RecordingSubscriber<Int>()
        let lazy = RecordingSubscriber<Int>(initialDemand: .none)
        let publisher = playerCount.publisher(in: test.writer, scheduling: .immediate)
        publisher.subscribe(eager)
        publisher.subscribe(lazy)
        defer {
            eager.cancel()
            lazy.cancel()
        }
        #expect(eager.values == [3])
        #expect(lazy.values == [])
        lazy.request(.max(1))
        #expect(lazy.values == [3])

        // With `sink`, too.
        var sinkValues: [Int] = []
        let cancellable = publisher.sink { _ in } receiveValue: { sinkValues.append($0) }
        #expect(sinkValues == [3])
        cancellable.cancel()
    }

    // MARK: - Cancellation

    /// A publisher of the number of players, and a weak reference to an
    /// object that only its observation holds.
    func publisherHoldingAToken(in writer: any DatabaseWriter) -> (DatabasePublishers.Value<Int>, WeakReference<LifetimeToken>) {
        let token = LifetimeToken()
        let publisher = playerCount
            .map { count in withExtendedLifetime(token) { count } }
            .publisher(in: writer, scheduling: .observationQueue)
        return (publisher, WeakReference(token))
    }

    /// Cancelling stops the deliveries (the subscriber records any later
    /// one as an issue) and releases the observation.
    @Test(arguments: DatabaseKind.allCases)
    func cancellationStopsAndReleasesTheObservation(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        var subscriber: RecordingSubscriber<Int>? = RecordingSubscriber<Int>()
        let subscriberReference = WeakReference(subscriber!)
        let tokenReference = {
            let (publisher, tokenReference) = publisherHoldingAToken(in: test.writer)
            publisher.subscribe(subscriber!)
            return tokenReference
        }()
        try await subscriber!.events.wait(for: 1)
        let witness = RecordingSubscriber<Int>()
        playerCount.publisher(in: test.writer, scheduling: .observationQueue).subscribe(witness)
        defer { witness.cancel() }
        try await witness.events.wait(for: 1)

        // Calling it twice does nothing more.
        let subscription = subscriber!.cancelKeepingSubscription()
        subscription?.cancel()
        try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'David')")
        try await witness.events.wait { $0.values.last == 4 }
        #expect(subscriber!.values == [3])

        // No retain cycle: once nobody holds them, the subscriber, the
        // subscription and the observation (its closure) go away.
        withExtendedLifetime(subscription) {}
        subscriber = nil
        try await waitUntil { subscriberReference.isReleased && tokenReference.isReleased }
    }

    /// Releasing the `AnyCancellable` of `sink` cancels.
    @Test(arguments: DatabaseKind.allCases)
    func releasingTheCancellableOfSinkCancels(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let recorder = Recorder<Int>()
        let (publisher, tokenReference) = publisherHoldingAToken(in: test.writer)
        var cancellable: AnyCancellable? = publisher.sink { _ in } receiveValue: { recorder.append($0) }
        // The publisher holds the observation: only the subscription may.
        _ = consume publisher
        try await recorder.wait(for: 1)
        withExtendedLifetime(cancellable) {}
        cancellable = nil
        try await waitUntil { tokenReference.isReleased }
        try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'David')")
        #expect(recorder.values == [3])
    }

    /// A subscriber may cancel from inside `receive(_:)`: no deadlock, and
    /// nothing is delivered afterwards.
    @Test(arguments: DatabaseKind.allCases)
    func cancellingFromInsideReceive(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let subscriber = RecordingSubscriber<Int> { value, subscriber in
            if value == 4 { subscriber.cancel() }
        }
        playerCount.publisher(in: test.writer, scheduling: .observationQueue).subscribe(subscriber)
        let witness = RecordingSubscriber<Int>()
        playerCount.publisher(in: test.writer, scheduling: .observationQueue).subscribe(witness)
        defer { witness.cancel() }
        try await subscriber.events.wait(for: 1)
        try await witness.events.wait(for: 1)
        for id in 4...6 {
            try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
            try await witness.events.wait { $0.values.last == id }
        }
        #expect(subscriber.values == [3, 4])
    }

    /// Each subscription runs its own observation.
    @Test(arguments: DatabaseKind.allCases)
    func eachSubscriptionRunsItsOwnObservation(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let publisher = playerCount.publisher(in: test.writer, scheduling: .observationQueue)
        let first = RecordingSubscriber<Int>()
        let second = RecordingSubscriber<Int>()
        publisher.subscribe(first)
        try await first.events.wait(for: 1)
        try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'David')")
        try await first.events.wait(for: 2)
        publisher.subscribe(second)
        try await second.events.wait(for: 1)
        first.cancel()
        try test.writer.writeSQL("INSERT INTO player (id, name) VALUES (5, 'Eve')")
        try await second.events.wait(for: 2)
        second.cancel()
        #expect(first.values == [3, 4])
        #expect(second.values == [4, 5])
    }

    /// Subscriptions made, fed and cancelled from many threads at once while
    /// a writer commits: no overlapping delivery, no value beyond demand,
    /// nothing after `cancel()` returned (checked by each subscriber).
    @Test(arguments: DatabaseKind.allCases)
    func concurrentSubscriptionsDemandsAndCancellations(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: playerSchemaSQL)
        let writer = test.writer
        let publisher = playerCount.publisher(in: writer, scheduling: .observationQueue)
        let subscriberCount = 24
        let subscribers = (0..<subscriberCount).map { index in
            RecordingSubscriber<Int>(initialDemand: index.isMultiple(of: 2) ? .unlimited : .none)
        }
        let writes = Task.detached {
            for id in 4...60 {
                try writer.writeSQL("INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: subscriberCount) { index in
                    let subscriber = subscribers[index]
                    publisher.subscribe(subscriber)
                    for _ in 0..<20 { subscriber.request(.max(1)) }
                    if index.isMultiple(of: 3) { subscriber.cancel() }
                }
                continuation.resume()
            }
        }
        try await writes.value
        for (index, subscriber) in subscribers.enumerated() where !index.isMultiple(of: 3) {
            subscriber.request(.unlimited)
            try await subscriber.events.wait { $0.values.last == 60 }
            subscriber.cancel()
        }
        for subscriber in subscribers {
            let values = subscriber.values
            #expect(values == values.sorted(), "values go back in time: \(values)")
        }
    }
}

#endif
