import Dispatch
import DatabaseRegions

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
    /// - Parameters:
    ///   - reader: A `DatabaseQueue` or a `DatabasePool`.
    ///   - bufferingPolicy: What to keep when values come faster than they
    ///     are consumed. Default: the newest value only, so a slow consumer
    ///     sees the latest state, never an unbounded backlog.
    public func values(
        in reader: some DatabaseReader,
        bufferingPolicy: AsyncThrowingStream<Value, any Error>.Continuation.BufferingPolicy = .bufferingNewest(1)
    ) -> AsyncValueObservation<Value> {
        let host = reader.observationHost
        return AsyncValueObservation(bufferingPolicy: bufferingPolicy) { continuation in
            ValueObserver(
                observation: self, host: host, scheduler: .observationQueue,
                onError: { continuation.finish(throwing: $0) },
                onChange: { continuation.yield($0) }
            ).startWithoutWaiting()
        }
    }
}
