#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
import DatabaseTestSupport
import DatabaseRegions
import ReactiveSQLite
import ReactiveSQLiteCombine
import TestSupport
import Testing
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// `DatabaseRegionObservation.publisher(in:)`: the writer's `Database`, on
/// the writer's queue, right after each committed transaction that modified
/// the region. Deliveries happen before the committing `write` returns, so
/// these tests check them right after each write.
@Suite struct DatabaseRegionPublisherTests {
    static let schemaSQL = """
        CREATE TABLE t1 (id INTEGER PRIMARY KEY, a, b);
        CREATE TABLE t2 (id INTEGER PRIMARY KEY, a, b);
        """

    static let observation = DatabaseRegionObservation(
        tracking: SQLRequest<Row>(sql: "SELECT a FROM t1"), SQLRequest<Row>(sql: "SELECT t1.a, t2.b FROM t1, t2"))

    /// The engine's region scenario: exactly one element per impactful
    /// commit; the element is the writer's connection, usable right there.
    @Test(arguments: DatabaseKind.allCases)
    func publishesOncePerImpactfulCommitOnTheWritersQueue(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schemaSQL)
        let writerLabel = try await test.writer.write { _ in currentDispatchQueueLabel() }
        // The connection is valid during the delivery: the subscriber reads
        // the committed number of rows of t1 with it.
        let subscriber = ConnectionSubscriber()
        Self.observation.publisher(in: test.writer).subscribe(subscriber)
        defer { subscriber.cancel() }

        try await test.writer.write { db in
            try db.execute(sql: "INSERT INTO t1 (a, b) VALUES (1, 1)")
            try db.execute(sql: "INSERT INTO t2 (a, b) VALUES (1, 1)")
        }
        #expect(subscriber.values == [1])
        try test.writer.writeSQL("UPDATE t1 SET b = 2")
        try test.writer.writeSQL("UPDATE t2 SET a = 2")
        #expect(subscriber.values == [1])
        try test.writer.writeSQL("INSERT INTO t2 (a, b) VALUES (3, 3)")
        try test.writer.writeSQL("INSERT INTO t1 (a, b) VALUES (3, 3)")
        #expect(subscriber.values == [1, 1, 2])
        #expect(subscriber.deliveryQueueLabels.value == Array(repeating: writerLabel, count: 3))
    }

    /// `tryMap` turns the connection into a Sendable value on the writer's
    /// queue; the value may then travel.
    @Test(arguments: DatabaseKind.allCases)
    func mappingTheConnectionToAValue(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schemaSQL)
        let subscriber = RecordingSubscriber<Int?>()
        Self.observation.publisher(in: test.writer)
            .tryMap { db in try SQLRequest<Int>(sql: "SELECT COUNT(*) FROM t1").fetchOne(db) }
            .subscribe(subscriber)
        defer { subscriber.cancel() }
        for _ in 0..<3 { try test.writer.writeSQL("INSERT INTO t1 (a) VALUES (1)") }
        #expect(subscriber.values == [1, 2, 3])
    }

    @Test(arguments: DatabaseKind.allCases)
    func rolledBackChangesAreNotPublished(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schemaSQL)
        let subscriber = ConnectionSubscriber()
        Self.observation.publisher(in: test.writer).subscribe(subscriber)
        defer { subscriber.cancel() }
        try test.writer.writeSQLWithoutTransaction("""
            BEGIN; INSERT INTO t1 (a) VALUES (1); ROLLBACK;
            BEGIN; SAVEPOINT s; INSERT INTO t1 (a) VALUES (2); ROLLBACK TO s; RELEASE s; COMMIT;
            BEGIN; SAVEPOINT t; INSERT INTO t1 (a) VALUES (3); RELEASE t; ROLLBACK;
            """)
        #expect(subscriber.events.values.isEmpty)
        try test.writer.writeSQL("INSERT INTO t1 (a) VALUES (4)")
        #expect(subscriber.events.values.count == 1)
    }

    /// A connection is only valid during its commit's notification: a commit
    /// made without demand is not published, not even later.
    @Test(arguments: DatabaseKind.allCases)
    func commitsWithoutDemandAreNotPublished(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schemaSQL)
        let subscriber = ConnectionSubscriber(initialDemand: .none)
        Self.observation.publisher(in: test.writer).subscribe(subscriber)
        defer { subscriber.cancel() }
        try test.writer.writeSQL("INSERT INTO t1 (a) VALUES (1)")
        #expect(subscriber.events.values.isEmpty)
        subscriber.request(.max(2))
        #expect(subscriber.events.values.isEmpty)
        for _ in 0..<3 { try test.writer.writeSQL("INSERT INTO t1 (a) VALUES (1)") }
        #expect(subscriber.events.values.count == 2)
        subscriber.request(.max(1))
        #expect(subscriber.events.values.count == 2)
        try test.writer.writeSQL("INSERT INTO t1 (a) VALUES (1)")
        #expect(subscriber.events.values.count == 3)
    }

    @Test(arguments: DatabaseKind.allCases)
    func cancellationStopsThePublisher(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schemaSQL)
        let subscriber = ConnectionSubscriber()
        let cancellingSubscriber = ConnectionSubscriber { _, subscriber in subscriber.cancel() }
        Self.observation.publisher(in: test.writer).subscribe(subscriber)
        Self.observation.publisher(in: test.writer).subscribe(cancellingSubscriber)
        try test.writer.writeSQL("INSERT INTO t1 (a) VALUES (1)")
        subscriber.cancel()
        subscriber.cancel()
        try test.writer.writeSQL("INSERT INTO t1 (a) VALUES (2)")
        #expect(subscriber.events.values.count == 1)
        // Cancelled from inside its delivery, on the writer's queue.
        #expect(cancellingSubscriber.events.values.count == 1)
    }

    /// No retain cycle: once cancelled and released, the subscriber goes
    /// away, and the observation with it.
    @Test(arguments: DatabaseKind.allCases)
    func cancelledSubscriptionsAreReleased(kind: DatabaseKind) async throws {
        let test = try kind.make(sql: Self.schemaSQL)
        var subscriber: ConnectionSubscriber? = ConnectionSubscriber()
        let subscriberReference = WeakReference(subscriber!)
        var cancellable: AnyCancellable? = Self.observation.publisher(in: test.writer).sink { _ in } receiveValue: { _ in }
        Self.observation.publisher(in: test.writer).subscribe(subscriber!)
        subscriber!.cancel()
        subscriber = nil
        withExtendedLifetime(cancellable) {}
        cancellable = nil
        try await waitUntil { subscriberReference.isReleased }
    }

    @Test(arguments: DatabaseKind.allCases)
    func failsWhenTheRegionCannotBeComputed(kind: DatabaseKind) async throws {
        let test = try kind.make()
        let subscriber = ConnectionSubscriber()
        DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM missing"))
            .publisher(in: test.writer)
            .subscribe(subscriber)
        let events = subscriber.events.values
        #expect(events.count == 1)
        guard case .failure(let error) = events.first else {
            Issue.record("expected a failure, got \(events)")
            return
        }
        #expect((error as? DatabaseError)?.message == "no such table: missing")
    }
}

#endif
