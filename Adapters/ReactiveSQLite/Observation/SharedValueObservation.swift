import Dispatch
import DatabaseRegions

/// How long a `SharedValueObservation` observes the database.
public enum SharedValueObservationExtent: Sendable {
    /// The observation starts when the shared object is made, and runs as
    /// long as it lives: a subscriber always gets the latest value at
    /// once, and an error ends it for good (later subscribers get it).
    case observationLifetime

    /// The observation runs while the shared object has a subscriber: it
    /// starts with the first one and stops when the last one cancels,
    /// forgetting its value. A new first subscriber starts it again, with a
    /// fresh fetch. An error ends the run and every subscription; the next
    /// subscriber starts a new run.
    case whileObserved
}

extension ValueObservation {
    /// One run of this observation shared by any number of subscribers:
    /// each commit that changes its region costs one fetch, whatever their
    /// number, and a subscriber that comes while it runs gets the latest
    /// value at once, without a fetch.
    ///
    /// ```swift
    /// let players = ValueObservation.tracking { try Player.fetchAll($0) }
    ///     .shared(in: dbQueue)
    /// let list = players.start(onError: { _ in }, onChange: { print("list", $0.count) })
    /// let badge = players.start(onError: { _ in }, onChange: { print("badge", $0.count) })
    /// ```
    ///
    /// - Parameters:
    ///   - reader: A `DatabaseQueue` or a `DatabasePool`.
    ///   - scheduler: Where every subscriber gets its values. Default:
    ///     asynchronously on the main queue. With `.immediate`, subscribe
    ///     from the main thread: the first subscriber gets the first value,
    ///     and a later one the latest value, before `start` returns.
    ///     `.observationQueue` delivers on a serial queue of the shared
    ///     observation's own.
    ///   - extent: How long the observation runs. Default: while it has
    ///     subscribers.
    /// - Returns: The shared observation. Subscriptions keep it alive; with
    ///   `.observationLifetime`, releasing it and its subscriptions stops
    ///   the observation.
    public func shared(
        in reader: some DatabaseReader,
        scheduling scheduler: ValueObservationScheduler = .async(onQueue: .main),
        extent: SharedValueObservationExtent = .whileObserved
    ) -> SharedValueObservation<Value> {
        SharedValueObservation(observation: self, reader: reader, scheduler: scheduler, extent: extent)
    }
}

/// A `ValueObservation` whose one run feeds any number of subscribers: see
/// `ValueObservation.shared(in:scheduling:extent:)`.
///
/// Guarantees, for each subscriber: the guarantees of
/// `ValueObservation.start(in:scheduling:onError:onChange:)` (values in
/// commit order, none older than one already delivered, the last one the
/// state of the database when writes stop); its first value is the latest
/// value of the run when there is one (no fetch), else the run's next
/// value; nothing is delivered after `cancel()` returns. Subscribers share
/// the run's values: its fetches, and what its operators
/// (`removeDuplicates()`, `throttle(_:)`) let through.
public final class SharedValueObservation<Value: Sendable>: Sendable {
    private let observation: ValueObservation<Value>
    private let reader: any DatabaseReader
    /// The scheduler of the run and of every subscriber: one serial place
    /// where values are delivered (`.observationQueue` is replaced by a
    /// queue of this object's, which late subscribers can reach).
    private let scheduler: ValueObservationScheduler
    private let extent: SharedValueObservationExtent
    private let state = LockedState(State())

    private struct State {
        var subscribers: [Int: SharedSubscriber<Value>] = [:]
        var nextSubscriberID = 0
        /// The run: its number, and its cancellable once its `start` returned.
        var run: (number: Int, cancellable: AnyDatabaseCancellable?)?
        var nextRunNumber = 0
        /// The latest outcome of the current run, numbered in delivery order.
        var latest: (sequence: Int, outcome: Result<Value, any Error>)?
        var nextSequence = 1
    }

    init(
        observation: ValueObservation<Value>,
        reader: some DatabaseReader,
        scheduler: ValueObservationScheduler,
        extent: SharedValueObservationExtent
    ) {
        self.observation = observation
        self.reader = reader
        if case .observationQueue = scheduler.kind {
            self.scheduler = .async(onQueue: DispatchQueue(label: "ReactiveSQLite.SharedValueObservation"))
        } else {
            self.scheduler = scheduler
        }
        self.extent = extent
        if extent == .observationLifetime { startRunIfNeeded() }
    }

    deinit {
        // Only `.observationLifetime` may still run: subscriptions keep
        // this object alive.
        state.withLock { $0.run?.cancellable }?.cancel()
    }

