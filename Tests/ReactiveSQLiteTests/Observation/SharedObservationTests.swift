import DatabaseTestSupport
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// `shared(in:scheduling:extent:)`: one run, one fetch per commit, for any
/// number of subscribers; the latest value for a late one without a fetch;
/// the two extents; errors; nothing kept alive once unused.
@Suite(.timeLimit(.minutes(3))) struct SharedObservationTests {
    /// A count of `player` whose fetches `fetches` counts.
    static func countObservation(fetches: Locked<Int>) -> ValueObservation<Int> {
        ValueObservation.trackingCount(ObservedPlayer.all())
            .handleEvents(willFetch: { fetches.withLock { $0 += 1 } })
    }

    static let deliveryQueue = DispatchQueue(label: "SharedObservationTests")

    @Test(arguments: DatabaseKind.allCases)
    func fiftySubscribersCostOneFetchPerCommit(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL + "CREATE TABLE other (x);")
        let writer = test.writer
        let fetches = Locked(0)
        let shared = Self.countObservation(fetches: fetches)
            .shared(in: writer, scheduling: .async(onQueue: Self.deliveryQueue))
        // Every subscriber records its values; `received` has one entry per
        // (subscriber, value), so that a test can wait for all of them.
        let received = Recorder<Int>()
        let perSubscriber = (0..<50).map { _ in Locked<[Int]>([]) }
        let cancellables = perSubscriber.map { values in
            shared.start(onError: { Issue.record($0) }) { count in
                values.withLock { $0.append(count) }
                received.append(count)
            }
        }
        try await received.wait { $0.count >= 50 }
        for id in 4...203 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (\(id), 'p')")
            // A commit of another table costs nothing.
            if id.isMultiple(of: 10) { try writer.writeSQL("INSERT INTO other VALUES (\(id))") }
            let expected = 50 * (id - 2)
            try await received.wait { $0.count >= expected }
        }
        // The first fetch, then exactly one per commit of `player`.
        #expect(fetches.value == 201)
        for values in perSubscriber {
            #expect(values.value == Array(3...203))
        }
        withExtendedLifetime(cancellables) {}
    }

    /// Commits in a burst coalesce, for all the subscribers at once, and
    /// every subscriber ends on the final state, in order.
    @Test(arguments: DatabaseKind.allCases)
    func aBurstEndsOnTheFinalStateForEverySubscriber(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let fetches = Locked(0)
        let shared = Self.countObservation(fetches: fetches).shared(in: writer, scheduling: .observationQueue)
        let recorders = (0..<20).map { _ in Recorder<Int>() }
        let cancellables = recorders.map { recorder in
            shared.start(onError: { Issue.record($0) }, onChange: { recorder.append($0) })
        }
        for id in 4...203 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (\(id), 'p')")
        }
        for recorder in recorders {
            let values = try await recorder.wait(forLast: 203)
            #expect(values == values.sorted() && Set(values).count == values.count)
        }
        // One run: each fetch made one value, which every subscriber got
        // (20 runs would fetch, and coalesce, each on its own).
        #expect(fetches.value <= 201)
        for recorder in recorders {
            #expect(recorder.values == recorders[0].values)
        }
        #expect(recorders[0].values.count == fetches.value)
        withExtendedLifetime(cancellables) {}
    }

    @Test(arguments: DatabaseKind.allCases)
    func aLateSubscriberGetsTheLatestValueWithoutAFetch(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let fetches = Locked(0)
        let shared = Self.countObservation(fetches: fetches)
            .shared(in: writer, scheduling: .async(onQueue: Self.deliveryQueue))
        let first = Recorder<Int>()
        let firstCancellable = shared.start(onError: { Issue.record($0) }, onChange: { first.append($0) })
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'p')")
        _ = try await first.wait(forLast: 4)
        let fetchesBefore = fetches.value
        let late = Recorder<Int>()
        let lateCancellable = shared.start(onError: { Issue.record($0) }, onChange: { late.append($0) })
        #expect(try await late.wait(for: 1) == [4])
        #expect(fetches.value == fetchesBefore)
        // Then the values of the run, as the others.
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (5, 'p')")
        #expect(try await late.wait(for: 2) == [4, 5])
        withExtendedLifetime((firstCancellable, lateCancellable)) {}
    }

    @Test(arguments: DatabaseKind.allCases)
    func whileObservedStopsWithTheLastSubscriberAndStartsAgainFresh(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let fetches = Locked(0)
        let cancels = Locked(0)
        let shared = Self.countObservation(fetches: fetches)
            .handleEvents(didCancel: { cancels.withLock { $0 += 1 } })
            .shared(in: writer, scheduling: .async(onQueue: Self.deliveryQueue), extent: .whileObserved)
        // Nothing runs before the first subscriber.
        #expect(fetches.value == 0)
        let values = Recorder<Int>()
        let a = shared.start(onError: { Issue.record($0) }, onChange: { values.append($0) })
        let b = shared.start(onError: { Issue.record($0) }, onChange: { _ in })
        _ = try await values.wait(for: 1)
        #expect(fetches.value == 1)
        a.cancel()
        #expect(cancels.value == 0)
        b.cancel()
        #expect(cancels.value == 1)
        // Commits while nobody observes cost no fetch: a commit notifies its
        // observers before `write` returns.
        for id in 4...13 {
            try writer.writeSQL("INSERT INTO player (id, name) VALUES (\(id), 'p')")
        }
        #expect(fetches.value == 1)
        // A new first subscriber starts a run: a fresh fetch, the current state.
        let again = Recorder<Int>()
        let c = shared.start(onError: { Issue.record($0) }, onChange: { again.append($0) })
        #expect(try await again.wait(for: 1) == [13])
        #expect(fetches.value == 2)
        withExtendedLifetime(c) {}
    }

    @Test(arguments: DatabaseKind.allCases)
    func observationLifetimeRunsFromTheStartWithoutSubscribers(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let fetched = Recorder<Int>()
        let cancels = Recorder<Int>()
        var shared: SharedValueObservation<Int>? = ValueObservation.trackingCount(ObservedPlayer.all())
            .handleEvents(didReceiveValue: { fetched.append($0) }, didCancel: { cancels.append(1) })
            .shared(in: writer, scheduling: .async(onQueue: Self.deliveryQueue), extent: .observationLifetime)
        #expect(try await fetched.wait(for: 1) == [3])
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'p')")
        #expect(try await fetched.wait(for: 2) == [3, 4])
        // A subscriber gets the latest value, without a fetch, and a
        // subscriber that leaves does not stop the run.
        let values = Recorder<Int>()
        let subscription = shared!.start(onError: { Issue.record($0) }, onChange: { values.append($0) })
        // `didReceiveValue` sees 4 on the reduction queue before the shared
        // observation keeps it, on the delivery queue: a subscriber that
        // comes between the two gets 3, then 4 (seen on a fresh-clone run
        // under the thread sanitizer). Either way, no fetch of its own.
        let received = try await values.wait { $0.last == 4 }
        #expect(received == [4] || received == [3, 4])
        #expect(fetched.values.count == 2)
        subscription.cancel()
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (5, 'p')")
        #expect(try await fetched.wait(for: 3) == [3, 4, 5])
        #expect(fetched.values.count == 3)
        // Releasing the shared object stops the run. The delivery of the
        // last value may hold it a moment longer, on the delivery queue:
        // its release cancels the run, and the test waits for that.
        weak let released = shared
        shared = nil
        _ = try await cancels.wait(for: 1)
        #expect(released == nil)
    }

    /// Subscriptions keep the shared object alive; once they and its
    /// owner are gone, it is released, and so is its run.
    @Test(arguments: DatabaseKind.allCases)
    func nothingOutlivesItsSubscribersAndItsOwner(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let cancels = Recorder<Int>()
        var shared: SharedValueObservation<Int>? = ValueObservation.trackingCount(ObservedPlayer.all())
            .handleEvents(didCancel: { cancels.append(1) })
            .shared(in: writer, scheduling: .async(onQueue: Self.deliveryQueue))
        weak let released = shared
        let values = Recorder<Int>()
        var subscription: AnyDatabaseCancellable? = shared!.start(onError: { Issue.record($0) }, onChange: { values.append($0) })
        _ = try await values.wait(for: 1)
        shared = nil
        // The subscription keeps it alive, and running.
        #expect(released != nil)
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'p')")
        #expect(try await values.wait(for: 2) == [3, 4])
        // Releasing the subscription (no `cancel()`) ends everything (the
        // delivery of the last value may hold the object a moment longer).
        subscription = nil
        #expect(cancels.values == [1])
        // The delivery of the last value ran on the delivery queue, a
        // serial queue: once a block queued now has run, it is over.
        await withCheckedContinuation { continuation in Self.deliveryQueue.async { continuation.resume() } }
        #expect(released == nil)
        withExtendedLifetime(subscription) {}
    }

    @Test(arguments: DatabaseKind.allCases)
    func anErrorEndsEverySubscriptionAndWhileObservedStartsAgain(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let shared = ValueObservation.trackingCount(ObservedPlayer.all())
            .shared(in: writer, scheduling: .async(onQueue: Self.deliveryQueue))
        let errors = Recorder<String>()
        let values = Recorder<Int>()
        let cancellables = (0..<3).map { _ in
            shared.start(onError: { errors.append(($0 as? DatabaseError)?.message ?? "\($0)") }, onChange: { values.append($0) })
        }
        try await values.wait { $0.count >= 3 }
        try writer.writeSQL("DROP TABLE player")
        #expect(try await errors.wait(for: 3) == Array(repeating: "no such table: player", count: 3))
        // The next subscriber starts a new run.
        try writer.writeSQL(playerSchemaSQL)
        let again = Recorder<Int>()
        let next = shared.start(onError: { Issue.record($0) }, onChange: { again.append($0) })
        #expect(try await again.wait(for: 1) == [3])
        withExtendedLifetime((cancellables, next)) {}
    }

    @Test(arguments: DatabaseKind.allCases)
    func observationLifetimeKeepsItsErrorForLateSubscribers(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let starts = Locked(0)
        let shared = ValueObservation.trackingCount(SQLRequest<Row>(sql: "SELECT * FROM missing"))
            .handleEvents(willStart: { starts.withLock { $0 += 1 } })
            .shared(in: test.writer, scheduling: .async(onQueue: Self.deliveryQueue), extent: .observationLifetime)
        for _ in 0..<2 {
            let errors = Recorder<String>()
            let subscription = shared.start(
                onError: { errors.append(($0 as? DatabaseError)?.message ?? "\($0)") },
                onChange: { _ in Issue.record("no value expected") })
            #expect(try await errors.wait(for: 1) == ["no such table: missing"])
            withExtendedLifetime(subscription) {}
        }
        // One run, started with the shared object, never again.
        #expect(starts.value == 1)
    }

    /// Subscribers that come and go while commits stream, some of them
    /// from inside `onChange`: each one's values are in order, from the
    /// latest value when it came, and the ones that stay end on the final
    /// state; the run never stops while one is there.
    @Test(arguments: DatabaseKind.allCases)
    func subscribersComeAndGoWhileCommitsStream(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let starts = Locked(0)
        let shared = ValueObservation.trackingCount(ObservedPlayer.all())
            .handleEvents(willStart: { starts.withLock { $0 += 1 } })
            .shared(in: writer, scheduling: .async(onQueue: Self.deliveryQueue))
        let anchor = Recorder<Int>()
        let anchorSubscription = shared.start(onError: { Issue.record($0) }, onChange: { anchor.append($0) })
        _ = try await anchor.wait(for: 1)
        let writes = BackgroundThread {
            for id in 4...203 {
                try writer.writeSQL("INSERT INTO player (id, name) VALUES (\(id), 'p')")
            }
        }
        // A subscriber that leaves from inside its first `onChange`, and
        // subscribes a new one from there.
        let nested = Recorder<Int>()
        let nestedSubscription = Locked<AnyDatabaseCancellable?>(nil)
        let leaving = Locked<AnyDatabaseCancellable?>(nil)
        leaving.withLock { leavingSubscription in
            leavingSubscription = shared.start(onError: { Issue.record($0) }) { _ in
                leaving.withLock { $0 }?.cancel()
                let subscription = shared.start(onError: { Issue.record($0) }, onChange: { nested.append($0) })
                nestedSubscription.withLock { $0 = subscription }
            }
        }
        // Late subscribers, one after the other, while the commits go on.
        var late: [(Recorder<Int>, AnyDatabaseCancellable)] = []
        for _ in 0..<10 {
            let recorder = Recorder<Int>()
            late.append((recorder, shared.start(onError: { Issue.record($0) }, onChange: { recorder.append($0) })))
            _ = try await recorder.wait(for: 1)
        }
        try await writes.value()
        for recorder in [anchor, nested] + late.map(\.0) {
            let values = try await recorder.wait(forLast: 203)
            #expect(values == values.sorted() && Set(values).count == values.count)
        }
        #expect(starts.value == 1)
        withExtendedLifetime((anchorSubscription, late.map(\.1), nestedSubscription)) {}
    }

    @Test(arguments: DatabaseKind.allCases)
    func valuesIterateTheSharedRun(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let fetches = Locked(0)
        let shared = Self.countObservation(fetches: fetches).shared(in: writer, scheduling: .observationQueue)
        let keepRunning = shared.start(onError: { Issue.record($0) }, onChange: { _ in })
        var iterator = shared.values(bufferingPolicy: .unbounded).makeAsyncIterator()
        #expect(try await iterator.next() == 3)
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'p')")
        #expect(try await iterator.next() == 4)
        #expect(fetches.value == 2)
        withExtendedLifetime(keepRunning) {}
    }

    /// With `.immediate`, on the main actor: the first subscriber gets the
    /// first value before `start` returns, and a late one the latest value.
    @MainActor
    @Test(arguments: DatabaseKind.allCases)
    func immediateSubscribersGetAValueBeforeStartReturns(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        let fetches = Locked(0)
        let shared = Self.countObservation(fetches: fetches).shared(in: writer, scheduling: .immediate)
        let first = Recorder<Int>()
        let a = shared.start(onError: { Issue.record($0) }, onChange: { first.append($0) })
        #expect(first.values == [3])
        let late = Recorder<Int>()
        let b = shared.start(onError: { Issue.record($0) }, onChange: { late.append($0) })
        #expect(late.values == [3])
        #expect(fetches.value == 1)
        try await writer.write { db in try db.execute(sql: "INSERT INTO player (id, name) VALUES (4, 'p')") }
        #expect(try await late.wait(for: 2) == [3, 4])
        #expect(try await first.wait(for: 2) == [3, 4])
        withExtendedLifetime((a, b)) {}
    }
}
