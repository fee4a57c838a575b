import Dispatch
import DatabaseRegions
import Foundation
import Synchronization

/// One run of a `ValueObservation`: registered with the writer's broker, it
/// fetches after each commit that modified its region, reduces on its own
/// serial queue, and delivers through its scheduler.
///
/// `@unchecked Sendable`: the `let` properties are Sendable or only used as
/// said here; `reduce` only runs on `reductionQueue`; `observerID` and
/// `region` are only touched on the writer's queue; `fetchState` is a Mutex.
final class ValueObserver<Value: Sendable>: DatabaseCommitObserver, @unchecked Sendable {
    private let host: any ObservationHost
    private let tracking: ObservationTracking
    private let fetch: @Sendable (Database) throws -> any Sendable
    private let reduce: (any Sendable) throws -> Value?
    private let reductionQueue: DispatchQueue
    private let scheduler: ValueObservationScheduler
    private let onChange: @Sendable (Value) -> Void
    private let onError: @Sendable (any Error) -> Void
    let gate = DeliveryGate()

    // Writer queue only.
    private var observerID: Int?
    private var region = DatabaseRegion()

    private struct FetchState {
        /// A fetch runs on a reader.
        var isFetching = false
        /// A commit happened during that fetch: fetch again when it ends.
        var needsFetch = false
        /// Cancelled or failed: never fetch again.
        var isFinished = false
    }
    private let fetchState = Mutex(FetchState())

