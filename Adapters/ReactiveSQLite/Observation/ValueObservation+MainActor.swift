/// The scheduler of observations whose values go to the main actor:
/// `start(in:scheduling: .mainActor, onError:onChange:)`, called on the main
/// actor, takes `@MainActor` closures, which the compiler checks.
///
/// Values are delivered asynchronously, every one of them, in the order of
/// the commits. A view model isolated to the main actor receives them
/// without hopping by hand:
///
/// ```swift
/// @MainActor final class PlayersModel {
///     var players: [Player] = []
///     var cancellable: AnyDatabaseCancellable?
///
///     func start(_ dbQueue: DatabaseQueue) {
///         cancellable = ValueObservation.tracking { try Player.fetchAll($0) }
///             .start(in: dbQueue, scheduling: .mainActor) { error in
///                 print(error)
///             } onChange: { [weak self] players in
///                 self?.players = players  // main-actor isolated
///             }
///     }
/// }
/// ```
public struct ValueObservationMainActorScheduler: Sendable {
    /// Delivers values on the main actor.
    public static let mainActor = ValueObservationMainActorScheduler()
}

extension ValueObservationScheduler {
    /// Delivers values on the main actor, to `@MainActor` closures: see
    /// `ValueObservationMainActorScheduler`.
    public static var mainActor: ValueObservationMainActorScheduler { .mainActor }
}

extension ValueObservation {
    /// Starts the observation, delivering its values and its error on the
    /// main actor.
    ///
    /// The guarantees of `start(in:scheduling:onError:onChange:)` hold: the
    /// observation is registered before `start` returns, every value comes
    /// from one committed state, in commit order. Every value is delivered
    /// (none is dropped for a slow main actor: when it cannot keep up, use
    /// `throttle(_:)`). Once `cancel()` returns on the main actor, no value
    /// nor error is delivered.
    ///
    /// - Parameters:
    ///   - reader: A `DatabaseQueue` or a `DatabasePool`.
    ///   - scheduler: `.mainActor`.
    ///   - onError: Called once with the first error; the observation then ends.
    ///   - onChange: Called with each value, in order.
    @MainActor
    public func start(
        in reader: some DatabaseReader,
        scheduling scheduler: ValueObservationMainActorScheduler,
        onError: @escaping @MainActor (any Error) -> Void,
        onChange: @escaping @MainActor (Value) -> Void
    ) -> AnyDatabaseCancellable {
        startOnMainActor(in: reader, waitingForWriter: true, onError: onError, onChange: onChange)
    }

    /// Starts the observation, delivering on the main actor.
    ///
    /// - Parameter waitingForWriter: Whether to register the observation
    ///   and fetch its first value before returning (the guarantee of
    ///   `start`), holding the caller until the writer is free; when
    ///   false, that happens in the writer's next access, and the main
    ///   actor never waits for a write (`LiveValue`).
    @MainActor
    func startOnMainActor(
        in reader: some DatabaseReader,
        waitingForWriter: Bool,
        onError: @escaping @MainActor (any Error) -> Void,
        onChange: @escaping @MainActor (Value) -> Void
    ) -> AnyDatabaseCancellable {
        // The observation's queue hands each outcome to one task on the main
        // actor, in order.
        let (outcomes, continuation) = AsyncStream<Result<Value, any Error>>.makeStream()
        let delivery = Task { @MainActor in
            for await outcome in outcomes {
                // `cancel()` on the main actor ran before this turn.
                if Task.isCancelled { return }
                switch outcome {
                case .success(let value):
                    onChange(value)
                case .failure(let error):
                    onError(error)
                    return
                }
            }
        }
        let observer = ValueObserver(
            observation: self, host: reader.observationHost, scheduler: .observationQueue,
            onError: { error in
                continuation.yield(.failure(error))
                continuation.finish()
            },
            onChange: { value in continuation.yield(.success(value)) })
        let observation = waitingForWriter ? observer.start() : observer.startWithoutWaiting()
        return AnyDatabaseCancellable {
            observation.cancel()
            continuation.finish()
            delivery.cancel()
        }
    }
}