    /// Subscribes to the shared observation, and returns a cancellable that
    /// ends the subscription (releasing it does too).
    ///
    /// - Parameters:
    ///   - onError: Called once with the run's error; the subscription then ends.
    ///   - onChange: Called with each value, in order.
    public func start(
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Value) -> Void
    ) -> AnyDatabaseCancellable {
        let subscriber = SharedSubscriber(onError: onError, onChange: onChange)
        let (id, latest) = state.withLock { state -> (Int, (sequence: Int, outcome: Result<Value, any Error>)?) in
            let id = state.nextSubscriberID
            state.nextSubscriberID += 1
            // A failed `.observationLifetime` run keeps its error for
            // late subscribers; they are not kept.
            if case .failure = state.latest?.outcome {} else { state.subscribers[id] = subscriber }
            return (id, state.latest)
        }
        if let latest {
            scheduler.runOnDeliveryQueue { subscriber.receive(latest.outcome, sequence: latest.sequence) }
        } else {
            startRunIfNeeded()
        }
        return AnyDatabaseCancellable { [self] in
            subscriber.cancel()
            removeSubscriber(id)
        }
    }

    /// The values of the shared observation, as an asynchronous sequence
    /// that throws the run's error: a subscription that starts when
    /// iteration starts and ends with the iterating loop or its task.
    ///
    /// - Parameter bufferingPolicy: What to keep when values come faster
    ///   than they are consumed. Default: the newest value only.
    public func values(
        bufferingPolicy: AsyncThrowingStream<Value, any Error>.Continuation.BufferingPolicy = .bufferingNewest(1)
    ) -> AsyncValueObservation<Value> {
        AsyncValueObservation(bufferingPolicy: bufferingPolicy) { [self] continuation in
            start(
                onError: { continuation.finish(throwing: $0) },
                onChange: { continuation.yield($0) })
        }
    }

    // MARK: - The run

    /// Starts a run when none runs and one is wanted: with subscribers, or
    /// with `.observationLifetime`.
    private func startRunIfNeeded() {
        let number = state.withLock { state -> Int? in
            guard state.run == nil, state.latest == nil else { return nil }
            guard extent == .observationLifetime || !state.subscribers.isEmpty else { return nil }
            let number = state.nextRunNumber
            state.nextRunNumber += 1
            state.run = (number, nil)
            return number
        }
        guard let number else { return }
        // Outside the lock: with `.immediate`, the first value is
        // delivered before `start` returns.
        let cancellable = observation.start(
            in: reader, scheduling: scheduler,
            onError: { [weak self] error in self?.runDidDeliver(.failure(error), run: number) },
            onChange: { [weak self] value in self?.runDidDeliver(.success(value), run: number) })
        let keep = state.withLock { state -> Bool in
            guard state.run?.number == number else { return false }
            state.run?.cancellable = cancellable
            return true
        }
        // The run ended before its `start` returned (its last subscriber
        // left, or it failed): it must not run on.
        if !keep { cancellable.cancel() }
    }

    /// On the scheduler's queue: hands an outcome of the run to every subscriber.
    private func runDidDeliver(_ outcome: Result<Value, any Error>, run: Int) {
        let delivery = state.withLock { state -> (Int, [SharedSubscriber<Value>], AnyDatabaseCancellable?)? in
            guard state.run?.number == run else { return nil }
            let sequence = state.nextSequence
            state.nextSequence += 1
            let subscribers = Array(state.subscribers.values)
            var ended: AnyDatabaseCancellable?
            if case .failure = outcome {
                // The run is over, and so is every subscription.
                state.subscribers = [:]
                ended = state.run?.cancellable
                switch extent {
                case .observationLifetime:
                    state.latest = (sequence, outcome)
                case .whileObserved:
                    state.run = nil
                    state.latest = nil
                }
            } else {
                state.latest = (sequence, outcome)
            }
            return (sequence, subscribers, ended)
        }
        guard let (sequence, subscribers, ended) = delivery else { return }
        ended?.cancel()
        for subscriber in subscribers {
            subscriber.receive(outcome, sequence: sequence)
        }
    }

    private func removeSubscriber(_ id: Int) {
        let stopped = state.withLock { state -> AnyDatabaseCancellable?? in
            guard state.subscribers.removeValue(forKey: id) != nil else { return nil }
            guard extent == .whileObserved, state.subscribers.isEmpty, let run = state.run else { return nil }
            // The last subscriber left: the run stops, and its value goes.
            state.run = nil
            state.latest = nil
            return .some(run.cancellable)
        }
        // A run still in its `start` is cancelled by `startRunIfNeeded`.
        if case .some(let cancellable?) = stopped { cancellable.cancel() }
    }
}

/// One subscription to a `SharedValueObservation`.
///
/// `@unchecked Sendable`: `lastSequence` is only read and written by
/// `receive`, which runs on the shared observation's delivery queue (a
/// serial queue, or the main thread), one call at a time.
private final class SharedSubscriber<Value: Sendable>: @unchecked Sendable {
    private let onError: @Sendable (any Error) -> Void
    private let onChange: @Sendable (Value) -> Void
    private let gate = DeliveryGate()
    private var lastSequence = 0

    init(onError: @escaping @Sendable (any Error) -> Void, onChange: @escaping @Sendable (Value) -> Void) {
        self.onError = onError
        self.onChange = onChange
    }

    /// Delivers an outcome, unless the subscriber already got a later one
    /// (the latest value handed to a late subscriber may reach it after
    /// the next value of the run).
    func receive(_ outcome: Result<Value, any Error>, sequence: Int) {
        guard sequence > lastSequence else { return }
        lastSequence = sequence
        switch outcome {
        case .success(let value):
            gate.deliver { onChange(value) }
        case .failure(let error):
            gate.deliver { onError(error) }
            gate.cancel()
        }
    }

    func cancel() {
        gate.cancel()
    }
}
