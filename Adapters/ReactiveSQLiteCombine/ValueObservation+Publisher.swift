#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Dispatch
import ReactiveSQLite

extension ValueObservation {
    /// A publisher of the observation's values, which fails with the
    /// observation's error.
    ///
    /// ```swift
    /// let cancellable = ValueObservation
    ///     .trackingAll(Player.all())
    ///     .publisher(in: dbQueue)
    ///     .sink { completion in
    ///         print(completion)
    ///     } receiveValue: { players in
    ///         print("\(players.count) players")
    ///     }
    /// ```
    ///
    /// Each subscription starts one run of the observation, with the
    /// guarantees of `start(in:scheduling:onError:onChange:)`; cancelling
    /// the subscription stops it.
    ///
    /// Demand is honoured: without demand, only the newest value is kept
    /// (never an unbounded buffer), and delivered on the scheduler's queue
    /// when demand comes; intermediate values are dropped, never the last
    /// one. With `.immediate`, a subscriber that requests demand when it
    /// receives the subscription (as `sink` does) gets the first value
    /// during `subscribe`. The module's overview, ``ReactiveSQLiteCombine``,
    /// details demand and cancellation.
    ///
    /// - Parameters:
    ///   - reader: A `DatabaseQueue` or a `DatabasePool`.
    ///   - scheduler: Where values are delivered. Default: asynchronously on
    ///     the main queue.
    /// - Precondition: Not subscribed from inside an access of the same
    ///   writer; with `.immediate`, subscribed from the main thread.
    public func publisher(
        in reader: some DatabaseReader,
        scheduling scheduler: ValueObservationScheduler = .async(onQueue: .main)
    ) -> DatabasePublishers.Value<Value> {
        DatabasePublishers.Value(observation: self, reader: reader, scheduler: scheduler)
    }
}

extension DatabasePublishers {
    /// A publisher of the values of a `ValueObservation`. See
    /// `ValueObservation.publisher(in:scheduling:)`.
    public struct Value<Output: Sendable>: Publisher, Sendable {
        /// The observation's error, as thrown.
        public typealias Failure = any Error

        let observation: ValueObservation<Output>
        let reader: any DatabaseReader
        let scheduler: ValueObservationScheduler

        /// Starts a run of the observation for `subscriber`.
        public func receive<S: Subscriber & SendableMetatype>(subscriber: S) where S.Input == Output, S.Failure == any Error {
            let subscription = ObservationSubscription(downstream: subscriber, scheduler: scheduler)
            subscriber.receive(subscription: subscription)
            let observation = self.observation, reader = self.reader, scheduler = self.scheduler
            subscription.start { events in
                observation.start(in: reader, scheduling: scheduler, onError: events.fail, onChange: events.value)
            }
        }
    }
}

#endif