    init(
        observation: ValueObservation<Value>,
        host: any ObservationHost,
        scheduler: ValueObservationScheduler,
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Value) -> Void
    ) {
        self.host = host
        self.tracking = observation.tracking
        self.fetch = observation.fetch
        self.reduce = observation.makeReducer()
        self.reductionQueue = DispatchQueue(label: host.configuration.label + ".observation")
        self.scheduler = scheduler
        self.onChange = onChange
        self.onError = onError
    }

    // MARK: - Starting

    /// Starts the observation: registers it and fetches its first value, in
    /// one writer access, so that no commit can slip between the two.
    func start() -> AnyDatabaseCancellable {
        if case .immediate = scheduler.kind {
            precondition(
                Thread.isMainThread,
                "ValueObservation.start(in:scheduling: .immediate, ...) must be called from the main thread.")
            do {
                let fetched = try host.writer.sync { db in try startOnWriter(db) }
                let value = try reductionQueue.sync { try reduce(fetched) }
                if let value { gate.deliver { onChange(value) } }
            } catch {
                finish(with: error, synchronously: true)
            }
        } else {
            do {
                let fetched = try host.writer.sync { db in try startOnWriter(db) }
                enqueue(.success(fetched))
            } catch {
                enqueue(.failure(error))
            }
        }
        return AnyDatabaseCancellable { [self] in cancel() }
    }

    /// Starts the observation without waiting for the writer (for async sequences).
    func startWithoutWaiting() -> AnyDatabaseCancellable {
        let writer = host.writer
        writer.queue.async { [self] in
            do {
                let fetched = try writer.database.withAccess { try startOnWriter(writer.database) }
                enqueue(.success(fetched))
            } catch {
                enqueue(.failure(error))
            }
        }
        return AnyDatabaseCancellable { [self] in cancel() }
    }

    /// On the writer: computes the region, fetches the first value, registers.
    private func startOnWriter(_ db: Database) throws -> any Sendable {
        let fetched: any Sendable
        switch tracking {
        case .regions(let regions):
            region = try regions.reduce(into: DatabaseRegion()) { $0.formUnion(try $1.databaseRegion(db)) }
            fetched = try inReadTransaction(db) { try fetch(db) }
        case .recorded, .constantRegion:
            (fetched, region) = try inReadTransaction(db) { try db.recordingSelection { try fetch(db) } }
        }
        observerID = db.observationBroker.register(self, region: region)
        return fetched
    }

    // MARK: - Fetching after commits

    func databaseDidCommitChanges(_ db: Database) {
        let mayFetch = fetchState.withLock { state -> Bool in
            if state.isFinished { return false }
            if state.isFetching {
                state.needsFetch = true
                return false
            }
            state.isFetching = true
            return true
        }
        guard mayFetch else { return }
        if let reader = host.readerIfAvailable() {
            // Open a read transaction on the state just committed while the
            // writer is still held, then let the writer go: the fetch runs
            // on the reader, concurrently with later writes.
            do {
                try reader.sync { readerDB in try readerDB.beginPinnedRead() }
                reader.queue.async { [self] in fetchOnPinnedReader(reader) }
                return
            } catch {
                host.releaseReader(reader)
            }
        }
        // A queue, or a pool whose readers are all busy (they may be waiting
        // for the writer): fetch here.
        enqueue(Result { try fetchOnWriter(db) })
        fetchDidEnd()
    }

    private func fetchOnWriter(_ db: Database) throws -> any Sendable {
        guard case .recorded = tracking else {
            return try inReadTransaction(db) { try fetch(db) }
        }
        let (fetched, newRegion) = try inReadTransaction(db) { try db.recordingSelection { try fetch(db) } }
        if newRegion != region, let observerID {
            region = newRegion
            db.observationBroker.updateRegion(newRegion, forObserver: observerID)
        }
        return fetched
    }

    private func fetchOnPinnedReader(_ reader: SerializedDatabase) {
        let db = reader.database
        let result: Result<(any Sendable, DatabaseRegion?), any Error> = Result {
            try db.withAccess {
                defer { db.endPinnedRead() }
                if case .recorded = tracking {
                    let (fetched, region) = try db.recordingSelection { try fetch(db) }
                    return (fetched, region)
                }
                return (try fetch(db), nil)
            }
        }
        host.releaseReader(reader)
        enqueue(result.map { $0.0 })
        if case .success((_, let newRegion?)) = result {
            // Regions live on the writer. A region that grew may have missed
            // a commit between this snapshot and the update: fetch again then.
            host.writer.asyncWithoutWaiting { [self] db in
                guard let observerID, newRegion != region else { return }
                let grew = region.union(newRegion) != region
                region = newRegion
                db.observationBroker.updateRegion(newRegion, forObserver: observerID)
                if grew { databaseDidCommitChanges(db) }
            }
        }
        fetchDidEnd()
    }

    /// Ends a fetch; fetches again, from the writer, if a commit happened meanwhile.
    private func fetchDidEnd() {
        let fetchAgain = fetchState.withLock { state -> Bool in
            state.isFetching = false
            defer { state.needsFetch = false }
            return state.needsFetch && !state.isFinished
        }
        if fetchAgain {
            host.writer.asyncWithoutWaiting { [self] db in databaseDidCommitChanges(db) }
        }
    }

    /// Runs `body` in a read transaction, unless one is open already.
    private func inReadTransaction<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        if db.isInsideTransaction { return try body() }
        return try db.inTransaction(.deferred, body)
    }

    // MARK: - Delivering

    /// Hands a fetched value (or an error) to the reduction queue, in fetch order.
    private func enqueue(_ fetched: Result<any Sendable, any Error>) {
        reductionQueue.async { [self] in
            guard gate.isOpen else { return }
            switch fetched {
            case .success(let fetched):
                do {
                    guard let value = try reduce(fetched) else { return }
                    deliver { [onChange] in onChange(value) }
                } catch {
                    finish(with: error, synchronously: false)
                }
            case .failure(let error):
                finish(with: error, synchronously: false)
            }
        }
    }

    private func deliver(_ body: @escaping @Sendable () -> Void) {
        switch scheduler.kind {
        case .task:
            gate.deliver(body)
        case .async(let queue):
            queue.async { [gate] in gate.deliver(body) }
        case .immediate:
            DispatchQueue.main.async { [gate] in gate.deliver(body) }
        }
    }

    /// Ends the observation with an error, delivered once.
    private func finish(with error: any Error, synchronously: Bool) {
        let isFirst = fetchState.withLock { state in
            defer { state.isFinished = true }
            return !state.isFinished
        }
        guard isFirst else { return }
        unregister()
        let onError = self.onError
        if synchronously {
            gate.deliver { onError(error) }
            gate.cancel()
        } else {
            deliver { [gate] in
                onError(error)
                gate.cancel()
            }
        }
    }

    // MARK: - Cancelling

    func cancel() {
        fetchState.withLock { $0.isFinished = true }
        gate.cancel()
        unregister()
    }

    private func unregister() {
        host.writer.asyncWithoutWaiting { [self] db in
            guard let observerID else { return }
            self.observerID = nil
            db.observationBroker.unregister(observerID)
        }
    }
}

