import DatabaseTestSupport
import Dispatch
import Foundation
import ReactiveSQLite
import TestSupport
import Testing

/// The ten guarantees of observations (DESIGN.md, section 4), each on an
/// in-memory queue, a file queue and a WAL pool.
///
/// Some tests wait on async sequences: the time limit turns a hang into a failure.
@Suite(.timeLimit(.minutes(3)), .onItsOwnThread) struct ObservationGuaranteeTests {
    /// A table with one row whose version grows by one in each transaction.
    static let versionSchemaSQL = """
        CREATE TABLE counter (id INTEGER PRIMARY KEY, version INTEGER NOT NULL);
        INSERT INTO counter (id, version) VALUES (1, 0);
        """

    static let version = SQLRequest<Int>(sql: "SELECT version FROM counter")

    static func bumpVersion(_ writer: any DatabaseWriter) throws {
        try writer.writeSQL("UPDATE counter SET version = version + 1")
    }

    // MARK: 1. Started from any thread

    @Test(arguments: DatabaseKind.allCases)
    func observationsStartFromAnyThread(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.versionSchemaSQL)
        let writer = test.writer
        let observation = ValueObservation.trackingOne(Self.version)
        let recorders = (0..<5).map { _ in Recorder<Int?>() }
        @Sendable func start(_ index: Int, _ scheduler: ValueObservationScheduler) -> AnyDatabaseCancellable {
            observation.start(in: writer, scheduling: scheduler, onError: { Issue.record($0) }) {
                recorders[index].append($0)
            }
        }
        var cancellables: [AnyDatabaseCancellable] = []
        // A dispatch thread.
        let fromDispatch = BackgroundThread { start(0, .async(onQueue: DispatchQueue(label: "observation-tests.0"))) }
        cancellables.append(try await fromDispatch.value())
        // A thread of its own.
        let started = Locked<AnyDatabaseCancellable?>(nil)
        let threadDone = Signal()
        let thread = Thread {
            started.value = start(1, .observationQueue)
            threadDone.open()
        }
        thread.start()
        try await threadDone.wait()
        cancellables.append(try #require(started.value))
        // A detached task, and the main actor.
        cancellables.append(await Task.detached { start(2, .observationQueue) }.value)
        cancellables.append(await MainActor.run { start(3, .immediate) })
        // The test's own task.
        cancellables.append(start(4, .async(onQueue: .main)))
        defer { cancellables.forEach { $0.cancel() } }

        for recorder in recorders { try await recorder.wait(for: 1) }
        try Self.bumpVersion(writer)
        for recorder in recorders {
            #expect(try await recorder.wait(for: 2) == [0, 1])
        }
    }

    /// The row of `counter`.
    struct Counter: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "counter"
        var version: Int
        init(row: Row) throws { version = try row["version"] }
    }

    /// Whether a write of another thread, waited for here (5 s at most),
    /// completes: not so inside an access of the writer, which that write
    /// waits for.
    static func canWrite(_ writer: any DatabaseWriter) -> Bool {
        let written = Gate()
        Thread.detachNewThread {
            try? writer.writeWithoutTransaction { _ in }
            written.open()
        }
        return written.wait(seconds: 5)
    }

    /// A set differences observation reduces its first value inside the
    /// writer's access that fetched it, but `onChange` runs after that
    /// access; a transform of the user's (`map`) runs after it too, as it
    /// may access the database.
    @Test(arguments: DatabaseKind.allCases)
    func theFirstValueIsDeliveredOutsideTheWritersAccess(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.versionSchemaSQL)
        let writer = test.writer
        let observation = ValueObservation.trackingSetDifferences(Counter.all())

        let deliveredOutside = Locked<Bool?>(nil)
        let delivered = Signal()
        let cancellable = observation.start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }) { _ in
            guard deliveredOutside.value == nil else { return }
            deliveredOutside.value = Self.canWrite(writer)
            delivered.open()
        }
        defer { cancellable.cancel() }
        try await delivered.wait()
        #expect(deliveredOutside.value == true)

        let mappedOutside = Locked<Bool?>(nil)
        let mapped = Signal()
        let mappedCancellable = observation.map { difference in
            if mappedOutside.value == nil { mappedOutside.value = Self.canWrite(writer) }
            return difference.inserted.count
        }.start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }) { _ in mapped.open() }
        defer { mappedCancellable.cancel() }
        try await mapped.wait()
        #expect(mappedOutside.value == true)
    }

    // MARK: 2. Order, and never back in time

    @Test(arguments: DatabaseKind.allCases)
    func valuesArriveInCommitOrderAndNeverGoBackInTime(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.versionSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<Int?>()
        let cancellable = ValueObservation.trackingOne(Self.version)
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        // Two threads commit 100 transactions each.
        let writers = (0..<2).map { _ in
            BackgroundThread { for _ in 0..<100 { try Self.bumpVersion(writer) } }
        }
        for result in writers { try await result.value() }
        let values = try await recorder.wait(forLast: 200).map { $0! }
        #expect(values.first == 0)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "\(values)")
        if kind != .pool {
            // A queue fetches on the writer after each commit: every state.
            #expect(values == Array(0...200))
        }
    }

    // MARK: 3. Only committed changes

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func onlyCommittedChangesNotify(kind: DatabaseKind, tracking: Configuration.ChangeTracking) async throws {
        let test = try kind.make(changeTracking: tracking, sql: Self.versionSchemaSQL)
        let writer = test.writer
        let recorder = Recorder<Int?>()
        let cancellable = ValueObservation.trackingOne(Self.version)
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        let (counter, regionCancellable) = countChanges(in: writer, of: [Self.version])
        defer { regionCancellable.cancel() }

        var committed = 0
        for index in 1...60 {
            switch index % 4 {
            case 0:
                try? await writer.write { db in
                    try db.execute(sql: "UPDATE counter SET version = -1")
                    throw TestError()
                }
            case 1:
                try writer.writeSQL("""
                    UPDATE counter SET version = version + 1;
                    SAVEPOINT s; UPDATE counter SET version = -2; ROLLBACK TO s; RELEASE s
                    """)
                committed += 1
            case 2:
                try writer.writeSQLWithoutTransaction("BEGIN; UPDATE counter SET version = -3; ROLLBACK")
            default:
                try Self.bumpVersion(writer)
                committed += 1
            }
        }
        #expect(counter.value == committed)
        let values = try await recorder.wait(forLast: committed).map { $0! }
        #expect(values.allSatisfy { $0 >= 0 }, "\(values)")
        if kind != .pool {
            #expect(values == Array(0...committed))
        }
    }

    // MARK: 4. The first value is the state at start

    @Test(arguments: DatabaseKind.allCases)
    func theFirstValueIsTheStateWhenTheObservationStarts(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.versionSchemaSQL)
        let writer = test.writer
        // Commits go on while observations start.
        let writes = BackgroundThread { for _ in 0..<200 { try Self.bumpVersion(writer) } }
        var checks: [(before: Int, after: Int, recorder: Recorder<Int?>, cancellable: AnyDatabaseCancellable)] = []
        for _ in 0..<10 {
            let recorder = Recorder<Int?>()
            let before = try await writer.read { db in try Self.version.fetchOne(db)! }
            let cancellable = ValueObservation.trackingOne(Self.version)
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
            let after = try await writer.read { db in try Self.version.fetchOne(db)! }
            checks.append((before, after, recorder, cancellable))
        }
        try await writes.value()
        for check in checks {
            let values = try await check.recorder.wait(forLast: 200).map { $0! }
            #expect(values[0] >= check.before && values[0] <= check.after, "\(check.before) \(values) \(check.after)")
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 })
            check.cancellable.cancel()
        }
    }

    // MARK: 5. No commit missed; the last value is the database

    @Test(arguments: DatabaseKind.allCases)
    func noCommitIsMissedAndTheLastValueIsTheDatabase(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE entry (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL);
            """)
        let writer = test.writer
        struct Summary: Equatable, Sendable {
            var count: Int
            var total: Int
        }
        let fetchSummary: @Sendable (Database) throws -> Summary = { db in
            let row = try SQLRequest<Row>(sql: "SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM entry").fetchOne(db)!
            return Summary(count: try row[0], total: try row[1])
        }
        let recorder = Recorder<Summary>()
        let cancellable = ValueObservation.tracking(fetchSummary)
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }

        // A burst from three threads.
        let writers = (0..<3).map { thread in
            BackgroundThread {
                for index in 0..<100 {
                    try writer.writeSQL("INSERT INTO entry (amount) VALUES (?)", arguments: [thread * 1000 + index])
                }
            }
        }
        for result in writers { try await result.value() }
        let final = try await writer.read(fetchSummary)
        #expect(final.count == 300)
        let values = try await recorder.wait(forLast: final)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.count < $1.count }, "\(values.map(\.count))")
        if kind != .pool {
            #expect(values.count == 301)
        }
    }

    // MARK: 6. One committed state per value

    @Test(arguments: DatabaseKind.allCases)
    func eachValueComesFromOneCommittedState(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE a (id INTEGER PRIMARY KEY, v INTEGER NOT NULL);
            CREATE TABLE b (id INTEGER PRIMARY KEY, v INTEGER NOT NULL);
            INSERT INTO a (id, v) VALUES (1, 0);
            INSERT INTO b (id, v) VALUES (1, 0);
            """)
        let writer = test.writer
        struct Pair: Equatable, Sendable {
            var a: Int
            var b: Int
        }
        let recorder = Recorder<Pair>()
        // Two statements, two tables: one read transaction.
        let cancellable = ValueObservation.tracking { db in
            Pair(
                a: try SQLRequest<Int>(sql: "SELECT v FROM a").fetchOne(db)!,
                b: try SQLRequest<Int>(sql: "SELECT v FROM b").fetchOne(db)!)
        }
        .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }

        let writers = (0..<2).map { _ in
            BackgroundThread {
                for _ in 0..<100 {
                    try writer.write { db in
                        try db.execute(sql: "UPDATE a SET v = v + 1")
                        try db.execute(sql: "UPDATE b SET v = v + 1")
                    }
                }
            }
        }
        for result in writers { try await result.value() }
        let values = try await recorder.wait(forLast: Pair(a: 200, b: 200))
        #expect(values.allSatisfy { $0.a == $0.b }, "\(values)")
    }

    // MARK: 7. Pool: commits do not wait for fetches

    @Test
    func aPoolCommitDoesNotWaitForTheFetch() async throws {
        let test = try DatabaseKind.pool.make(changeTracking: .automatic, sql: Self.versionSchemaSQL)
        let writer = test.writer
        let fetchIsBlocked = Signal()
        let unblockFetch = Signal()
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.tracking { db in
            let version = try Self.version.fetchOne(db)!
            if version == 1 {
                fetchIsBlocked.open()
                #expect(unblockFetch.waitBlocking())
            }
            return version
        }
        .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        // The fetch of version 1 blocks; the commit of version 1 returned
        // before it ended, and the commit of version 2 completes meanwhile.
        let firstWrite = BackgroundThread { try Self.bumpVersion(writer) }
        try await firstWrite.value()
        try await fetchIsBlocked.wait()
        let secondWrite = BackgroundThread { try Self.bumpVersion(writer) }
        try await secondWrite.value()
        #expect(recorder.values == [0])
        unblockFetch.open()
        // The blocked fetch saw the state it was started for, then the
        // observation fetched again for the commit made meanwhile.
        #expect(try await recorder.wait(for: 3) == [0, 1, 2])
    }

    @Test
    func aPoolWhoseReadersAreBusyFetchesOnTheWriter() async throws {
        var configuration = Configuration()
        configuration.maximumReaderCount = 1
        let test = try DatabaseKind.pool.make(configuration: configuration)
        let writer = test.writer
        try writer.writeSQL(Self.versionSchemaSQL)
        let recorder = Recorder<Int?>()
        let cancellable = ValueObservation.trackingOne(Self.version)
            .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        try await recorder.wait(for: 1)

        // The only reader is busy until the value arrives.
        let readerIsHeld = Signal()
        let releaseReader = Signal()
        let read = BackgroundThread {
            try writer.read { _ in
                readerIsHeld.open()
                #expect(releaseReader.waitBlocking())
            }
        }
        try await readerIsHeld.wait()
        try Self.bumpVersion(writer)
        #expect(try await recorder.wait(for: 2) == [0, 1])
        releaseReader.open()
        try await read.value()
    }

    @Test(arguments: [DatabaseKind.inMemoryQueue, .fileQueue])
    func aQueueFetchesBeforeTheNextWriteStarts(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.versionSchemaSQL)
        let writer = test.writer
        let log = Locked<[String]>([])
        let recorder = Recorder<Int>()
        let cancellable = ValueObservation.tracking { db in
            let version = try Self.version.fetchOne(db)!
            log.withLock { $0.append("fetch \(version)") }
            return version
        }
        .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: recorder.append)
        defer { cancellable.cancel() }
        let writers = (0..<2).map { _ in
            BackgroundThread {
                for _ in 0..<3 {
                    try writer.write { db in
                        let version = try Self.version.fetchOne(db)!
                        log.withLock { $0.append("write \(version + 1)") }
                        try db.execute(sql: "UPDATE counter SET version = version + 1")
                    }
                }
            }
        }
        for result in writers { try await result.value() }
        #expect(log.value == ["fetch 0"] + (1...6).flatMap { ["write \($0)", "fetch \($0)"] })
        #expect(try await recorder.wait(for: 7) == Array(0...6))
    }

    // MARK: 8. Region observations: once per committed transaction, before write returns

    @Test(arguments: DatabaseKind.allCases)
    func aRegionObservationIsCalledOncePerTransactionBeforeWriteReturns(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL + """
            CREATE TABLE other (id INTEGER PRIMARY KEY);
            """)
        let writer = test.writer
        let writerLabel = try await writer.write { _ in currentDispatchQueueLabel() }
        let seen = Locked<[String]>([])
        let cancellable = DatabaseRegionObservation(tracking: ObservedPlayer.all()).start(in: writer) { error in
            Issue.record(error)
        } onChange: { db in
            // On the writer, with the committed state.
            let count = (try? ObservedPlayer.all().fetchCount(db)) ?? -1
            let place = currentDispatchQueueLabel() == writerLabel ? "writer" : "elsewhere"
            seen.withLock { $0.append("\(count) on \(place)") }
        }
        defer { cancellable.cancel() }

        try await writer.write { db in
            for id in 4...13 {
                try db.execute(sql: "INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
            }
        }
        #expect(seen.value == ["13 on writer"])
        try await writer.write { db in try db.execute(sql: "DELETE FROM player WHERE id > 3") }
        #expect(seen.value == ["13 on writer", "3 on writer"])

        // Concurrent writers: exactly one call per transaction that changes
        // the region, counted by the writers themselves.
        let changing = ChangeCounter()
        let writers = (0..<3).map { thread in
            BackgroundThread {
                for index in 0..<50 {
                    let id = 100 + thread * 100 + index
                    if index % 2 == 0 {
                        try writer.writeSQL("INSERT INTO player (id, name) VALUES (?, 'x')", arguments: [id])
                        changing.increment()
                    } else {
                        try writer.writeSQL("INSERT INTO other (id) VALUES (?)", arguments: [id])
                    }
                }
            }
        }
        for result in writers { try await result.value() }
        #expect(seen.value.count == 2 + changing.value)
        #expect(changing.value == 75)
    }

    @Test(arguments: DatabaseKind.allCases)
    func regionChangesAreAnAsyncSequenceWithOneElementPerTransaction(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL + """
            CREATE TABLE other (id INTEGER PRIMARY KEY);
            """)
        let writer = test.writer
        var iterator = DatabaseRegionObservation(tracking: ObservedPlayer.all()).changes(in: writer).makeAsyncIterator()
        // Registered in a writer access that starts before the next write.
        try writer.writeSQL("INSERT INTO player (id, name) VALUES (4, 'x'); INSERT INTO player (id, name) VALUES (5, 'x')")
        try writer.writeSQL("INSERT INTO other (id) VALUES (1)")
        try writer.writeSQL("DELETE FROM player WHERE id = 4")
        try writer.writeSQL("UPDATE player SET score = 0")
        // Buffered, none lost: three elements.
        for _ in 0..<3 { #expect(try await iterator.next() != nil) }
        // A fourth element only comes with a fourth transaction.
        try writer.writeSQL("INSERT INTO other (id) VALUES (2)")
        try writer.writeSQL("UPDATE player SET score = 1")
        #expect(try await iterator.next() != nil)
    }

    // MARK: 9. Cancellation

    @Test(arguments: DatabaseKind.allCases)
    func cancelWaitsForADeliveryInProgressAndNothingArrivesAfterIt(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.versionSchemaSQL)
        let writer = test.writer
        let deliveryIsBlocked = Signal()
        let unblockDelivery = Signal()
        let cancelling = Signal()
        let deliveryEnded = Locked(false)
        let cancelReturned = Locked(false)
        let recorder = Recorder<Int?>()
        let cancellable = ValueObservation.trackingOne(Self.version)
            .start(in: writer, scheduling: .async(onQueue: DispatchQueue(label: "observation-tests.cancel"))) {
                Issue.record($0)
            } onChange: { value in
                if cancelReturned.value { Issue.record("value \(String(describing: value)) after cancel() returned") }
                recorder.append(value)
                if value == 1 {
                    deliveryIsBlocked.open()
                    #expect(unblockDelivery.waitBlocking())
                    deliveryEnded.value = true
                }
            }
        try await recorder.wait(for: 1)
        try Self.bumpVersion(writer)
        try await deliveryIsBlocked.wait()

        let cancel = BackgroundThread {
            cancelling.open()
            cancellable.cancel()
            cancelReturned.value = true
            return deliveryEnded.value
        }
        try await cancelling.wait()
        unblockDelivery.open()
        // cancel() returned after the delivery in progress ended.
        #expect(try await cancel.value() == true)
        for _ in 0..<5 { try Self.bumpVersion(writer) }
        // Another observation, started later, sees the last state: by then
        // the first one would have delivered it too.
        let later = Recorder<Int?>()
        let laterCancellable = ValueObservation.trackingOne(Self.version)
            .start(in: writer, scheduling: .async(onQueue: DispatchQueue(label: "observation-tests.cancel")),
                   onError: { Issue.record($0) }, onChange: later.append)
        defer { laterCancellable.cancel() }
        #expect(try await later.wait(for: 1) == [6])
        #expect(recorder.values == [0, 1])
    }

    @Test(arguments: DatabaseKind.allCases)
    func cancelFromInsideOnChangeStopsEverything(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.versionSchemaSQL)
        let writer = test.writer
        let fetchCount = ChangeCounter()
        let holder = Locked<AnyDatabaseCancellable?>(nil)
        let recorder = Recorder<Int>()
        let cancelled = Recorder<Bool>()
        let cancellable = ValueObservation.tracking { db in
            fetchCount.increment()
            return try Self.version.fetchOne(db)!
        }
        .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }) { value in
            recorder.append(value)
            if value == 1 {
                holder.value?.cancel()
                cancelled.append(true)
            }
        }
        holder.value = cancellable
        try await recorder.wait(for: 1)
        try Self.bumpVersion(writer)
        try await cancelled.wait(for: 1)
        let fetches = fetchCount.value
        for _ in 0..<5 { try Self.bumpVersion(writer) }
        #expect(fetchCount.value == fetches)
        #expect(recorder.values == [0, 1])

        // A region observation cancelled from inside its onChange, on the writer.
        let regionHolder = Locked<AnyDatabaseCancellable?>(nil)
        let regionCount = ChangeCounter()
        regionHolder.value = DatabaseRegionObservation(tracking: Self.version).start(in: writer) {
            Issue.record($0)
        } onChange: { _ in
            regionCount.increment()
            regionHolder.value?.cancel()
        }
        for _ in 0..<3 { try Self.bumpVersion(writer) }
        #expect(regionCount.value == 1)
    }

    @Test(arguments: DatabaseKind.allCases)
    func droppingTheLastCancellableCancels(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.versionSchemaSQL + playerSchemaSQL)
        let writer = test.writer
        let fetchCount = ChangeCounter()
        let regionCount = ChangeCounter()
        let recordCount = ChangeCounter()
        let references = Locked<[WeakReference<LifetimeToken>]>([])
        do {
            let valueToken = LifetimeToken()
            let regionToken = LifetimeToken()
            let recordToken = LifetimeToken()
            references.value = [WeakReference(valueToken), WeakReference(regionToken), WeakReference(recordToken)]
            let first = Recorder<Int>()
            var cancellables: [AnyDatabaseCancellable] = [
                ValueObservation.tracking { db in
                    withExtendedLifetime(valueToken) { fetchCount.increment() }
                    return try Self.version.fetchOne(db)!
                }
                .start(in: writer, scheduling: .observationQueue, onError: { Issue.record($0) }, onChange: first.append),
                DatabaseRegionObservation(tracking: Self.version).start(in: writer) { Issue.record($0) } onChange: { _ in
                    withExtendedLifetime(regionToken) { regionCount.increment() }
                },
                RecordObservation<ObservedPlayer>(key: 1).start(in: writer, scheduling: .observationQueue) {
                    Issue.record($0)
                } onDeletion: {
                    Issue.record("unexpected deletion")
                } onChange: { _ in
                    withExtendedLifetime(recordToken) { recordCount.increment() }
                },
            ]
            try await first.wait(for: 1)
            #expect(cancellables.count == 3)
            cancellables.removeAll()
        }
        // The observers leave the broker in a later writer access.
        try await writer.write { _ in }
        try await waitUntil { references.value.allSatisfy(\.isReleased) }
        let counts = (fetchCount.value, regionCount.value, recordCount.value)
        try Self.bumpVersion(writer)
        try writer.writeSQL("UPDATE player SET score = 0 WHERE id = 1")
        #expect(fetchCount.value == counts.0)
        #expect(regionCount.value == counts.1)
        #expect(recordCount.value == counts.2)
    }

    @Test(arguments: DatabaseKind.allCases)
    func observationsStartAndCancelFromManyThreadsAtOnce(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: Self.versionSchemaSQL)
        let writer = test.writer
        let references = Locked<[WeakReference<LifetimeToken>]>([])
        let lateDeliveries = ChangeCounter()
        let firstValues = ChangeCounter()
        let writes = BackgroundThread { for _ in 0..<100 { try Self.bumpVersion(writer) } }
        let starts = (0..<8).map { thread in
            BackgroundThread {
                let queue = DispatchQueue(label: "observation-tests.many.\(thread)")
                for index in 0..<10 {
                    let token = LifetimeToken()
                    references.withLock { $0.append(WeakReference(token)) }
                    let cancelReturned = Locked(false)
                    let gotValue = Signal()
                    let onChange: @Sendable (Int) -> Void = { _ in
                        withExtendedLifetime(token) {}
                        if cancelReturned.value { lateDeliveries.increment() }
                        gotValue.open()
                    }
                    let cancellable: AnyDatabaseCancellable
                    if index % 2 == 0 {
                        cancellable = ValueObservation.tracking { db in try Self.version.fetchOne(db)! }
                            .start(in: writer, scheduling: .async(onQueue: queue), onError: { Issue.record($0) },
                                   onChange: onChange)
                    } else {
                        cancellable = DatabaseRegionObservation(tracking: Self.version).start(in: writer) {
                            Issue.record($0)
                        } onChange: { _ in onChange(0) }
                    }
                    if index % 4 == 0 {
                        // Some are cancelled after their first value.
                        #expect(gotValue.waitBlocking())
                        firstValues.increment()
                    }
                    cancellable.cancel()
                    cancelReturned.value = true
                }
            }
        }
        for start in starts { try await start.value() }
        try await writes.value()
        #expect(firstValues.value == 8 * 3)
        try await writer.write { _ in }
        try await waitUntil { references.value.allSatisfy(\.isReleased) }
        #expect(references.value.count == 80)
        #expect(lateDeliveries.value == 0)
    }

    // MARK: 10. Errors

    @Test(arguments: DatabaseKind.allCases, changeTrackings)
    func aFetchErrorReachesOnErrorOnceAndEndsTheObservation(
        kind: DatabaseKind, tracking: Configuration.ChangeTracking
    ) async throws {
        let test = try kind.make(changeTracking: tracking, sql: """
            CREATE TABLE doomed (id INTEGER PRIMARY KEY);
            CREATE TABLE other (id INTEGER PRIMARY KEY);
            """)
        let writer = test.writer
        let fetchCount = ChangeCounter()
        let values = Recorder<Int>()
        let errors = Recorder<DatabaseError>()
        let cancellable = ValueObservation.tracking { db in
            fetchCount.increment()
            return try SQLRequest<Row>(sql: "SELECT * FROM doomed").fetchCount(db)
                + SQLRequest<Row>(sql: "SELECT * FROM other").fetchCount(db)
        }
        .start(in: writer, scheduling: .observationQueue) { error in
            guard let error = error as? DatabaseError else {
                Issue.record("not a DatabaseError: \(error)")
                return
            }
            errors.append(error)
        } onChange: { value in
            values.append(value)
        }
        defer { cancellable.cancel() }
        try await values.wait(for: 1)

        try writer.writeSQL("DROP TABLE doomed")
        let error = try await errors.wait(for: 1)[0]
        #expect(error.resultCode == .SQLITE_ERROR)
        #expect(error.message == "no such table: doomed")
        // Ended: no other fetch, value, or error.
        let fetches = fetchCount.value
        try writer.writeSQL("INSERT INTO other DEFAULT VALUES")
        try writer.writeSQL("CREATE TABLE doomed (id INTEGER PRIMARY KEY); INSERT INTO doomed DEFAULT VALUES")
        try await writer.write { _ in }
        #expect(fetchCount.value == fetches)
        #expect(errors.values.count == 1)
        #expect(values.values == [0])
    }

    @Test(arguments: DatabaseKind.allCases)
    func anAsyncSequenceThrowsTheFetchError(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: playerSchemaSQL)
        let writer = test.writer
        var values: [Int] = []
        do {
            for try await count in ValueObservation.trackingCount(ObservedPlayer.all()).values(in: writer) {
                values.append(count)
                try await writer.write { db in try db.execute(sql: "DROP TABLE player") }
            }
            Issue.record("the loop ended without error")
        } catch let error as DatabaseError {
            #expect(error.message == "no such table: player")
        }
        #expect(values == [3])
    }

    struct StrictPlayer: FetchableRecord, TableRecord, Sendable {
        static let databaseTableName = "loosePlayer"
        var name: String
        init(row: Row) throws { name = try row["name"] }
    }

    @Test(arguments: DatabaseKind.allCases)
    func badDataAndBadSQLReachOnErrorWithoutTrapping(kind: DatabaseKind) async throws {
        let test = try kind.make(changeTracking: .automatic, sql: """
            CREATE TABLE loosePlayer (id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO loosePlayer (id, name) VALUES (1, 'Arthur');
            """)
        let writer = test.writer
        // A value that cannot be decoded, after a good one.
        let values = Recorder<[String]>()
        let decodingErrors = Recorder<String>()
        let cancellable = ValueObservation.trackingAll(StrictPlayer.orderByPrimaryKey()).map { $0.map(\.name) }
            .start(in: writer, scheduling: .observationQueue) { error in
                decodingErrors.append(error is RowDecodingError ? "RowDecodingError" : "\(error)")
            } onChange: { value in
                values.append(value)
            }
        defer { cancellable.cancel() }
        try await values.wait(for: 1)
        try writer.writeSQL("INSERT INTO loosePlayer (id, name) VALUES (2, NULL)")
        #expect(try await decodingErrors.wait(for: 1) == ["RowDecodingError"])
        #expect(values.values == [["Arthur"]])

        // SQL that does not compile, as an observation and as a region.
        let sqlErrors = Recorder<ResultCode?>()
        let badValue = ValueObservation.trackingAll(SQLRequest<Row>(sql: "SELEC nothing"))
            .start(in: writer, scheduling: .observationQueue) { sqlErrors.append(($0 as? DatabaseError)?.resultCode) } onChange: { _ in
                Issue.record("no value expected")
            }
        defer { badValue.cancel() }
        let badRegion = DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM nowhere"))
            .start(in: writer) { sqlErrors.append(($0 as? DatabaseError)?.resultCode) } onChange: { _ in
                Issue.record("no change expected")
            }
        defer { badRegion.cancel() }
        await #expect(throws: DatabaseError.self) {
            for try await _ in DatabaseRegionObservation(tracking: SQLRequest<Row>(sql: "SELECT * FROM nowhere"))
                .changes(in: writer)
            {
                Issue.record("no change expected")
            }
        }
        #expect(try await sqlErrors.wait(for: 2) == [.SQLITE_ERROR, .SQLITE_ERROR])
    }
}
