#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Foundation
import ReactiveSQLite
import DatabaseRegions

extension DatabaseRegionObservation {
    /// A publisher of the writer's `Database`, on the writer's queue, right
    /// after each committed transaction that modified the observed region.
    ///
    /// ```swift
    /// let cancellable = DatabaseRegionObservation(tracking: Player.all())
    ///     .publisher(in: dbQueue)
    ///     .tryMap { db in try Player.all().fetchCount(db) }  // still on the writer's queue
    ///     .receive(on: DispatchQueue.main)                   // a Sendable value may travel
    ///     .sink { completion in
    ///         print(completion)
    ///     } receiveValue: { count in
    ///         print("\(count) players")
    ///     }
    /// ```
    ///
    /// `Database` is not `Sendable`: a published connection is only valid
    /// during the `receive(_:)` call that gets it, on the writer's queue,
    /// before any other write can start. Use it there, synchronously (in
    /// `sink`, or in an operator such as `map` or `tryMap` that turns it into
    /// a `Sendable` value); never keep it, and never hop it to another
    /// queue (`receive(on:)`, `subscribe(on:)`, `delay`, `debounce`) before
    /// such a map. Combine's operators are not checked for `Sendable`, so
    /// the compiler cannot enforce this.
    ///
    /// Each subscription starts one observation, registered before
    /// `subscribe` returns; cancelling the subscription stops it. One
    /// element per committed transaction that modified the region, while
    /// demand is outstanding: a connection cannot be kept for later, so a
    /// commit that happens without demand is not published. Rolled-back
    /// transactions and savepoints publish nothing. The publisher fails, at
    /// subscription, when the region cannot be computed (a request whose
    /// SQL does not compile), and never finishes otherwise.
    ///
    /// - Parameter writer: A `DatabaseQueue` or a `DatabasePool`.
    /// - Precondition: Not subscribed from inside an access of the same writer.
    public func publisher(in writer: some DatabaseWriter) -> DatabasePublishers.DatabaseRegion {
        DatabasePublishers.DatabaseRegion(observation: self, writer: writer)
    }
}

extension DatabasePublishers {
    /// A publisher of the writer's `Database` after each committed
    /// transaction that modified a region. See
    /// `DatabaseRegionObservation.publisher(in:)`.
    ///
    /// The publisher is `Sendable`; its output, `Database`, is not: it is
    /// only valid during the delivery, on the writer's queue.
    public struct DatabaseRegion: Publisher, Sendable {
        /// The writer's connection, valid only during the delivery.
        public typealias Output = Database
        /// The error that prevented the observation from starting.
        public typealias Failure = any Error

        let observation: DatabaseRegionObservation
        let writer: any DatabaseWriter

        /// Starts the observation for `subscriber`.
        public func receive<S: Subscriber & SendableMetatype>(subscriber: S) where S.Input == Database, S.Failure == any Error {
            let subscription = DatabaseRegionSubscription(downstream: subscriber)
            subscriber.receive(subscription: subscription)
            subscription.start(observation, in: writer)
        }
    }
}

/// The subscription of `DatabasePublishers.DatabaseRegion`.
///
/// Delivers each notification of the observation, on the writer's queue,
/// while demand is outstanding, and drops it otherwise. After `cancel()`
/// returns, no delivery starts and none is running, unless `cancel()` was
/// called from inside that delivery (on the writer's queue): the package's
/// one `DeliveryGate` guarantees it. The observation holds the
/// subscription weakly.
///
/// `@unchecked Sendable`: `state` is only read and written while holding
/// `lock`; `gate` is thread-safe. The downstream subscriber receives the
/// `Database`, which is not Sendable, synchronously on the writer's queue
/// that notifies: the connection never leaves the thread that owns it, and
/// deliveries never overlap (the writer's queue is serial).
final class DatabaseRegionSubscription<Downstream: Subscriber & SendableMetatype>: Subscription, @unchecked Sendable
where Downstream.Input == Database, Downstream.Failure == any Error {
    private struct State {
        /// Nil once cancelled or failed.
        var downstream: Downstream?
        var demand: Subscribers.Demand = .none
        /// Stops the observation; nil until it started, and once stopped.
        var cancellable: AnyDatabaseCancellable?
    }

    private let lock = NSLock()
    private var state: State
    private let gate = DeliveryGate()

    init(downstream: Downstream) {
        state = State(downstream: downstream)
    }

    /// Starts the observation, unless the subscription was cancelled already.
    func start(_ observation: DatabaseRegionObservation, in writer: some DatabaseWriter) {
        guard gate.isOpen else { return }
        let cancellable = observation.start(in: writer) { [weak self] error in
            self?.fail(error)
        } onChange: { [weak self] db in
            self?.receive(db)
        }
        let isActive = lock.withLock { () -> Bool in
            guard state.downstream != nil else { return false }
            state.cancellable = cancellable
            return true
        }
        // Cancelled or failed meanwhile.
        if !isActive { cancellable.cancel() }
    }

    /// Adds demand. A demand of `.none` does nothing.
    func request(_ demand: Subscribers.Demand) {
        lock.withLock {
            guard state.downstream != nil else { return }
            state.demand += demand
        }
    }

    /// Stops the observation. Calling it again does nothing.
    func cancel() {
        // Released after the lock: a deinit may run user code.
        let (downstream, cancellable) = lock.withLock { () -> (Downstream?, AnyDatabaseCancellable?) in
            defer {
                state.downstream = nil
                state.cancellable = nil
            }
            return (state.downstream, state.cancellable)
        }
        gate.cancel()
        cancellable?.cancel()
        withExtendedLifetime(downstream) {}
    }

    /// On the writer's queue, after an impactful commit.
    private func receive(_ db: Database) {
        gate.deliver {
            let downstream = lock.withLock { () -> Downstream? in
                guard let downstream = state.downstream, state.demand > 0 else { return nil }
                state.demand -= 1
                return downstream
            }
            guard let downstream else { return }
            let additionalDemand = downstream.receive(db)
            lock.withLock {
                if state.downstream != nil { state.demand += additionalDemand }
            }
        }
    }

    /// The region could not be computed: the observation did not start.
    private func fail(_ error: any Error) {
        let downstream = lock.withLock { () -> Downstream? in
            defer { state.downstream = nil }
            return state.downstream
        }
        downstream?.receive(completion: .failure(error))
    }
}

#endif