extension Database {
    /// Opens a read transaction and reads the schema, which pins the current
    /// committed state (the WAL snapshot) until `endPinnedRead()`.
    func beginPinnedRead() throws {
        try cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
        do {
            try cachedStatement(sql: "SELECT 1 FROM sqlite_master LIMIT 1").execute()
        } catch {
            rollbackIfInsideTransaction()
            throw error
        }
    }

    /// Ends the read transaction of `beginPinnedRead()`.
    func endPinnedRead() {
        rollbackIfInsideTransaction()
    }
}

extension ValueObservation {
    /// Starts the observation and returns a cancellable that stops it.
    ///
    /// The observation is registered before `start` returns: no commit made
    /// after `start` returns can be missed. The first value is the state of
    /// the database when the observation starts.
    ///
    /// - Parameters:
    ///   - reader: A `DatabaseQueue` or a `DatabasePool`.
    ///   - scheduler: Where values are delivered. Default: asynchronously on
    ///     the main queue.
    ///   - onError: Called once with the first error (a fetch error, a
    ///     decoding error), as thrown; the observation then ends.
    ///   - onChange: Called with each value, in order.
    /// - Precondition: Not called from inside an access of the same writer;
    ///   with `.immediate`, called from the main thread.
    public func start(
        in reader: some DatabaseReader,
        scheduling scheduler: ValueObservationScheduler = .async(onQueue: .main),
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Value) -> Void
    ) -> AnyDatabaseCancellable {
        ValueObserver(
            observation: self, host: reader.observationHost, scheduler: scheduler,
            onError: onError, onChange: onChange
        ).start()
    }

    /// The values of the observation, as an asynchronous sequence that
    /// throws the observation's error.
    ///
    /// The observation starts when iteration starts, and stops when the
    /// iterating loop ends or its task is cancelled.
    ///
    /// ```swift
    /// for try await count in ValueObservation.trackingCount(request).values(in: dbPool) {
    ///     print(count)
    /// }
    /// ```
    ///
    /// - Parameter bufferingPolicy: What to keep when values come faster than
    ///   they are consumed. Default: the newest value only, so a slow consumer
    ///   sees the latest state, never an unbounded backlog.
    public func values(
        in reader: some DatabaseReader,
        bufferingPolicy: AsyncThrowingStream<Value, any Error>.Continuation.BufferingPolicy = .bufferingNewest(1)
    ) -> AsyncValueObservation<Value> {
        let host = reader.observationHost
        return AsyncValueObservation(bufferingPolicy: bufferingPolicy) { continuation in
            ValueObserver(
                observation: self, host: host, scheduler: .task,
                onError: { continuation.finish(throwing: $0) },
                onChange: { continuation.yield($0) }
            ).startWithoutWaiting()
        }
    }
}

/// The values of a `ValueObservation` as an asynchronous sequence. See
/// `ValueObservation.values(in:bufferingPolicy:)`.
public struct AsyncValueObservation<Element: Sendable>: AsyncSequence, Sendable {
    typealias Continuation = AsyncThrowingStream<Element, any Error>.Continuation
    let bufferingPolicy: Continuation.BufferingPolicy
    let start: @Sendable (Continuation) -> AnyDatabaseCancellable

    init(
        bufferingPolicy: Continuation.BufferingPolicy,
        start: @escaping @Sendable (Continuation) -> AnyDatabaseCancellable
    ) {
        self.bufferingPolicy = bufferingPolicy
        self.start = start
    }

    /// Starts the observation.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let cancellable = start(continuation)
        continuation.onTermination = { _ in cancellable.cancel() }
        return Iterator(base: stream.makeAsyncIterator(), cancellable: cancellable)
    }

    /// Iterates the values; releasing it stops the observation.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.AsyncIterator
        let cancellable: AnyDatabaseCancellable

        /// The next value, or nil after the observation was cancelled.
        ///
        /// - Throws: The observation's error.
        public mutating func next() async throws -> Element? {
            try await base.next()
        }
    }
}
