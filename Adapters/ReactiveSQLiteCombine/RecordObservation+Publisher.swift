#if canImport(Combine) || OpenCombine
// Built where Combine exists, or with the package trait OpenCombine.
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Dispatch
import ReactiveSQLite

extension RecordObservation {
    /// A publisher of the record's values, which finishes when the record
    /// is deleted and fails with the observation's error.
    ///
    /// ```swift
    /// let cancellable = RecordObservation<Player>(key: 1)
    ///     .publisher(in: dbQueue)
    ///     .sink { completion in
    ///         print("deleted, or failed: \(completion)")
    ///     } receiveValue: { player in
    ///         print(player)
    ///     }
    /// ```
    ///
    /// Each subscription starts one run of the observation, with the
    /// guarantees of `start(in:scheduling:onError:onDeletion:onChange:)`:
    /// the record when the subscription starts and after each transaction
    /// that changed its row. The publisher finishes when the row is deleted,
    /// at once (with no value) when the row does not exist. Demand is
    /// honoured as by `ValueObservation.publisher(in:scheduling:)`: without
    /// demand, the newest record is kept and delivered when demand comes,
    /// unless the record is deleted first (the deletion is newer).
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
    ) -> DatabasePublishers.Record<Record> {
        DatabasePublishers.Record(observation: self, reader: reader, scheduler: scheduler)
    }
}

extension DatabasePublishers {
    /// A publisher of the values of a `RecordObservation`, which finishes
    /// when the record is deleted. See `RecordObservation.publisher(in:scheduling:)`.
    public struct Record<Output: FetchableRecord & TableRecord & Sendable>: Publisher, Sendable {
        /// The observation's error, as thrown.
        public typealias Failure = any Error

        let observation: RecordObservation<Output>
        let reader: any DatabaseReader
        let scheduler: ValueObservationScheduler

        /// Starts a run of the observation for `subscriber`.
        public func receive<S: Subscriber & SendableMetatype>(subscriber: S) where S.Input == Output, S.Failure == any Error {
            let subscription = ObservationSubscription(downstream: subscriber, scheduler: scheduler)
            subscriber.receive(subscription: subscription)
            let observation = self.observation, reader = self.reader, scheduler = self.scheduler
            subscription.start { events in
                observation.start(
                    in: reader, scheduling: scheduler, onError: events.fail, onDeletion: events.finish,
                    onChange: events.value)
            }
        }
    }
}

#endif
